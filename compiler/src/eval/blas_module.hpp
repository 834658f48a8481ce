// The interface of the BLAS module (compiler/src/eval/blas_backend.cpp): OpenBLAS's single-precision GEMM,
// in a module loaded the first time the evaluator multiplies, so that OpenBLAS's thread pool and
// start-up cost nothing to a command that never evaluates (anec/support/plugin.hpp).
#pragma once
#include "anec/support/plugin.hpp"

#include <cstdint>

namespace anec::compiler::blas {

inline constexpr const char *kModule = "anec_blas_backend";
inline constexpr const char *kEntry = "anec_blas_backend_entry";
inline constexpr uint32_t kVersion = 1;

struct Api {
  plugin::Header header;
  // C = alpha op(A) op(B) + beta C, row major: op(A) is m x k, op(B) k x n, C m x n; a flag set
  // transposes that operand. Every dimension and leading dimension fits in an int (the caller splits).
  void (*sgemm)(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                const float *b, int ldb, float beta, float *c, int ldc);
};

// The module's table, loaded on first use (ANEC-PLUGIN-* when it cannot be).
const Api &api();

} // namespace anec::compiler::blas
