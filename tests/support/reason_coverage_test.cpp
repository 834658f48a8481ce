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
      codes_under({"support", "decode", "hal", "descriptors", "compiler", "firmware", "tools", "tables"});
  std::set<std::string> have = catalogued();
  for (const std::string &c : used)
    EXPECT_TRUE(have.count(c)) << c << " is reported but not in reasons.toml";
  for (const std::string &c : have)
    EXPECT_TRUE(used.count(c)) << c << " is in reasons.toml but nothing reports it";
}

// The codes no test reaches yet, as a ratchet: a new code must come with a test, and a code listed
// here that gains one must leave the list.
const std::set<std::string> kNotYetTested = {
    "ANEC-AUD-001",  "ANEC-BIN-004", "ANEC-CHK-003", "ANEC-CHK-004", "ANEC-CHK-013", "ANEC-CHK-014",
    "ANEC-CHK-015",  "ANEC-CHK-017", "ANEC-CHK-027", "ANEC-CHK-028", "ANEC-CHK-029", "ANEC-CHK-030",
    "ANEC-CHK-031",  "ANEC-CHK-033", "ANEC-CHK-034", "ANEC-CHK-035", "ANEC-CLI-001", "ANEC-DIS-001",
    "ANEC-EMU-001",  "ANEC-FW-020",  "ANEC-HAL-007", "ANEC-HAL-008", "ANEC-HWX-003", "ANEC-HWX-102",
    "ANEC-ONNX-003", "ANEC-REF-001", "ANEC-TD-001",  "ANEC-TD-101",  "ANEC-TD-103",  "ANEC-TD-106",
    "ANEC-TOML-002"};

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
