#include "anec/compiler/pipeline/summary.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/compiler/pipeline/documents.hpp"

#include "anec/support/error.hpp"
#include "anec/support/list_spool.hpp"

#include <optional>

namespace anec::compiler {

namespace {
// An anec-graph file opened to be read op by op, its inputs and constants bound and shaped (normalise's
// steps); nullopt when it cannot be read this way.
std::optional<GraphReader> open_graph(const std::filesystem::path &path, const OpCatalog &catalog,
                                      const DimBindings &dims) {
  if (path.extension() != ".json")
    return std::nullopt;
  std::optional<GraphReader> reader = GraphReader::open(path);
  if (!reader)
    return std::nullopt;
  bind_dimensions(reader->graph(), dims);
  infer_shapes(reader->graph(), catalog); // no ops yet: the inputs' and constants' sizes
  return reader;
}

// The next op, its tensors found (into `tensors`), its outputs shaped and its skip marked; nullptr
// after the last.
Op *next_op(GraphReader &reader, const OpCatalog &catalog, OpTensors &tensors) {
  Op *op = reader.next(tensors);
  if (op) {
    infer_shapes(reader.graph(), *op, tensors, catalog);
    mark_skippable(reader.graph(), *op, tensors, catalog);
  }
  return op;
}

std::optional<ModelSummary> summarize_while_reading(const std::filesystem::path &path,
                                                    const OpCatalog &catalog, const DimBindings &dims,
                                                    const std::vector<const hal::Target *> &targets,
                                                    const Calibration *calibration, const std::string &chip) {
  std::optional<GraphReader> reader = open_graph(path, catalog, dims);
  if (!reader)
    return std::nullopt;
  Graph &g = reader->graph();
  GraphCheck checks(g, catalog, targets, Detail::Summary);
  GraphEstimate estimates(g, catalog, targets, calibration, chip, Detail::Summary);
  OpTensors tensors;
  while (Op *op = next_op(*reader, catalog, tensors)) {
    checks.add(*op, tensors);
    estimates.add(*op, tensors);
  }
  return ModelSummary{checks.finish(), estimates.finish(), true};
}
} // namespace

ModelSummary summarize_model(const std::filesystem::path &path, const OpCatalog &catalog,
                             const DimBindings &dims, const std::vector<const hal::Target *> &targets,
                             const Calibration *calibration, const std::string &chip, double max_memory) {
  try {
    if (auto summary = summarize_while_reading(path, catalog, dims, targets, calibration, chip))
      return std::move(*summary);
  } catch (const Error &) {
    // Read whole below: the whole-document reader reports the error as it reports it for any file.
  }
  Graph g = load_model(path, catalog, dims, false, max_memory);
  return {check(g, catalog, targets, Detail::Summary),
          estimate(g, catalog, targets, calibration, chip, Detail::Summary)};
}

namespace {
// A list of op names an estimate leaves out, spooled: the rows printed so far, and the first name,
// which the estimate keeps (its completeness and the text form read it).
struct NameRows {
  ListSpool spool;
  size_t count = 0;
  // The names added since the last call (after the kept first one), printed with `row`.
  void take(std::vector<std::string> &names, void (*row)(Printer &, const std::string &, bool)) {
    for (size_t k = count ? 1 : 0; k < names.size(); ++k)
      row(spool.items(), names[k], count++ == 0);
    names.resize(std::min<size_t>(names.size(), 1));
  }
};
} // namespace

struct OneTargetReport::State {
  Kind kind;
  const hal::Target &target;
  GraphReader reader;
  GraphCheck checks;
  GraphEstimate estimates;
  PlacementSum placing;
  PrintBehind behind; // the rows are formatted and written on its thread
  ListSpool ops, findings, placed, boundaries;
  NameRows unknown, unestimated, skipped;
  std::vector<Finding> graph_findings = {}; // the check's findings of no op: the inputs'
  CheckResult check = {};
  Estimate estimate = {};
  Placement placement = {};

  State(Kind k, const hal::Target &t, GraphReader r, const OpCatalog &catalog, const Calibration *calibration,
        const std::string &chip, Form form)
      : kind(k), target(t), reader(std::move(r)), checks(reader.graph(), catalog, {&t}),
        estimates(reader.graph(), catalog, {&t}, calibration, chip),
        placing(reader.graph(), catalog, t, estimates.partial(0)), ops(form, 2, &behind),
        findings(form, 2, &behind), placed(form, placement_depth(k), &behind),
        boundaries(form, placement_depth(k), &behind), unknown{ListSpool(form, 2, &behind)},
        unestimated{ListSpool(form, 2, &behind)}, skipped{ListSpool(form, 2, &behind)} {}

