#include "anec/compiler/passes/place.hpp"

#include "anec/support/error.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace anec::compiler {

namespace {
const Interned kEngine("engine"), kGpu("gpu"), kCpu("cpu");
} // namespace

Placement::Counts Placement::counts() const {
  Counts c;
  for (const Partition &p : partitions) {
    c.engine_partitions += p.backend == kEngine;
    c.engine_ops += p.backend == kEngine ? p.count : 0;
    c.gpu_ops += p.backend == kGpu ? p.count : 0;
    c.cpu_ops += p.backend == kCpu ? p.count : 0;
    c.ops += p.count;
  }
  return c;
}

namespace {
const Backend *backend(const OpCatalog &catalog, const std::string &name) {
  for (const Backend &b : catalog.backends())
    if (b.name == name)
      return &b;
  return nullptr;
}

// The backend an op runs on: the engine unless the checker rejects it; then the CPU for an
// operation with no engine path anywhere (the segmenter never offers it to the engine or the GPU),
// else the GPU.
Interned backend_of(const OpSpec *spec, Verdict v) {
  if (v != Verdict::Reject)
    return kEngine;
  return !spec || !spec->floor ? kCpu : kGpu;
}

double coarse_us(const Backend *b, double flops, double bytes) {
  return b ? std::max(flops / (b->gflops * 1e9), bytes / (b->gbps * 1e9)) * 1e6 : 0;
}
// Each op's cost, by its position in the graph. The estimate leaves out the ops it skips (they move
// no data), so it is matched by name; a skipped op has none (nullptr).
std::vector<const OpCost *> costs_by_op(const Graph &g, const Estimate &est) {
  std::unordered_map<std::string_view, const OpCost *> by_name;
  for (const OpCost &c : est.ops)
    by_name.emplace(c.op, &c);
  std::vector<const OpCost *> out;
  out.reserve(g.ops.size());
  for (const Op &op : g.ops) {
    auto found = by_name.find(op.name);
    out.push_back(found == by_name.end() ? nullptr : found->second);
  }
  return out;
}
} // namespace

// Each engine partition is one fused dispatch: its compute at the target's peak against the memory it
// moves (weights, what enters it, what leaves it) at the target's bandwidth, plus the floor; a
// fallback partition is the sum of its operations at its backend's coarse anchors. A partition's
// memory is a sum of whole bytes, exact in a double (below 2^53) in any order: each is added as it is
// met.
struct PlacementSum::State {
  const Graph &g;
  const OpCatalog &catalog;
  double bw;
  Placement p = {};
  struct Sums {
    double compute = 0;
    double memory = 0; // the weights, what enters and what leaves (each tensor once)
  };
  static constexpr uint32_t kNone = UINT32_MAX; // a tensor no partition produced: an input or constant
  std::vector<Sums> sums = {};                  // by partition, reserved as the partitions are
  // A tensor's partitions: the one that produced it and the last one it entered (kNone: none, so it
  // has not left the one that produced it).
  struct Flow {
    uint32_t producer = kNone, entered = kNone;
  };
  std::vector<Flow> flow = {}; // by the tensor's position in the graph
  size_t ops = 0;

  Flow &flow_of(size_t at) {
    if (at >= flow.size())
      flow.resize(std::max(at + 1, g.tensors.capacity())); // the reader reserves every tensor
    return flow[at];
  }
  double bytes(size_t at) const {
    const Tensor &x = g.tensors[at];
    return x.shape.symbolic() ? 0.0 : double(x.bytes());
  }
  void open(const Op &op, Interned on) {
    if (!p.partitions.empty() && p.partitions.back().backend == on)
      return;
    if (p.partitions.size() >= kNone)
      throw Error("ANEC-INTERNAL", "a placement of 2^32 partitions or more");
    p.partitions.push_back({on, ops, 0, op.name, op.name, 0, 0});
    sums.emplace_back();
    const Backend *b = backend(catalog, on);
    p.launch_units += b ? b->launch_units : 0;
  }
  // A tensor entering the current partition from another: it enters each partition once, and leaves
  // the one that produced it once; one transfer per tensor and partition when the other runs on
  // another backend.
  void enter(size_t in, uint32_t from) {
    size_t to = p.partitions.size() - 1;
    Interned on = p.partitions[to].backend;
    uint32_t before = std::exchange(flow_of(in).entered, uint32_t(to));
    if (before == to)
      return; // counted, and its transfer made, when it first entered
    double n = bytes(in);
    sums[to].memory += n;
    if (from == kNone)
      return;
    if (before == kNone)
      sums[from].memory += n;
    if (p.partitions[from].backend == on)
      return;
    Boundary b{g.tensors[in].name, p.partitions[from].backend, on, to, n, 0, 0};
    b.transfer_us = bw > 0 ? b.bytes / bw * 1e6 : 0;
    const Backend *into = backend(catalog, on);
    b.transfer_units = into ? into->transfer_units : 0;
    p.transfer_us += b.transfer_us;
    p.transfer_units += b.transfer_units;
    p.boundaries.push_back(std::move(b));
  }
};

