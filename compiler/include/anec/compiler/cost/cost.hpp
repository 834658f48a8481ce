// The analytic cost model (seed ch.18): per op, FLOPs and operand bytes; compute time = FLOPs /
// peak, memory time = bytes / bandwidth; latency = max(compute, memory) + dispatch floor, with the
// per-target peak, bandwidth and floor from the target tables and their provenance (anchored =
// measured on silicon, else predicted). A graph is one fused program: it pays one floor, and only
// graph inputs, outputs, weights and intermediates too large to stay on chip move through memory.
// Attention has no analytic form: its estimate is decomposed (two matmuls and a softmax) and
// labelled so. The placement model's backend order (engine / GPU / CPU) uses the coarse anchors of
// ch.18 table 18.2 and its launch penalties (table 18.3: 0.05 to the engine, 0.10 to another
// backend, relative units that do not convert to time, so they are reported beside the order).
//
// The calibrated model (the default of `anec estimate`; calibration.hpp) sums per-op rooflines with
// separate weight and activation bandwidths and per-family factors fitted to measured latencies,
// and gives an error band from the fit's residuals.
#pragma once
#include "anec/compiler/cost/calibration.hpp"
#include "anec/compiler/ir/detail.hpp"
#include "anec/compiler/ir/graph.hpp"

#include <memory>
#include <string>
#include <vector>

namespace anec::compiler {

struct OpCost {
  std::string op, type, form;
  double flops = 0, bytes = 0;          // bytes as a separate dispatch: inputs, outputs, weights
  double weight = 0;                    // the embedded weight bytes (weight_bytes)
  double compute_us = 0, memory_us = 0; // standalone roofline terms
  std::string bound;                    // "compute" or "bandwidth" (standalone)
  bool estimated = true;                // false: no cost form (a host op)
  bool decomposed = false;              // true: estimated through a decomposition (attention)
};

struct Param {
  double value = 0;
  std::string provenance; // "anchored" (measured) or "predicted", or the table confidence
};

struct Estimate {
  std::string target;
  Param peak_tflops, bandwidth_gbps, floor_ms;
  double flops = 0, bytes = 0, compute_us = 0, memory_us = 0, floor_us = 0, latency_us = 0;
  std::string bound;              // "dispatch", "bandwidth" or "compute"
  std::string kind;               // "analytic", "decomposed" (some op estimated through a decomposition)
  std::string model = "analytic"; // or "calibrated"
  std::string chip;               // the chip whose own calibration was used ("" : the target's)
  double latency_low_us = 0, latency_high_us = 0;   // the error band (calibrated model)
  std::vector<std::pair<std::string, Param>> rates; // calibrated model: the five rates and their provenance
  std::vector<std::string> unestimated; // ops with no cost form (host operations), left out of the total
  std::vector<std::string> unknown;     // ops whose shapes are not known (unbound dimensions): no total
  // Ops skipped because they move no data (compiler/ir/skip.hpp): how many, their names (Detail::Full),
  // and the time they would have taken, left out of the total.
  size_t skipped_ops = 0;
  std::vector<std::string> skipped;
  double skipped_us = 0;
  bool complete() const { return unknown.empty(); }
  std::vector<OpCost> ops;
  struct Placement {
    std::string backend;
    double coarse_us = 0;    // the coarse roofline at the backend's anchors
    double launch_units = 0; // the per-segment launch penalty, in the model's relative units
  };
  std::vector<Placement> placement; // fastest first; the graph as one segment on each backend
};

OpCost op_cost(const Graph &g, const Op &op, const OpCatalog &catalog);
OpCost op_cost(const Graph &g, const Op &op, const OpTensors &tensors, const OpCatalog &catalog);

// The guide's analytic form (ch.18): max(compute, memory) + floor over the whole graph.
Estimate estimate(const Graph &g, const OpCatalog &catalog, const hal::Target &target);
// The calibrated model on a target, or on one measured chip of it (its own rates from the
// calibration; any other chip uses the target's). The band comes from the fit residuals of the ops'
// families: the training residuals where the rates were measured, the leave-one-chip-out residuals
// where they are predicted.
Estimate estimate(const Graph &g, const OpCatalog &catalog, const hal::Target &target,
                  const Calibration &calibration, const std::string &chip = "");

// Estimates on several targets at once (--target all): each op's cost form, work, terms and weight
// bytes are worked out once for all of them. A null calibration gives the analytic model.
// Detail::Summary keeps no per-op rows (Estimate::ops), only the totals, and the first op of the
// unestimated and unknown lists.
std::vector<Estimate> estimate(const Graph &g, const OpCatalog &catalog,
                               const std::vector<const hal::Target *> &targets,
                               const Calibration *calibration, const std::string &chip = "",
                               Detail detail = Detail::Full);

// The same one op at a time, for a graph read op by op (GraphReader): add() each op once the graph
// holds its tensors with their shapes (the graph's outputs named from the start); finish() gives one
// estimate per target.
class GraphEstimate {
public:
  GraphEstimate(const Graph &g, const OpCatalog &catalog, const std::vector<const hal::Target *> &targets,
                const Calibration *calibration, const std::string &chip = "", Detail detail = Detail::Full);
  ~GraphEstimate();
  void add(const Op &op, const OpTensors &tensors);
  // The estimate on targets[k] so far: its rows (ops and the names it leaves out) a caller that
  // prints them as they come may take and clear.
  Estimate &partial(size_t k);
  std::vector<Estimate> finish();

private:
  struct State;
  std::unique_ptr<State> state_;
};

// The calibrated rates of a target (from its table) or of a measured chip, with provenance.
Rates rates_of(const hal::Target &target, const Calibration &calibration, const std::string &chip,
               std::vector<std::pair<std::string, Param>> *provenance = nullptr);

} // namespace anec::compiler
