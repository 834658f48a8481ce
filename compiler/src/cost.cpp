#include "anec/compiler/cost.hpp"

#include "anec/support/error.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>
#include <variant>

namespace anec::compiler {

namespace {
double elements(const Graph &g, const std::string &n) { return double(g.tensor(n)->shape.elements()); }
double bytes_of(const Graph &g, const std::string &n) { return double(g.tensor(n)->bytes()); }
// Products of attribute values and extents are taken in double: a model's kernel of 2^40 x 2^40 must
// give a large cost, not an overflowed (negative) int64.
double window(const std::vector<int64_t> &k) { return double(k[0]) * double(k[1]); }

Param param(const hal::Target &t, const char *field) {
  const hal::Entry *e = t.find(field);
  Param p;
  if (!e) return p;
  if (auto *d = std::get_if<double>(&e->value)) p.value = *d;
  else if (auto *u = std::get_if<uint64_t>(&e->value)) p.value = double(*u);
  p.provenance = e->provenance.confidence == hal::Confidence::Measured ? "anchored" : hal::confidence_name(e->provenance.confidence);
  return p;
}

// Placement model: coarse per-backend rooflines and the per-segment launch penalty
// (tables/schema/placement.toml, ch.18 tables 18.2, 18.3).
void order_backends(Estimate &e, const OpCatalog &catalog) {
  for (const Backend &b : catalog.backends())
    e.placement.push_back(
        {b.name, std::max(e.flops / (b.gflops * 1e9), e.bytes / (b.gbps * 1e9)) * 1e6, b.launch_units});
  std::stable_sort(e.placement.begin(), e.placement.end(),
                   [](auto &a, auto &b) { return a.coarse_us < b.coarse_us; });
}

} // namespace

OpCost op_cost(const Graph &g, const Op &op, const OpCatalog &catalog) {
  OpCost c;
  c.op = op.name;
  c.type = op.type;
  const OpSpec *spec = catalog.find(op.type);
  c.form = spec ? spec->cost : "none";
  bool symbolic = false; // an unbound dimension: no cost until it is bound
  for (const std::string &n : op.inputs) symbolic |= g.tensor(n)->shape.symbolic();
  for (const std::string &n : op.outputs) symbolic |= g.tensor(n)->shape.symbolic();
  if (c.form == "none" || symbolic || op.inputs.empty()) {
    c.estimated = false;
    return c;
  }
  for (const std::string &n : op.inputs) c.bytes += bytes_of(g, n);
  for (const std::string &n : op.outputs) c.bytes += bytes_of(g, n);
  c.bytes += weight_bytes(g, op);
  const Shape &in = g.tensor(op.inputs[0])->shape, &out = g.tensor(op.outputs[0])->shape;
  double out_elems = elements(g, op.outputs[0]), in_elems = elements(g, op.inputs[0]);
  double groups = double(std::max<int64_t>(1, op.attr("groups", 1)));
  if (c.form == "conv") { // 2 x (input-channel passes x kernel volume) per output element
    auto k = op.attrs_of("kernel", {1, 1});
    c.flops = 2.0 * double(in.d[kC]) / groups * window(k) * out_elems;
  } else if (c.form == "deconv") {
    auto k = op.attrs_of("kernel", {1, 1});
    c.flops = 2.0 * double(out.d[kC]) / groups * window(k) * in_elems;
  } else if (c.form == "matmul") { // linear contracts over C; matmul over the left width
    double k = op.type == "linear" ? double(in.d[kC]) : double(in.d[kW]);
    c.flops = 2.0 * k * out_elems;
  } else if (c.form == "pool") {
    auto k = op.attrs_of("kernel", {1, 1});
    c.flops = window(k) * out_elems;
  } else if (c.form == "elementwise") {
    c.flops = out_elems * double(std::max<size_t>(1, op.inputs.size()));
  } else if (c.form == "reduction") {
    c.flops = in_elems;
  } else if (c.form == "softmax" || c.form == "norm") { // max/sub/exp/sum/div, mean/var/scale: ~5 per element
    c.flops = 5.0 * in_elems;
  } else if (c.form == "attention" && op.inputs.size() >= 3) {
    // decomposed: scores = Q K^T (contract over W), softmax over the keys, out = scores V
    const Shape &q = in, &k = g.tensor(op.inputs[1])->shape, &v = g.tensor(op.inputs[2])->shape;
    double heads = double(q.d[kN]) * double(q.d[kD]) * double(q.d[kC]);
    double scores = heads * double(q.d[kH]) * double(k.d[kH]);
    c.flops = 2.0 * scores * double(q.d[kW]) + 5.0 * scores + 2.0 * scores * double(v.d[kW]);
    c.decomposed = true;
  }
  if (const Doc *f = op.attrs.find("flops"); f && f->is(Doc::Kind::Int)) c.flops = double(f->as_int()); // the front-end counted them
  return c;
}

GraphCosts graph_costs(const Graph &g, const OpCatalog &catalog, bool calibrated) {
  GraphCosts out;
  out.ops.reserve(g.ops.size());
  out.terms.reserve(g.ops.size());
  out.weights.reserve(g.ops.size());
  std::unordered_set<std::string> io = program_io(g);
  for (const Op &op : g.ops) {
    out.ops.push_back(op_cost(g, op, catalog));
    if (calibrated)
      out.terms.push_back(op_terms(g, op, out.ops.back(), io));
    out.weights.push_back(weight_bytes(g, op));
  }
  return out;
}

Estimate estimate(const Graph &g, const OpCatalog &catalog, const hal::Target &t) {
  return estimate(g, graph_costs(g, catalog, false), catalog, t);
}

Estimate estimate(const Graph &g, const GraphCosts &costs, const OpCatalog &catalog, const hal::Target &t,
                  Detail detail) {
  Estimate e;
  e.target = t.name;
  e.peak_tflops = param(t, "peak_tflops");
  e.bandwidth_gbps = param(t, "bandwidth_gbps");
  e.floor_ms = param(t, "dispatch_floor_ms");
  // Without a working-set field no intermediate is assumed to spill.
  double peak = e.peak_tflops.value * 1e12, bw = e.bandwidth_gbps.value * 1e9, on_chip = 0x1p62;
  if (Param ws = param(t, "working_set_bytes"); ws.value > 0)
    on_chip = ws.value; // ch.9, ch.12
  // Memory traffic of the fused program: graph inputs and outputs, constants, weights, and the
  // intermediates too large to stay on chip (written and read back).
  std::set<std::string> io(g.inputs.begin(), g.inputs.end());
  io.insert(g.outputs.begin(), g.outputs.end());
  for (const std::string &n : io) e.bytes += bytes_of(g, n);
  for (const Tensor &x : g.tensors)
    if (x.constant) e.bytes += double(x.bytes());
  e.kind = "analytic";
  if (detail == Detail::Full)
    e.ops.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op &op = g.ops[i];
    OpCost c = costs.ops[i];
    if (peak > 0) c.compute_us = c.flops / peak * 1e6;
    if (bw > 0) c.memory_us = c.bytes / bw * 1e6;
    c.bound = c.memory_us > c.compute_us ? "bandwidth" : "compute";
    if (!c.estimated) (c.form == "none" ? e.unestimated : e.unknown).push_back(op.name);
    if (c.decomposed) e.kind = "decomposed";
    e.flops += c.flops;
    e.bytes += costs.weights[i];
    for (const std::string &n : op.outputs)
      if (!io.count(n) && bytes_of(g, n) > on_chip) e.bytes += 2 * bytes_of(g, n);
    if (detail == Detail::Full)
      e.ops.push_back(std::move(c));
  }
  e.compute_us = peak > 0 ? e.flops / peak * 1e6 : 0;
  e.memory_us = bw > 0 ? e.bytes / bw * 1e6 : 0;
  e.floor_us = e.floor_ms.value * 1e3;
  e.latency_us = std::max(e.compute_us, e.memory_us) + e.floor_us;
  e.bound = e.floor_us >= std::max(e.compute_us, e.memory_us) ? "dispatch" : e.memory_us > e.compute_us ? "bandwidth" : "compute";
  order_backends(e, catalog);
  return e;
}

