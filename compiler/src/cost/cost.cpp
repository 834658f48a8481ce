#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/ir/attrs.hpp"
#include "anec/compiler/ir/skip.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>
#include <variant>

namespace anec::compiler {

namespace {
double bytes_of(const Graph &g, const std::string &n) {
  return double(g.tensor(n)->bytes());
}
// The kernel's height x width in double: a model's kernel of 2^40 x 2^40 must give a large cost, not
// an overflowed (negative) int64. Shape inference has checked that it holds 2 values.
double window(const OpAttrs &attrs) {
  thread_local std::vector<int64_t> k; // reused: asked for on every window op
  attrs.ints("kernel", k);
  return double(k[0]) * double(k[1]);
}

Param param(const hal::Target &t, const char *field) {
  const hal::Entry *e = t.find(field);
  Param p;
  if (!e)
    return p;
  if (auto *d = std::get_if<double>(&e->value))
    p.value = *d;
  else if (auto *u = std::get_if<uint64_t>(&e->value))
    p.value = double(*u);
  p.provenance = e->provenance.confidence == hal::Confidence::Measured
                     ? "anchored"
                     : hal::confidence_name(e->provenance.confidence);
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
  OpTensors tensors;
  find_tensors(g, op, tensors);
  return op_cost(g, op, tensors, catalog);
}

OpCost op_cost(const Graph &g, const Op &op, const OpTensors &tensors, const OpCatalog &catalog) {
  OpCost c;
  c.op = op.name;
  c.type = op.type;
  const OpSpec *spec = catalog.find(op.type);
  c.form = spec ? spec->cost : "none";
  c.weight = weight_bytes(g, op, tensors, catalog);
  auto form_is = [&](std::string_view form) { return same_text(c.form, form); }; // without a memcmp call
  bool symbolic = false; // an unbound dimension: no cost until it is bound
  for (const auto *list : {&tensors.ins, &tensors.outs})
    for (size_t k : *list)
      symbolic |= g.tensors[k].shape.symbolic();
  if (form_is("none") || symbolic || op.inputs.empty()) {
    c.estimated = false;
    return c;
  }
  for (const auto *list : {&tensors.ins, &tensors.outs})
    for (size_t k : *list)
      c.bytes += double(g.tensors[k].bytes());
  c.bytes += c.weight;
  const Shape &in = g.tensors[tensors.ins[0]].shape, &out = g.tensors[tensors.outs[0]].shape;
  double out_elems = double(out.elements()), in_elems = double(in.elements());
  const OpAttrs attrs(op, catalog);
  auto groups = [&] { return double(std::max<int64_t>(1, attrs.integer("groups"))); };
  if (form_is("conv")) { // 2 x (input-channel passes x kernel volume) per output element
    c.flops = 2.0 * double(in.d[kC]) / groups() * window(attrs) * out_elems;
  } else if (form_is("deconv")) {
    c.flops = 2.0 * double(out.d[kC]) / groups() * window(attrs) * in_elems;
  } else if (form_is("matmul")) { // linear contracts over C; matmul over the left width
    double k = same_text(op.type, "linear") ? double(in.d[kC]) : double(in.d[kW]);
    c.flops = 2.0 * k * out_elems;
  } else if (form_is("pool")) {
    c.flops = window(attrs) * out_elems;
  } else if (form_is("elementwise")) {
    c.flops = out_elems * double(std::max<size_t>(1, op.inputs.size()));
  } else if (form_is("reduction")) {
    c.flops = in_elems;
  } else if (form_is("softmax") || form_is("norm")) { // max/sub/exp/sum/div, mean/var/scale: ~5 per element
    c.flops = 5.0 * in_elems;
  } else if (form_is("attention") && op.inputs.size() >= 3) {
    // decomposed: scores = Q K^T (contract over W), softmax over the keys, out = scores V
    const Shape &q = in, &k = g.tensors[tensors.ins[1]].shape, &v = g.tensors[tensors.ins[2]].shape;
    double heads = double(q.d[kN]) * double(q.d[kD]) * double(q.d[kC]);
    double scores = heads * double(q.d[kH]) * double(k.d[kH]);
    c.flops = 2.0 * scores * double(q.d[kW]) + 5.0 * scores + 2.0 * scores * double(v.d[kW]);
    c.decomposed = true;
  }
  if (attrs.given("flops"))
    c.flops = double(attrs.integer("flops")); // the front-end counted them
  return c;
}

namespace {

// An op without an estimate: with no cost form (a host op) or with unknown shapes. A summary keeps
// the first of each, which is all a matrix row reads (Estimate::complete()).
void left_out(Estimate &e, Detail detail, const std::string &form, const std::string &op) {
  std::vector<std::string> &list = form == "none" ? e.unestimated : e.unknown;
  if (detail == Detail::Full || list.empty())
    list.push_back(op);
}

void skipped(Estimate &e, Detail detail, const std::string &op, double us) {
  ++e.skipped_ops;
  e.skipped_us += us;
  if (detail == Detail::Full)
    e.skipped.push_back(op);
}

// One target's estimate under the analytic model (ch.18), summed one op at a time.
class AnalyticSum {
public:
  AnalyticSum(const Graph &g, const hal::Target &t, const std::unordered_set<std::string> &io, Detail detail)
      : g_(g), io_(io), detail_(detail) {
    e_.target = t.name;
    e_.peak_tflops = param(t, "peak_tflops");
    e_.bandwidth_gbps = param(t, "bandwidth_gbps");
    e_.floor_ms = param(t, "dispatch_floor_ms");
    e_.kind = "analytic";
    peak_ = e_.peak_tflops.value * 1e12;
    bw_ = e_.bandwidth_gbps.value * 1e9;
    // Without a working-set field no intermediate is assumed to spill.
    if (Param ws = param(t, "working_set_bytes"); ws.value > 0)
      on_chip_ = ws.value; // ch.9, ch.12
    // Memory traffic of the fused program: graph inputs and outputs (at the end, when the outputs'
    // shapes are known), constants, weights, and the intermediates too large to stay on chip
    // (written and read back).
    for (const Tensor &x : g.tensors)
      if (x.constant)
        e_.bytes += double(x.bytes());
  }

