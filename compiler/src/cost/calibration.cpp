// The calibrated cost model's terms and tables: op terms, the prediction, the chip line-up, the
// model structure and the fitted table.
#include "anec/compiler/cost/calibration.hpp"

#include "anec/compiler/cost/cost.hpp"
#include "anec/support/error.hpp"
#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_set>

namespace anec::compiler {
using anec::detail::Strict;

namespace {
constexpr const char *kTableCode = "ANEC-CAL-003";

// The bytes of an activation operand: in DRAM when it is a program input or output, else on chip.
void add_activation(OpTerms &t, double bytes, bool program_io) {
  t.operand_bytes += bytes;
  (program_io ? t.dram_bytes : t.chip_bytes) += bytes;
}

// Attention as its decomposition (guide ch.18 gives it no analytic form): scores = Q Kᵀ, a softmax
// over the score matrix (on chip), out = scores V.
std::vector<OpTerms> attention_parts(const Graph &g, const Op &op,
                                     const std::unordered_set<std::string> &io) {
  const Shape &q = g.tensor(op.inputs[0])->shape, &k = g.tensor(op.inputs[1])->shape,
              &v = g.tensor(op.inputs[2])->shape;
  double heads = double(q.d[kN]) * double(q.d[kD]) * double(q.d[kC]),
         scores = heads * double(q.d[kH]) * double(k.d[kH]) * 2;
  auto bytes = [&](size_t i) { return double(g.tensor(op.inputs[i])->bytes()); };
  auto in_io = [&](size_t i) { return io.count(op.inputs[i]) > 0; };
  std::vector<OpTerms> parts(3);
  parts[0].family = parts[2].family = "matmul";
  parts[1].family = "softmax";
  for (OpTerms &p : parts)
    p.estimated = true;
  parts[0].flops = scores * double(q.d[kW]);
  add_activation(parts[0], bytes(0), in_io(0));
  add_activation(parts[0], bytes(1), in_io(1));
  add_activation(parts[0], scores, false);
  parts[1].flops = 2.5 * scores;
  add_activation(parts[1], 2 * scores, false);
  parts[2].flops = scores * double(v.d[kW]);
  add_activation(parts[2], scores, false);
  add_activation(parts[2], bytes(2), in_io(2));
  add_activation(parts[2], double(g.tensor(op.outputs[0])->bytes()), io.count(op.outputs[0]) > 0);
  return parts;
}

std::string folded(std::string s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += char(std::tolower(static_cast<unsigned char>(c)));
  return out.rfind("apple", 0) == 0 ? out.substr(5) : out;
}

Family read_family(const Doc &d, const std::string &src) {
  Strict r(d, src, kTableCode, "family");
  Family f;
  f.compute = r.number("compute");
  f.stream = r.number("stream");
  f.falloff_bytes = r.number("falloff_bytes");
  f.fit_low = r.number("fit_low");
  f.fit_high = r.number("fit_high");
  f.loco_low = r.number("loco_low");
  f.loco_high = r.number("loco_high");
  f.rows = size_t(r.req("rows", Doc::Kind::Int).as_int());
  r.finish();
  if (f.compute <= 0 || f.stream <= 0 || f.falloff_bytes < 0)
    r.fail(d, "family factors must be positive");
  return f;
}
} // namespace

OpTerms op_terms(const Graph &g, const Op &op, const OpTensors &tensors, const OpCost &c,
                 const std::unordered_set<std::string> &io) {
  OpTerms t;
  t.estimated = c.estimated;
  t.family = c.form;
  t.flops = c.flops;
  if (c.estimated && c.decomposed)
    t.parts = attention_parts(g, op, io);
  t.weight_bytes = c.weight;
  for (size_t k = 0; k < tensors.ins.size(); ++k) {
    const Tensor &x = g.tensors[tensors.ins[k]];
    if (x.constant)
      t.weight_bytes += double(x.bytes());
    else
      add_activation(t, double(x.bytes()), io.count(op.inputs[k]) > 0);
  }
  for (size_t k = 0; k < tensors.outs.size(); ++k)
    add_activation(t, double(g.tensors[tensors.outs[k]].bytes()), io.count(op.outputs[k]) > 0);
  t.operand_bytes += t.weight_bytes;
  return t;
}

std::unordered_set<std::string> program_io(const Graph &g) {
  std::unordered_set<std::string> io(g.inputs.begin(), g.inputs.end());
  io.insert(g.outputs.begin(), g.outputs.end());
  return io;
}

std::vector<OpTerms> op_terms(const Graph &g, const OpCatalog &catalog) {
  std::unordered_set<std::string> io = program_io(g);
  std::vector<OpTerms> out;
  OpTensors tensors;
  for (const Op &op : g.ops) {
    find_tensors(g, op, tensors);
    out.push_back(op_terms(g, op, tensors, op_cost(g, op, tensors, catalog), io));
  }
  return out;
}

const Family &Calibration::family(const std::string &form) const {
  auto it = families.find(form);
  return it == families.end() ? fallback : it->second;
}

OpTime op_time(const OpTerms &o, const Rates &r, const Family &f, double on_chip_gain) {
  double falloff = f.falloff_bytes > 0 ? 1 + o.operand_bytes / f.falloff_bytes : 1;
  double activation =
      o.dram_bytes / (r.activation_gbps() * 1e3) + o.chip_bytes / (r.activation_gbps() * 1e3 * on_chip_gain);
  return {o.flops / (r.tflops() * 1e6 * f.compute) * falloff,
          o.weight_bytes / (r.weight_gbps() * 1e3) + f.stream * activation};
}

OpTime op_time(const OpTerms &o, const Rates &r, const Calibration &c) {
  if (!o.estimated)
    return {};
  if (o.parts.empty())
    return op_time(o, r, c.family(o.family), c.on_chip_gain);
  OpTime sum; // a decomposition: its parts run one after the other
  for (const OpTerms &p : o.parts) {
    OpTime t = op_time(p, r, c);
    (t.compute_us > t.memory_us ? sum.compute_us : sum.memory_us) += t.us();
  }
  return sum;
}

double predict_us(const std::vector<OpTerms> &ops, const Rates &r, const Calibration &c, int dispatches,
                  std::vector<double> *per_op) {
  double total = dispatches * r.floor_ms() * 1e3;
  for (const OpTerms &o : ops) {
    double t = op_time(o, r, c).us();
    if (per_op)
      per_op->push_back(t);
    total += t;
  }
  return total;
}

std::vector<Chip> load_chips(const std::filesystem::path &path,
                             const std::function<bool(std::string_view)> &is_target) {
  std::string src = path.string();
  Doc doc = toml::parse_file(path);
  Strict top(doc, src, kTableCode, "chip line-up");
  if (top.req("format", Doc::Kind::String).as_string() != "anec-chips/1")
    top.fail(doc, "format must be \"anec-chips/1\"");
  std::vector<Chip> out;
  for (const Doc &d : top.req("chip", Doc::Kind::Array).items()) {
    Strict r(d, src, kTableCode, "chip");
    Chip c;
    c.name = r.req("name", Doc::Kind::String).as_string();
    c.soc = r.req("soc", Doc::Kind::String).as_string();
    c.target = r.req("target", Doc::Kind::String).as_string();
    c.source = r.req("source", Doc::Kind::String).as_string();
    c.model_ids = r.strings("model_ids");
    r.finish();
    if (!is_target(c.target))
      r.fail(d, "chip " + c.name + ": unknown target '" + c.target + "'");
    std::vector<std::string> keys = c.model_ids;
    keys.push_back(c.name);
    for (const std::string &key : keys)
      if (find_chip(out, key))
        r.fail(d, "'" + key + "' names two chips");
    out.push_back(std::move(c));
  }
  top.finish();
  return out;
}

const Chip *find_chip(const std::vector<Chip> &chips, const std::string &key) {
  std::string k = folded(key);
  for (const Chip &c : chips) {
    if (folded(c.name) == k)
      return &c;
    for (const std::string &id : c.model_ids)
      if (folded(id) == k)
        return &c;
  }
  return nullptr;
}

Calibration Calibration::load(const std::filesystem::path &path) {
  std::string src = path.string();
  Doc doc = toml::parse_file(path);
  Strict top(doc, src, kTableCode, "calibration");
  if (top.req("format", Doc::Kind::String).as_string() != "anec-calibration/1")
    top.fail(doc, "format must be \"anec-calibration/1\"");
  Calibration c;
  c.source = top.req("source", Doc::Kind::String).as_string();
  c.on_chip_gain = top.number("on_chip_gain");
  for (const DocMember &m : top.req("families", Doc::Kind::Table).members())
    c.families[m.key] = read_family(m.value, src);
  c.fallback = read_family(top.req("fallback", Doc::Kind::Table), src);
  for (const DocMember &m : top.req("chips", Doc::Kind::Table).members()) {
    Strict r(m.value, src, kTableCode, "chips." + m.key);
    Rates rates;
    for (size_t i = 0; i < 5; ++i)
      rates.v[i] = r.number(kRateFields[i]);
    r.req("target", Doc::Kind::String);
    r.req("rows", Doc::Kind::Int);
    r.finish();
    c.chips[m.key] = rates;
  }
  top.req("targets", Doc::Kind::Table); // the target tables' share (hal reads it)
  top.opt("fit", Doc::Kind::Table);     // the fit's summary, for readers
  top.finish();
  return c;
}

} // namespace anec::compiler
