#include "anec/compiler/passes/tune.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/attrs.hpp"
#include "anec/compiler/ir/shapes.hpp"

#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/support/error.hpp"
#include "anec/support/json.hpp"
#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

namespace anec::compiler {

namespace {

constexpr const char *kTableCode = "ANEC-TUNE-001";

// ---- the mechanisms: each rewrites the ops of `g` starting at op index `at`, or returns false ----

// Who reads each tensor.
std::map<std::string, std::vector<size_t>> readers(const Graph &g) {
  std::map<std::string, std::vector<size_t>> r;
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (const std::string &n : g.ops[i].inputs)
      r[n].push_back(i);
  return r;
}

bool is_output(const Graph &g, const std::string &n) {
  return std::find(g.outputs.begin(), g.outputs.end(), n) != g.outputs.end();
}

struct Site {
  Graph &g;
  const OpCatalog &catalog;
  size_t at;
  const Rewrite &rule;
  const std::map<std::string, std::vector<size_t>> &readers; // of the graph before this rewrite
  std::set<size_t> &removed;                                 // ops taken out by the rewrites applied so far
  std::vector<std::pair<size_t, Op>> &added;                 // ops to insert before an index
  std::map<std::string, std::string> &renamed; // a removed op's output -> what its readers read instead
};

bool retype(Site s) {
  Op &op = s.g.ops[s.at];
  op.type = s.rule.to;
  Doc attrs = Doc::table();
  for (const DocMember &m : op.attrs.members()) {
    auto it = s.rule.rename.find(m.key);
    attrs.set(it == s.rule.rename.end() ? m.key : it->second, m.value);
  }
  for (const DocMember &m : s.rule.set.members())
    attrs.set(m.key, m.value);
  op.attrs = std::move(attrs);
  return true;
}

// The single value of a constant given inline, if it has one.
std::optional<double> scalar(const Graph &g, const std::string &name) {
  auto v = g.values.find(name);
  if (v == g.values.end() || v->second.data.size() != 1)
    return std::nullopt;
  return double(v->second.data[0]);
}

// The op that writes `name`, if one op does and `name` is read only by `reader` (not a graph output).
std::optional<size_t> sole_writer(const Graph &g, const std::map<std::string, std::vector<size_t>> &r,
                                  const std::string &name, size_t reader) {
  if (is_output(g, name) || r.at(name) != std::vector<size_t>{reader})
    return std::nullopt;
  for (size_t i = 0; i < reader; ++i)
    if (std::find(g.ops[i].outputs.begin(), g.ops[i].outputs.end(), name) != g.ops[i].outputs.end())
      return g.ops[i].outputs.size() == 1 ? std::optional<size_t>(i) : std::nullopt;
  return std::nullopt;
}

// scores = matmul(q, kt) [* or / a scalar]; p = softmax(scores, W); out = matmul(p, v), with the
// heads in N and D (q's C is 1): sdpa(q, kt as [.., 1, S, E], v as [.., 1, S, Ev], scale), the
// format's attention layout (docs/graph-format.md).
bool fuse_attention(Site s) {
  Graph &g = s.g;
  const Op &soft = g.ops[s.at];
  if (OpAttrs(soft, s.catalog).text("axis") != "W" || soft.inputs.size() != 1)
    return false;
  const auto &r = s.readers;
  const std::string &p = soft.outputs[0];
  if (is_output(g, p) || !r.count(p) || r.at(p).size() != 1)
    return false;
  size_t m2 = r.at(p)[0];
  const Op &out = g.ops[m2];
  if (out.type != "matmul" || out.inputs.size() != 2 || out.inputs[0] != p)
    return false;
  auto pre = sole_writer(g, r, soft.inputs[0], s.at);
  if (!pre)
    return false;
  double scale = 1;
  std::vector<size_t> chain{*pre, s.at, m2};
  if (const Op &sc = g.ops[*pre]; sc.type == "mul" || sc.type == "div") {
    if (sc.inputs.size() != 2)
      return false;
    std::optional<double> v = scalar(g, sc.inputs[1]);
    if (!v || *v == 0)
      return false;
    scale = sc.type == "mul" ? *v : 1 / *v;
    pre = sole_writer(g, r, sc.inputs[0], *pre);
    if (!pre)
      return false;
    chain.insert(chain.begin(), *pre);
  }
  const Op &m1 = g.ops[*pre];
  if (m1.type != "matmul" || m1.inputs.size() != 2)
    return false;
  const Shape &q = g.tensor(m1.inputs[0])->shape, &kt = g.tensor(m1.inputs[1])->shape,
              &v = g.tensor(out.inputs[1])->shape;
  if (q.d[kC] != 1 || kt.d[kH] != 1 || v.d[kH] != 1)
    return false;
  for (size_t i : chain)
    if (s.removed.count(i))
      return false;
  auto fresh = [&](const std::string &base) {
    std::string name = base;
    for (int k = 2; g.tensor(name); ++k)
      name = base + "_" + std::to_string(k);
    Tensor t;
    t.name = name;
    g.add(std::move(t));
    return name;
  };
  auto transpose = [&](const std::string &in, const std::string &name, std::vector<int64_t> perm) {
    Op t;
    t.name = fresh(name);
    t.type = "transpose";
    t.inputs = {in};
    t.outputs = {t.name};
    Doc a = Doc::array();
    for (int64_t x : perm)
      a.push(Doc::integer(x));
    t.attrs.set("perm", std::move(a));
    s.added.emplace_back(m2, t);
    return t.name;
  };
  std::string k = transpose(m1.inputs[1], soft.name + "/k", {0, 1, 3, 4, 2});
  std::string vv = transpose(out.inputs[1], soft.name + "/v", {0, 1, 3, 2, 4});
  Op fused;
  fused.name = soft.name + "/sdpa";
  fused.type = "sdpa";
  fused.inputs = {m1.inputs[0], k, vv};
  fused.outputs = out.outputs;
  fused.attrs.set("scale", Doc::number(scale));
  s.added.emplace_back(m2, fused);
  s.removed.insert(chain.begin(), chain.end());
  return true;
}

// A permutation that moves no data and keeps the shape (it swaps size-1 axes): removed, its readers
// read its input. (One that changes the shape is left to the runtime skip, which costs it nothing.)
bool drop_transpose(Site s) {
  Graph &g = s.g;
  const Op &op = s.g.ops[s.at];
  if (g.tensor(op.inputs[0])->shape.d != g.tensor(op.outputs[0])->shape.d || is_output(g, op.outputs[0]))
    return false;
  s.renamed[op.outputs[0]] = op.inputs[0];
  s.removed.insert(s.at);
  return true;
}

using Mechanism = bool (*)(Site);

const std::map<std::string, Mechanism> &mechanisms() {
  static const std::map<std::string, Mechanism> m = {
      {"retype", retype}, {"fuse_attention", fuse_attention}, {"drop_transpose", drop_transpose}};
  return m;
}

using Condition = bool (*)(const Graph &, const Op &, const OpCatalog &);

const std::map<std::string, Condition> &conditions() {
  static const std::map<std::string, Condition> c = {
      {"unit_axes", [](const Graph &g, const Op &op,
                       const OpCatalog &catalog) { return moves_no_data(g, op, "unit_axes", catalog); }},
  };
  return c;
}

// ---- candidates ---------------------------------------------------------------------------------

// `g` rewritten by `rule` at every site it matches, re-read so that its tensors, shapes and skip
// marks are those of a graph read from a file; nullopt when it matches nowhere.
std::optional<Graph> rewritten(const Graph &g, const Rewrite &rule, const OpCatalog &catalog,
                               std::vector<std::string> &sites, const std::filesystem::path &dir) {
  Graph work = g;
  std::set<size_t> removed;
  std::vector<std::pair<size_t, Op>> added;
  std::map<std::string, std::string> renamed;
  const auto read_by = readers(g); // the mechanisms add and remove ops, but change no op's inputs
  for (size_t i = 0; i < work.ops.size(); ++i) {
    if (work.ops[i].type != rule.pattern || removed.count(i))
      continue;
    bool holds = std::all_of(rule.conditions.begin(), rule.conditions.end(), [&](const std::string &c) {
      return conditions().at(c)(work, work.ops[i], catalog);
    });
    std::string name = work.ops[i].name;
    if (holds &&
        mechanisms().at(rule.replacement)(Site{work, catalog, i, rule, read_by, removed, added, renamed}))
      sites.push_back(name);
  }
  if (sites.empty())
    return std::nullopt;
  std::set<std::string> touched(sites.begin(), sites.end()); // ops whose shapes are inferred anew
  for (const auto &[before, op] : added)
    touched.insert(op.name);
  std::stable_sort(added.begin(), added.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  std::vector<Op> ops;
  auto next = added.begin();
  for (size_t i = 0; i <= work.ops.size(); ++i) {
    for (; next != added.end() && next->first == i; ++next)
      ops.push_back(std::move(next->second));
    if (i < work.ops.size() && !removed.count(i))
      ops.push_back(std::move(work.ops[i]));
  }
  work.ops = std::move(ops);
  for (Op &op : work.ops)
    for (std::string &n : op.inputs)
      for (auto it = renamed.find(n); it != renamed.end(); it = renamed.find(n))
        n = it->second;
  std::set<std::string> read;
  for (const Op &op : work.ops)
    read.insert(op.inputs.begin(), op.inputs.end());
  for (Tensor &t : work.tensors) // a constant no op reads any more (a fused scale) is dropped
    if (t.constant && !read.count(t.name) && !is_output(work, t.name))
      t.constant = false;
  Graph out = read_graph_json(json::write(graph_doc(work, dir, dir)), g.source);
  out.values.insert(work.values.begin(), work.values.end()); // weights a front-end embedded, by op name
  // An op the rewrite did not touch keeps its outputs' shapes (a front-end such as ONNX may have
  // given them where the format's shape functions would not); the others are inferred.
  for (const Op &op : out.ops)
    if (touched.count(op.name))
      infer_shapes(out, op, catalog);
    else
      for (const std::string &n : op.outputs)
        out.tensor(n)->shape = g.tensor(n)->shape;
  mark_skippable(out, catalog);
  return out;
}

// The error of `got` against `want` over the outputs both computed. Values that are the same,
// non-finite ones included (a NaN where the other has a NaN), agree; a non-finite value the other
// does not share is an infinite error.
double error_of(const std::map<std::string, Values> &want, const std::map<std::string, Values> &got,
                Metric m) {
  double worst = 0;
  for (const auto &[name, w] : want) {
    auto it = got.find(name);
    if (it == got.end() || it->second.v.size() != w.v.size())
      return INFINITY;
    double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < w.v.size(); ++i) {
      double a = w.v[i], b = it->second.v[i];
      if (a == b || (std::isnan(a) && std::isnan(b))) {
        if (std::isfinite(a))
          dot += a * b, na += a * a, nb += b * b;
        continue;
      }
      if (!std::isfinite(a) || !std::isfinite(b))
        return INFINITY;
      worst = m == Metric::max_abs ? std::max(worst, std::fabs(a - b)) : worst;
      dot += a * b, na += a * a, nb += b * b;
    }
    if (m == Metric::cosine)
      worst = std::max(worst, na == 0 && nb == 0 ? 0 : 1 - dot / std::sqrt(na * nb));
  }
  return worst;
}

struct Judge {
  const OpCatalog &catalog;
  const std::vector<const hal::Target *> &targets;
  const Calibration *calibration;

