// The steps the tools share over a model file: read, check and estimate on targets.
#pragma once
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/ir/graph.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace anec::compiler {

// A model checked and estimated on targets, keeping the verdicts, counts and totals only
// (Detail::Summary; a null calibration gives the analytic model). An anec-graph file is checked and
// estimated while it is read, op by op (GraphReader), in memory that grows with its tensors, not its
// ops or its size; any other file, or one that reader cannot take, is read whole with load_model,
// whose errors it reports.
struct ModelSummary {
  std::vector<CheckResult> checks;
  std::vector<Estimate> estimates; // in the order of the targets
  bool streamed = false;           // read op by op, not whole
};
ModelSummary summarize_model(const std::filesystem::path &path, const OpCatalog &catalog,
                             const DimBindings &dims, const std::vector<const hal::Target *> &targets,
                             const Calibration *calibration, const std::string &chip = "");

} // namespace anec::compiler
