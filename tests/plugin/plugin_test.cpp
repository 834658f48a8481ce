// Modules loaded on first use (anec/support/plugin.hpp): the loader's search and its errors, and
// that each tool loads a module only for the commands that need the library inside it.
#include "../errors.hpp"
#include "../run_tool.hpp"
#include "anec/support/file.hpp"
#include "anec/support/plugin.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace anec;
using test::code_of;
namespace fs = std::filesystem;

namespace {

const std::string kTools = ANEC_TEST_TOOLS_DIR, kTables = ANEC_TEST_TABLES_DIR;
const fs::path kFixtures = ANEC_TEST_FIXTURE_DIR, kShared = ANEC_TEST_SHARED_DIR;

// A scratch folder of files named as modules that are not shared objects, made ANEC_PLUGIN_DIR
// for the life of the object (the tools run by a test inherit it).
class BrokenModules {
public:
  BrokenModules() : dir_(fs::temp_directory_path() / ("anec-plugin-" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    for (const char *name : {"anec_decode_backends", "anec_onnx_backend", "bogus"})
      write_output(dir_ / plugin::file_name(name), "not a shared object\n");
    write_output(dir_ / "model.onnx", "not a model either\n");
    ::setenv("ANEC_PLUGIN_DIR", dir_.c_str(), 1);
  }
  ~BrokenModules() {
    ::unsetenv("ANEC_PLUGIN_DIR");
    fs::remove_all(dir_);
  }
  const fs::path &dir() const { return dir_; }

private:
  fs::path dir_;
};

TEST(PluginLoader, SearchesThePluginDirThenTheBuildTreeThenTheInstallFolder) {
  ASSERT_EQ(std::getenv("ANEC_PLUGIN_DIR"), nullptr) << "the tests run without ANEC_PLUGIN_DIR";
  std::vector<fs::path> path = plugin::search_path();
  ASSERT_EQ(path.size(), 2u);
  EXPECT_TRUE(fs::exists(path[0] / plugin::file_name("anec_decode_backends"))) << path[0];
  EXPECT_TRUE(fs::exists(path[0] / plugin::file_name("anec_onnx_backend"))) << path[0];
  EXPECT_EQ(path[1].filename(), "anec");
  BrokenModules broken;
  path = plugin::search_path();
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0], broken.dir());
}

TEST(PluginLoader, AMissingModuleNamesEveryPathTried) {
  std::string msg;
  EXPECT_EQ(code_of([&] { plugin::load("anec_no_such_module", "entry", 1, 8); }, &msg), "ANEC-PLUGIN-001");
  for (const fs::path &dir : plugin::search_path())
    EXPECT_NE(msg.find((dir / "anec_no_such_module.so").string()), std::string::npos) << msg;
}

TEST(PluginLoader, TheEntryFunctionAndTheInterfaceVersionAreChecked) {
  std::string msg;
  EXPECT_EQ(code_of([&] { plugin::load("anec_decode_backends", "no_such_entry", 1, 8); }, &msg),
            "ANEC-PLUGIN-002");
  EXPECT_NE(msg.find("no entry function no_such_entry"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { plugin::load("anec_onnx_backend", "anec_onnx_backend_entry", 1000, 8); }, &msg),
            "ANEC-PLUGIN-002");
  EXPECT_NE(msg.find("needs version 1000 with a 8-byte table"), std::string::npos) << msg;
}

TEST(PluginLoader, AFileTheDynamicLoaderRefusesIsReported) {
  BrokenModules broken;
  std::string msg;
  EXPECT_EQ(code_of([&] { plugin::load("bogus", "entry", 1, 8); }, &msg), "ANEC-PLUGIN-003");
  EXPECT_NE(msg.find((broken.dir() / "bogus.so").string()), std::string::npos) << msg;
  // ANEC_PLUGIN_DIR comes first: the build tree's good module is not used instead.
  EXPECT_EQ(code_of([&] { plugin::load("anec_decode_backends", "anec_decode_backends_entry", 1, 8); }),
            "ANEC-PLUGIN-003");
}

// With modules that cannot load first on the path, every command that does not need one works and
// every command that does fails on the module.
TEST(PluginTools, ACommandLoadsAModuleOnlyWhenItNeedsTheLibraryInside) {
  BrokenModules broken;
  auto run = [&](const std::string &tool, const std::string &args) {
    return test::run_tool(kTools + "/" + tool, kTables, args);
  };
  EXPECT_EQ(run("anec-hal", "list").status, 0);
  EXPECT_EQ(run("anec-hal", "show m1").status, 0);
  EXPECT_EQ(run("anec-fw", "commands").status, 0);
  EXPECT_EQ(run("anec", "explain ANEC-PLUGIN-001").status, 0);
  // A file that is not a binary is rejected by its magic, before LIEF would be needed.
  test::ToolRun r = run("anec-hal", "xref " + (broken.dir() / "model.onnx").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ANEC-BIN-002"), std::string::npos) << r.err;
  r = run("anec-hal", "xref " + (kFixtures / "libhal_O2.dylib").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ANEC-PLUGIN-003"), std::string::npos) << r.err;
  r = run("anec", "check " + (broken.dir() / "model.onnx").string() + " --target h13");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ANEC-PLUGIN-003"), std::string::npos) << r.err;
  fs::path plist = kShared / "testdata" / "external" / "tinygrad" / "net.plist";
  if (fs::exists(plist)) {
    EXPECT_EQ(run("anec", "check " + plist.string() + " --target h13").status, 0);
  }
}

} // namespace
