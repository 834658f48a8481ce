// The tuner (compiler/passes/tune.hpp) with the shipped rewrite table: a linear layer becomes a 1x1
// convolution on h13 at max_abs 0 with a lower estimate; the matmul-softmax-matmul chain becomes the
// fused attention op, bit-exact; a transpose of size-1 axes is dropped. A deliberately lossy rule
// (gelu as relu) is refused at tolerance 0. The result is deterministic, the table strict, and
// `anec tune` writes a graph that reads back and computes what the original computes.
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/attrs.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/compiler/passes/tune.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"

#include "../errors.hpp"
#include "../run_tool.hpp"
#include "tables.hpp"
#include <gtest/gtest.h>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
using anec::test::registry;
namespace fs = std::filesystem;

namespace {

const fs::path kTables = ANEC_TEST_TABLES_DIR;

struct Tuner {
  Calibration calibration = Calibration::load(kTables / "calibration" / "fitted.toml");
  std::vector<Rewrite> rewrites = load_rewrites(kTables / "schema" / "rewrites.toml");

  TuneResult run(const Graph &g, TuneOptions options = {}, const std::vector<Rewrite> *rules = nullptr) {
    return tune(g, catalog(), anec::test::numerics(), rules ? *rules : rewrites, {&registry().get("h13")},
                &calibration, options);
  }
};

Graph graph(const std::string &text) {
  Graph g = read_graph_json(text, "test.json");
  infer_shapes(g, catalog());
  mark_skippable(g, catalog());
  return g;
}

const std::string kLinear = R"({"format": "anec-graph", "version": 1,
  "inputs": [{"name": "x", "shape": [1, 1, 1024, 1, 1]}],
  "constants": [{"name": "w", "shape": [1, 1, 1024, 1024]}],
  "ops": [{"name": "fc", "op": "linear", "inputs": ["x", "w"], "outputs": ["y"],
           "attrs": {"out_features": 1024}},
          {"name": "act", "op": "gelu", "inputs": ["y"], "outputs": ["z"]}],
  "outputs": ["z"]})";

// q [8, 1, 1, 64, 32] (heads in N), kt [8, 1, 32, 1, 64], v [8, 1, 64, 1, 32], scaled by 1/sqrt(32).
const std::string kAttention = R"({"format": "anec-graph", "version": 1,
  "inputs": [{"name": "q", "shape": [8, 1, 1, 64, 32]}, {"name": "kt", "shape": [8, 1, 32, 1, 64]},
             {"name": "v", "shape": [8, 1, 64, 1, 32]}],
  "constants": [{"name": "s", "shape": [1, 1, 1, 1], "data": [0.17677669529]}],
  "ops": [{"name": "m1", "op": "matmul", "inputs": ["q", "kt"], "outputs": ["sc"]},
          {"name": "sm", "op": "mul", "inputs": ["sc", "s"], "outputs": ["scs"]},
          {"name": "soft", "op": "softmax", "inputs": ["scs"], "outputs": ["p"], "attrs": {"axis": "W"}},
          {"name": "m2", "op": "matmul", "inputs": ["p", "v"], "outputs": ["o"]},
          {"name": "t", "op": "transpose", "inputs": ["o"], "outputs": ["ot"],
           "attrs": {"perm": [0, 2, 1, 3, 4]}},
          {"name": "r", "op": "relu", "inputs": ["ot"], "outputs": ["y"]}],
  "outputs": ["y"]})";

const TuneStep &step(const TuneResult &r, const std::string &name) {
  for (const TuneStep &s : r.steps)
    if (s.rewrite == name)
      return s;
  throw std::runtime_error("no step " + name);
}

TEST(Tune, ALinearLayerBecomesA1x1ConvOnH13AtMaxAbsZeroWithALowerEstimate) {
  Tuner t;
  TuneResult r = t.run(graph(kLinear));
  const TuneStep &s = step(r, "linear_as_conv");
  EXPECT_TRUE(s.kept) << s.why;
  EXPECT_EQ(s.error, 0.0);
  EXPECT_LT(s.after_us, s.before_us);
  EXPECT_EQ(s.sites, (std::vector<std::string>{"fc"}));
  ASSERT_FALSE(r.best.ops.empty());
  EXPECT_EQ(r.best.ops[0].type, "conv");
  EXPECT_EQ(OpAttrs(r.best.ops[0], catalog()).integer("out_channels"), 1024);
  EXPECT_LT(r.after_us, r.before_us);
}

