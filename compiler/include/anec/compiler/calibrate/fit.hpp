// The fit of the calibrated cost model (cost/calibration.hpp) to measured latencies: each
// measured row's program built as a graph (workload.hpp), the model's parameters fitted to them
// (`anec calibrate`), and the errors of a calibration on them.
#pragma once
#include "anec/compiler/calibrate/workload.hpp"
#include "anec/compiler/cost/calibration.hpp"
#include "anec/hal/registry.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace anec::compiler {

// The model structure (tables/calibration/model.toml).
struct Prior {
  std::string target, parameter, source;
  double value = 0, sigma = 0.3;
};
struct ModelSpec {
  double huber_delta = 0.2, outlier_factor = 1.5, sibling_factor = 1.3, factor_prior_sigma = 1.5,
         rule_ridge = 0.5;
  std::string reference_compute = "matmul", reference_stream = "elementwise";
  std::vector<std::string> falloff_families, rule_features, working_set_features;
  std::vector<std::string>
      unmodelled_ops; // measured ops whose path the model does not describe: reported, not fitted
  std::vector<Prior> priors;
  static ModelSpec load(const std::filesystem::path &path); // ANEC-CAL-003 when malformed
};

// One measured row as the fit sees it.
struct Row {
  Measurement m;
  std::string chip;        // the line-up chip
  std::string chip_target; // its target
  std::string machine;     // chip + model id (outliers are per machine)
  Workload w;
  std::vector<OpTerms> terms; // op_terms of w.graph, made once
};
struct RowResult {
  size_t row = 0;
  double predicted_ms = 0, loco_ms = 0; // the fit's, and with the chip's own rows left out
  std::string left_out; // why the fit left it out: "outlier machine", "path not modelled"; "" when fitted
  std::string family;   // the family that takes most of its time
};
struct FitReport {
  Calibration calibration;
  std::map<std::string, std::map<std::string, double>> target_rates; // every target's five values
  std::map<std::string, std::string> target_provenance;              // "measured", "predicted" per target
  std::vector<RowResult> rows;
  std::vector<std::string> outlier_machines;
  std::string rule, working_set_rule;          // the features the rules regress on, for provenance
  std::set<std::string> working_set_published; // targets whose working set the reference publishes
};
// Fits the model to the rows (ANEC-CAL-004 when there is nothing to fit).
FitReport calibrate(const std::vector<Row> &rows, const ModelSpec &spec, const std::vector<Chip> &chips,
                    const hal::Registry &registry, const std::string &source);
// How a calibration predicts the rows, nothing fitted (`anec calibrate --check`): each row at its
// chip's own rates when the calibration has them, else its target's; with `analytic`, the guide's
// analytic form at the target's ch.18 parameters instead (rows grouped by the same families).
FitReport check_calibration(const std::vector<Row> &rows, const Calibration &calibration,
                            const hal::Registry &registry, const OpCatalog &catalog, bool analytic = false);
// The family that takes most of a program's predicted time ("dispatch" when the floor does).
std::string dominant_family(const std::vector<OpTerms> &ops, const Rates &r, const Calibration &c,
                            int dispatches);
// Relative error |predicted - measured| / measured over a group of rows.
struct ErrorStats {
  size_t rows = 0;
  double median = 0, p90 = 0, worst = 0;
};
ErrorStats error_stats(const std::vector<double> &relative_errors);
// Fit and leave-one-chip-out errors grouped by chip ("chip") or by dominant family ("family"),
// outlier machines left out; the key "all" holds every row.
struct ErrorTable {
  std::map<std::string, ErrorStats> fit, loco;
};
ErrorTable error_table(const FitReport &r, const std::vector<Row> &rows, const std::string &by);
// The fitted table (tables/calibration/fitted.toml), deterministic text: values rounded to five
// significant digits.
std::string fitted_toml(const FitReport &r, const std::vector<Row> &rows);
// Rows of a measurement file as the fit sees them. A row on a chip the line-up does not know, or whose
// program cannot be built (ANEC-CAL-002), is skipped with the reason in `skipped`.
std::vector<Row> measured_rows(const std::vector<Measurement> &ms, const std::vector<Chip> &chips,
                               const OpCatalog &catalog, std::vector<std::string> *skipped);

} // namespace anec::compiler
