// A model checked and estimated while it is read (summarize_model over GraphReader) gives what the
// whole-graph path gives (load_model, then check and estimate): on every target, with the analytic
// and the calibrated model, for graphs whose keys come in any order, whose names hold brackets,
// commas and escaped quotes, with constants and bound dimensions, and across the reader's chunks.
// A malformed file fails with the whole-graph reader's error, word for word. The targets spread over
// threads give the same.
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/pipeline/documents.hpp"
#include "anec/compiler/pipeline/summary.hpp"
#include "anec/support/document.hpp"
#include "anec/support/file.hpp"

#include "../errors.hpp"
#include "tables.hpp"
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
using anec::test::registry;
namespace fs = std::filesystem;

namespace {

const Calibration &calibration() {
  static const Calibration c =
      Calibration::load(fs::path(ANEC_TEST_TABLES_DIR) / "calibration" / "fitted.toml");
  return c;
}

std::vector<const hal::Target *> all_targets() {
  std::vector<const hal::Target *> all;
  for (const hal::Target &t : registry().targets())
    all.push_back(&t);
  return all;
}

class StreamTest : public ::testing::Test {
protected:
  fs::path write(const std::string &name, const std::string &text) {
    fs::path p = dir_ / name;
    write_output(p, text);
    return p;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_ = [] {
    fs::path d = fs::temp_directory_path() / ("anec-stream-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
};

// The streamed summary against the whole graph's, on every target and both cost models, with the
// targets on one thread and spread over two and three.
void expect_same_as_whole(const fs::path &file, const DimBindings &dims = {}, bool streams = true) {
  auto targets = all_targets();
  Graph g = load_model(file, catalog(), dims);
  for (auto [cal, threads] : {std::pair{static_cast<const Calibration *>(nullptr), 1u},
                              {&calibration(), 1u},
                              {nullptr, 2u},
                              {&calibration(), 3u}}) {
    ModelSummary streamed =
        summarize_model(file, catalog(), dims, targets, cal, "", kDefaultMaxMemory, threads);
    EXPECT_EQ(streamed.streamed, streams) << file;
    std::vector<CheckResult> checks = check(g, catalog(), targets, Detail::Summary);
    std::vector<Estimate> estimates = estimate(g, catalog(), targets, cal, "", Detail::Summary);
    ASSERT_EQ(streamed.checks.size(), targets.size());
    ASSERT_EQ(streamed.estimates.size(), targets.size());
    ASSERT_EQ(checks.size(), targets.size());
    ASSERT_EQ(estimates.size(), targets.size());
    for (size_t k = 0; k < targets.size(); ++k) {
      const std::string on = file.filename().string() + " on " + targets[k]->name +
                             (cal ? " calibrated" : "") + ", " + std::to_string(threads) + " thread(s)";
      EXPECT_EQ(streamed.checks[k].verdict, checks[k].verdict) << on;
      EXPECT_EQ(streamed.checks[k].counts, checks[k].counts) << on;
      const Estimate &s = streamed.estimates[k], &w = estimates[k];
      EXPECT_EQ(s.latency_us, w.latency_us) << on;
      EXPECT_EQ(s.latency_high_us, w.latency_high_us) << on;
      EXPECT_EQ(s.flops, w.flops) << on;
      EXPECT_EQ(s.bytes, w.bytes) << on;
      EXPECT_EQ(s.bound, w.bound) << on;
      EXPECT_EQ(s.unknown, w.unknown) << on;
      EXPECT_EQ(s.unestimated, w.unestimated) << on;
    }
  }
}

// One target's check (with its placement), estimate and placement, printed while the file is read op by op,
// against the documents of the graph read whole, byte for byte, in the text and JSON forms.
void expect_report_same_as_whole(const fs::path &file, const std::vector<std::string> &targets,
                                 const DimBindings &dims = {}) {
  using Kind = OneTargetReport::Kind;
  Graph g = load_model(file, catalog(), dims);
  for (const std::string &name : targets) {
    const hal::Target &t = registry().get(name);
    CheckResult c = check(g, catalog(), t);
    Estimate analytic = estimate(g, catalog(), {&t}, nullptr).front();
    Placement pl = place(g, catalog(), t, c, analytic);
    auto whole_check = [&](Printer &p) {
      print(p, g, c, t);
      p.text("\n");
      Object placement(p, "placement");
      print(p, g, pl);
    };
    for (Form form : {Form::Text, Form::Json}) {
      const std::string on = file.filename().string() + " on " + name + (form == Form::Json ? " json" : "");
      auto report = OneTargetReport::read(Kind::Check, file, catalog(), dims, t, nullptr, "", form);
      ASSERT_TRUE(report) << on;
      EXPECT_EQ(report->rejects(), c.verdict == Verdict::Reject) << on;
      EXPECT_EQ(render(form, "anec.check", [&](Printer &p) { report->print(p); }),
                render(form, "anec.check", whole_check))
          << on;
      report = OneTargetReport::read(Kind::Place, file, catalog(), dims, t, nullptr, "", form);
      ASSERT_TRUE(report) << on;
      EXPECT_FALSE(report->rejects()) << on;
      EXPECT_EQ(render(form, "anec.place", [&](Printer &p) { report->print(p); }),
                render(form, "anec.place", [&](Printer &p) { print(p, g, pl); }))
          << on;
      for (const Calibration *cal : {static_cast<const Calibration *>(nullptr), &calibration()}) {
        Estimate e = estimate(g, catalog(), {&t}, cal).front();
        report = OneTargetReport::read(Kind::Estimate, file, catalog(), dims, t, cal, "", form);
        ASSERT_TRUE(report) << on;
        EXPECT_EQ(render(form, "anec.estimate", [&](Printer &p) { report->print(p); }),
                  render(form, "anec.estimate", [&](Printer &p) { print(p, g, e); }))
            << on << (cal ? " calibrated" : "");
      }
    }
  }
}

std::string chain(int n) {
  std::string ops;
  const char *types[] = {"conv", "relu", "add", "tan", "sdpa", "linear"};
  for (int i = 0; i < n; ++i) {
    std::string t = "t" + std::to_string(i), type = types[i % 6];
    std::string in = type == "add"    ? "\"" + t + "\", \"t0\""
                     : type == "sdpa" ? "\"" + t + "\", \"" + t + "\", \"" + t + "\""
                                      : "\"" + t + "\"";
    ops +=
        std::string(i ? ",\n  " : "") + R"({"name": "op)" + std::to_string(i) + R"(", "op": ")" + type +
        R"(", "inputs": [)" + in + R"(], "outputs": ["t)" + std::to_string(i + 1) + "\"]" +
        (type == "conv" ? R"(, "attrs": {"out_channels": 16, "kernel": [3, 3], "pad": [1, 1, 1, 1]})" : "") +
        (type == "linear" ? R"(, "attrs": {"out_features": 16})" : "") + "}";
  }
  return R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "t0", "shape": [1, 16, 64, 64]}],
  "ops": [)" +
         ops + R"(], "outputs": ["t)" + std::to_string(n) + "\"]}";
}

} // namespace

