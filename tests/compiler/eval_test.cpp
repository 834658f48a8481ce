// The host evaluator's fp16 numerics against the figures guide ch.3 measured on the engine (the
// overflow past 65504, the accumulator port's 2^15 ceiling, the width-slice gain, the exp cliff,
// round-half-to-even, subnormals, NaN and indeterminate forms), its data-movement kernels on small
// hand-checked arrays, seeded values, what it does not compute, and its errors. Agreement with an
// independent reference in fp32 is eval_numpy_test.cpp.
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/support/file.hpp"
#include "anec/support/npy.hpp"

#include "../errors.hpp"
#include "tables.hpp"
#include <cmath>
#include <gtest/gtest.h>
#include <set>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
using anec::test::numerics;
namespace fs = std::filesystem;

namespace {

// A graph of the given inputs (name: 5-D shape) and ops, outputs the named tensors.
Graph graph(const std::string &inputs, const std::string &ops, const std::string &outputs,
            const std::string &constants = "") {
  Graph g = read_graph_json(R"({"format": "anec-graph", "version": 1, "inputs": [)" + inputs +
                                R"(], "constants": [)" + constants + R"(], "ops": [)" + ops +
                                R"(], "outputs": [)" + outputs + "]}",
                            "test.json");
  infer_shapes(g, catalog());
  return g;
}

Values values(std::vector<float> v) {
  Values out;
  out.d = {1, 1, 1, 1, int64_t(v.size())};
  out.v = std::move(v);
  return out;
}

// The output `name` of `g` run on input x = `x` in the given precision.
std::vector<float> run(const Graph &g, std::vector<float> x, Precision p = Precision::fp16,
                       const std::string &name = "y") {
  EvalOptions o;
  o.precision = p;
  o.inputs["x"] = values(std::move(x));
  EvalResult r = evaluate(g, catalog(), numerics(), o);
  EXPECT_TRUE(r.report.unevaluated.empty()) << r.report.unevaluated[0].second;
  return r.outputs.at(name).v;
}

std::string input(int64_t w) {
  return R"({"name": "x", "shape": [1, 1, 1, )" + std::to_string(w) + "]}";
}
std::string op(const std::string &type, const std::string &inputs = R"("x")",
               const std::string &attrs = "{}") {
  return R"({"name": "o", "op": ")" + type + R"(", "inputs": [)" + inputs +
         R"(], "outputs": ["y"], "attrs": )" + attrs + "}";
}

TEST(EvalFp16, ElementwiseOverflowPast65504IsInfinityOnlyInFp16) {
  Graph g = graph(input(2), op("mul", R"("x", "x")"), R"("y")");
  EXPECT_TRUE(std::isinf(run(g, {300, 255}).at(0))); // 90000 > 65504
  EXPECT_EQ(run(g, {300, 255}).at(1), 65024.0f);     // 255^2 = 65025 rounds to 65024
  EXPECT_EQ(run(g, {300, 255}, Precision::fp32).at(0), 90000.0f);
}

TEST(EvalFp16, AccumulatorCeilingFiresOnMatmulButNotOnASingleTapConv) {
  // matmul [1 x 2] x [2 x 1]: 200 * 100 + 100 * 100 = 30000 passes, 200 * 200 = 40000 does not
  Graph mm =
      graph(input(2) + R"(, {"name": "w", "shape": [1, 1, 2, 1, 1]})", op("matmul", R"("x", "w")"), R"("y")");
  auto mac = [&](std::vector<float> x, std::vector<float> w) {
    EvalOptions o;
    o.precision = Precision::fp16;
    o.inputs["x"] = values(std::move(x));
    o.inputs["w"] = values(std::move(w));
    return evaluate(mm, catalog(), numerics(), o);
  };
  EXPECT_EQ(mac({200, 100}, {100, 100}).outputs.at("y").v.at(0), 30000.0f);
  EvalResult over = mac({200, 0}, {200, 1});
  ASSERT_FALSE(over.outputs.at("y").v.empty());
  EXPECT_TRUE(std::isinf(over.outputs.at("y").v[0]));
  ASSERT_EQ(over.report.numerics.size(), 1u);
  EXPECT_NE(over.report.numerics[0].find("accumulator ceiling 32768"), std::string::npos);
  // a pointwise conv of one input channel passes a fill of 60000 (guide ch.3)
  Graph pw = graph(input(1), op("conv", R"("x", "w")", R"({"out_channels": 1})"), R"("y")",
                   R"({"name": "w", "shape": [1, 1, 1, 1], "data": [1.0]})");
  EXPECT_EQ(run(pw, {60000}).at(0), 60000.0f);
}

TEST(EvalFp16, WidthSliceWithOffsetOverflowsAbove4094) {
  Graph g = graph(input(3), op("slice", R"("x")", R"({"begin": [0, 0, 0, 0, 1]})"), R"("y")");
  EXPECT_EQ(run(g, {0, 4094, 4094}).at(0), 4094.0f); // 4094 * 16 = 65504, the ceiling
  EXPECT_TRUE(std::isinf(run(g, {0, 4096, 1}).at(0)));
  EXPECT_TRUE(std::isinf(run(g, {0, 4095, 1}).at(0))); // rounds to 4096 first
  Graph at_zero = graph(input(3), op("slice", R"("x")", R"({"end": [-1, -1, -1, -1, 2]})"), R"("y")");
  EXPECT_EQ(run(at_zero, {4096, 1, 1}).at(0), 4096.0f); // no width offset, no gain
}

TEST(EvalFp16, ExpOverflowsNearLn65504AndSoftmaxDoesNot) {
  Graph e = graph(input(2), op("exp"), R"("y")");
  auto y = run(e, {11.08f, 11.1f});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_TRUE(std::isfinite(y[0]));
  EXPECT_TRUE(std::isinf(y[1]));
  Graph s = graph(input(4), op("softmax", R"("x")", R"({"axis": "W"})"), R"("y")");
  EXPECT_EQ(run(s, {1000, 1, 2, 3}), (std::vector<float>{1, 0, 0, 0}));
  EXPECT_EQ(run(s, {5, 5, 5, 5}), (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));
}

TEST(EvalFp16, RoundsHalfToEven) {
  Graph g = graph(input(3), op("add", R"("x", "x")"), R"("y")");
  // 2 * 1024.5 = 2049 sits between 2048 and 2050: the even neighbour 2048; 2051 -> 2052
  auto y = run(g, {1024.5f, 1025.5f, 1.0f}, Precision::fp16);
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], 2048.0f);
  EXPECT_EQ(y[1], 2052.0f);
}

