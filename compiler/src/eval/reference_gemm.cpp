// Blocked so that the compiler vectorises across columns: a block of up to kRows rows of C and kCols
// columns is accumulated over kDepth contracted indices at a time, the partial sums kept in C between
// depth blocks (a float stored and reloaded is the same float, so the order of the sum is unchanged).
// A full 4 x 8 block keeps its sums in registers: 7 GFLOP/s on one core here, 2.4 times the rate of
// 4 x 64 blocks (bench/eval_bench.cpp, BM_EvalGemm); OpenBLAS reaches about 45.
#include "reference_gemm.hpp"

#include <algorithm>
#include <vector>

namespace anec::compiler::eval_detail {
namespace {

constexpr int64_t kRows = 4, kCols = 8, kDepth = 256;

struct Operands {
  bool trans_a;
  const float *a;
  int64_t lda;
  const float *rows; // op(B)'s rows [p0, p0 + depth) of the column block, `ld` apart
  int64_t ld;
};

float a_at(const Operands &o, int64_t i, int64_t p) {
  return o.trans_a ? o.a[p * o.lda + i] : o.a[i * o.lda + p];
}

// Rows [i, i + R) of C's column block [j0, j0 + cols): adds the products of depth indices
// [p0, p0 + depth), in ascending order, to the partial sums (zero when p0 is 0). C is the block's
// width when known at compile time (the accumulators then stay in registers), else 0.
template <int64_t R, int64_t C>
void accumulate(const Operands &o, int64_t i, int64_t p0, int64_t depth, int64_t cols, float *c,
                int64_t ldc) {
  constexpr int64_t W = C ? C : kCols;
  const int64_t n = C ? C : cols;
  float acc[R][W];
  for (int64_t r = 0; r < R; ++r)
    for (int64_t j = 0; j < n; ++j)
      acc[r][j] = p0 == 0 ? 0.0f : c[(i + r) * ldc + j];
  for (int64_t p = 0; p < depth; ++p) {
    const float *bp = o.rows + p * o.ld;
    for (int64_t r = 0; r < R; ++r) {
      float av = a_at(o, i + r, p0 + p);
      for (int64_t j = 0; j < n; ++j)
        acc[r][j] += av * bp[j];
    }
  }
  for (int64_t r = 0; r < R; ++r)
    std::copy(acc[r], acc[r] + n, c + (i + r) * ldc);
}

// Rows [0, m) of one column block: blocks of kRows rows, then single rows.
template <int64_t C>
void accumulate_rows(const Operands &o, int64_t m, int64_t p0, int64_t depth, int64_t cols, float *c,
                     int64_t ldc) {
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows)
    accumulate<kRows, C>(o, i, p0, depth, cols, c, ldc);
  for (; i < m; ++i)
    accumulate<1, C>(o, i, p0, depth, cols, c, ldc);
}

} // namespace

void reference_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float *c, int64_t ldc) {
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  std::vector<float> panel(trans_b ? size_t(kDepth * kCols) : 0);
  for (int64_t j0 = 0; j0 < n; j0 += kCols) {
    int64_t cols = std::min(kCols, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kDepth) {
      int64_t depth = std::min(kDepth, k - p0);
      Operands o{trans_a, a, lda, panel.data(), kCols};
      if (!trans_b)
        o.rows = b + p0 * ldb + j0, o.ld = ldb;
      else // op(B)[p][j] is b[j * ldb + p]: gather the block's rows
        for (int64_t p = 0; p < depth; ++p)
          for (int64_t j = 0; j < cols; ++j)
            panel[size_t(p * kCols + j)] = b[(j0 + j) * ldb + p0 + p];
      if (cols == kCols)
        accumulate_rows<kCols>(o, m, p0, depth, cols, c + j0, ldc);
      else
        accumulate_rows<0>(o, m, p0, depth, cols, c + j0, ldc);
    }
  }
}

} // namespace anec::compiler::eval_detail
