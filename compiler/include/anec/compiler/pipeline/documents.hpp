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

// A document's per-op lists, each printed into its open list by a function: the documents above
// print the lists their results hold; a graph read op by op prints each row as it is decided into a
// spool (support/list_spool.hpp), spliced here (pipeline/summary.hpp). A row is printed by the
// row functions below, either way.
struct CheckLists {
  PrintFn ops, findings; // findings: the document form only
};
struct EstimateLists {
  PrintFn unknown, unestimated, skipped, ops;
  size_t unknown_count = 0;
};
struct PlaceLists {
  PrintFn partitions, ops, boundaries;
};
void print(Printer &p, const Graph &g, const CheckResult &r, const hal::Target &t, const CheckLists &lists);
void print(Printer &p, const Graph &g, const Estimate &e, const EstimateLists &lists);
void print(Printer &p, const Graph &g, const Placement &pl, const PlaceLists &lists);

// The rows: an op's verdict (with its findings under it in the text form), a finding, an op's cost,
// the names of the ops an estimate leaves out (`first`: the first of its list), a placed op, a
// partition and a boundary. The text form of an unestimated op or an op's cost is shown only with a
// total. Most are printed through print_later (support/print_later.hpp): on the printer's thread,
// where it has one.
void print_op_verdict(Printer &p, const OpVerdict &v, const std::vector<const Finding *> *findings);
void print_finding_row(Printer &p, const Finding &f);
void print_unknown(Printer &p, const std::string &op, bool first);
void print_unestimated(Printer &p, const std::string &op, bool first);
void print_skipped(Printer &p, const std::string &op, bool first);
void print_op_cost(Printer &p, const OpCost &c);
void print_placed_op(Printer &p, const PlacedOp &o);
void print_partition(Printer &p, const Placement &pl, size_t k); // pl.partitions[k]
void print_boundary(Printer &p, const Graph &g, const Boundary &b);

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
