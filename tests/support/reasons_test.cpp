// The reason catalogue's loader and `explain`: strict reading, an entry or the closest codes.
#include "../errors.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/reasons.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <regex>
#include <unistd.h>

using namespace anec;
namespace fs = std::filesystem;
using anec::test::code_of;

namespace {

const fs::path kProject = ANEC_TEST_PROJECT_DIR;

const ReasonCatalog &catalog() {
  static const ReasonCatalog c = ReasonCatalog::load(kProject / "tables" / "schema" / "reasons.toml");
  return c;
}

} // namespace

TEST(Reasons, ExplainNamesTheEntryOrTheClosestCodes) {
  std::string text = catalog().explain("anec-io-004");
  EXPECT_EQ(text.rfind("ANEC-IO-004 (error): ", 0), 0u) << text;
  try {
    catalog().explain("ANEC-IO-04");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-RSN-002");
    EXPECT_NE(std::string(e.what()).find("ANEC-IO-004"), std::string::npos) << e.what();
  }
}

TEST(Reasons, TheLoaderIsStrict) {
  fs::path dir = fs::temp_directory_path() / ("anec-reasons-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string head =
      "schema = \"anec-reasons\"\nversion = 1\n[[area]]\nprefix = \"ANEC-X\"\ntitle = \"x\"\n";
  const std::string entry =
      "[[reason]]\ncode = \"ANEC-X-001\"\nseverity = \"error\"\ntitle = \"t\"\nmeaning = \"m\"\nfix = \"\"\n";
  auto load = [&](const std::string &text) {
    write_output(dir / "r.toml", text);
    return code_of([&] { ReasonCatalog::load(dir / "r.toml"); });
  };
  EXPECT_EQ(load(head + entry), "none");
  EXPECT_EQ(load(head + entry + entry), "ANEC-RSN-001");                // twice
  EXPECT_EQ(load(head + entry + "colour = \"red\"\n"), "ANEC-RSN-001"); // unknown key
  EXPECT_EQ(load(head + std::regex_replace(entry, std::regex("error"), "fatal")), "ANEC-RSN-001"); // severity
  EXPECT_EQ(load(head + std::regex_replace(entry, std::regex("ANEC-X-"), "ANEC-Y-")),
            "ANEC-RSN-001"); // no area
  fs::remove_all(dir);
}
