// Test helper: the generation-7 register database, loaded once per test program.
#pragma once
#include "anec/descriptors/td_schema.hpp"

#include <filesystem>

namespace anec::test {

inline const desc::TdSchema &gen7() {
  static const desc::TdSchema s = desc::TdSchema::load(std::filesystem::path(ANEC_TEST_TABLES_DIR) / "schema" / "td" / "gen7.toml");
  return s;
}

} // namespace anec::test
