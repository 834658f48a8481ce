// The host evaluator's kernels (compiler/src/eval/kernels.cpp): one per catalogue operation, looked
// up by name, each computing an op's outputs from its inputs' values in float32 (eval.cpp applies the
// fp16 rounding points around them).
#pragma once
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/ir/attrs.hpp"

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace anec::compiler::eval_detail {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

// `count` values uniform in [-scale, scale), from a stream keyed by the seed and `name`.
std::vector<float> seeded(uint64_t seed, const std::string &name, int64_t count, float scale);

// An error the evaluator reports against the op instead of computing it.
struct Unevaluated {
  std::string why;
};

// One op being evaluated: its inputs' values and its outputs, shaped as the graph says.
struct Call {
  const Op &op;
  OpAttrs attrs;
  const Numerics &num;
  bool fp16;
  EvalReport &report;
  std::vector<const Values *> in;
  std::vector<Values> out;
  uint64_t seed = 1; // for weights without values
  Gemm gemm = Gemm::reference;

  const Values &x(size_t k = 0) const {
    if (k >= in.size())
      throw Unevaluated{"needs input " + std::to_string(k + 1)};
    return *in[k];
  }
  Values &y(size_t k = 0) { return out[k]; }
  void note(const std::string &what, int64_t count) {
    if (count)
      report.numerics.push_back("op '" + op.name + "': " + std::to_string(count) + " " + what);
  }
};

using Kernel = void (*)(Call &);

// The kernels by operation name.
const std::map<std::string, Kernel> &kernels();

// The float values a kernel holds besides its operands while it runs (an im2col buffer, seeded
// weights, an attention's score matrix), from the op's shapes: what the memory budget counts.
double scratch_elements(const Op &op, const OpAttrs &attrs, const std::vector<const Shape *> &in,
                        const Shape &out);

// The multiply-accumulate ops, whose products of fp16 operands sum in the wide accumulator.
bool accumulates(const std::string &type);

} // namespace anec::compiler::eval_detail