  // `intermediates`: the bytes of the op's outputs that are not program outputs.
  void add(const Op &op, const OpCost &c, const std::vector<double> &intermediates) {
    double compute_us = peak_ > 0 ? c.flops / peak_ * 1e6 : c.compute_us;
    double memory_us = bw_ > 0 ? c.bytes / bw_ * 1e6 : c.memory_us;
    if (!c.estimated)
      left_out(e_, detail_, c.form, op.name);
    if (c.decomposed)
      e_.kind = "decomposed";
    e_.flops += c.flops;
    e_.bytes += c.weight;
    for (double bytes : intermediates)
      if (bytes > on_chip_)
        e_.bytes += 2 * bytes;
    if (detail_ == Detail::Full) {
      OpCost &row = e_.ops.emplace_back(c);
      row.compute_us = compute_us;
      row.memory_us = memory_us;
      row.bound = memory_us > compute_us ? "bandwidth" : "compute";
    }
  }

  // An op skipped at run time: it adds nothing but the time it would have taken, said apart.
  void skip(const Op &op, const OpCost &c) {
    double compute_us = peak_ > 0 ? c.flops / peak_ * 1e6 : 0, memory_us = bw_ > 0 ? c.bytes / bw_ * 1e6 : 0;
    skipped(e_, detail_, op.name, std::max(compute_us, memory_us));
  }

  Estimate &partial() { return e_; }

  Estimate finish(const OpCatalog &catalog) {
    for (const std::string &n : io_)
      e_.bytes += bytes_of(g_, n);
    e_.compute_us = peak_ > 0 ? e_.flops / peak_ * 1e6 : 0;
    e_.memory_us = bw_ > 0 ? e_.bytes / bw_ * 1e6 : 0;
    e_.floor_us = e_.floor_ms.value * 1e3;
    e_.latency_us = std::max(e_.compute_us, e_.memory_us) + e_.floor_us;
    e_.bound = e_.floor_us >= std::max(e_.compute_us, e_.memory_us) ? "dispatch"
               : e_.memory_us > e_.compute_us                       ? "bandwidth"
                                                                    : "compute";
    order_backends(e_, catalog);
    return std::move(e_);
  }

private:
  const Graph &g_;
  const std::unordered_set<std::string> &io_;
  Detail detail_;
  Estimate e_;
  double peak_ = 0, bw_ = 0, on_chip_ = 0x1p62;
};

// One target's (or one measured chip's) estimate under the calibrated model, summed one op at a time.
class CalibratedSum {
public:
  CalibratedSum(const hal::Target &t, const Calibration &cal, const std::string &chip, Detail detail)
      : cal_(cal), detail_(detail) {
    e_.target = t.name;
    e_.model = "calibrated";
    e_.chip = cal.chips.count(chip) ? chip : "";
    rates_ = rates_of(t, cal, e_.chip, &e_.rates);
    // A named chip without its own calibration is an unseen chip: its band is the leave-one-chip-out one.
    measured_ = !e_.chip.empty() || (chip.empty() && e_.rates[0].second.provenance.starts_with("measured"));
    e_.kind = "analytic";
  }

  void skip(const OpCost &c, const OpTerms &terms) {
    skipped(e_, detail_, c.op, op_time(terms, rates_, cal_).us());
  }