  void add(const Op &op, const OpTensors &tensors);
  void finish();
  // The placement's lists are the document's own (place), or under its "placement" member (check).
  static size_t placement_depth(Kind k) { return k == Kind::Place ? 2 : 3; }
};

void OneTargetReport::State::add(const Op &op, const OpTensors &tensors) {
  estimates.add(op, tensors);
  Estimate &e = estimates.partial(0);
  const OpCost *cost = e.ops.empty() ? nullptr : &e.ops.back(); // none: skipped at run time
  if (kind == Kind::Estimate) {
    unknown.take(e.unknown, print_unknown);
    unestimated.take(e.unestimated, print_unestimated);
    skipped.take(e.skipped, print_skipped);
    if (cost)
      print_op_cost(ops.items(), *cost);
    e.ops.clear();
    return;
  }
  checks.add(op, tensors, cost ? std::optional<double>(cost->weight) : std::nullopt);
  CheckResult &r = checks.partial(0);
  std::vector<const Finding *> of_op, rejects;
  for (const Finding &f : r.findings) {
    of_op.push_back(&f);
    if (f.severity == Severity::Reject)
      rejects.push_back(&f);
    if (kind == Kind::Check && !ops.items().text_form())
      print_finding_row(findings.items(), f);
  }
  if (kind == Kind::Check)
    print_op_verdict(ops.items(), r.ops.back(), of_op.empty() ? nullptr : &of_op);
  placing.add(op, tensors, r.ops.back().verdict, std::move(rejects), cost);
  Placement &pl = placing.placement();
  print_placed_op(placed.items(), pl.ops.back());
  for (const Boundary &b : pl.boundaries)
    print_boundary(boundaries.items(), reader.graph(), b);
  for (auto *names : {&e.unknown, &e.unestimated, &e.skipped})
    names->resize(std::min<size_t>(names->size(), 1));
  e.ops.clear();
  r.ops.clear();
  r.findings.clear();
  pl.ops.clear();
  pl.boundaries.clear();
}

void OneTargetReport::State::finish() {
  estimate = std::move(estimates.finish().front());
  if (kind == Kind::Estimate)
    return;
  check = std::move(checks.finish().front());
  check.findings = std::move(graph_findings);
  placement = placing.finish(estimate);
}

OneTargetReport::OneTargetReport(std::unique_ptr<State> state) : state_(std::move(state)) {}
OneTargetReport::~OneTargetReport() = default;

std::unique_ptr<OneTargetReport> OneTargetReport::read(Kind kind, const std::filesystem::path &path,
                                                       const OpCatalog &catalog, const DimBindings &dims,
                                                       const hal::Target &target,
                                                       const Calibration *calibration,
                                                       const std::string &chip, Form form) {
  try {
    std::optional<GraphReader> reader = open_graph(path, catalog, dims);
    if (!reader)
      return nullptr;
    auto s = std::make_unique<State>(kind, target, std::move(*reader), catalog, calibration, chip, form);
    // The findings of no op (the inputs') come first in the document's list.
    s->graph_findings = std::move(s->checks.partial(0).findings);
    s->checks.partial(0).findings.clear();
    if (form != Form::Text && kind == Kind::Check)
      for (const Finding &f : s->graph_findings)
        print_finding_row(s->findings.items(), f);
    OpTensors tensors;
    while (Op *op = next_op(s->reader, catalog, tensors))
      s->add(*op, tensors);
    s->finish();
    return std::unique_ptr<OneTargetReport>(new OneTargetReport(std::move(s)));
  } catch (const Error &) {
    return nullptr; // read whole: the whole-document reader reports the error as it does for any file
  }
}

void OneTargetReport::print(Printer &p) const {
  State &s = *state_;
  const Graph &g = s.reader.graph();
  auto splice = [](ListSpool &spool) { return [&spool](Printer &p) { spool.splice_into(p); }; };
  if (s.kind == Kind::Estimate) {
    compiler::print(p, g, s.estimate,
                    {.unknown = splice(s.unknown.spool),
                     .unestimated = splice(s.unestimated.spool),
                     .skipped = splice(s.skipped.spool),
                     .ops = splice(s.ops),
                     .unknown_count = s.unknown.count});
    return;
  }
  if (s.kind == Kind::Place) {
    compiler::print(p, g, s.placement, {splice(s.placed), splice(s.boundaries)});
    return;
  }
  compiler::print(p, g, s.check, s.target, {splice(s.ops), splice(s.findings)});
  p.text("\n");
  Object placement(p, "placement");
  compiler::print(p, g, s.placement, {splice(s.placed), splice(s.boundaries)});
}

bool OneTargetReport::rejects() const {
  return state_->kind == Kind::Check && state_->check.verdict == Verdict::Reject;
}

} // namespace anec::compiler
