// The host reference evaluator: runs a graph on the host, in float32 or in the engine's fp16
// numerics, so that "computes the same result" is checked rather than assumed (a tuner's rewrite, a
// front-end's translation) and a user sees the engine's overflow and rounding before a device does.
//
// Values are 5-D [N, D, C, H, W] in C order, as the graph's shapes are. The semantics of each
// operation are those of docs/graph-format.md ("Evaluation"); GEMM and convolution run through the
// evaluator's reference GEMM, whose bits are the same on every host (compiler/src/eval/reference_gemm.hpp),
// or on request through OpenBLAS (a module loaded on first use, compiler/src/eval/blas_module.hpp), faster
// but with last bits that depend on the kernel OpenBLAS picks for the CPU. In fp16 mode every value is
// rounded to half where the engine rounds (guide ch.3): inputs and constants on the way in, every
// operation's output on the way out, the multiply-accumulate ops' products of fp16 operands summed
// wide; the cliffs of tables/schema/numerics.toml (the accumulator port's ceiling, the width-slice
// gain, NaN and indeterminate forms, the flush of subnormals inside the multiply-accumulate) apply.
#pragma once
#include "anec/compiler/ir/budget.hpp"
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace anec::compiler {

struct Values {
  std::array<int64_t, 5> d{1, 1, 1, 1, 1};
  std::vector<float> v; // d[0] * ... * d[4] elements, C order
  int64_t elements() const { return d[0] * d[1] * d[2] * d[3] * d[4]; }
};

enum class Precision { fp32, fp16 };

// Who multiplies: `reference`, every element summed in ascending order of the contracted index
// (the same bits on every host, and along every route to one product); `openblas`, OpenBLAS's
// kernel for the CPU (faster; results vary in the last bits with the kernel and its blocking).
enum class Gemm { reference, openblas };

// The engine's numeric behaviour in fp16 mode (tables/schema/numerics.toml, guide ch.3).
struct Numerics {
  double fp16_max = 65504;            // past it a value rounds to infinity
  double accumulator_ceiling = 32768; // a multiply-accumulate output past it becomes infinity
  double width_slice_gain = 16;       // a slice with a nonzero width offset scales by it internally
  double log_zero = -45440;           // log(+0) on the engine
  bool flush_accumulator_subnormals = true;
  // Strict (ANEC-OPS-001): every key known, every value a number of the right kind.
  static Numerics load(const std::filesystem::path &path);
};

struct EvalOptions {
  Precision precision = Precision::fp32;
  uint64_t seed = 1;                       // for constants and weights without values
  std::map<std::string, Values> inputs;    // by graph input name; a missing one gets seeded values
  std::filesystem::path base;              // the folder a constant's "file" is relative to
  int64_t max_elements = int64_t(1) << 28; // the largest tensor it holds (1 GiB of float32)
  // The memory budget of the evaluation (`--max-memory`): its planned peak, with `reserved_bytes`
  // that its caller holds besides (the files it will write), may not exceed it.
  double max_bytes = kDefaultMaxMemory;
  double reserved_bytes = 0;
  Gemm gemm = Gemm::reference;
};

struct EvalReport {
  std::vector<std::string> seeded;                              // tensors given seeded random values
  std::vector<std::pair<std::string, std::string>> unevaluated; // op, why (its outputs are absent)
  std::vector<std::string> skipped;  // ops that move no data, skipped (compiler/ir/skip.hpp)
  std::vector<std::string> numerics; // fp16 events: op, what, how many
  double flops = 0;
};

struct EvalResult {
  std::map<std::string, Values> outputs; // the graph outputs that could be computed
  EvalReport report;
};

// Runs `g` (shapes inferred and concrete: bind symbols first) from its inputs to its outputs.
// Errors: ANEC-EVAL-001 a symbolic dimension, ANEC-EVAL-002 an input whose element count disagrees
// with the graph, or an input the graph does not have, ANEC-EVAL-003 a constant's values that cannot
// be read or disagree with its shape, ANEC-EVAL-004 a tensor of more than max_elements, ANEC-MEM-001
// a planned peak (live tensors, kernel scratch, reserved_bytes) above max_bytes, before a value is made.
EvalResult evaluate(const Graph &g, const OpCatalog &catalog, const Numerics &numerics,
                    const EvalOptions &options);

// Whether the evaluator computes `op_type` (the catalogue's native operations, but those whose
// semantics the graph format does not define).
bool evaluates(const std::string &op_type);

} // namespace anec::compiler
