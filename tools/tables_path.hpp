// Where the command-line tools find tables/: --tables DIR, else $ANEC_TABLES, else the source
// tree the tool was built from, else the install prefix. Compiled forms of the tables
// (compiled_doc.hpp) are read from $ANEC_COMPILED_TABLES when it is set (empty: none), else from the
// build tree's, else from the install prefix's; a table whose text has none is parsed.
#pragma once
#include "anec/support/toml.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>

namespace anec::tools {

inline std::filesystem::path compiled_tables_dir() {
  if (const char *env = std::getenv("ANEC_COMPILED_TABLES"))
    return env;
  if (std::filesystem::exists(ANEC_BUILD_COMPILED_TABLES_DIR))
    return ANEC_BUILD_COMPILED_TABLES_DIR;
  return ANEC_INSTALL_COMPILED_TABLES_DIR;
}

inline std::filesystem::path find_tables(const std::string &option) {
  namespace fs = std::filesystem;
  toml::use_compiled_tables(compiled_tables_dir());
  if (!option.empty()) return option;
  if (const char *env = std::getenv("ANEC_TABLES"); env && *env) return env;
  if (fs::exists(fs::path(ANEC_SOURCE_TABLES_DIR) / "schema")) return ANEC_SOURCE_TABLES_DIR;
  return ANEC_INSTALL_TABLES_DIR;
}

} // namespace anec::tools
