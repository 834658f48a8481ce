// libFuzzer target: arbitrary bytes as a Core ML model (.mlmodel, the protobuf of Model.proto)
// through the module's validation and parse, the front-end's mapping of layers, pipelines and
// mlProgram functions, shape inference, the checker, the cost model and the placement on one
// target. Every failure must be an anec::Error with a reason code.
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/frontends/coreml.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/error.hpp"

using namespace anec;
using namespace anec::compiler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path tables = ANEC_FUZZ_TABLES_DIR;
  static const hal::Schema schema = hal::Schema::load(tables / "schema" / "hal.toml");
  static const hal::Registry registry =
      hal::Registry::load(schema, hal::load_lineup(tables / "reference" / "lineup.toml"), tables / "targets");
  static const OpCatalog catalog = OpCatalog::load(tables / "schema" / "ops.toml");
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  try {
    Graph g = read_model(bytes, "coreml", "fuzz.mlmodel", catalog);
    const hal::Target &t = registry.get("h13");
    CheckResult r = check(g, catalog, t);
    place(g, catalog, t, r, estimate(g, catalog, t));
  } catch (const Error &) {
  }
  return 0;
}
