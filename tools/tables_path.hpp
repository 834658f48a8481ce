// Where the command-line tools find tables/: --tables DIR, else $ANEC_TABLES, else the source
// tree the tool was built from, else the install prefix.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace anec::tools {

inline std::filesystem::path find_tables(const std::string &option) {
  namespace fs = std::filesystem;
  if (!option.empty()) return option;
  if (const char *env = std::getenv("ANEC_TABLES"); env && *env) return env;
  if (fs::exists(fs::path(ANEC_SOURCE_TABLES_DIR) / "schema")) return ANEC_SOURCE_TABLES_DIR;
  return ANEC_INSTALL_TABLES_DIR;
}

} // namespace anec::tools
