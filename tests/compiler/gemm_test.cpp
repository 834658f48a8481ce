// The evaluator's reference GEMM (compiler/src/eval/reference_gemm.hpp): every element is the float sum
// of its products in ascending order, for every transposition and for shapes that cross its blocks,
// so two routes to one product agree bit for bit on any host. The attention test failed before the
// reference GEMM under OPENBLAS_CORETYPE=Haswell (the fused op's q·kᵀ and the chain's materialised
// transpose rounded differently) and passed with it unset; .ci/run runs it under several core types.
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/shapes.hpp"

#include "../../compiler/src/eval/reference_gemm.hpp"
#include "tables.hpp"
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::numerics;

namespace {

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(gen);
  return v;
}

// The definition, written out: ascending order, each product and sum rounded to float.
float naive_element(const std::vector<float> &a, const std::vector<float> &b, bool ta, bool tb, int64_t m,
                    int64_t n, int64_t k, int64_t i, int64_t j) {
  float acc = 0;
  for (int64_t p = 0; p < k; ++p) {
    volatile float product = (ta ? a[size_t(p * m + i)] : a[size_t(i * k + p)]) *
                             (tb ? b[size_t(j * k + p)] : b[size_t(p * n + j)]);
    acc = acc + product;
  }
  return acc;
}

bool same_bits(float x, float y) {
  return std::memcmp(&x, &y, sizeof x) == 0;
}

TEST(ReferenceGemm, EachElementIsTheAscendingFloatSumForEveryTranspositionAndBlockCrossingShape) {
  // 7 rows (a block of 4 and 3 single rows), 70 columns (8 blocks of 8 and 6) and 300 contracted
  // (past the 256 of a depth block).
  for (auto [m, n, k] : {std::array<int64_t, 3>{7, 70, 300}, {1, 1, 1}, {4, 8, 256}, {5, 3, 2}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        std::vector<float> a = random_values(size_t(m * k), 1), b = random_values(size_t(k * n), 2);
        std::vector<float> c(size_t(m * n), NAN);
        eval_detail::reference_sgemm(ta, tb, m, n, k, a.data(), ta ? m : k, b.data(), tb ? k : n, c.data(),
                                     n);
        size_t differ = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            differ += !same_bits(c[size_t(i * n + j)], naive_element(a, b, ta, tb, m, n, k, i, j));
        EXPECT_EQ(differ, 0u) << m << "x" << n << "x" << k << " ta " << ta << " tb " << tb;
      }
}

TEST(ReferenceGemm, LeadingDimensionsAreHonouredAndAnEmptyContractionGivesZeros) {
  // A 2 x 3 block of a 2 x 5 matrix times a 3 x 2 block of a 3 x 4 matrix into a 2 x 2 block of 2 x 6.
  std::vector<float> a = {1, 2, 3, 99, 99, 4, 5, 6, 99, 99}, b = {1, 0, 99, 99, 0, 1, 99, 99, 1, 1, 99, 99};
  std::vector<float> c(12, -1);
  eval_detail::reference_sgemm(false, false, 2, 2, 3, a.data(), 5, b.data(), 4, c.data(), 6);
  EXPECT_EQ(c, (std::vector<float>{4, 5, -1, -1, -1, -1, 10, 11, -1, -1, -1, -1}));
  eval_detail::reference_sgemm(false, false, 2, 2, 0, a.data(), 5, b.data(), 4, c.data(), 6);
  EXPECT_EQ(c, (std::vector<float>{0, 0, -1, -1, -1, -1, 0, 0, -1, -1, -1, -1}));
}

// Attention fused (sdpa reads k through a transposed operand) and unfused (k transposed into a
// tensor, then matmul, scale, softmax, matmul): the same bits with the reference GEMM, and within a
// stated bound with OpenBLAS, whose kernels round the two routes alike on some CPUs only.
TEST(ReferenceGemm, FusedAndUnfusedAttentionAgreeBitForBitOnEveryHost) {
  // Four heads along N: q [4, 1, 1, 48, 40], k [.., 72, 40]; v is given twice, [.., 72, 24] as sdpa
  // reads it and [4, 1, 72, 1, 24] as the chain's matmul contracts it (the same values).
  Graph g = read_graph_json(R"({"format": "anec-graph", "version": 1,
    "inputs": [{"name": "q", "shape": [4, 1, 1, 48, 40]}, {"name": "k", "shape": [4, 1, 1, 72, 40]},
               {"name": "v", "shape": [4, 1, 1, 72, 24]}, {"name": "vc", "shape": [4, 1, 72, 1, 24]}],
    "constants": [{"name": "s", "shape": [1, 1, 1, 1], "data": [0.15811388300841897]}],
    "ops": [{"name": "f", "op": "sdpa", "inputs": ["q", "k", "v"], "outputs": ["fused"]},
            {"name": "t", "op": "transpose", "inputs": ["k"], "outputs": ["kt"],
             "attrs": {"perm": [0, 1, 4, 2, 3]}},
            {"name": "m1", "op": "matmul", "inputs": ["q", "kt"], "outputs": ["sc"]},
            {"name": "sm", "op": "mul", "inputs": ["sc", "s"], "outputs": ["scs"]},
            {"name": "soft", "op": "softmax", "inputs": ["scs"], "outputs": ["p"], "attrs": {"axis": "W"}},
            {"name": "m2", "op": "matmul", "inputs": ["p", "vc"], "outputs": ["chain"]}],
    "outputs": ["fused", "chain"]})",
                            "attention.json");
  infer_shapes(g, catalog());
  EvalOptions o;
  auto given = [](std::vector<float> v) {
    Values x;
    x.d = {1, 1, 1, 1, int64_t(v.size())};
    x.v = std::move(v);
    return x;
  };
  o.inputs["q"] = given(random_values(4 * 48 * 40, 3));
  o.inputs["k"] = given(random_values(4 * 72 * 40, 4));
  o.inputs["v"] = o.inputs["vc"] = given(random_values(4 * 72 * 24, 5));
  EvalResult r = evaluate(g, catalog(), numerics(), o);
  ASSERT_TRUE(r.report.unevaluated.empty()) << r.report.unevaluated[0].first;
  ASSERT_EQ(r.outputs.count("fused"), 1u);
  ASSERT_EQ(r.outputs.count("chain"), 1u);
  const std::vector<float> &fused = r.outputs.at("fused").v, &chain = r.outputs.at("chain").v;
  ASSERT_EQ(fused.size(), chain.size());
  ASSERT_EQ(fused.size(), size_t(4 * 48 * 24));
  size_t differ = 0;
  for (size_t i = 0; i < fused.size(); ++i)
    differ += !same_bits(fused[i], chain[i]);
  EXPECT_EQ(differ, 0u) << "of " << fused.size();

  o.gemm = Gemm::openblas;
  EvalResult b = evaluate(g, catalog(), numerics(), o);
  ASSERT_EQ(b.outputs.count("fused"), 1u);
  ASSERT_EQ(b.outputs.at("fused").v.size(), fused.size());
  double worst = 0;
  for (size_t i = 0; i < fused.size(); ++i)
    worst = std::max(worst, double(std::fabs(b.outputs.at("fused").v[i] - fused[i])));
  EXPECT_LT(worst, 1e-5) << "OpenBLAS and the reference GEMM disagree past float rounding";
}

} // namespace
