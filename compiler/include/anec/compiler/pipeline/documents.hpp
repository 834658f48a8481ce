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
#include "anec/support/printer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace anec::compiler {

// `anec check` on one target. The text form: the notes, the verdict and counts on the target, each
// op's verdict with its findings under it. The document form: the counts, the ops, the findings.
void print(Printer &p, const Graph &g, const CheckResult &r, const hal::Target &t);

// `anec estimate` on one target: the total, what bounds it and the model; the rates with their
// provenance; what the total leaves out; each op's cost alone; the backends in placement order. Without
// a total (unbound dimensions), the text form says what is unknown and how to bind it.
void print(Printer &p, const Graph &g, const Estimate &e);

// What a placement comes to on its target: the partitions on the engine, the ops per backend and
// the engine's share of the FLOPs, in one sentence in the text form (`anec place`, `anec report`);
// `share` is that share as the caller writes numbers.
void print_place_summary(Printer &p, const Placement &pl, const std::string &share);

// `anec place` on one target: the summary, the partitions, the ops off the engine and why, the
// boundaries and the placed latency.
void print(Printer &p, const Graph &g, const Placement &pl);

// What `anec eval` reports: each graph output (computed or not, its shape and infinities), the
// operations not evaluated and why, the tensors seeded, the fp16 events and the skipped operations.
void print(Printer &p, const Graph &g, const EvalResult &r, const EvalOptions &o);

} // namespace anec::compiler
