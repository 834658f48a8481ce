// The tuner (compiler/passes/tune.hpp) with the shipped rewrite table: a linear layer becomes a 1x1
// convolution on h13 at max_abs 0 with a lower estimate; the matmul-softmax-matmul chain becomes the
// fused attention op, bit-exact; a transpose of size-1 axes is dropped. A deliberately lossy rule
// (gelu as relu) is refused at tolerance 0. The result is deterministic, the table strict, and
// `anec tune` writes a graph that reads back and computes what the original computes, as anec-graph
// JSON or, for a MIL program, as the program's MIL text with the kept rewrites written in.
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/attrs.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/compiler/passes/tune.hpp"
#include "anec/compiler/passes/tune_mil.hpp"
#include "anec/support/file.hpp"
#include "anec/support/half.hpp"
#include "anec/support/json.hpp"

#include "../errors.hpp"
#include "../run_tool.hpp"
#include "tables.hpp"
#include <cstring>
#include <fstream>
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

// A milblob weight file of fp16 values: the 64-byte header, one record (sentinel, fp16, size, data at
// 128), the data (reference/coreml/milblob/StorageFormat.hpp).
void write_fp16_blob(const fs::path &p, size_t count, int step) {
  std::string f(128, '\0'), data;
  f[0] = 1;
  f[4] = 2;
  auto put = [&](size_t at, uint64_t v, int n) {
    for (int k = 0; k < n; ++k)
      f[at + size_t(k)] = char((v >> (8 * k)) & 0xff);
  };
  put(64, 0xDEADBEEF, 4);
  put(68, 1, 4);
  put(72, count * 2, 8);
  put(80, 128, 8);
  for (size_t i = 0; i < count; ++i) {
    uint16_t h = to_half(float(int((i * size_t(step)) % 17) - 8) / 16.0f);
    data += char(h & 0xff);
    data += char(h >> 8);
  }
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << f << data;
}

// A linear layer over [1, 256] with real weights, then a permutation of size-1 axes.
const std::string kMilProgram = R"(program(1.3)
{
  func main<ios18>(tensor<fp16, [1, 256]> x) {
    tensor<fp16, [128, 256]> w = const()[name = string("w"), val = tensor<fp16, [128, 256]>(BLOBFILE(path = string("@model_path/weights/w.bin"), offset = uint64(64)))];
    tensor<fp16, [128]> b = const()[name = string("b"), val = tensor<fp16, [128]>(BLOBFILE(path = string("@model_path/weights/b.bin"), offset = uint64(64)))];
    tensor<fp16, [1, 128]> fc = linear(x = x, weight = w, bias = b)[name = string("fc")];
    tensor<fp16, [1, 1, 1, 128]> r = reshape(x = fc, shape = tensor<int32, [4]>([1, 1, 1, 128]))[name = string("r")];
    tensor<fp16, [1, 1, 1, 128]> t = transpose(x = r, perm = tensor<int32, [4]>([1, 0, 2, 3]))[name = string("t")];
    tensor<fp16, [1, 1, 1, 128]> y = sigmoid(x = t)[name = string("y")];
  } -> (y);
}
)";

TEST(Tune, TheToolWritesTunedMilTextThatReadsAgainWithItsWeightsAndComputesTheSame) {
  fs::path dir = fs::temp_directory_path() / ("anec-tune-mil-" + std::to_string(getpid()));
  fs::remove_all(dir);
  write_fp16_blob(dir / "src" / "weights" / "w.bin", 128 * 256, 37);
  write_fp16_blob(dir / "src" / "weights" / "b.bin", 128, 5);
  write_output(dir / "src" / "model.mil", kMilProgram);
  std::string tool = ANEC_TEST_ANEC_TOOL;
  auto run = [&](const std::string &args) { return test::run_tool(tool, ANEC_TEST_TABLES_DIR, args); };
  fs::path best = dir / "out" / "best.mil";
  test::ToolRun tuned =
      run("tune " + (dir / "src" / "model.mil").string() + " --target h13 -o " + best.string());
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  EXPECT_NE(tuned.out.find("linear_as_conv at fc: error 0, kept"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("drop_unit_transpose at t: error 0, kept"), std::string::npos) << tuned.out;
  std::string text = read_text_file(best);
  EXPECT_NE(text.find("= conv(x = fc_x, weight = fc_weight, bias = b,"), std::string::npos) << text;
  EXPECT_NE(text.find("y = sigmoid(x = r)"), std::string::npos) << text; // reads the permute's input
  EXPECT_EQ(text.find("linear("), std::string::npos) << text;
  EXPECT_EQ(text.find("transpose("), std::string::npos) << text;
  EXPECT_EQ(text.find("tensor<fp16, [128, 256]> w = "), std::string::npos) << text; // the unread weight
  // written elsewhere, the weights go with it
  EXPECT_EQ(read_file(dir / "out" / "weights" / "w.bin"), read_file(dir / "src" / "weights" / "w.bin"));
  test::ToolRun a = run("eval " + (dir / "src" / "model.mil").string() + " -o " + (dir / "a").string());
  test::ToolRun b = run("eval " + best.string() + " -o " + (dir / "b").string());
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  for (const test::ToolRun *run : {&a, &b}) // the weights were read, only the input seeded
    EXPECT_NE(run->out.find("seeded random values: x (input)\n"), std::string::npos) << run->out;
  EXPECT_EQ(read_file(dir / "a" / "y.npy"), read_file(dir / "b" / "y.npy"));
  // a model that is not MIL text gets no MIL
  write_output(dir / "g.json", kLinear);
  EXPECT_EQ(run("tune " + (dir / "g.json").string() + " --target h13 -o " + (dir / "g.mil").string()).status,
            2);
  EXPECT_FALSE(fs::exists(dir / "g.mil"));
  fs::remove_all(dir);
}

TEST(Tune, AKeptRewriteWithNoMilFormIsRefusedNamingItsSite) {
  std::vector<Rewrite> rules = load_rewrites(kTables / "schema" / "rewrites.toml");
  auto kept = [](const std::string &rule, const std::string &site) {
    TuneResult r;
    r.steps.push_back(TuneStep{rule, "", {site}, 0, 0, 0, true, "kept"});
    return r;
  };
  std::string rank3 = R"(program(1.3) { func main<ios18>(tensor<fp16, [1, 4, 8]> x) {
    tensor<fp16, [2, 8]> w = const()[name = string("w"), val = tensor<fp16, [2, 8]>(BLOBFILE(path = string("w.bin"), offset = uint64(64)))];
    tensor<fp16, [1, 4, 2]> y = linear(x = x, weight = w)[name = string("fc")];
  } -> (y); })";
  auto code = [&](const std::string &text, const TuneResult &r) {
    return code_of([&] { tuned_mil(text, "t.mil", "main", r, rules); });
  };
  EXPECT_EQ(code(rank3, kept("linear_as_conv", "fc")), "ANEC-TUNE-002"); // rank 3
  EXPECT_EQ(code(rank3, kept("fused_attention", "fc")), "ANEC-TUNE-002");
  EXPECT_EQ(code(rank3, kept("drop_unit_transpose", "fc")), "ANEC-TUNE-002"); // not a transpose
  EXPECT_EQ(code(rank3, kept("linear_as_conv", "nowhere")), "ANEC-TUNE-002");
  TuneResult none;
  TunedMil same = tuned_mil(rank3, "t.mil", "main", none, rules);
  EXPECT_EQ(same.text, rank3); // nothing kept: the program as it was
  EXPECT_EQ(same.blobs, std::vector<std::string>{"w.bin"});
}

} // namespace
