#include "anec/compiler/pipeline/summary.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"

#include "anec/support/error.hpp"

namespace anec::compiler {

namespace {
std::optional<ModelSummary> summarize_while_reading(const std::filesystem::path &path,
                                                    const OpCatalog &catalog, const DimBindings &dims,
                                                    const std::vector<const hal::Target *> &targets,
                                                    const Calibration *calibration, const std::string &chip) {
  if (path.extension() != ".json")
    return std::nullopt;
  std::optional<GraphReader> reader = GraphReader::open(path);
  if (!reader)
    return std::nullopt;
  Graph &g = reader->graph();
  bind_dimensions(g, dims); // normalise's steps, op by op
  infer_shapes(g, catalog); // no ops yet: the inputs' and constants' sizes
  GraphCheck checks(g, catalog, targets, Detail::Summary);
  GraphEstimate estimates(g, catalog, targets, calibration, chip, Detail::Summary);
  while (Op *op = reader->next()) {
    infer_shapes(g, *op, catalog);
    mark_skippable(g, *op, catalog);
    checks.add(*op);
    estimates.add(*op);
  }
  return ModelSummary{checks.finish(), estimates.finish(), true};
}
} // namespace

ModelSummary summarize_model(const std::filesystem::path &path, const OpCatalog &catalog,
                             const DimBindings &dims, const std::vector<const hal::Target *> &targets,
                             const Calibration *calibration, const std::string &chip) {
  try {
    if (auto summary = summarize_while_reading(path, catalog, dims, targets, calibration, chip))
      return std::move(*summary);
  } catch (const Error &) {
    // Read whole below: the whole-document reader reports the error as it reports it for any file.
  }
  Graph g = load_model(path, catalog, dims);
  return {check(g, catalog, targets, Detail::Summary),
          estimate(g, catalog, targets, calibration, chip, Detail::Summary)};
}

} // namespace anec::compiler
