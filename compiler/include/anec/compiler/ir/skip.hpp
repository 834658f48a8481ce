// Runtime operation skip (the design document "Runtime operation skip"): an operation that moves no
// data (a permutation of size-1 axes, a copy, a slice or pad that keeps the shape) is skipped. Where
// its shapes are known at compile time the decision is made then (optimized); where they depend on a
// dimension known only at run time (a symbolic input, one bound by --dim) the op is marked
// optimized and runtime_skippable and decided with the concrete shapes. The rule per operation is
// the catalogue's `skip` (tables/schema/ops.toml). A skipped op's output is its input's values
// under the output's shape; it costs nothing.
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

namespace anec::compiler {

// Compile time: marks `op` (its outputs inherit the inputs' dynamic flag) from the shapes as they
// stand; a graph's inputs whose shapes are symbolic or were bound at run time must be marked dynamic.
void mark_skippable(Graph &g, Op &op, const OpTensors &tensors, const OpCatalog &catalog);
void mark_skippable(Graph &g, const OpCatalog &catalog);

// Run time: whether `op` is skipped, on the graph's (now concrete) shapes. ANEC-INTERNAL for an op
// marked runtime_skippable but not optimized.
bool skipped(const Graph &g, const Op &op, const OpCatalog &catalog);

// Whether `op` moves no data on the graph's shapes under a skip rule (known_skips()).
bool moves_no_data(const Graph &g, const Op &op, const std::string &rule, const OpCatalog &catalog);

} // namespace anec::compiler