  // The estimate summed over the targets; infinity when one is incomplete.
  double latency(const Graph &g) const {
    double sum = 0;
    for (const Estimate &e : estimate(g, catalog, targets, calibration, "", Detail::Summary))
      sum += e.complete() ? e.latency_us : INFINITY;
    return sum;
  }
  size_t rejects(const Graph &g) const {
    size_t n = 0;
    for (const CheckResult &c : check(g, catalog, targets, Detail::Summary))
      n += c.count(Severity::Reject);
    return n;
  }
};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

} // namespace

std::vector<Rewrite> load_rewrites(const std::filesystem::path &path) {
  Doc doc = toml::parse_file(path);
  detail::Strict top(doc, path.string(), kTableCode, "rewrite table");
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-rewrites")
    top.fail(doc, "not an anec-rewrites table");
  top.req("version", Doc::Kind::String);
  std::vector<Rewrite> out;
  for (const Doc &d : top.req("rewrite", Doc::Kind::Array).items()) {
    detail::Strict r(d, path.string(), kTableCode, "rewrite");
    Rewrite w;
    w.name = r.req("name", Doc::Kind::String).as_string();
    w.pattern = r.req("pattern", Doc::Kind::String).as_string();
    w.replacement = r.req("replacement", Doc::Kind::String).as_string();
    w.source = r.req("source", Doc::Kind::String).as_string();
    if (!mechanisms().count(w.replacement))
      r.fail(d, w.name + ": unknown replacement '" + w.replacement + "'");
    if (const Doc *cs = r.opt("conditions", Doc::Kind::Array))
      for (const Doc &c : cs->items()) {
        if (!c.is(Doc::Kind::String) || !conditions().count(c.as_string()))
          r.fail(c, w.name + ": unknown condition");
        w.conditions.push_back(c.as_string());
      }
    if (const Doc *to = r.opt("to", Doc::Kind::String))
      w.to = to->as_string();
    if (const Doc *rn = r.opt("rename", Doc::Kind::Table))
      for (const DocMember &m : rn->members())
        w.rename[m.key] = m.value.as_string();
    if (const Doc *set = r.opt("set", Doc::Kind::Table))
      w.set = *set;
    if ((w.replacement == "retype") != !w.to.empty())
      r.fail(d, w.name + ": 'to' goes with the retype replacement");
    r.finish();
    out.push_back(std::move(w));
  }
  top.finish();
  return out;
}

TuneResult tune(const Graph &g, const OpCatalog &catalog, const Numerics &numerics,
                const std::vector<Rewrite> &rewrites, const std::vector<const hal::Target *> &targets,
                const Calibration *calibration, const TuneOptions &options) {
  Judge judge{catalog, targets, calibration};
  // The verdict and the error reported must not depend on the host's BLAS kernel: both graphs are
  // evaluated by the reference GEMM, so two routes to one product agree bit for bit or differ the
  // same way everywhere (compiler/src/eval/reference_gemm.hpp).
  EvalOptions eval = options.eval;
  eval.gemm = Gemm::reference;
  EvalResult reference = evaluate(g, catalog, numerics, eval);
  TuneResult result;
  for (const std::string &o : g.outputs)
    if (!reference.outputs.count(o))
      result.unchecked.push_back(o);
  result.best = g;
  result.before_us = result.after_us = judge.latency(g);
  size_t rejects = judge.rejects(g);
  for (const Rewrite &rule : rewrites) {
    TuneStep step{rule.name, rule.source, {}, 0, result.after_us, result.after_us, false, ""};
    std::optional<Graph> candidate;
    try {
      candidate = rewritten(result.best, rule, catalog, step.sites, options.source_dir);
    } catch (const Error &e) {
      step.why = std::string("the rewritten graph is invalid: ") + e.what();
    }
    if (step.sites.empty())
      continue; // it matches nowhere
    if (candidate) {
      step.error =
          error_of(reference.outputs, evaluate(*candidate, catalog, numerics, eval).outputs, options.metric);
      step.after_us = judge.latency(*candidate);
      if (reference.outputs.empty())
        step.why = "not kept: no output can be evaluated, so the accuracy cannot be checked";
      else if (!(step.error <= options.tolerance))
        step.why =
            "refused: error " + number(step.error) + " exceeds the tolerance " + number(options.tolerance);
      else if (judge.rejects(*candidate) > rejects)
        step.why = "refused: the checker rejects the rewritten graph on a target";
      else if (!(step.after_us < step.before_us) &&
               !(step.after_us == step.before_us && candidate->ops.size() < result.best.ops.size()))
        step.why = "not kept: the estimate does not fall (" + number(step.before_us) + " -> " +
                   number(step.after_us) + " us)";
      else
        step.kept = true, step.why = "kept";
    }
    if (step.kept) {
      result.best = std::move(*candidate);
      result.after_us = step.after_us;
    }
    result.steps.push_back(std::move(step));
  }
  return result;
}

} // namespace anec::compiler
