// The host reference evaluator (anec/compiler/eval/eval.hpp): the graph run op by op through the kernels
// of eval_kernels.cpp, with the fp16 rounding points and cliffs of guide ch.3 applied around each.
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/ir/skip.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/half.hpp"
#include "anec/support/inside.hpp"
#include "anec/support/npy.hpp"
#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace anec::compiler {

Numerics Numerics::load(const std::filesystem::path &path) {
  Doc doc = toml::parse_file(path);
  detail::Strict top(doc, path.string(), "ANEC-OPS-001", "numerics table");
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-numerics")
    top.fail(doc, "not an anec-numerics table");
  top.req("version", Doc::Kind::String);
  Numerics n;
  n.fp16_max = detail::as_number(top.req("fp16_max", Doc::Kind::Float));
  n.accumulator_ceiling = detail::as_number(top.req("accumulator_ceiling", Doc::Kind::Float));
  n.width_slice_gain = detail::as_number(top.req("width_slice_gain", Doc::Kind::Float));
  n.log_zero = detail::as_number(top.req("log_zero", Doc::Kind::Float));
  n.flush_accumulator_subnormals = top.req("flush_accumulator_subnormals", Doc::Kind::Bool).as_bool();
  top.finish();
  return n;
}

bool evaluates(const std::string &op_type) {
  return eval_detail::kernels().count(op_type) > 0;
}

namespace {

using namespace eval_detail;

// A value below the smallest normal half (2^-14) but not zero.
bool half_subnormal(float x) {
  return x != 0 && std::fabs(x) < 0x1p-14f;
}

// The engine's value at the input boundary: a NaN becomes +infinity, the rest round to half.
void engine_input(std::vector<float> &v) {
  for (float &x : v)
    if (std::isnan(x))
      x = kInf;
  round_to_half(std::span<float>(v));
}

// The evaluation of one graph: every tensor's values, freed after their last reader.
class Evaluation {
public:
  Evaluation(const Graph &g, const OpCatalog &catalog, const Numerics &num, const EvalOptions &opt)
      : g_(g), catalog_(catalog), num_(num), opt_(opt) {
    for (const Tensor &t : g.tensors)
      if (!t.shape.symbolic() && t.shape.elements() > opt.max_elements)
        throw Error("ANEC-EVAL-004", g.source + ": tensor '" + t.name + "' " + t.shape.str() + " holds " +
                                         std::to_string(t.shape.elements()) + " elements, more than the " +
                                         std::to_string(opt.max_elements) + " the evaluator holds");
    for (const Tensor &t : g.tensors)
      if (t.shape.symbolic())
        throw Error("ANEC-EVAL-001", g.source + ": tensor '" + t.name + "' has the symbolic shape " +
                                         t.shape.str() + "; " + unbound_hint(g, t.shape));
    for (const auto &[name, v] : opt.inputs)
      if (std::find(g.inputs.begin(), g.inputs.end(), name) == g.inputs.end())
        throw Error("ANEC-EVAL-002", g.source + ": the graph has no input '" + name + "'");
    for (size_t i = 0; i < g.ops.size(); ++i)
      for (const std::string &n : g.ops[i].inputs)
        last_use_[n] = i;
    check_budget();
  }

  EvalResult run() {
    for (const std::string &name : g_.inputs)
      load_input(name);
    for (size_t i = 0; i < g_.ops.size(); ++i)
      run_op(i);
    EvalResult r;
    for (const std::string &name : g_.outputs) // moved out: the evaluation ends here
      if (auto it = values_.find(name); it != values_.end() && !r.outputs.count(name))
        r.outputs.emplace(name, std::move(it->second));
    r.report = std::move(report_);
    return r;
  }

private:
  static std::string first_symbol(const Shape &s) {
    for (const std::string &name : s.symbol)
      if (!name.empty())
        return name;
    return "";
  }
  static std::string unbound_hint(const Graph &g, const Shape &s) {
    std::string hint = binding_hint(g, first_symbol(s));
    return hint.starts_with("--dim") ? "bind it with " + hint : hint;
  }
  bool fp16() const { return opt_.precision == Precision::fp16; }