Rates rates_of(const hal::Target &t, const Calibration &cal, const std::string &chip,
               std::vector<std::pair<std::string, Param>> *provenance) {
  auto own = cal.chips.find(chip);
  Rates r;
  for (size_t k = 0; k < 5; ++k) {
    Param p = param(t, kRateFields[k]);
    if (own != cal.chips.end() && k < 4)
      p = {own->second.v[k], "measured-fit on " + chip};
    else if (p.provenance ==
             "anchored") // a measured working set is the guide's; calibrate writes others as predicted
      p.provenance = k == 4 ? "published" : "measured-fit";
    else if (p.provenance == "predicted")
      p.provenance = "predicted-by-rule";
    if (p.value <= 0)
      throw Error("ANEC-CAL-005", "target " + t.name + " has no calibrated " + kRateFields[k] +
                                      " (run anec calibrate and anec-hal generate)");
    r.v[k] = p.value;
    if (provenance)
      provenance->push_back({kRateFields[k], p});
  }
  return r;
}

Estimate estimate(const Graph &g, const OpCatalog &catalog, const hal::Target &t, const Calibration &cal,
                  const std::string &chip) {
  return estimate(g, graph_costs(g, catalog), catalog, t, cal, chip);
}

Estimate estimate(const Graph &g, const GraphCosts &costs, const OpCatalog &catalog, const hal::Target &t,
                  const Calibration &cal, const std::string &chip, Detail detail) {
  if (costs.terms.size() != g.ops.size())
    throw Error("ANEC-INTERNAL", "the calibrated estimate was given costs made without the calibrated terms");
  Estimate e;
  e.target = t.name;
  e.model = "calibrated";
  e.chip = cal.chips.count(chip) ? chip : "";
  Rates r = rates_of(t, cal, e.chip, &e.rates);
  // A named chip without its own calibration is an unseen chip: its band is the leave-one-chip-out one.
  bool measured = !e.chip.empty() || (chip.empty() && e.rates[0].second.provenance.starts_with("measured"));
  e.kind = "analytic";
  if (detail == Detail::Full)
    e.ops.reserve(g.ops.size());
  std::map<std::string, double> share;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    OpCost c = costs.ops[i];
    const OpTerms &terms = costs.terms[i];
    OpTime time = op_time(terms, r, cal);
    c.compute_us = time.compute_us;
    c.memory_us = time.memory_us;
    c.bound = c.memory_us > c.compute_us ? "bandwidth" : "compute";
    if (!c.estimated)
      (c.form == "none" ? e.unestimated : e.unknown).push_back(c.op);
    if (c.decomposed)
      e.kind = "decomposed";
    e.flops += c.flops;
    e.bytes += terms.weight_bytes + terms.dram_bytes;
    e.compute_us += time.compute_us;
    e.memory_us += time.memory_us;
    e.latency_us += time.us();
    share[c.form] += time.us();
    if (detail == Detail::Full)
      e.ops.push_back(std::move(c));
  }
  double work = e.latency_us;
  e.floor_us = r.floor_ms() * 1e3;
  e.latency_us += e.floor_us;
  share["dispatch"] += e.floor_us;
  e.bound = e.floor_us >= work ? "dispatch" : e.memory_us > e.compute_us ? "bandwidth" : "compute";
  double low = 0, high = 0;
  for (auto &[form, us] : share) {
    const Family &f = cal.family(form);
    low += us / e.latency_us * (measured ? f.fit_low : f.loco_low);
    high += us / e.latency_us * (measured ? f.fit_high : f.loco_high);
  }
  e.latency_low_us = e.latency_us * std::exp(std::min(low, 0.0));
  e.latency_high_us = e.latency_us * std::exp(std::max(high, 0.0));
  order_backends(e, catalog);
  return e;
}

} // namespace anec::compiler
