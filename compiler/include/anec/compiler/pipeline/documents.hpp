// The documents `anec check`, `estimate`, `place` and `eval` print with --format json, shared by the
// tool and the Python module (python/), so that both give the same fields.
#pragma once
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/support/diagnostic.hpp"
#include "anec/support/doc.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace anec::compiler {

Doc check_doc(const CheckResult &r);

Doc param_doc(const Param &p);

Doc estimate_doc(const Estimate &e);

// What a placement comes to on its target: the partitions on the engine, the ops per backend and
// the engine's share of the FLOPs (`place` prints it first, the placement matrix as a row).
Doc place_summary_doc(const Placement &p);

// The placement in one sentence, as `anec place` and `anec report` print it; `share` is the engine's
// share of the FLOPs as the caller writes numbers.
std::string place_summary_text(const Placement &p, const std::string &share);

Doc place_doc(const Graph &g, const Placement &p);

// What `anec eval` reports: each graph output (computed or not, its shape and infinities), the
// operations not evaluated and why, the tensors seeded, the fp16 events and the skipped operations.
Doc eval_doc(const Graph &g, const EvalResult &r, const EvalOptions &o);

} // namespace anec::compiler