TEST(EvalFp16, SubnormalsSurviveElementwiseButFlushInTheAccumulator) {
  float tiny = std::ldexp(1.0f, -24); // the smallest fp16 subnormal
  Graph add = graph(input(1), op("add", R"("x", "x")"), R"("y")");
  EXPECT_EQ(run(add, {tiny}).at(0), 2 * tiny);
  Graph mm =
      graph(input(2) + R"(, {"name": "w", "shape": [1, 1, 2, 1, 1]})", op("matmul", R"("x", "w")"), R"("y")");
  EvalOptions o;
  o.precision = Precision::fp16;
  o.inputs["x"] = values({tiny, tiny});
  o.inputs["w"] = values({1, 1});
  EXPECT_EQ(evaluate(mm, catalog(), numerics(), o).outputs.at("y").v.at(0), 0.0f);
  o.precision = Precision::fp32;
  EXPECT_EQ(evaluate(mm, catalog(), numerics(), o).outputs.at("y").v.at(0), 2 * tiny);
}

TEST(EvalFp16, NanIsInfinityAtTheInputAndIndeterminateFormsAreZero) {
  Graph relu = graph(input(1), op("relu"), R"("y")");
  EXPECT_EQ(run(relu, {NAN}).at(0), INFINITY);
  Graph sqrt = graph(input(2), op("sqrt"), R"("y")");
  EXPECT_EQ(run(sqrt, {-1, 4}), (std::vector<float>{0, 2}));
  Graph sub = graph(input(1), op("sub", R"("x", "x")"), R"("y")");
  EXPECT_EQ(run(sub, {INFINITY}).at(0), 0.0f); // inf - inf
  Graph log = graph(input(1), op("log"), R"("y")");
  EXPECT_EQ(run(log, {0}).at(0), -45440.0f);
  EXPECT_EQ(run(log, {0}, Precision::fp32).at(0), -INFINITY);
  Graph recip = graph(input(1), op("reciprocal"), R"("y")");
  EXPECT_EQ(run(recip, {-0.0f}).at(0), INFINITY);
}