PlacementSum::PlacementSum(const Graph &g, const OpCatalog &catalog, const hal::Target &t,
                           const Estimate &est)
    : state_(std::make_unique<State>(State{g, catalog, est.bandwidth_gbps.value * 1e9})) {
  state_->p.target = t.name;
  // At most a partition an op (a graph read op by op has reserved a tensor at least an op).
  size_t most = std::max(g.ops.size(), g.tensors.capacity());
  state_->p.partitions.reserve(most);
  state_->sums.reserve(most);
}

PlacementSum::~PlacementSum() = default;

Placement &PlacementSum::placement() {
  return state_->p;
}

void PlacementSum::add(const Op &op, const OpTensors &tensors, Verdict verdict,
                       std::vector<const Finding *> reasons, const OpCost *row) {
  State &s = *state_;
  static const OpCost kSkipped{}; // moves no data: no time, no work
  const OpCost &cost = row ? *row : kSkipped;
  Placement &p = s.p;
  Interned on = backend_of(s.catalog.find(op.type), verdict);
  s.open(op, on);
  Partition &part = p.partitions.back();
  State::Sums &sums = s.sums.back();
  ++part.count;
  part.last_op = op.name;
  part.flops += cost.flops;
  p.flops += cost.flops;
  p.engine_flops += on == kEngine ? cost.flops : 0;
  if (on != kEngine)
    part.latency_us += coarse_us(backend(s.catalog, on), cost.flops, cost.bytes);
  sums.compute += cost.compute_us;
  sums.memory += row ? row->weight : weight_bytes(s.g, op, tensors, s.catalog);
  for (size_t k = 0; k < op.inputs.size(); ++k)
    if (uint32_t from = s.flow_of(tensors.ins[k]).producer; from != p.partitions.size() - 1)
      s.enter(tensors.ins[k], from);
  for (size_t k : tensors.outs)
    s.flow_of(k).producer = uint32_t(p.partitions.size() - 1);
  PlacedOp &placed = p.ops.emplace_back(); // filled in place: no row moved
  placed.op = op.name;
  placed.type = op.type;
  placed.backend = on;
  placed.verdict = verdict;
  placed.reasons = std::move(reasons);
  placed.flops = cost.flops;
  ++s.ops;
}

Placement PlacementSum::finish(const Estimate &est) {
  State &s = *state_;
  Placement &p = s.p;
  p.complete = est.complete();
  p.unbound = unbound_dimensions(s.g);
  for (const std::string &out : s.g.outputs) { // an output leaves the partition that produced it
    size_t at = size_t(s.g.tensor(out) - s.g.tensors.data());
    State::Flow &f = s.flow_of(at);
    if (f.producer != State::kNone && f.entered == State::kNone)
      s.sums[f.producer].memory += s.bytes(at);
    f.entered = f.producer; // left: an output named twice leaves once
  }
  for (size_t k = 0; k < p.partitions.size(); ++k) {
    Partition &part = p.partitions[k];
    const State::Sums &sums = s.sums[k];
    if (part.backend == kEngine)
      part.latency_us = std::max(sums.compute, s.bw > 0 ? sums.memory / s.bw * 1e6 : 0) + est.floor_us;
    p.latency_us += part.latency_us;
  }
  p.latency_us += p.transfer_us;
  return std::move(p);
}

Placement place(const Graph &g, const OpCatalog &catalog, const hal::Target &t, const CheckResult &check,
                const Estimate &est) {
  std::unordered_map<std::string_view, std::vector<const Finding *>> rejects; // by op
  for (const Finding &f : check.findings)
    if (f.severity == Severity::Reject && !f.object.empty())
      rejects[f.object].push_back(&f);
  std::vector<const OpCost *> cost = costs_by_op(g, est);
  PlacementSum sum(g, catalog, t, est);
  OpTensors tensors;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    auto r = rejects.find(g.ops[i].name);
    find_tensors(g, g.ops[i], tensors);
    sum.add(g.ops[i], tensors, check.ops[i].verdict,
            r == rejects.end() ? std::vector<const Finding *>{} : r->second, cost[i]);
  }
  return sum.finish(est);
}

} // namespace anec::compiler
