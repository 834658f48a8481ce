// The steps the tools share over a model file: read, check and estimate on targets.
#pragma once
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/ir/budget.hpp"
#include "anec/compiler/ir/graph.hpp"
#include "anec/support/printer.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace anec::compiler {

// A model checked and estimated on targets, keeping the verdicts, counts and totals only
// (Detail::Summary; a null calibration gives the analytic model). An anec-graph file is checked and
// estimated while it is read, op by op (GraphReader), in memory that grows with its tensors, not its
// ops or its size; any other file, or one that reader cannot take, is read whole with load_model
// (under the budget `max_memory`), whose errors it reports. The targets are spread over up to
// `threads` threads (this one included), each taking a run of them; the results are the same.
struct ModelSummary {
  std::vector<CheckResult> checks;
  std::vector<Estimate> estimates; // in the order of the targets
  bool streamed = false;           // read op by op, not whole
};
ModelSummary summarize_model(const std::filesystem::path &path, const OpCatalog &catalog,
                             const DimBindings &dims, const std::vector<const hal::Target *> &targets,
                             const Calibration *calibration, const std::string &chip = "",
                             double max_memory = kDefaultMaxMemory, unsigned threads = 1);

// `anec check` (with its placement), `anec estimate` or `anec place` on one target, with the per-op rows,
// while an anec-graph file is read op by op: each op's rows are printed as it is decided into spools
// (support/list_spool.hpp) in the form given, and print() gives, byte for byte, what the documents of
// pipeline/documents.hpp give for the file read whole; memory grows with the tensors, not the ops.
class OneTargetReport {
public:
  enum class Kind { Check, Estimate, Place };
  // nullptr when the file cannot be read this way or reading it fails: read it whole, whose errors
  // are the ones to report. The forms: text and JSON.
  static std::unique_ptr<OneTargetReport> read(Kind kind, const std::filesystem::path &path,
                                               const OpCatalog &catalog, const DimBindings &dims,
                                               const hal::Target &target, const Calibration *calibration,
                                               const std::string &chip, Form form);
  ~OneTargetReport();
  void print(Printer &p) const;
  bool rejects() const; // a check with a rejected op

private:
  struct State;
  explicit OneTargetReport(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace anec::compiler
