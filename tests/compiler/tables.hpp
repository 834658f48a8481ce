// The generated target tables and the operation catalogue, loaded once per test program.
#pragma once
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/ir/ops.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"

#include <filesystem>

namespace anec::test {

inline const hal::Registry &registry() {
  static const std::filesystem::path tables = ANEC_TEST_TABLES_DIR;
  static const hal::Schema schema = hal::Schema::load(tables / "schema" / "hal.toml");
  static const hal::Registry r = hal::Registry::load(schema, hal::load_lineup(tables / "reference" / "lineup.toml"), tables / "targets");
  return r;
}

inline const compiler::OpCatalog &catalog() {
  static const compiler::OpCatalog c = compiler::OpCatalog::load(std::filesystem::path(ANEC_TEST_TABLES_DIR) / "schema" / "ops.toml");
  return c;
}

inline const compiler::Numerics &numerics() {
  static const compiler::Numerics n =
      compiler::Numerics::load(std::filesystem::path(ANEC_TEST_TABLES_DIR) / "schema" / "numerics.toml");
  return n;
}

} // namespace anec::test