  static double bytes_of(const Tensor &t) { return 4.0 * double(t.shape.elements()); }
  bool kept(const std::string &name) const { return outputs_.count(name) > 0; }

  // Plans the evaluation's memory from the shapes, as run() will hold it, and refuses it before a
  // value is made when its peak, with what the caller reserves, is over the budget (ANEC-MEM-001).
  void check_budget() const {
    std::unordered_set<std::string> live;
    double now = 0, peak = 0, kept_bytes = 0, callers = opt_.reserved_bytes;
    std::string at = "the inputs";
    auto hold = [&](const std::string &n) {
      if (live.insert(n).second)
        now += bytes_of(*g_.tensor(n));
    };
    for (const std::string &n : g_.inputs)
      hold(n);
    for (const auto &[name, v] : opt_.inputs) // the caller's copies
      callers += 4.0 * double(v.v.size());
    peak = now;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op &op = g_.ops[i];
      double during = op_scratch(op);
      for (const std::string &n : op.inputs)
        hold(n);
      for (const std::string &n : op.outputs)
        hold(n);
      if (now + during > peak)
        peak = now + during, at = "op '" + excerpt(op.name) + "' (" + op.type + ")";
      for (const std::string &n : dropped_after(i))
        if (live.erase(n))
          now -= bytes_of(*g_.tensor(n));
    }
    for (const std::string &n : g_.outputs)
      kept_bytes += live.count(n) ? bytes_of(*g_.tensor(n)) : 0;
    if (peak + callers <= opt_.max_bytes)
      return;
    throw Error(
        "ANEC-MEM-001",
        g_.source + ": evaluating needs " + size_text(peak + callers) + ", more than the memory budget of " +
            size_text(opt_.max_bytes) + " (--max-memory): its tensors peak at " + size_text(peak) + " at " +
            at + ", " + size_text(kept_bytes) + " of it the " + std::to_string(g_.outputs.size()) +
            " graph output(s) kept to the end" +
            (callers > 0 ? ", and " + size_text(callers) + " given or to be written" : std::string()));
  }

  // What an op holds besides its operands while it runs: its kernel's scratch, its embedded
  // weights, and in fp16 the flushed copies of a multiply-accumulate's operands.
  double op_scratch(const Op &op) const {
    std::vector<const Shape *> in;
    double operands = 0, embedded = 0;
    for (const std::string &n : op.inputs) {
      in.push_back(&g_.tensor(n)->shape);
      operands += bytes_of(*g_.tensor(n));
    }
    for (const char *part : {"/weight", "/bias"})
      if (auto it = g_.values.find(op.name + part); it != g_.values.end())
        embedded += 4.0 * double(it->second.data.size());
    Shape out = op.outputs.empty() ? Shape{} : g_.tensor(op.outputs[0])->shape;
    double scratch = 4.0 * scratch_elements(op, OpAttrs(op, catalog_), in, out);
    return scratch + embedded + (fp16() && accumulates(op.type) ? operands : 0);
  }

  // The values no op after `index` reads: its inputs read last there, its outputs nobody reads;
  // the graph outputs are kept.
  std::vector<std::string> dropped_after(size_t index) const {
    std::vector<std::string> out;
    const Op &op = g_.ops[index];
    for (const std::string &n : op.inputs)
      if (last_use_.at(n) == index && !kept(n))
        out.push_back(n);
    for (const std::string &n : op.outputs)
      if (!last_use_.count(n) && !kept(n))
        out.push_back(n);
    return out;
  }

  Values shaped(const Tensor &t) const {
    Values v;
    v.d = t.shape.d;
    return v;
  }