TEST(Tune, ADeliberatelyLossyRuleIsRefused) {
  Tuner t;
  fs::path rules = fs::temp_directory_path() / ("anec-lossy-" + std::to_string(getpid()) + ".toml");
  write_output(rules, R"(schema = "anec-rewrites"
version = "1.0"
[[rewrite]]
name = "gelu_as_relu"
pattern = "gelu"
replacement = "retype"
to = "relu"
source = "a test: not equivalent"
)");
  std::vector<Rewrite> lossy = load_rewrites(rules);
  fs::remove(rules);
  TuneResult r = t.run(graph(kLinear), {}, &lossy);
  const TuneStep &s = step(r, "gelu_as_relu");
  EXPECT_FALSE(s.kept);
  EXPECT_GT(s.error, 0.0);
  EXPECT_EQ(s.why.rfind("refused: error", 0), 0u) << s.why;
  ASSERT_GE(r.best.ops.size(), 2u);
  EXPECT_EQ(r.best.ops[1].type, "gelu");
  EXPECT_EQ(r.after_us, r.before_us);
  TuneOptions loose;
  loose.tolerance = 1e9; // within the tolerance, but not faster: still not kept
  EXPECT_EQ(step(t.run(graph(kLinear), loose, &lossy), "gelu_as_relu").why.rfind("not kept", 0), 0u);
}

TEST(Tune, TheAttentionChainBecomesTheFusedOpBitExactAndAPermuteOfUnitAxesIsDropped) {
  Tuner t;
  TuneResult r = t.run(graph(kAttention));
  const TuneStep &fused = step(r, "fused_attention");
  EXPECT_TRUE(fused.kept) << fused.why;
  EXPECT_EQ(fused.error, 0.0);
  EXPECT_LT(fused.after_us, fused.before_us);
  const TuneStep &drop = step(r, "drop_unit_transpose");
  EXPECT_EQ(drop.sites, (std::vector<std::string>{"t"})); // the fused op's v permute changes the shape
  EXPECT_TRUE(drop.kept) << drop.why;
  std::vector<std::string> types;
  for (const Op &op : r.best.ops)
    types.push_back(op.type);
  ASSERT_EQ(types, (std::vector<std::string>{"transpose", "transpose", "sdpa", "relu"}));
  ASSERT_NE(r.best.ops[2].attrs.find("scale"), nullptr);
  EXPECT_EQ(r.best.ops[2].attrs.find("scale")->as_float(), double(0.17677669529f));
}

TEST(Tune, IsDeterministic) {
  Tuner t;
  Graph g = graph(kAttention);
  EXPECT_EQ(json::write(graph_doc(t.run(g).best)), json::write(graph_doc(t.run(g).best)));
}

TEST(Tune, TheRewriteTableIsStrict) {
  fs::path p = fs::temp_directory_path() / ("anec-rules-" + std::to_string(getpid()) + ".toml");
  auto load = [&](const std::string &row) {
    write_output(
        p, "schema = \"anec-rewrites\"\nversion = \"1.0\"\n[[rewrite]]\nname = \"x\"\npattern = \"relu\"\n"
           "source = \"s\"\n" +
               row);
    return code_of([&] { load_rewrites(p); });
  };
  EXPECT_EQ(load("replacement = \"retype\"\nto = \"gelu\"\n"), "none");
  EXPECT_EQ(load("replacement = \"melt\"\n"), "ANEC-TUNE-001");
  EXPECT_EQ(load("replacement = \"retype\"\n"), "ANEC-TUNE-001"); // retype without to
  EXPECT_EQ(load("replacement = \"drop_transpose\"\nconditions = [\"odd\"]\n"), "ANEC-TUNE-001");
  EXPECT_EQ(load("replacement = \"drop_transpose\"\ncolour = 1\n"), "ANEC-TUNE-001");
  fs::remove(p);
}

TEST(Tune, TheToolWritesAGraphThatComputesWhatTheOriginalComputes) {
  fs::path dir = fs::temp_directory_path() / ("anec-tune-" + std::to_string(getpid()));
  fs::create_directories(dir);
  write_output(dir / "attn.json", kAttention);
  std::string tool = ANEC_TEST_ANEC_TOOL;
  auto run = [&](const std::string &args) { return test::run_tool(tool, ANEC_TEST_TABLES_DIR, args); };
  test::ToolRun tuned =
      run("tune " + (dir / "attn.json").string() + " --target h13 -o " + (dir / "best.json").string());
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  EXPECT_NE(tuned.out.find("fused_attention at soft: error 0, kept"), std::string::npos) << tuned.out;
  test::ToolRun a = run("eval " + (dir / "attn.json").string() + " -o " + (dir / "a").string());
  test::ToolRun b = run("eval " + (dir / "best.json").string() + " -o " + (dir / "b").string());
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(read_file(dir / "a" / "y.npy"), read_file(dir / "b" / "y.npy"));
  fs::remove_all(dir);
}

} // namespace
