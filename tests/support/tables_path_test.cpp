// Where the library finds the tables without being told (tables_path.hpp): an option wins, then
// $ANEC_TABLES; a test in the build tree has no tables beside it, so it finds the source tree's;
// compiled forms are read from compiled-tables/ beside the tables (the install layout) when there
// is one, else from the build tree's; $ANEC_COMPILED_TABLES wins, even empty.
#include "anec/support/tables_path.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// Sets (or, with nullptr, unsets) an environment variable for the life of the object.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char *n, const char *value) : name(n) {
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

} // namespace

TEST(TablesPath, OptionThenEnvironmentThenSourceTree) {
  ScopedEnv unset("ANEC_TABLES", nullptr);
  EXPECT_EQ(anec::find_tables("/elsewhere/tables"), fs::path("/elsewhere/tables"));
  EXPECT_EQ(anec::find_tables(), fs::path(ANEC_TEST_PROJECT_DIR) / "tables");
  ScopedEnv env("ANEC_TABLES", "/from/env");
  EXPECT_EQ(anec::find_tables(), fs::path("/from/env"));
  EXPECT_EQ(anec::find_tables("/elsewhere/tables"), fs::path("/elsewhere/tables"));
}

TEST(TablesPath, CompiledFormsBesideTheTablesThenTheBuildTree) {
  ScopedEnv unset("ANEC_COMPILED_TABLES", nullptr);
  fs::path root = fs::temp_directory_path() / ("anec_tables_path_" + std::to_string(getpid()));
  fs::create_directories(root / "share" / "anec" / "tables" / "schema");
  EXPECT_EQ(anec::compiled_tables_dir(root / "share" / "anec" / "tables"),
            fs::path(ANEC_TEST_COMPILED_TABLES_DIR));
  fs::create_directories(root / "share" / "anec" / "compiled-tables");
  EXPECT_EQ(anec::compiled_tables_dir(root / "share" / "anec" / "tables"),
            root / "share" / "anec" / "compiled-tables");
  EXPECT_EQ(anec::compiled_tables_dir(root / "share" / "anec" / "tables/"),
            root / "share" / "anec" / "compiled-tables");
  ScopedEnv env("ANEC_COMPILED_TABLES", "");
  EXPECT_EQ(anec::compiled_tables_dir(root / "share" / "anec" / "tables"), fs::path());
  fs::remove_all(root);
}