  void load_input(const std::string &name) {
    Values v = shaped(*g_.tensor(name));
    if (auto it = opt_.inputs.find(name); it != opt_.inputs.end()) {
      if (it->second.elements() != v.elements())
        throw Error("ANEC-EVAL-002", g_.source + ": input '" + name + "' has " +
                                         std::to_string(it->second.elements()) +
                                         " values, the graph's shape " + g_.tensor(name)->shape.str() + " " +
                                         std::to_string(v.elements()));
      v.v = it->second.v;
    } else {
      v.v = seeded(opt_.seed, name, v.elements(), 1);
      report_.seeded.push_back(name + " (input)");
    }
    store(name, std::move(v));
  }

  // A constant's values: its "file", its "data", or seeded values (reported).
  const Values *constant(const std::string &name) {
    const Tensor &t = *g_.tensor(name);
    Values v = shaped(t);
    auto given = g_.values.find(name);
    if (given == g_.values.end()) {
      v.v = seeded(opt_.seed, name, v.elements(), 1);
      report_.seeded.push_back(name + " (constant)");
    } else if (!given->second.file.empty()) {
      std::filesystem::path path = opt_.base / given->second.file;
      if (!resolve_inside(opt_.base, given->second.file))
        throw Error("ANEC-EVAL-003", path.string() + ": constant '" + name +
                                         "': its file resolves outside the model's folder");
      std::vector<uint8_t> bytes = read_file(path);
      npy::Array a = npy::read(bytes, path.string());
      if (int64_t(a.count()) != v.elements())
        throw Error("ANEC-EVAL-003", path.string() + ": constant '" + name + "' holds " +
                                         std::to_string(a.count()) + " values, its shape " + t.shape.str() +
                                         " " + std::to_string(v.elements()));
      for (double x : a.values())
        v.v.push_back(float(x));
    } else {
      v.v = given->second.data;
    }
    return store(name, std::move(v));
  }

  const Values *store(const std::string &name, Values v) {
    if (fp16())
      engine_input(v.v);
    return &(values_[name] = std::move(v));
  }

  const Values *value_of(const std::string &name) {
    if (auto it = values_.find(name); it != values_.end())
      return &it->second;
    if (g_.tensor(name)->constant)
      return constant(name);
    return nullptr; // an op upstream was not evaluated
  }

  void run_op(size_t index) {
    const Op &op = g_.ops[index];
    Call c{op, OpAttrs(op, catalog_), num_, fp16(), report_, {}, {}, opt_.seed, opt_.gemm};
    try {
      auto k = kernels().find(op.type);
      if (k == kernels().end())
        throw Unevaluated{
            "the evaluator has no kernel for it (the graph format does not define its semantics)"};
      for (const std::string &n : op.inputs) {
        const Values *v = value_of(n);
        if (!v)
          throw Unevaluated{"reads '" + n + "', which was not computed"};
        c.in.push_back(v);
      }
      add_embedded(c);
      for (const std::string &n : op.outputs) {
        c.out.push_back(shaped(*g_.tensor(n)));
        c.out.back().v.resize(size_t(c.out.back().elements()));
      }
      if (fp16() && accumulates(op.type))
        flush_operands(c);
      if (skipped(g_, op, catalog_)) { // it moves no data: its output is its input, reshaped
        c.out[0].v = c.in[0]->v;
        report_.skipped.push_back(op.name + " (" + op.type + ")");
      } else {
        k->second(c);
      }
      if (fp16())
        round_outputs(c);
    } catch (const Unevaluated &u) {
      report_.unevaluated.emplace_back(op.name, op.type + ": " + u.why);
      c.out.clear();
    }
    for (size_t k = 0; k < c.out.size(); ++k)
      values_[op.outputs[k]] = std::move(c.out[k]);
    flushed_.clear();
    embedded_.clear();
    release(index);
  }

