// anec check, estimate and place on h16 for every MIL program and Core ML model of the shared test
// data, against the reports reviewed in tests/golden/coreml/ (written by tests/update-golden.sh, with
// COREML for the test data's folder).
#include "anec/support/file.hpp"

#include "../run_tool.hpp"
#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace {

// The models update-golden.sh reports on, in its order: mil/*/*.mil, mlmodel/*/*.mlmodel,
// mlpackage/*/*.mlpackage, mlmodelc/*/*.mlmodelc.
std::vector<fs::path> models(const fs::path &data) {
  std::vector<fs::path> out;
  for (const char *kind : {"mil", "mlmodel", "mlpackage", "mlmodelc"}) {
    std::vector<fs::path> found;
    for (const auto &group : fs::directory_iterator(data / kind))
      if (group.is_directory())
        for (const auto &e : fs::directory_iterator(group.path()))
          if (e.path().extension() == std::string(".") + kind)
            found.push_back(e.path());
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

} // namespace

TEST(CoreMLGolden, CheckEstimateAndPlaceMatchTheReviewedReports) {
  fs::path data = fs::path(ANEC_TEST_SHARED_DIR) / "testdata" / "coreml";
  if (!fs::exists(data))
    GTEST_SKIP() << "no shared testdata";
  data = fs::canonical(data);
  fs::path golden = fs::path(ANEC_TEST_GOLDEN_DIR) / "coreml";
  size_t compared = 0;
  for (const fs::path &model : models(data)) {
    std::string name = replaced(model.lexically_relative(data).generic_string(), "/", "_");
    for (const char *cmd : {"check", "estimate", "place"}) {
      anec::test::ToolRun r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR,
                                                   std::string(cmd) + " " + model.string() + " --target h16");
      fs::path expected = golden / (name + "." + cmd + ".txt");
      ASSERT_TRUE(fs::exists(expected)) << expected << ": run tests/update-golden.sh and review it";
      EXPECT_EQ(replaced(r.out + r.err, data.string(), "COREML"), anec::read_text_file(expected)) << expected;
      ++compared;
    }
  }
  size_t goldens = std::distance(fs::directory_iterator(golden), fs::directory_iterator());
  EXPECT_EQ(compared, goldens) << "a golden report without its model in the test data";
  EXPECT_GE(compared, 3u * 42); // the 42 models of the test data as it stands
}
