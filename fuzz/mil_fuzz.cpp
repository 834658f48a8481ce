// libFuzzer target: arbitrary bytes as MIL text, parsed, taken to a graph (no weight folder: every
// BLOBFILE is sized from its type), then checked, estimated and placed on one target. The parse is
// bounded (nesting, item and size caps), so any input ends in a graph or an Error.
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/mil.hpp"
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
  std::string_view text(reinterpret_cast<const char *>(data), size);
  try {
    Graph g = read_model(text, "mil", "fuzz.mil", catalog, {{"S", 8}});
    const hal::Target &t = registry.get("h13");
    CheckResult r = check(g, catalog, t);
    place(g, catalog, t, r, estimate(g, catalog, t));
  } catch (const Error &) {
  }
  return 0;
}