TEST_F(StreamTest, AChainAcrossTheReadersChunksGivesTheWholeGraphsSummary) {
  std::string text = chain(12000);
  ASSERT_GT(text.size(), size_t(1) << 20); // more than one of the reader's chunks
  expect_same_as_whole(write("chain.json", text));
}

TEST_F(StreamTest, KeysInAnyOrderAndAwkwardNamesGiveTheWholeGraphsSummary) {
  // Ops before the inputs and constants they read; names with brackets, commas, escaped quotes and
  // backslashes; a constant read as a runtime weight; an unbound then a bound symbolic dimension.
  std::string text = R"({ "ops" : [
    {"name": "c,[0]", "op": "conv", "inputs": ["x \"in\"", "w{1}"], "outputs": ["y]"],
     "attrs": {"out_channels": 8, "kernel": [3, 3], "pad": [1, 1, 1, 1], "note": "}]\\"}},
    {"name": "r", "op": "relu", "inputs": ["y]"], "outputs": ["z,"]}
  ] , "outputs": ["z,"], "constants": [{"name": "w{1}", "shape": [8, 4, 3, 3]}],
  "version": 1, "inputs": [{"name": "x \"in\"", "shape": ["batch", 4, 32, 32]}], "format": "anec-graph"})";
  fs::path file = write("order.json", text);
  expect_same_as_whole(file);
  expect_same_as_whole(file, {{"batch", 2}});
}

// Rejects, decompositions and warnings; ops on the CPU and the GPU with the boundaries between the
// partitions; a graph input's finding; ops with no cost form, skipped ops, a decomposed estimate,
// an op whose shape is unknown until a dimension is bound; a chain across the reader's chunks.
TEST_F(StreamTest, OneTargetsReportPrintedWhileReadingIsTheWholeGraphsByteForByte) {
  fs::path mixed = write("mixed.json", R"({"format": "anec-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 16, 32, 32]}, {"name": "s", "shape": ["batch", 16, 8, 8]}],
    "constants": [{"name": "w", "shape": [16, 16, 3, 3]}],
    "ops": [
      {"name": "c0", "op": "conv", "inputs": ["x", "w"], "outputs": ["a"],
       "attrs": {"out_channels": 16, "kernel": [3, 3], "pad": [1, 1, 1, 1]}},
      {"name": "sm", "op": "shape_math", "inputs": ["a"], "outputs": ["b"]},
      {"name": "r0", "op": "relu", "inputs": ["b"], "outputs": ["c"]},
      {"name": "p0", "op": "pad", "inputs": ["c"], "outputs": ["d"]},
      {"name": "p1", "op": "pad", "inputs": ["d"], "outputs": ["d1"]},
      {"name": "tn", "op": "tan", "inputs": ["d1"], "outputs": ["e"]},
      {"name": "ad", "op": "add", "inputs": ["e", "a"], "outputs": ["f"]},
      {"name": "sd", "op": "sdpa", "inputs": ["f", "f", "f"], "outputs": ["g"]},
      {"name": "r1", "op": "relu", "inputs": ["s"], "outputs": ["h"]}],
    "outputs": ["g", "h"]})");
  expect_report_same_as_whole(mixed, {"h11", "h13", "h16", "m9"});
  expect_report_same_as_whole(mixed, {"h11", "h16"}, {{"batch", 2}});
  expect_report_same_as_whole(write("chain.json", chain(12000)), {"h13", "h18"});
}