TEST(EvalData, MovesValuesAsTheShapeFunctionsSay) {
  // x = [0 .. 5] as [1, 1, 2, 1, 3] (C = 2, W = 3)
  std::string x = R"({"name": "x", "shape": [1, 1, 2, 1, 3]})";
  std::vector<float> in{0, 1, 2, 3, 4, 5};
  auto eval = [&](const std::string &o) { return run(graph(x, o, R"("y")"), in, Precision::fp32); };
  EXPECT_EQ(eval(op("transpose", R"("x")", R"({"perm": [0, 1, 4, 3, 2]})")),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(eval(op("concat", R"("x", "x")", R"({"axis": "W"})")),
            (std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(eval(op("pad", R"("x")", R"({"pad": [0, 0, 1, 1], "mode": "reflect"})")),
            (std::vector<float>{1, 0, 1, 2, 1, 4, 3, 4, 5, 4}));
  EXPECT_EQ(eval(op("slice", R"("x")", R"({"begin": [0, 0, 1, 0, 1]})")), (std::vector<float>{4, 5}));
  EXPECT_EQ(eval(op("tile", R"("x")", R"({"reps": [1, 1, 1, 2, 1]})")),
            (std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(eval(op("reduce_sum", R"("x")", R"({"axes": "W"})")), (std::vector<float>{3, 12}));
  EXPECT_EQ(eval(op("argmax", R"("x")", R"({"axis": "C"})")), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(eval(op("cumsum", R"("x")", R"({"axis": "W"})")), (std::vector<float>{0, 1, 3, 3, 7, 12}));
  EXPECT_EQ(eval(op("reverse", R"("x")", R"({"axes": "W"})")), (std::vector<float>{2, 1, 0, 5, 4, 3}));
  // pixel shuffle: 4 channels of 1 x 1 to 1 channel of 2 x 2
  Graph d2s = graph(R"({"name": "x", "shape": [1, 4, 1, 1]})",
                    op("depth_to_space", R"("x")", R"({"factor": 2})"), R"("y")");
  EXPECT_EQ(run(d2s, {0, 1, 2, 3}, Precision::fp32), (std::vector<float>{0, 1, 2, 3}));
  ASSERT_NE(d2s.tensor("y"), nullptr);
  EXPECT_EQ(d2s.tensor("y")->shape.str(), "[1,1,1,2,2]");
}

// A transposed convolution scatters each input pixel over its window: a 2 x 2 input through the
// identity-diagonal kernel [[1, 0], [0, 1]].
TEST(EvalData, DeconvScattersEachPixelOverItsWindow) {
  std::string w = R"({"name": "w", "shape": [1, 1, 2, 2], "data": [1, 0, 0, 1]})";
  auto deconv = [&](const std::string &stride) {
    Graph g = graph(
        R"({"name": "x", "shape": [1, 1, 2, 2]})",
        op("deconv", R"("x", "w")", R"({"out_channels": 1, "kernel": [2, 2], "stride": )" + stride + "}"),
        R"("y")", w);
    return run(g, {1, 2, 3, 4}, Precision::fp32);
  };
  EXPECT_EQ(deconv("[2, 2]"), (std::vector<float>{1, 0, 2, 0, 0, 1, 0, 2, 3, 0, 4, 0, 0, 3, 0, 4}));
  EXPECT_EQ(deconv("[1, 1]"), (std::vector<float>{1, 2, 0, 3, 5, 2, 0, 3, 4}));
}

TEST(Eval, SeededValuesAreDeterministicAndSaid) {
  Graph g = graph(input(4), op("conv", R"("x")", R"({"out_channels": 2})"), R"("y")");
  EvalOptions o;
  EvalResult a = evaluate(g, catalog(), numerics(), o), b = evaluate(g, catalog(), numerics(), o);
  EXPECT_EQ(a.outputs.at("y").v, b.outputs.at("y").v);
  EXPECT_EQ(a.report.seeded, (std::vector<std::string>{"x (input)", "o (weights, 2 values)"}));
  o.seed = 2;
  EXPECT_NE(evaluate(g, catalog(), numerics(), o).outputs.at("y").v, a.outputs.at("y").v);
}

TEST(Eval, EmbeddedWeightsAreReadAsTheSecondAndThirdInputs) {
  // a 1x1 conv of 2 channels to 1: weights [0.5, 2], bias [1], embedded as a front-end records them
  Graph g = graph(R"({"name": "x", "shape": [1, 2, 1, 1]})", op("conv", R"("x")", R"({"out_channels": 1})"),
                  R"("y")");
  g.values["o/weight"].data = {0.5f, 2};
  g.values["o/bias"].data = {1};
  EvalOptions o;
  o.inputs["x"] = values({4, 3});
  EvalResult r = evaluate(g, catalog(), numerics(), o);
  EXPECT_EQ(r.outputs.at("y").v, (std::vector<float>{9}));
  EXPECT_TRUE(r.report.seeded.empty());
}

TEST(Eval, AnOpWithoutAKernelIsReportedAndWhatDependsOnItIsNotComputed) {
  Graph g = graph(input(2), op("tan") + R"(, {"name": "r", "op": "relu", "inputs": ["y"], "outputs": ["z"]})",
                  R"("z", "x")");
  EvalResult r = evaluate(g, catalog(), numerics(), EvalOptions{});
  ASSERT_EQ(r.report.unevaluated.size(), 2u);
  EXPECT_EQ(r.report.unevaluated[0].first, "o");
  EXPECT_NE(r.report.unevaluated[1].second.find("reads 'y', which was not computed"), std::string::npos);
  EXPECT_EQ(r.outputs.count("z"), 0u);
  EXPECT_EQ(r.outputs.count("x"), 1u);
  EXPECT_FALSE(evaluates("tan"));
  EXPECT_TRUE(evaluates("conv"));
}

// Every native operation of the catalogue has a kernel but those docs/graph-format.md lists as
// having no semantics in the format.
TEST(Eval, EveryNativeOperationHasAKernelButTheListedOnes) {
  const std::set<std::string> undefined = {"crop_resize",
                                           "resample",
                                           "einsum",
                                           "gather_nd",
                                           "space_to_batch",
                                           "batch_to_space",
                                           "scaled_elementwise",
                                           "cross_correlation",
                                           "cross_product",
                                           "furthest_point_sampling",
                                           "radius_search",
                                           "cost_volume",
                                           "affine",
                                           "random_uniform",
                                           "rotary_embedding"};
  size_t native = 0;
  for (const auto &[name, spec] : catalog().ops()) {
    if (!spec.floor) {
      EXPECT_FALSE(evaluates(name)) << name << " is a host operation";
      continue;
    }
    ++native;
    EXPECT_EQ(evaluates(name), !undefined.count(name)) << name;
  }
  EXPECT_EQ(native, 113u); // rms_norm and rotary_embedding (ONNX opset 23) among them
}

TEST(Eval, Errors) {
  Graph sym = graph(R"({"name": "x", "shape": [1, 1, 1, "n"]})", op("relu"), R"("y")");
  EXPECT_EQ(code_of([&] { evaluate(sym, catalog(), numerics(), EvalOptions{}); }), "ANEC-EVAL-001");
  Graph g = graph(input(3), op("relu"), R"("y")");
  EvalOptions wrong;
  wrong.inputs["x"] = values({1, 2});
  EXPECT_EQ(code_of([&] { evaluate(g, catalog(), numerics(), wrong); }), "ANEC-EVAL-002");
  EvalOptions stranger;
  stranger.inputs["q"] = values({1, 2, 3});
  EXPECT_EQ(code_of([&] { evaluate(g, catalog(), numerics(), stranger); }), "ANEC-EVAL-002");
  EvalOptions small;
  small.max_elements = 2;
  EXPECT_EQ(code_of([&] { evaluate(g, catalog(), numerics(), small); }), "ANEC-EVAL-004");
  // a constant file of the wrong size
  fs::path dir = fs::temp_directory_path() / ("anec-eval-" + std::to_string(getpid()));
  fs::create_directories(dir);
  npy::Array two{"f4", {2}, std::vector<uint8_t>(8, 0)};
  write_output(dir / "w.npy", npy::write(two));
  Graph c = graph(input(3), op("add", R"("x", "w")"), R"("y")",
                  R"({"name": "w", "shape": [1, 1, 1, 3], "file": "w.npy"})");
  EvalOptions o;
  o.base = dir;
  std::string message;
  EXPECT_EQ(code_of([&] { evaluate(c, catalog(), numerics(), o); }, &message), "ANEC-EVAL-003");
  EXPECT_NE(message.find("holds 2 values"), std::string::npos) << message;
  fs::remove_all(dir);
}

// The memory budget is planned from the shapes before a value is made (ANEC-MEM-001): the issue's
// 30 chained relus on [1,1,16383,16384] fp32, every tensor an output, allocated until out of memory
// (5.2 GB, then std::bad_alloc). Here the same chain on [1,1,1,1024]: 31 tensors of 4 KiB kept.
TEST(Eval, PlansItsMemoryAgainstTheBudgetBeforeAllocating) {
  std::string ops, outputs = R"("x")";
  for (int i = 0; i < 30; ++i) {
    std::string in = i ? "t" + std::to_string(i - 1) : "x", out = "t" + std::to_string(i);
    ops += std::string(i ? ", " : "") + R"({"name": "r)" + std::to_string(i) +
           R"(", "op": "relu", "inputs": [")" + in + R"("], "outputs": [")" + out + R"("]})";
    outputs += R"(, ")" + out + R"(")";
  }
  Graph all = graph(input(1024), ops, outputs);
  EvalOptions o;
  o.max_bytes = 31 * 4096 - 1; // every tensor kept: one byte short
  std::string message;
  EXPECT_EQ(code_of([&] { evaluate(all, catalog(), numerics(), o); }, &message), "ANEC-MEM-001");
  EXPECT_NE(message.find("needs 124.0 KiB, more than the memory budget of 124.0 KiB"), std::string::npos)
      << message;
  EXPECT_NE(message.find("at op 'r29' (relu), 124.0 KiB of it the 31 graph output(s)"), std::string::npos)
      << message;
  o.max_bytes = 31 * 4096;
  EXPECT_EQ(evaluate(all, catalog(), numerics(), o).outputs.size(), 31u);
  // Only the last output kept: two tensors live at a time, whatever the chain's length.
  Graph last = graph(input(1024), ops, R"("t29")");
  o.max_bytes = 2 * 4096;
  EXPECT_EQ(evaluate(last, catalog(), numerics(), o).outputs.size(), 1u);
  o.max_bytes = 2 * 4096 - 1;
  EXPECT_EQ(code_of([&] { evaluate(last, catalog(), numerics(), o); }), "ANEC-MEM-001");
  // A conv's im2col buffer and seeded weights count: 3x3 over 8 channels of 16x16, 8 out.
  Graph conv =
      graph(R"({"name": "x", "shape": [1, 8, 16, 16]})",
            op("conv", R"("x")", R"({"out_channels": 8, "kernel": [3, 3], "pad": [1, 1, 1, 1]})"), R"("y")");
  double tensors = 2 * 8 * 16 * 16 * 4, scratch = (72 * 256 + 8 * 72) * 4;
  o.max_bytes = tensors + scratch;
  EXPECT_EQ(evaluate(conv, catalog(), numerics(), o).outputs.size(), 1u);
  o.max_bytes = tensors + scratch - 1;
  EXPECT_EQ(code_of([&] { evaluate(conv, catalog(), numerics(), o); }), "ANEC-MEM-001");
  // What the caller holds besides counts too.
  o.max_bytes = tensors + scratch;
  o.reserved_bytes = 1;
  EXPECT_EQ(code_of([&] { evaluate(conv, catalog(), numerics(), o); }, &message), "ANEC-MEM-001");
  EXPECT_NE(message.find("and 1 B given or to be written"), std::string::npos) << message;
}

} // namespace
