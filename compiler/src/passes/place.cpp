#include "anec/compiler/passes/place.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

namespace anec::compiler {

size_t Placement::count(const std::string &backend) const {
  return size_t(
      std::count_if(ops.begin(), ops.end(), [&](const PlacedOp &o) { return o.backend == backend; }));
}
size_t Placement::partitions_on(const std::string &backend) const {
  return size_t(std::count_if(partitions.begin(), partitions.end(),
                              [&](const Partition &p) { return p.backend == backend; }));
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
std::string backend_of(const OpSpec *spec, Verdict v) {
  if (v != Verdict::Reject)
    return "engine";
  return !spec || !spec->floor ? "cpu" : "gpu";
}

double coarse_us(const Backend *b, double flops, double bytes) {
  return b ? std::max(flops / (b->gflops * 1e9), bytes / (b->gbps * 1e9)) * 1e6 : 0;
}
// Each op's cost, by its position in the graph. The estimate leaves out the ops it skips (they move
// no data), so it is matched by name; a skipped op costs nothing.
std::vector<const OpCost *> costs_by_op(const Graph &g, const Estimate &est) {
  static const OpCost kSkipped{};
  std::unordered_map<std::string_view, const OpCost *> by_name;
  for (const OpCost &c : est.ops)
    by_name.emplace(c.op, &c);
  std::vector<const OpCost *> out;
  out.reserve(g.ops.size());
  for (const Op &op : g.ops) {
    auto found = by_name.find(op.name);
    out.push_back(found == by_name.end() ? &kSkipped : found->second);
  }
  return out;
}
} // namespace

Placement place(const Graph &g, const OpCatalog &catalog, const hal::Target &t, const CheckResult &check,
                const Estimate &est) {
  Placement p;
  p.target = t.name;
  p.complete = est.complete();
  p.unbound = unbound_dimensions(g);
  std::unordered_map<std::string_view, std::vector<const Finding *>> rejects; // by op
  for (const Finding &f : check.findings)
    if (f.severity == Severity::Reject && !f.object.empty())
      rejects[f.object].push_back(&f);
  // The partition that produces each tensor, by the tensor's position in the graph.
  std::vector<size_t> producer(g.tensors.size(), SIZE_MAX);
  auto position = [&](const std::string &n) { return size_t(g.tensor(n) - g.tensors.data()); };
  std::set<std::pair<std::string, size_t>> crossed;
  double bw = est.bandwidth_gbps.value * 1e9, floor_us = est.floor_us;
  std::vector<const OpCost *> cost = costs_by_op(g, est);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op &op = g.ops[i];
    PlacedOp placed{
        op.name, op.type,       backend_of(catalog.find(op.type), check.ops[i].verdict), check.ops[i].verdict,
        {},      cost[i]->flops};
    if (auto r = rejects.find(op.name); r != rejects.end())
      placed.reasons = r->second;
    if (p.partitions.empty() || p.partitions.back().backend != placed.backend) {
      p.partitions.push_back({placed.backend, i, 0, 0, 0});
      const Backend *b = backend(catalog, placed.backend);
      p.launch_units += b ? b->launch_units : 0;
    }
    Partition &part = p.partitions.back();
    ++part.count;
    part.flops += placed.flops;
    p.flops += placed.flops;
    if (placed.backend == "engine")
      p.engine_flops += placed.flops;
    for (const std::string &in : op.inputs) {
      size_t from = producer[position(in)];
      if (from == SIZE_MAX || p.partitions[from].backend == placed.backend)
        continue;
      if (!crossed.insert({in, p.partitions.size() - 1}).second)
        continue; // one transfer per tensor and partition
      Boundary b{in, p.partitions[from].backend, placed.backend, p.partitions.size() - 1, 0, 0, 0};
      const Tensor &x = *g.tensor(in);
      b.bytes = x.shape.symbolic() ? 0 : double(x.bytes());
      b.transfer_us = bw > 0 ? b.bytes / bw * 1e6 : 0;
      const Backend *to = backend(catalog, placed.backend);
      b.transfer_units = to ? to->transfer_units : 0;
      p.transfer_us += b.transfer_us;
      p.transfer_units += b.transfer_units;
      p.boundaries.push_back(std::move(b));
    }
    for (const std::string &out : op.outputs)
      producer[position(out)] = p.partitions.size() - 1;
    p.ops.push_back(std::move(placed));
  }
  // Each engine partition is one fused dispatch: its compute at the target's peak against the
  // memory it moves (weights, what enters it, what leaves it) at the target's bandwidth, plus the
  // floor; a fallback partition is the sum of its operations at its backend's coarse anchors.
  std::vector<size_t> part_of(g.ops.size());
  for (size_t k = 0; k < p.partitions.size(); ++k)
    for (size_t i = p.partitions[k].first; i < p.partitions[k].first + p.partitions[k].count; ++i)
      part_of[i] = k;
  std::vector<std::map<std::string, double>> moved(p.partitions.size()); // tensor -> bytes, per partition
  auto bytes = [&](const std::string &n) {
    return g.tensor(n)->shape.symbolic() ? 0.0 : double(g.tensor(n)->bytes());
  };
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (const std::string &in : g.ops[i].inputs) {
      size_t from = producer[position(in)];
      if (from == part_of[i])
        continue;
      moved[part_of[i]][in] = bytes(in);
      if (from != SIZE_MAX)
        moved[from][in] = bytes(in);
    }
  for (const std::string &out : g.outputs)
    if (size_t from = producer[position(out)]; from != SIZE_MAX)
      moved[from][out] = bytes(out);
  for (size_t k = 0; k < p.partitions.size(); ++k) {
    Partition &part = p.partitions[k];
    double compute = 0, memory = 0;
    for (size_t i = part.first; i < part.first + part.count; ++i) {
      const OpCost &c = *cost[i];
      if (part.backend != "engine")
        part.latency_us += coarse_us(backend(catalog, part.backend), c.flops, c.bytes);
      compute += c.compute_us;
      memory += weight_bytes(g, g.ops[i], catalog);
    }
    for (const auto &[name, b] : moved[k])
      memory += b;
    if (part.backend == "engine")
      part.latency_us = std::max(compute, bw > 0 ? memory / bw * 1e6 : 0) + floor_us;
    p.latency_us += part.latency_us;
  }
  p.latency_us += p.transfer_us;
  return p;
}

} // namespace anec::compiler