TEST_F(StreamTest, AMalformedFileFailsWithTheWholeGraphReadersError) {
  const std::string head =
      R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 4, 8, 8]}], )";
  const std::string relu = R"({"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]})";
  std::vector<std::pair<const char *, std::string>> cases = {
      {"trailing-comma", head + R"("ops": [)" + relu + R"(,], "outputs": ["y"]})"},
      {"leading-comma", head + R"("ops": [,)" + relu + R"(], "outputs": ["y"]})"},
      {"undefined-input",
       head +
           R"("ops": [{"name": "r", "op": "relu", "inputs": ["q"], "outputs": ["y"]}], "outputs": ["y"]})"},
      {"defined-twice", head + R"("ops": [)" + relu + "," + relu + R"(], "outputs": ["y"]})"},
      {"no-outputs", head + R"("ops": [)" + relu + "]}"},
      {"undefined-output", head + R"("ops": [)" + relu + R"(], "outputs": ["nowhere"]})"},
      {"unknown-key", head + R"("ops": [)" + relu + R"(], "outputs": ["y"], "extra": 1})"},
      {"ops-twice", head + R"("ops": [)" + relu + R"(], "ops": [], "outputs": ["y"]})"},
      {"ops-not-an-array", head + R"("ops": {"a": 1}, "outputs": ["y"]})"},
      {"syntax-in-an-op", head + R"("ops": [{"name": "r", "op": relu}], "outputs": ["y"]})"},
      {"truncated", head + R"("ops": [)" + relu},
      {"two-values-in-one-element", head + R"("ops": [)" + relu + " " + relu + R"(], "outputs": ["y"]})"},
      // Nested one level past the parser's limit in the whole document, within it on its own.
      {"too-deep",
       head + R"("ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"a": )" +
           std::string(1021, '[') + std::string(1021, ']') + R"(}}], "outputs": ["y"]})"},
  };
  // The same errors deep in an ops array long enough to be parsed on a thread of its own, where the
  // error is met runs ahead of the op in use: one the parsing meets, one the use of the op meets.
  const std::string deep = chain(6000);
  const std::string tan = R"({"name": "op5001", "op": "tan", "inputs": ["t5001"], "outputs": ["t5002"]})";
  const size_t at = deep.find(tan);
  ASSERT_NE(at, std::string::npos);
  for (auto [name, op] :
       {std::pair{"deep-syntax", R"({"name": "op5001", "op": tan, "outputs": ["t5002"]})"},
        {"deep-unknown-key", R"({"name": "op5001", "op": "tan", "x": 1, "outputs": ["t5002"]})"},
        {"deep-undefined-input", R"({"name": "op5001", "op": "tan", "inputs": ["q"], "outputs": ["t5002"]})"},
        {"deep-attribute-below-its-bound", // met as the op is parsed
         R"({"name": "op5001", "op": "conv", "inputs": ["t5001"], "outputs": ["t5002"],
             "attrs": {"out_channels": 16, "kernel": [0, 3]}})"}})
    cases.emplace_back(name, deep.substr(0, at) + op + deep.substr(at + tan.size()));
  // A bound the parsing meets ahead of an earlier op's undefined input: the input's error, as the
  // whole graph is read before its shapes are inferred.
  const std::string relu4999 =
      R"({"name": "op4999", "op": "relu", "inputs": ["t4999"], "outputs": ["t5000"]})";
  std::string both = cases.back().second;
  const size_t at4999 = both.find(relu4999);
  ASSERT_NE(at4999, std::string::npos);
  both.replace(at4999, relu4999.size(),
               R"({"name": "op4999", "op": "relu", "inputs": ["q"], "outputs": ["t5000"]})");
  cases.emplace_back("deep-bound-after-an-undefined-input", both);
  auto targets = all_targets();
  for (const auto &[name, text] : cases) {
    fs::path file = write(std::string(name) + ".json", text);
    std::string whole, streamed;
    std::string code = code_of([&] { load_model(file, catalog()); }, &whole);
    EXPECT_NE(code, "none") << name;
    for (unsigned threads : {1u, 2u}) {
      auto summarize = [&] {
        summarize_model(file, catalog(), {}, targets, nullptr, "", kDefaultMaxMemory, threads);
      };
      EXPECT_EQ(code_of(summarize, &streamed), code) << name << ", " << threads << " thread(s)";
      EXPECT_EQ(streamed, whole) << name << ", " << threads << " thread(s)";
    }
  }
}

TEST_F(StreamTest, OtherFrontEndsAreReadWhole) {
  fs::path plist = fs::path(ANEC_TEST_SHARED_DIR) / "testdata/external/tinygrad/net.plist";
  if (!fs::exists(plist))
    GTEST_SKIP() << plist << " is not here";
  expect_same_as_whole(plist, {}, false);
}
