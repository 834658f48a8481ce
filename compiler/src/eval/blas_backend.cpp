// The OpenBLAS adapter, the only file that includes cblas.h; its entry function, named by
// blas::kEntry, is the only symbol the module exports.
#include "blas_module.hpp"

#include <cblas.h>

namespace anec::compiler::blas {
namespace {

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a, int lda,
           const float *b, int ldb, float beta, float *c, int ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

constexpr Api kApi{{kVersion, sizeof(Api)}, &sgemm};

} // namespace
} // namespace anec::compiler::blas

extern "C" __attribute__((visibility("default"))) const anec::plugin::Header *anec_blas_backend_entry() {
  return &anec::compiler::blas::kApi.header;
}
