// libFuzzer target: arbitrary bytes as an anec-graph JSON document, a network plist and an ONNX
// model, through shape inference, the checker, the cost model and the placement on one target.
#include "anec/compiler/check.hpp"
#include "anec/compiler/cost.hpp"
#include "anec/compiler/model.hpp"
#include "anec/compiler/place.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/error.hpp"
#include "anec/support/json.hpp"
#include "anec/support/plist.hpp"

using namespace anec;
using namespace anec::compiler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path tables = ANEC_FUZZ_TABLES_DIR;
  static const hal::Schema schema = hal::Schema::load(tables / "schema" / "hal.toml");
  static const hal::Registry registry = hal::Registry::load(schema, hal::load_lineup(tables / "reference" / "lineup.toml"), tables / "targets");
  static const OpCatalog catalog = OpCatalog::load(tables / "schema" / "ops.toml");
  static const Calibration calibration = Calibration::load(tables / "calibration" / "fitted.toml");
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto run = [&](Graph g) {
    infer_shapes(g, catalog);
    const hal::Target &t = registry.get("h13");
    CheckResult r = check(g, catalog, t);
    place(g, catalog, t, r, estimate(g, catalog, t));
    estimate(g, catalog, t, calibration, "M1");
  };
  try {
    run(read_graph_json(std::string(text), "fuzz.json"));
  } catch (const Error &) {
  }
  try {
    run(read_network_plist(plist::parse(text, "fuzz.plist"), "fuzz.plist", catalog));
  } catch (const Error &) {
  }
  try {
    Graph g = read_onnx(text, "fuzz.onnx", catalog);
    const hal::Target &t = registry.get("h13");
    CheckResult r = check(g, catalog, t);
    place(g, catalog, t, r, estimate(g, catalog, t));
    estimate(g, catalog, t, calibration);
  } catch (const Error &) {
  }
  return 0;
}