  // An op whose weights a front-end embedded (an ONNX initializer) reads them as its second and
  // third inputs: Graph::values "<op>/weight" and "<op>/bias".
  void add_embedded(Call &c) {
    if (c.in.size() != 1)
      return;
    for (const char *part : {"/weight", "/bias"}) {
      auto it = g_.values.find(c.op.name + part);
      if (it == g_.values.end())
        return;
      Values v;
      v.d = {1, 1, 1, 1, int64_t(it->second.data.size())};
      v.v = it->second.data;
      if (fp16())
        engine_input(v.v);
      c.in.push_back(&embedded_.emplace_back(std::move(v)));
    }
  }

  // Inside the multiply-accumulate subnormal operands are flushed to +0 (guide ch.3).
  void flush_operands(Call &c) {
    if (!num_.flush_accumulator_subnormals)
      return;
    for (const Values *&in : c.in) {
      bool any = std::any_of(in->v.begin(), in->v.end(), half_subnormal);
      if (!any)
        continue;
      flushed_.push_back(*in);
      for (float &x : flushed_.back().v)
        if (half_subnormal(x))
          x = 0;
      in = &flushed_.back();
    }
  }

  // The output port: an indeterminate form is +0, the accumulator saturates past its ceiling, the
  // rest rounds to half (infinity past fp16_max), and a subnormal sum is flushed (guide ch.3).
  void round_outputs(Call &c) {
    bool mac = accumulates(c.op.type) && !single_tap(c);
    int64_t saturated = 0, overflowed = 0, flushed = 0;
    float ceiling = float(num_.accumulator_ceiling);
    for (Values &o : c.out) {
      for (float &x : o.v) { // rounding turns a finite value infinite, never the reverse
        if (std::isnan(x))
          x = 0;
        else if (mac && std::isfinite(x) && std::fabs(x) > ceiling)
          x = std::copysign(kInf, x), ++saturated;
        overflowed += std::isfinite(x);
      }
      round_to_half(std::span<float>(o.v));
      for (float &x : o.v) {
        overflowed -= std::isfinite(x);
        if (mac && num_.flush_accumulator_subnormals && half_subnormal(x))
          x = 0, ++flushed;
      }
    }
    c.note("value(s) past the accumulator ceiling " + std::to_string(int64_t(num_.accumulator_ceiling)) +
               " became infinity",
           saturated);
    c.note("value(s) past the fp16 maximum " + std::to_string(int64_t(num_.fp16_max)) + " became infinity",
           overflowed);
    c.note("subnormal result(s) flushed to zero in the accumulator", flushed);
  }

  // A convolution of one tap (one input channel per group, a 1x1 kernel) does not pass the
  // accumulator's narrower port (guide ch.3: a single-channel pointwise conv passes 60000).
  bool single_tap(const Call &c) const {
    if (c.op.type != "conv")
      return false;
    auto k = c.attrs.ints("kernel");
    int64_t groups = std::max<int64_t>(1, c.attrs.integer("groups"));
    return k.size() == 2 && k[0] * k[1] * (c.x().d[kC] / groups) == 1;
  }

  void release(size_t index) {
    for (const std::string &n : dropped_after(index))
      values_.erase(n);
  }

  const Graph &g_;
  const OpCatalog &catalog_;
  const Numerics &num_;
  const EvalOptions &opt_;
  EvalReport report_;
  std::unordered_map<std::string, Values> values_;
  std::unordered_map<std::string, size_t> last_use_;
  std::unordered_set<std::string> outputs_{g_.outputs.begin(), g_.outputs.end()};
  std::deque<Values> flushed_;  // operands with subnormals flushed, for the op being run
  std::deque<Values> embedded_; // the op's embedded weights and bias, for the op being run
};

} // namespace

EvalResult evaluate(const Graph &g, const OpCatalog &catalog, const Numerics &numerics,
                    const EvalOptions &options) {
  return Evaluation(g, catalog, numerics, options).run();
}

} // namespace anec::compiler
