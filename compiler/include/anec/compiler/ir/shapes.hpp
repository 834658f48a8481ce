// Shape inference: each op's output shapes from its inputs' and attributes, by the shape function
// the catalogue names for it (ops.toml `shape`).
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

namespace anec::compiler {

// Fills in every op's output shapes in order (ops must be topologically ordered). Operations the
// catalogue does not know keep their first input's shape; the checker reports them.
// Inputs and constants are checked against the size limits first.
void infer_shapes(Graph &g, const OpCatalog &catalog);
// One op's output shapes, from its inputs', its attributes checked first (check_attribute_bounds).
void infer_shapes(Graph &g, const Op &op, const OpCatalog &catalog);
// The same for an op whose attributes were checked as it was read (a graph read op by op:
// GraphReader checks them on its parsing thread), its tensors found.
void infer_shapes(Graph &g, const Op &op, const OpTensors &tensors, const OpCatalog &catalog);

} // namespace anec::compiler
