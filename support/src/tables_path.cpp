#include "anec/support/tables_path.hpp"

#include "anec/support/toml.hpp"

#include <cstdlib>
#include <system_error>

namespace anec {
namespace fs = std::filesystem;

namespace {

// The tables installed beside the running program, empty when it cannot be told (no /proc).
fs::path beside_program() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty())
    return {};
  return (exe.parent_path() / ANEC_BIN_TO_TABLES_DIR).lexically_normal();
}

bool has_schema(const fs::path &dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_directory(dir / "schema", ec);
}

} // namespace

fs::path find_tables(const std::string &option) {
  if (!option.empty())
    return option;
  if (const char *env = std::getenv("ANEC_TABLES"); env && *env)
    return env;
  if (fs::path dir = beside_program(); has_schema(dir))
    return dir;
  if (has_schema(ANEC_SOURCE_TABLES_DIR))
    return ANEC_SOURCE_TABLES_DIR;
  return ANEC_INSTALL_TABLES_DIR;
}

fs::path compiled_tables_dir(const fs::path &tables) {
  if (const char *env = std::getenv("ANEC_COMPILED_TABLES"))
    return env;
  std::error_code ec;
  if (fs::path t = tables.lexically_normal(); !t.empty()) {
    if (!t.has_filename()) // "dir/"
      t = t.parent_path();
    if (fs::path beside = t.parent_path() / "compiled-tables"; fs::is_directory(beside, ec))
      return beside;
  }
  if (fs::is_directory(ANEC_BUILD_COMPILED_TABLES_DIR, ec))
    return ANEC_BUILD_COMPILED_TABLES_DIR;
  return ANEC_INSTALL_COMPILED_TABLES_DIR;
}

fs::path use_tables(const std::string &option) {
  fs::path tables = find_tables(option);
  toml::use_compiled_tables(compiled_tables_dir(tables));
  return tables;
}

} // namespace anec
