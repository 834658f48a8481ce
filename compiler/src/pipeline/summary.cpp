#include "anec/compiler/pipeline/summary.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/compiler/pipeline/documents.hpp"

#include "anec/support/corpus.hpp"
#include "anec/support/error.hpp"
#include "anec/support/list_spool.hpp"

#include <algorithm>
#include <exception>
#include <iterator>
#include <memory>
#include <optional>

namespace anec::compiler {

namespace {
// An anec-graph file opened to be read op by op, its inputs and constants bound and shaped (normalise's
// steps); nullopt when it cannot be read this way.
std::optional<GraphReader> open_graph(const std::filesystem::path &path, const OpCatalog &catalog,
                                      const DimBindings &dims) {
  if (path.extension() != ".json")
    return std::nullopt;
  std::optional<GraphReader> reader = GraphReader::open(path, catalog);
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

// The targets in `parts` runs, in order, as even as they divide (at most one a target).
std::vector<std::vector<const hal::Target *>> split(const std::vector<const hal::Target *> &targets,
                                                    size_t parts) {
  parts = std::max<size_t>(1, std::min(parts, targets.size()));
  std::vector<std::vector<const hal::Target *>> out(parts);
  for (size_t k = 0; k < targets.size(); ++k)
    out[k * parts / targets.size()].push_back(targets[k]);
  return out;
}

// work(k) for each of `shares` shares of the targets, on threads of their own (this one included);
// once all are done, the error of the first share that failed is thrown.
template <class Work> void each_share(size_t shares, const Work &work) {
  std::vector<std::exception_ptr> errors(shares);
  spread_over_cores(shares, [&](size_t k) {
    try {
      work(k);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  });
  for (const std::exception_ptr &e : errors)
    if (e)
      std::rethrow_exception(e);
}

// The check and the estimate of one run of the targets, over ops in turn.
struct Share {
  GraphCheck checks;
  GraphEstimate estimates;
  Share(const Graph &g, const OpCatalog &catalog, const std::vector<const hal::Target *> &targets,
        const Calibration *calibration, const std::string &chip)
      : checks(g, catalog, targets, Detail::Summary),
        estimates(g, catalog, targets, calibration, chip, Detail::Summary) {}
};

// The shares' results, in the order of the targets.
ModelSummary joined(std::vector<ModelSummary> parts, bool streamed) {
  ModelSummary all{{}, {}, streamed};
  for (ModelSummary &p : parts) {
    std::move(p.checks.begin(), p.checks.end(), std::back_inserter(all.checks));
    std::move(p.estimates.begin(), p.estimates.end(), std::back_inserter(all.estimates));
  }
  return all;
}

// The ops are read, bound and shaped on this thread a batch at a time; then each share checks and
// estimates the batch on its own thread, while the graph stands still.
std::optional<ModelSummary> summarize_while_reading(const std::filesystem::path &path,
                                                    const OpCatalog &catalog, const DimBindings &dims,
                                                    const std::vector<const hal::Target *> &targets,
                                                    const Calibration *calibration, const std::string &chip,
                                                    unsigned threads) {
  std::optional<GraphReader> reader = open_graph(path, catalog, dims);
  if (!reader)
    return std::nullopt;
  const Graph &g = reader->graph();
  std::vector<std::unique_ptr<Share>> shares;
  for (const auto &run : split(targets, threads))
    shares.push_back(std::make_unique<Share>(g, catalog, run, calibration, chip));
  constexpr size_t kBatch = 4096; // ops: a thread's start is a sliver of a batch's work on 28 targets
  std::vector<Op> ops(kBatch);
  std::vector<OpTensors> tensors(kBatch);
  for (size_t n = kBatch; n == kBatch;) {
    n = 0;
    while (n < kBatch)
      if (Op *op = next_op(*reader, catalog, tensors[n]))
        std::swap(ops[n++], *op); // the reader fills our old op's storage anew
      else
        break;
    each_share(shares.size(), [&](size_t k) {
      for (size_t i = 0; i < n; ++i) {
        shares[k]->checks.add(ops[i], tensors[i]);
        shares[k]->estimates.add(ops[i], tensors[i]);
      }
    });
  }
  std::vector<ModelSummary> parts;
  for (auto &s : shares)
    parts.push_back({s->checks.finish(), s->estimates.finish()});
  return joined(std::move(parts), true);
}
} // namespace

ModelSummary summarize_model(const std::filesystem::path &path, const OpCatalog &catalog,
                             const DimBindings &dims, const std::vector<const hal::Target *> &targets,
                             const Calibration *calibration, const std::string &chip, double max_memory,
                             unsigned threads) {
  try {
    if (auto summary = summarize_while_reading(path, catalog, dims, targets, calibration, chip, threads))
      return std::move(*summary);
  } catch (const Error &) {
    // Read whole below: the whole-document reader reports the error as it reports it for any file.
  }
  Graph g = load_model(path, catalog, dims, false, max_memory);
  auto summarize_whole = [&](unsigned spread) {
    auto runs = split(targets, spread);
    std::vector<ModelSummary> parts(runs.size());
    each_share(runs.size(), [&](size_t k) {
      parts[k] = {check(g, catalog, runs[k], Detail::Summary),
                  estimate(g, catalog, runs[k], calibration, chip, Detail::Summary)};
    });
    return joined(std::move(parts), false);
  };
  try {
    return summarize_whole(threads);
  } catch (const Error &) {
    if (threads <= 1)
      throw;
  }
  return summarize_whole(1); // the error the targets in turn meet first, whichever share met one
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
  JobThread helper; // the ops parsed ahead and the rows printed behind, on one thread beside this one
  GraphReader reader;
  GraphCheck checks;
  GraphEstimate estimates;
  PlacementSum placing;
  std::vector<Finding> graph_findings = {}; // the check's findings of no op: the inputs'
  CheckResult check = {};
  Estimate estimate = {};
  Placement placement = {};
  // Declared after the results, so gone before them: the spools' files close on the helper thread
  // while this one frees the results.
  PrintBehind behind; // the rows are formatted and written behind the op being decided
  ListSpool ops, findings, placed, boundaries, partitions;
  NameRows unknown, unestimated, skipped;

  State(Kind k, const hal::Target &t, GraphReader r, const OpCatalog &catalog, const Calibration *calibration,
        const std::string &chip, Form form)
      : kind(k), target(t), reader(std::move(r)), checks(reader.graph(), catalog, {&t}),
        estimates(reader.graph(), catalog, {&t}, calibration, chip),
        placing(reader.graph(), catalog, t, estimates.partial(0)), ops(form, 2, &behind),
        findings(form, 2, &behind), placed(form, placement_depth(k), &behind),
        boundaries(form, placement_depth(k), &behind),
        partitions(form, placement_depth(k), &behind), unknown{ListSpool(form, 2, &behind)},
        unestimated{ListSpool(form, 2, &behind)}, skipped{ListSpool(form, 2, &behind)} {
    reader.parse_on(helper);
    behind.share(helper);
  }

  void add(const Op &op, const OpTensors &tensors);
  void finish();
  void print_partitions(Printer &p);
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

// The partitions, known only at the end: the later half printed on the printing thread, into a
// spool, while this thread prints the first half.
void OneTargetReport::State::print_partitions(Printer &p) {
  size_t half = placement.partitions.size() / 2;
  for (size_t k = half; k < placement.partitions.size(); ++k)
    print_partition(partitions.items(), placement, k);
  for (size_t k = 0; k < half; ++k)
    print_partition(p, placement, k);
  partitions.splice_into(p);
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
  PlaceLists placed{[&s](Printer &p) { s.print_partitions(p); }, splice(s.placed), splice(s.boundaries)};
  if (s.kind == Kind::Place) {
    compiler::print(p, g, s.placement, placed);
    return;
  }
  compiler::print(p, g, s.check, s.target, {splice(s.ops), splice(s.findings)});
  p.text("\n");
  Object placement(p, "placement");
  compiler::print(p, g, s.placement, placed);
}

bool OneTargetReport::rejects() const {
  return state_->kind == Kind::Check && state_->check.verdict == Verdict::Reject;
}

} // namespace anec::compiler
