// Measured latencies as graphs: a strict reader of the measurement files (tab-separated: chip,
// model_id, op, params, gflop, lat_ms, source_file; ../shared/data/ane-measured/README.md) and, per
// row, the program that was timed, built as an anec graph so the cost model can be calibrated
// against the measurement. Source of the rows: ANEForge roofline runs (sbryngelson/ANEForge),
// CC BY 4.0.
#pragma once
#include "anec/compiler/ir/graph.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace anec::compiler {

// One row of a measurement file.
struct Measurement {
  std::string chip, model_id, op, params, source_file;
  double gflop = -1; // -1 where "NA"
  double lat_ms = 0;
  size_t line = 0; // 1-based line in the file
};

// Strict: ANEC-CAL-001 (file:line and the offending value) on a header that does not name the seven
// columns in order, a missing or extra column, a gflop that is neither a number >= 0 nor NA, or a
// lat_ms that is not a finite number above zero.
std::vector<Measurement> read_measurements(std::string_view text, const std::string &source);

// The timed program of a row.
struct Workload {
  Graph graph;                          // shapes inferred, every op known to the catalogue
  int dispatches = 1;                   // programs timed back to back (2 for wc_dft_matmul_2nets)
  std::vector<std::string> assumptions; // each value the row did not record that the builder chose
};

// ANEC-CAL-002 (the op name, or the missing, NA or malformed parameter) when the op is not one the
// builder knows or a parameter its program needs is absent, NA or out of range.
Workload build_workload(const Measurement &m, const OpCatalog &catalog);

// The op names build_workload knows, sorted.
std::vector<std::string> workload_ops();

} // namespace anec::compiler
