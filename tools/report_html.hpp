// `anec report`: one self-contained HTML page about a model on one target or all of them — the
// target matrix as a heat map, a roofline chart per target, the placement partitions, the most
// expensive operations and the check's findings with their catalogue text. The analysis is the
// check, estimate and place commands' own; this file only renders it.
#pragma once
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/hal/target.hpp"
#include "anec/support/reasons.hpp"

#include <string>
#include <vector>

namespace anec::tools {

// One entry per target, in the same order in every vector. `estimates` is the model `anec
// estimate` prints (calibrated unless asked otherwise); `placements` are `anec place`'s.
struct ReportInput {
  const compiler::Graph &graph;
  std::string model; // the file as given
  const std::vector<const hal::Target *> &targets;
  const std::vector<compiler::CheckResult> &checks;
  const std::vector<compiler::Estimate> &estimates;
  const std::vector<compiler::Placement> &placements;
  const ReasonCatalog &reasons;
  size_t top = 10; // the operations listed under "top costs", per target
};

std::string report_html(const ReportInput &in);

} // namespace anec::tools