  void add(const OpCost &c, const OpTerms &terms) {
    OpTime time = op_time(terms, rates_, cal_);
    if (!c.estimated)
      left_out(e_, detail_, c.form, c.op);
    if (c.decomposed)
      e_.kind = "decomposed";
    e_.flops += c.flops;
    e_.bytes += terms.weight_bytes + terms.dram_bytes;
    e_.compute_us += time.compute_us;
    e_.memory_us += time.memory_us;
    e_.latency_us += time.us();
    share_[c.form] += time.us();
    if (detail_ == Detail::Full) {
      OpCost &row = e_.ops.emplace_back(c);
      row.compute_us = time.compute_us;
      row.memory_us = time.memory_us;
      row.bound = row.memory_us > row.compute_us ? "bandwidth" : "compute";
    }
  }

  Estimate &partial() { return e_; }

  Estimate finish(const OpCatalog &catalog) {
    double work = e_.latency_us;
    e_.floor_us = rates_.floor_ms() * 1e3;
    e_.latency_us += e_.floor_us;
    share_["dispatch"] += e_.floor_us;
    e_.bound = e_.floor_us >= work ? "dispatch" : e_.memory_us > e_.compute_us ? "bandwidth" : "compute";
    double low = 0, high = 0;
    for (auto &[form, us] : share_) {
      const Family &f = cal_.family(form);
      low += us / e_.latency_us * (measured_ ? f.fit_low : f.loco_low);
      high += us / e_.latency_us * (measured_ ? f.fit_high : f.loco_high);
    }
    e_.latency_low_us = e_.latency_us * std::exp(std::min(low, 0.0));
    e_.latency_high_us = e_.latency_us * std::exp(std::max(high, 0.0));
    order_backends(e_, catalog);
    return std::move(e_);
  }

private:
  const Calibration &cal_;
  Detail detail_;
  Estimate e_;
  Rates rates_;
  bool measured_ = false;
  std::map<std::string, double> share_;
};

} // namespace

struct GraphEstimate::State {
  const Graph &g;
  const OpCatalog &catalog;
  std::unordered_set<std::string> io;
  std::vector<AnalyticSum> analytic = {};
  std::vector<CalibratedSum> calibrated = {};
  std::vector<double> intermediates = {}; // the current op's, for the analytic sums
};

GraphEstimate::GraphEstimate(const Graph &g, const OpCatalog &catalog,
                             const std::vector<const hal::Target *> &targets, const Calibration *calibration,
                             const std::string &chip, Detail detail)
    : state_(std::make_unique<State>(State{g, catalog, program_io(g)})) {
  for (const hal::Target *t : targets)
    if (calibration)
      state_->calibrated.emplace_back(*t, *calibration, chip, detail);
    else
      state_->analytic.emplace_back(g, *t, state_->io, detail);
}

GraphEstimate::~GraphEstimate() = default;

void GraphEstimate::add(const Op &op, const OpTensors &tensors) {
  State &s = *state_;
  OpCost c = op_cost(s.g, op, tensors, s.catalog);
  bool skip = skipped(s.g, op, s.catalog);
  if (!s.calibrated.empty()) {
    OpTerms terms = op_terms(s.g, op, tensors, c, s.io);
    for (CalibratedSum &sum : s.calibrated)
      skip ? sum.skip(c, terms) : sum.add(c, terms);
  }
  if (s.analytic.empty())
    return;
  if (skip) {
    for (AnalyticSum &sum : s.analytic)
      sum.skip(op, c);
    return;
  }
  s.intermediates.clear();
  for (size_t k : tensors.outs)
    if (const Tensor &out = s.g.tensors[k]; !s.io.count(out.name))
      s.intermediates.push_back(double(out.bytes()));
  for (AnalyticSum &sum : s.analytic)
    sum.add(op, c, s.intermediates);
}

Estimate &GraphEstimate::partial(size_t k) {
  State &s = *state_;
  return s.analytic.empty() ? s.calibrated[k].partial() : s.analytic[k].partial();
}

std::vector<Estimate> GraphEstimate::finish() {
  std::vector<Estimate> out;
  for (AnalyticSum &sum : state_->analytic)
    out.push_back(sum.finish(state_->catalog));
  for (CalibratedSum &sum : state_->calibrated)
    out.push_back(sum.finish(state_->catalog));
  return out;
}

std::vector<Estimate> estimate(const Graph &g, const OpCatalog &catalog,
                               const std::vector<const hal::Target *> &targets,
                               const Calibration *calibration, const std::string &chip, Detail detail) {
  GraphEstimate estimates(g, catalog, targets, calibration, chip, detail);
  OpTensors tensors;
  for (const Op &op : g.ops) {
    find_tensors(g, op, tensors);
    estimates.add(op, tensors);
  }
  return estimates.finish();
}

Estimate estimate(const Graph &g, const OpCatalog &catalog, const hal::Target &t) {
  return std::move(estimate(g, catalog, {&t}, nullptr, "", Detail::Full).front());
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
  return std::move(estimate(g, catalog, {&t}, &cal, chip, Detail::Full).front());
}

} // namespace anec::compiler
