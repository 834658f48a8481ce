// Runtime operation skip (compiler/ir/skip.hpp), on the design document's example: a permute
// [0,2,1,3] of a dynamically shaped input is marked at compile time and skipped once the input
// resolves to [128,1,32,64], not at [128,2,32,64]; the skipped op moves no data, so the evaluator
// gives what the permute computes, and the estimate leaves its time out and says so. A static
// shape is decided at compile time; the flags' invalid combination is an internal error.
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/support/file.hpp"

#include "../errors.hpp"
#include "tables.hpp"
#include <gtest/gtest.h>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
using anec::test::numerics;
using anec::test::registry;
namespace fs = std::filesystem;

namespace {

// x [N, C, H, W] -> permute [0, 2, 1, 3] (5-D: C and H swapped) -> relu; `shape` is x's.
Graph permute(const std::string &shape, const DimBindings &dims) {
  fs::path path = fs::temp_directory_path() / ("anec-skip-" + std::to_string(getpid()) + ".json");
  write_output(path, R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": )" + shape +
                         R"(}], "ops": [{"name": "p", "op": "transpose", "inputs": ["x"], "outputs": ["t"],
                         "attrs": {"perm": [0, 1, 3, 2, 4]}}, {"name": "r", "op": "relu", "inputs": ["t"],
                         "outputs": ["y"]}], "outputs": ["y"]})");
  Graph g = load_model(path, catalog(), dims);
  fs::remove(path);
  return g;
}

const std::string kDynamic = R"(["batch", "c", 32, 64])";

TEST(RuntimeSkip, ThePermuteIsSkippedAt128x1x32x64AndNotAt128x2x32x64) {
  Graph one = permute(kDynamic, {{"batch", 128}, {"c", 1}});
  ASSERT_GE(one.ops.size(), 2u);
  const Op &p = one.ops[0];
  EXPECT_TRUE(p.optimized);
  EXPECT_TRUE(p.runtime_skippable);
  EXPECT_TRUE(skipped(one, p, catalog()));
  EXPECT_FALSE(skipped(one, one.ops[1], catalog())); // relu has no skip rule
  Graph two = permute(kDynamic, {{"batch", 128}, {"c", 2}});
  ASSERT_FALSE(two.ops.empty());
  EXPECT_TRUE(two.ops[0].runtime_skippable);
  EXPECT_FALSE(skipped(two, two.ops[0], catalog()));
  // unbound, it is not known yet: it runs
  Graph open = permute(kDynamic, {});
  ASSERT_FALSE(open.ops.empty());
  EXPECT_TRUE(open.ops[0].runtime_skippable);
  EXPECT_FALSE(skipped(open, open.ops[0], catalog()));
}

TEST(RuntimeSkip, AStaticShapeIsDecidedAtCompileTime) {
  Graph moves_nothing = permute("[128, 1, 32, 64]", {});
  ASSERT_FALSE(moves_nothing.ops.empty());
  EXPECT_TRUE(moves_nothing.ops[0].optimized);
  EXPECT_FALSE(moves_nothing.ops[0].runtime_skippable);
  EXPECT_TRUE(skipped(moves_nothing, moves_nothing.ops[0], catalog()));
  Graph moves = permute("[128, 2, 32, 64]", {});
  ASSERT_FALSE(moves.ops.empty());
  EXPECT_FALSE(moves.ops[0].optimized);
  EXPECT_FALSE(skipped(moves, moves.ops[0], catalog()));
}

TEST(RuntimeSkip, TheEvaluatorSkipsItAndComputesWhatThePermuteComputes) {
  Graph g = permute(kDynamic, {{"batch", 2}, {"c", 1}});
  EvalResult skipping = evaluate(g, catalog(), numerics(), EvalOptions{});
  EXPECT_EQ(skipping.report.skipped, (std::vector<std::string>{"p (transpose)"}));
  ASSERT_FALSE(g.ops.empty());
  g.ops[0].optimized = g.ops[0].runtime_skippable = false;
  EvalResult running = evaluate(g, catalog(), numerics(), EvalOptions{});
  EXPECT_TRUE(running.report.skipped.empty());
  EXPECT_EQ(skipping.outputs.at("y").v, running.outputs.at("y").v);
  EXPECT_EQ(skipping.outputs.at("y").d, running.outputs.at("y").d);
}

TEST(RuntimeSkip, TheEstimateLeavesTheSkippedTimeOutAndSaysSo) {
  const hal::Target &h13 = registry().get("h13");
  Graph one = permute(kDynamic, {{"batch", 128}, {"c", 1}});
  Graph two = permute(kDynamic, {{"batch", 128}, {"c", 2}});
  Estimate skip = estimate(one, catalog(), h13), run = estimate(two, catalog(), h13);
  EXPECT_EQ(skip.skipped, (std::vector<std::string>{"p"}));
  EXPECT_EQ(run.skipped_ops, 0u);
  EXPECT_EQ(skip.ops.size() + 1, run.ops.size());
  ASSERT_FALSE(one.ops.empty());
  one.ops[0].optimized = one.ops[0].runtime_skippable = false;
  Estimate unskipped = estimate(one, catalog(), h13);
  EXPECT_GT(skip.skipped_us, 0);
  EXPECT_EQ(unskipped.skipped_ops, 0u);
}

// The placement matches each op to its cost by name: the estimate leaves the skipped op out, so the
// op after it must not read the skipped op's cost (or past the end of the list).
TEST(RuntimeSkip, ThePlacementCostsASkippedOpNothingAndTheOthersTheirOwn) {
  const hal::Target &h13 = registry().get("h13");
  Graph one = permute(kDynamic, {{"batch", 128}, {"c", 1}});
  Estimate e = estimate(one, catalog(), h13);
  ASSERT_EQ(e.ops.size() + 1, one.ops.size());
  Placement p = place(one, catalog(), h13, check(one, catalog(), h13), e);
  ASSERT_EQ(p.ops.size(), one.ops.size());
  EXPECT_EQ(p.ops[0].flops, 0);
  EXPECT_EQ(p.ops[1].flops, e.ops[0].flops);
  EXPECT_EQ(p.flops, e.ops[0].flops);
}

TEST(RuntimeSkip, RuntimeSkippableWithoutOptimizedIsAnInternalError) {
  Graph g = permute(kDynamic, {{"batch", 128}, {"c", 1}});
  ASSERT_FALSE(g.ops.empty());
  g.ops[0].optimized = false;
  std::string message;
  EXPECT_EQ(code_of([&] { skipped(g, g.ops[0], catalog()); }, &message), "ANEC-INTERNAL");
  EXPECT_NE(message.find("runtime_skippable but not optimized"), std::string::npos);
  EXPECT_EQ(code_of([&] { estimate(g, catalog(), registry().get("h13")); }), "ANEC-INTERNAL");
  EXPECT_EQ(code_of([&] { evaluate(g, catalog(), numerics(), EvalOptions{}); }), "ANEC-INTERNAL");
}

} // namespace
