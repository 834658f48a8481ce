#include "anec/compiler/ir/skip.hpp"

#include "anec/compiler/ir/attrs.hpp"

#include "anec/support/error.hpp"

#include <algorithm>
#include <map>

namespace anec::compiler {

namespace {

const Shape &shape_of(const Graph &g, const std::string &name) {
  return g.tensor(name)->shape;
}

bool always(const Graph &, const Op &, const OpCatalog &) {
  return true;
}

bool same_shape(const Graph &g, const Op &op, const OpCatalog &) {
  return op.inputs.size() == 1 && shape_of(g, op.inputs[0]).d == shape_of(g, op.outputs[0]).d;
}

// A permutation moves no data when the axes longer than 1 keep their order and the width (the
// engine's row) keeps its extent: [128,1,32,64] under [0,2,1,3] is a relabelling, [128,2,32,64] is not.
bool unit_axes(const Graph &g, const Op &op, const OpCatalog &catalog) {
  auto perm = OpAttrs(op, catalog).ints("perm");
  const Shape &in = shape_of(g, op.inputs[0]);
  if (perm.size() != 5 || in.d[kW] != shape_of(g, op.outputs[0]).d[kW])
    return false;
  int64_t last = -1;
  for (int64_t axis : perm) {
    if (axis < 0 || axis > 4 || in.d[size_t(axis)] == 1)
      continue;
    if (axis < last)
      return false;
    last = axis;
  }
  return true;
}

using MovesNoData = bool (*)(const Graph &, const Op &, const OpCatalog &);

const std::map<std::string, MovesNoData> &skip_table() {
  static const std::map<std::string, MovesNoData> t = {
      {"always", always}, {"same_shape", same_shape}, {"unit_axes", unit_axes}};
  return t;
}

} // namespace

const std::vector<std::string> &known_skips() {
  static const std::vector<std::string> names = keys_of(skip_table());
  return names;
}

void mark_skippable(Graph &g, Op &op, const OpTensors &tensors, const OpCatalog &catalog) {
  bool dyn = std::any_of(tensors.ins.begin(), tensors.ins.end(),
                         [&](size_t k) { return g.tensors[k].dynamic || g.tensors[k].shape.symbolic(); });
  for (size_t k : tensors.outs)
    g.tensors[k].dynamic = dyn;
  const OpSpec *spec = catalog.find(op.type);
  if (!spec || spec->skip.empty() || op.inputs.empty()) {
    op.optimized = op.runtime_skippable = false;
    return;
  }
  op.runtime_skippable = dyn;
  op.optimized = dyn || moves_no_data(g, op, spec->skip, catalog);
}

void mark_skippable(Graph &g, const OpCatalog &catalog) {
  OpTensors tensors;
  for (Op &op : g.ops) {
    find_tensors(g, op, tensors);
    mark_skippable(g, op, tensors, catalog);
  }
}

bool moves_no_data(const Graph &g, const Op &op, const std::string &rule, const OpCatalog &catalog) {
  return !op.inputs.empty() && skip_table().at(rule)(g, op, catalog);
}

bool skipped(const Graph &g, const Op &op, const OpCatalog &catalog) {
  if (op.runtime_skippable && !op.optimized)
    throw Error("ANEC-INTERNAL", "op '" + op.name +
                                     "' is marked runtime_skippable but not optimized, "
                                     "an invalid combination of the runtime-skip flags");
  if (!op.optimized)
    return false;
  if (!op.runtime_skippable)
    return true; // decided at compile time
  for (const std::string &n : op.inputs)
    if (shape_of(g, n).symbolic())
      return false; // not yet known: it runs
  const OpSpec *spec = catalog.find(op.type);
  return spec && !spec->skip.empty() && moves_no_data(g, op, spec->skip, catalog);
}

} // namespace anec::compiler
