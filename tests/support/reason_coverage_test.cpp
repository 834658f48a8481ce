// Coverage of the reason catalogue: every code the sources report is catalogued once, every
// catalogued code is reported somewhere and exercised by a test (this file, which names codes, is
// not counted), and docs/reasons.md is the catalogue rendered.
#include "anec/support/file.hpp"
#include "anec/support/reasons.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <regex>
#include <set>

using namespace anec;
namespace fs = std::filesystem;

namespace {

const fs::path kProject = ANEC_TEST_PROJECT_DIR;

const ReasonCatalog &catalog() {
  static const ReasonCatalog c = ReasonCatalog::load(kProject / "tables" / "schema" / "reasons.toml");
  return c;
}

// Every ANEC-XXX-NNN in the C++ and TOML files under the given folders of the project.
std::set<std::string> codes_under(std::initializer_list<const char *> folders) {
  static const std::regex code(R"(ANEC-[A-Z0-9]+-[0-9]{3})");
  std::set<std::string> out;
  for (const char *folder : folders)
    for (const auto &e : fs::recursive_directory_iterator(kProject / folder)) {
      std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".toml"))
        continue;
      if (e.path().filename() == "reasons.toml" || e.path().filename() == "reason_coverage_test.cpp")
        continue;
      std::string text = read_text_file(e.path());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), code); it != std::sregex_iterator(); ++it)
        out.insert(it->str());
    }
  return out;
}

std::set<std::string> catalogued() {
  std::set<std::string> out;
  for (const Reason &r : catalog().reasons())
    if (r.code != "ANEC-INTERNAL")
      out.insert(r.code);
  return out;
}

} // namespace

TEST(Reasons, EveryReportedCodeIsCataloguedAndEveryCatalogueEntryIsReported) {
  std::set<std::string> used =
      codes_under({"support", "layout", "decode", "hal", "descriptors", "compiler", "firmware", "tools", "tables"});
  std::set<std::string> have = catalogued();
  for (const std::string &c : used)
    EXPECT_TRUE(have.count(c)) << c << " is reported but not in reasons.toml";
  for (const std::string &c : have)
    EXPECT_TRUE(used.count(c)) << c << " is in reasons.toml but nothing reports it";
}

// The codes no test reaches yet, as a ratchet: a new code must come with a test, and a code listed
// here that gains one must leave the list.
// ANEC-DIS-001: Capstone refusing to open an arm64 or x86-64 handle; only a Capstone built without
// those architectures does that.
const std::set<std::string> kNotYetTested = {"ANEC-DIS-001"};

TEST(Reasons, EveryCodeIsExercisedByATest) {
  std::set<std::string> tested = codes_under({"tests"});
  for (const std::string &c : catalogued())
    EXPECT_TRUE(tested.count(c) || kNotYetTested.count(c)) << c << " appears in no test";
  for (const std::string &c : kNotYetTested)
    EXPECT_FALSE(tested.count(c)) << c << " is tested now: take it off kNotYetTested";
}

// docs/reasons.md is the catalogue rendered by `anec explain --markdown` (regenerate it so).
TEST(Reasons, DocsPageIsTheCatalogueRendered) {
  EXPECT_EQ(read_text_file(kProject / "docs" / "reasons.md"), catalog().markdown())
      << "run: ./build/tools/anec explain --markdown > docs/reasons.md";
}
