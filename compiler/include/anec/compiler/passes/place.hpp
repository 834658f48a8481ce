// Where each operation of a graph runs on one target, and why (guide ch.18, the segmenter's
// placement model; appendix B: the segmenter dry-runs the engine validators to decide eligibility).
// An operation the checker does not reject runs on the engine (natively or decomposed); a rejected
// one falls back to the GPU, or to the CPU when it has no engine path at all (a host operation,
// control flow, shape arithmetic, an unmapped operator). Consecutive operations on one backend form a
// partition; a tensor that crosses from one partition to another on a different backend is a
// boundary with a transfer. The placed model's estimate adds each engine partition's roofline and
// dispatch floor (the target's silicon-fit parameters), each fallback's coarse roofline at its
// backend's anchors (ch.18 table 18.2) and each transfer at the target's bandwidth; the launch and
// transfer penalties of ch.18 table 18.3 are relative units, reported beside the times.
#pragma once
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/support/interned.hpp"

#include <memory>
#include <string>
#include <vector>

namespace anec::compiler {

struct PlacedOp {
  std::string op, type, backend; // "engine", "gpu" or "cpu"
  Verdict verdict = Verdict::Native;
  std::vector<const Finding *> reasons; // the rejects that moved it off the engine
  double flops = 0;
};

struct Partition {
  Interned backend;              // "engine", "gpu" or "cpu"
  size_t first = 0, count = 0;   // op indices [first, first + count)
  std::string first_op, last_op; // their names
  double flops = 0, latency_us = 0;
};

struct Boundary {
  std::string tensor, from, to; // backends
  size_t partition = 0;         // the partition it enters
  double bytes = 0, transfer_us = 0, transfer_units = 0;
};

struct Placement {
  std::string target;
  std::vector<PlacedOp> ops;
  // Reserved for one an op (PlacementSum): address space, paged in as partitions are made, so that a
  // long graph's list is neither copied as it grows nor scattered in small blocks.
  std::vector<Partition> partitions;
  std::vector<Boundary> boundaries;
  double flops = 0, engine_flops = 0;
  double latency_us = 0, transfer_us = 0, launch_units = 0, transfer_units = 0;
  bool complete = true;             // false: some shape is unknown, no total is given
  std::vector<std::string> unbound; // the unbound input dimensions and how to bind them
  // How many ops and partitions each backend holds, in one pass over the partitions.
  struct Counts {
    size_t engine_partitions = 0, engine_ops = 0, gpu_ops = 0, cpu_ops = 0, ops = 0;
  };
  Counts counts() const;
};

Placement place(const Graph &g, const OpCatalog &catalog, const hal::Target &target, const CheckResult &check,
                const Estimate &estimate);

// The same one op at a time, for a graph read op by op (GraphReader): add() each op with its verdict,
// the rejects that keep it off the engine and its cost (a row of `estimate`, whose bandwidth prices
// the transfers; nullptr for an op the estimate skips, which moves no data); the op's PlacedOp and the
// boundaries it opens are appended to placement(), which a caller printing them as they come may clear;
// finish() adds the partitions' times with the finished estimate's floor.
class PlacementSum {
public:
  PlacementSum(const Graph &g, const OpCatalog &catalog, const hal::Target &target, const Estimate &estimate);
  ~PlacementSum();
  void add(const Op &op, const OpTensors &tensors, Verdict verdict, std::vector<const Finding *> reasons,
           const OpCost *cost);
  Placement &placement();
  Placement finish(const Estimate &estimate);

private:
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace anec::compiler
