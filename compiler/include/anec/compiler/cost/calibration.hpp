// The calibrated cost model: per-op cost terms of a graph, the per-chip rates and per-family
// factors that turn them into a latency (tables/calibration/model.toml gives the form), and the chip
// line-up (tables/reference/chips.toml). The fit that produces tables/calibration/fitted.toml from
// measured latencies (`anec calibrate`) is compiler/calibrate/fit.hpp.
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/hal/registry.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace anec::compiler {

// One op's cost terms, independent of the chip's rates.
struct OpTerms {
  bool estimated = false;     // false: no cost form or unknown shapes (left out of the total)
  std::string family;         // the op's cost form (ops.toml `cost`)
  double flops = 0;           // FLOPs (a multiply-add is 2)
  double weight_bytes = 0;    // constants streamed from DRAM
  double dram_bytes = 0;      // activations crossing DRAM: program inputs and outputs, spilled intermediates
  double chip_bytes = 0;      // activations that stay in the working set
  double operand_bytes = 0;   // every operand, for the size-dependent falloff
  std::vector<OpTerms> parts; // a decomposition (attention): the op costs its parts in turn
};
// The terms of every op, in graph order. Program inputs and outputs cross DRAM; intermediates stay
// on chip (tables/calibration/model.toml says why).
std::vector<OpTerms> op_terms(const Graph &g, const OpCatalog &catalog);
// One op's terms from its tensors, its cost (op_cost in cost.hpp) and the program's inputs and outputs.
struct OpCost;
OpTerms op_terms(const Graph &g, const Op &op, const OpTensors &tensors, const OpCost &cost,
                 const std::unordered_set<std::string> &program_io);
std::unordered_set<std::string> program_io(const Graph &g);

// The five per-chip (or per-target) parameters, as stored in the target tables.
inline constexpr const char *kRateFields[] = {"matmul_tflops", "weight_bandwidth_gbps",
                                              "activation_bandwidth_gbps", "call_floor_ms",
                                              "working_set_bytes"};
struct Rates {
  double v[5] = {0, 0, 0, 0, 0}; // in kRateFields order
  double tflops() const { return v[0]; }
  double weight_gbps() const { return v[1]; }
  double activation_gbps() const { return v[2]; }
  double floor_ms() const { return v[3]; }
  double working_set() const { return v[4]; }
};

struct Family {
  double compute = 1,
         stream = 1;        // rate factors (compute scales matmul_tflops, stream divides the activation rate)
  double falloff_bytes = 0; // 0: no size-dependent falloff
  double fit_low = 0, fit_high = 0;   // 10th and 90th percentile of log(measured / predicted), training rows
  double loco_low = 0, loco_high = 0; // the same, chips predicted with their own rows left out
  size_t rows = 0;
};

struct Chip {
  std::string name, soc, target, source;
  std::vector<std::string> model_ids;
};
// tables/reference/chips.toml. ANEC-CAL-003 on a malformed table or a target `is_target` rejects.
std::vector<Chip> load_chips(const std::filesystem::path &path,
                             const std::function<bool(std::string_view)> &is_target);
// The chip a name or model identifier names ("M4 Pro", "Apple M4 Pro", "Mac16,7"), else nullptr.
const Chip *find_chip(const std::vector<Chip> &chips, const std::string &name_or_model_id);

struct Calibration {
  std::map<std::string, Family> families; // by cost form
  double on_chip_gain = 1;
  std::map<std::string, Rates> chips; // measured chips' own rates
  Family fallback;                    // bands for a family with no rows: the widest
  std::string source;
  const Family &family(const std::string &form) const;
  // tables/calibration/fitted.toml. ANEC-CAL-003 when malformed.
  static Calibration load(const std::filesystem::path &path);
};

// One op's compute and memory time in µs; its time is the larger (for a decomposition, the sum of
// its parts', each counted under the term that binds it).
struct OpTime {
  double compute_us = 0, memory_us = 0;
  double us() const { return compute_us > memory_us ? compute_us : memory_us; }
};
OpTime op_time(const OpTerms &o, const Rates &r, const Calibration &c);
// The same for one op that is not a decomposition, with its family's factors given.
OpTime op_time(const OpTerms &o, const Rates &r, const Family &f, double on_chip_gain);
// Latency of a program in µs (one floor per dispatch); per_op receives each op's time.
double predict_us(const std::vector<OpTerms> &ops, const Rates &r, const Calibration &c, int dispatches = 1,
                  std::vector<double> *per_op = nullptr);

} // namespace anec::compiler
