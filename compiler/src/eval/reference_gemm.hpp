// The evaluator's own single-precision GEMM, whose result does not depend on the host. OpenBLAS picks
// a kernel by CPU (and by OPENBLAS_CORETYPE) and each kernel orders and fuses the multiply-adds its
// own way, so the last bits of a product, and whether two routes to one product agree bit for bit,
// change from one machine to the next. Here every element of C is the float sum of its k products
// in ascending order of the contracted index, each product and each sum rounded to float (no fused
// multiply-add: the file is built with -ffp-contract=off), whatever the transposition flags, the
// leading dimensions, the CPU or the thread count. Two GEMMs over the same values thus give the
// same bits: q·kᵀ read through a transposed operand equals the product of a materialised kᵀ.
#pragma once
#include <cstdint>

namespace anec::compiler::eval_detail {

// C = op(A) op(B), row major: op(A) is m x k, op(B) k x n, C m x n; a flag set transposes
// that operand (A is then k x m with leading dimension lda, B n x k with ldb).
void reference_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float *c, int64_t ldc);

} // namespace anec::compiler::eval_detail
