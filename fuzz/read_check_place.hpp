// The body of the fuzz targets of one front-end: bytes read as a model of `format` through the one
// pipeline (read_model), then checked, estimated and placed on one target. Every failure must be an
// anec::Error with a reason code; anything else (a crash, a sanitizer report, an uncaught
// exception) is a finding.
#pragma once
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/error.hpp"

#include <cstdint>
#include <string_view>

inline int read_check_place(const uint8_t *data, size_t size, std::string_view format, const char *source,
                            const anec::compiler::DimBindings &dims = {}) {
  using namespace anec;
  using namespace anec::compiler;
  static const std::filesystem::path tables = ANEC_FUZZ_TABLES_DIR;
  static const hal::Schema schema = hal::Schema::load(tables / "schema" / "hal.toml");
  static const hal::Registry registry =
      hal::Registry::load(schema, hal::load_lineup(tables / "reference" / "lineup.toml"), tables / "targets");
  static const OpCatalog catalog = OpCatalog::load(tables / "schema" / "ops.toml");
  try {
    Graph g = read_model(std::string_view(reinterpret_cast<const char *>(data), size), format, source,
                         catalog, dims);
    const hal::Target &t = registry.get("h13");
    CheckResult r = check(g, catalog, t);
    place(g, catalog, t, r, estimate(g, catalog, t));
  } catch (const Error &) {
  }
  return 0;
}
