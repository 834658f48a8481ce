// Fuzz target: a measurement file, the input of `anec calibrate` (compiler/src/calibrate/workload.cpp: the
// strict tab-separated reader and the workload builders; compiler/src/cost/calibration.cpp: the chip
// line-up), then the calibrated estimate of every row whose program builds.
#include "anec/compiler/calibrate/fit.hpp"
#include "anec/compiler/cost/calibration.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace anec;
using namespace anec::compiler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path tables = ANEC_FUZZ_TABLES_DIR;
  static const hal::Schema schema = hal::Schema::load(tables / "schema" / "hal.toml");
  static const hal::Registry registry =
      hal::Registry::load(schema, hal::load_lineup(tables / "reference" / "lineup.toml"), tables / "targets");
  static const OpCatalog catalog = OpCatalog::load(tables / "schema" / "ops.toml");
  static const std::vector<Chip> chips =
      load_chips(tables / "reference" / "chips.toml", [](std::string_view t) { return registry.find(t); });
  static const Calibration calibration = Calibration::load(tables / "calibration" / "fitted.toml");
  std::string_view text(reinterpret_cast<const char *>(data), size);
  try {
    std::vector<std::string> skipped;
    for (const Row &r : measured_rows(read_measurements(text, "fuzz.tsv"), chips, catalog, &skipped))
      estimate(r.w.graph, catalog, registry.get(r.chip_target), calibration, r.chip);
  } catch (const Error &) {
  }
  return 0;
}
