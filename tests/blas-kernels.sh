#!/usr/bin/env bash
# Runs the tests whose results go through a GEMM (the evaluator, the tuner, the NumPy references and
# the Python module's eval) again under each OpenBLAS core type this CPU can run, with one and two
# OpenBLAS threads: a result must not depend on the kernel OpenBLAS picks (README, "Test").
#   tests/blas-kernels.sh BUILD_DIR
# A core type whose instructions the CPU lacks is skipped, and named (OpenBLAS would stop on an
# illegal instruction). Each run prints ctest's summary; a failing one prints all of ctest's output
# and stops the script with exit 1.
set -euo pipefail
build=${1:?usage: tests/blas-kernels.sh BUILD_DIR}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
tests='^(Eval|EvalFp16|EvalData|EvalNumpy|OnnxEval|Tune|ReferenceGemm)\.|^python\.anec$'

# Each core type and the CPU flag its kernels need.
declare -A needs=([Nehalem]=sse4_2 [Haswell]=avx2 [Zen]=avx2 [SkylakeX]=avx512f)
for core in Nehalem Haswell Zen SkylakeX; do
  if ! grep -qw "${needs[$core]}" /proc/cpuinfo; then
    echo "== OPENBLAS_CORETYPE=$core: skipped, this CPU has no ${needs[$core]}"
    continue
  fi
  for threads in 1 2; do
    echo "== OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$threads"
    if ! OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$threads \
      ctest --test-dir "$build" -R "$tests" --output-on-failure -j2 >"$log" 2>&1; then
      cat "$log"
      exit 1
    fi
    grep -E 'tests passed|tests failed|Total Test time' "$log"
  done
done
