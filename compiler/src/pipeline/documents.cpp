#include "anec/compiler/pipeline/documents.hpp"

#include "anec/support/format.hpp"
#include "anec/support/print_later.hpp"

#include <array>
#include <charconv>
#include <initializer_list>
#include <iterator>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace anec::compiler {

namespace {
// A number of the text form's words, `digits` after the point, and the words that follow it.
struct Figure {
  double value;
  int digits;
  std::string_view after;
};
void print_figures(Printer &p, std::initializer_list<Figure> figures) {
  for (const Figure &f : figures) {
    p.text_fixed(f.value, f.digits);
    p.text(f.after);
  }
}

// The header line of a check and its counts.
void print_check_summary(Printer &p, const Graph &g, const CheckResult &r, const hal::Target &t) {
  {
    List notes(p, "notes"); // what the front-end did or skipped (ANEC-ONNX-004: no ONNX checker, ...)
    for (const std::string &n : g.notes) {
      p.text("note: ");
      p.item(n);
      p.text("\n");
    }
  }
  p.text("check " + g.source + " on ");
  p.field("target", r.target);
  p.text(" (" + t.text("family") + ", " + std::to_string(t.uint("num_nes")) + " cores): ");
  p.field("verdict", verdict_name(r.verdict));
  p.text(", ");
  p.field("rejects", r.count(Severity::Reject));
  p.text(" reject(s), ");
  p.field("decompositions", r.count(Severity::Decompose));
  p.text(" decomposition(s), ");
  p.field("warnings", r.count(Severity::Warning));
  p.text(" warning(s)\n");
}

// A size the wire gives, or null while the shape is symbolic.
Doc known(int64_t v) {
  return v < 0 ? Doc() : Doc::integer(v);
}

void print_port(Printer &p, const WirePort &port) {
  Object x(p);
  p.text(port.input ? "  input " : "  output ");
  p.data("direction", port.input ? "input" : "output");
  p.field("tensor", port.tensor);
  p.data("host_value", port.host_value.empty() ? Doc() : Doc::string(port.host_value));
  if (!port.host_value.empty()) {
    p.text(": a " + port.host_value + " the host holds, not a tensor on the engine\n");
    return;
  }
  p.text(" ");
  p.field("shape", port.shape.str());
  p.text(" ");
  p.field("dtype", port.dtype);
  p.text(port.dtype == "fp16" ? ": " : ", cast to fp16 at the boundary: ");
  for (auto [key, value] : {std::pair{"channels", port.channels},
                            {"padded_channels", port.padded_channels},
                            {"row_bytes", port.row_bytes},
                            {"padded_row_bytes", port.padded_row_bytes},
                            {"bytes", port.bytes}})
    p.data(key, known(value));
  if (port.bytes < 0) {
    p.text("unknown until its dimensions are bound\n");
    return;
  }
  auto padded = [](int64_t v, int64_t to, const char *unit) {
    return std::to_string(v) + unit + (to == v ? "" : " padded to " + std::to_string(to));
  };
  p.text(padded(port.channels, port.padded_channels, " channels") + ", rows of " +
         padded(port.row_bytes, port.padded_row_bytes, " bytes") + ", " + std::to_string(port.bytes) +
         " bytes on the engine\n");
}

// The inputs and outputs as the engine holds them.
void print_wire(Printer &p, const Wire &w) {
  Object wire(p, "wire");
  p.text("wire: fp16, channel-interleaved (guide ch.23); channels pad to the interleave ");
  p.field("interleave", w.interleave);
  p.text(" (");
  p.field("interleave_confidence", w.interleave_provenance);
  p.text("), rows to the ");
  p.field("granule_bytes", w.granule);
  p.text("-byte DMA granule (");
  p.field("granule_confidence", w.granule_provenance);
  p.text(")\n");
  List ports(p, "ports");
  for (const WirePort &port : w.ports)
    print_port(p, port);
}

// The text form lists each object's findings under it (those of no op first), a line each; the
// document form lists them after the ops.
void print_finding_line(Printer &p, const Finding &f) {
  p.text("    ");
  print(p, f, {.object_shown = true});
  p.text("\n");
}
void print_findings_of(Printer &p, const std::vector<const Finding *> *findings) {
  if (!findings || !p.text_form())
    return;
  for (const Finding *f : *findings)
    print_finding_line(p, *f);
}
} // namespace

namespace {
// The rows below are printed through print_later (support/print_later.hpp): on a printer's thread,
// where the printer has one, from their fields packed.
struct OpVerdictRow {
  std::string_view op, type, decompose_with;
  Verdict verdict = Verdict::Native;
  auto tie() { return std::tie(op, type, decompose_with, verdict); }
};
void print_op_verdict_fields(Printer &p, const OpVerdictRow &v) {
  p.text("  ");
  p.field("op", v.op);
  p.text(" (");
  p.field("type", v.type);
  p.text("): ");
  p.field("verdict", verdict_name(v.verdict));
  if (!v.decompose_with.empty()) {
    p.text(" into ");
    p.field("decompose_with", v.decompose_with);
  }
  p.text("\n");
}

void print_op_verdict_row(Printer &p, const OpVerdictRow &v) {
  Object o(p);
  print_op_verdict_fields(p, v);
}
} // namespace

// A row with no lines under it (nearly every one) is printed whole, later.
void print_op_verdict(Printer &p, const OpVerdict &v, const std::vector<const Finding *> *findings) {
  OpVerdictRow row{v.op, v.type, v.decompose_with, v.verdict};
  if (!findings || !p.text_form())
    return print_later<OpVerdictRow, print_op_verdict_row>(p, row);
  Object o(p);
  print_op_verdict_fields(p, row);
  print_findings_of(p, findings);
}

void print_finding_row(Printer &p, const Finding &f) {
  Object o(p);
  print(p, f);
  p.text("\n");
}

void print(Printer &p, const Graph &g, const CheckResult &r, const hal::Target &t, const CheckLists &lists) {
  print_check_summary(p, g, r, t);
  print_wire(p, r.wire);
  if (p.text_form())
    for (const Finding &f : r.findings)
      if (f.object.empty())
        print_finding_line(p, f);
  {
    List ops(p, "ops");
    lists.ops(p);
  }
  if (!p.text_form()) {
    List findings(p, "findings");
    lists.findings(p);
  }
}

void print(Printer &p, const Graph &g, const CheckResult &r, const hal::Target &t) {
  // The findings of each op, grouped once: a scan of every finding per op is quadratic.
  std::unordered_map<std::string_view, std::vector<const Finding *>> by_object;
  for (const Finding &f : r.findings)
    by_object[f.object].push_back(&f);
  auto ops = [&](Printer &p) {
    for (const OpVerdict &v : r.ops) {
      auto found = by_object.find(v.op);
      print_op_verdict(p, v, found == by_object.end() ? nullptr : &found->second);
    }
  };
  auto findings = [&](Printer &p) {
    for (const Finding &f : r.findings)
      print_finding_row(p, f);
  };
  print(p, g, r, t, {ops, findings});
}

namespace {
void print_param(Printer &p, std::string_view key, const Param &param) {
  Object o(p, key);
  p.data("value", param.value);
  p.data("provenance", param.provenance);
}

// The first line: the total, what bounds it and the model; without a total, what is unknown and
// how to bind it.
void print_headline(Printer &p, const Graph &g, const Estimate &e, const EstimateLists &lists) {
  bool complete = e.complete(), calibrated = e.model == "calibrated";
  p.text("estimate " + g.source + " on ");
  p.field("target", e.target);
  p.data("chip", e.chip.empty() ? Doc() : Doc::string(e.chip));
  p.text((e.chip.empty() ? "" : " (" + e.chip + ")") + ": ");
  p.data("latency_us", complete ? Doc::number(e.latency_us) : Doc());
  p.data("latency_low_us", complete && calibrated ? Doc::number(e.latency_low_us) : Doc());
  p.data("latency_high_us", complete && calibrated ? Doc::number(e.latency_high_us) : Doc());
  p.data("bound", e.bound);
  p.data("kind", e.kind);
  p.data("model", e.model);
  if (!p.text_form()) {
    List unknown(p, "unknown_ops");
    lists.unknown(p);
  }
  if (!complete) {
    p.text("unknown\n  unknown: " + std::to_string(lists.unknown_count) +
           " operation(s) have shapes that depend on unbound dimensions (first: " + e.unknown.front() +
           "); no total is given\n");
    for (const std::string &d : unbound_dimensions(g))
      p.text("  unbound " + d + "\n");
    return;
  }
  p.text(fixed(e.latency_us) + " us, " + e.bound + "-bound (" + e.model + " model" +
         (e.kind == "decomposed" ? ", decomposed" : "") + ")\n");
}

// The totals and the rates they come from, with their provenance.
void print_rates(Printer &p, const Estimate &e, bool shown) {
  p.data("compute_us", e.compute_us);
  p.data("memory_us", e.memory_us);
  p.data("floor_us", e.floor_us);
  p.data("flops", e.flops);
  p.data("bytes", e.bytes);
  Object parameters(p, "parameters");
  std::string mflop = fixed(e.flops / 1e6, 3) + " MFLOP", mb = fixed(e.bytes / 1e6, 3) + " MB";
  if (e.model != "calibrated") {
    print_param(p, "peak_tflops", e.peak_tflops);
    print_param(p, "bandwidth_gbps", e.bandwidth_gbps);
    print_param(p, "dispatch_floor_ms", e.floor_ms);
    if (shown)
      p.text("  compute " + fixed(e.compute_us) + " us (" + mflop + " at " + fixed(e.peak_tflops.value, 3) +
             " TFLOP/s, " + e.peak_tflops.provenance + ")\n  memory  " + fixed(e.memory_us) + " us (" + mb +
             " at " + fixed(e.bandwidth_gbps.value, 3) + " GB/s, " + e.bandwidth_gbps.provenance +
             ")\n  floor   " + fixed(e.floor_us) + " us (" + e.floor_ms.provenance +
             "), one dispatch for the fused program\n");
    return;
  }
  if (shown)
    p.text("  band " + fixed(e.latency_low_us) + " .. " + fixed(e.latency_high_us) +
           " us (10th-90th percentile of the calibration residuals)\n  compute " + fixed(e.compute_us) +
           " us, memory " + fixed(e.memory_us) + " us summed over ops (" + mflop + ", " + mb +
           " through DRAM)\n");
  for (const auto &[name, rate] : e.rates) {
    print_param(p, name, rate);
    if (shown)
      p.text("  " + name + " = " +
             (name == "working_set_bytes" ? fixed(rate.value / 1e6, 2) + " MB" : fixed(rate.value, 4)) +
             " (" + rate.provenance + ")\n");
  }
  if (shown)
    p.text("  floor   " + fixed(e.floor_us) + " us, one call for the fused program\n");
}

// What the total leaves out: ops with no cost form, and ops skipped at run time.
void print_left_out(Printer &p, const Estimate &e, bool shown, const EstimateLists &lists) {
  if (shown || !p.text_form()) {
    List unestimated(p, "unestimated_ops");
    lists.unestimated(p);
  }
  {
    List skipped(p, "skipped_ops");
    if (!p.text_form())
      lists.skipped(p);
    else if (shown && e.skipped_ops) {
      p.text("  skipped, moving no data (runtime operation skip): ");
      lists.skipped(p);
      p.text(", saving " + fixed(e.skipped_us) + " us\n");
    }
  }
  p.data("skipped_us", e.skipped_us);
  if (shown && e.kind == "decomposed")
    p.text("  attention has no analytic cost form (ch.18): estimated as a decomposition (score matrix, "
           "softmax, two matmuls)\n");
}

// The graph as one segment on each backend, fastest first.
void print_backend_order(Printer &p, const Estimate &e, bool shown) {
  if (shown)
    p.text("  placement order:");
  List order(p, "placement");
  for (const auto &b : e.placement) {
    Object x(p);
    p.data("backend", b.backend);
    p.data("coarse_latency_us", b.coarse_us);
    p.data("launch_penalty_units", b.launch_units);
    if (shown)
      p.text(" " + b.backend + " " + fixed(b.coarse_us, 3) + " us (launch " + fixed(b.launch_units, 2) + ")");
  }
  if (shown)
    p.text(" (coarse anchors and launch penalties in model units, ch.18 tables 18.2, 18.3)\n");
}
} // namespace

void print_unknown(Printer &p, const std::string &op, bool) {
  if (!p.text_form()) // the text form words them itself
    p.item(op);
}

void print_unestimated(Printer &p, const std::string &op, bool) {
  p.text("  no cost form for " + op + ": left out of the total\n");
  if (!p.text_form())
    p.item(op);
}

void print_skipped(Printer &p, const std::string &op, bool first) {
  p.text((first ? "" : ", ") + op);
  if (!p.text_form())
    p.item(op);
}

namespace {
struct OpCostRow {
  std::string_view op, type, form, bound;
  double flops = 0, bytes = 0, compute_us = 0, memory_us = 0;
  bool estimated = true, decomposed = false;
  auto tie() {
    return std::tie(op, type, form, bound, flops, bytes, compute_us, memory_us, estimated, decomposed);
  }
};
void print_op_cost_row(Printer &p, const OpCostRow &c) {
  Object o(p);
  for (auto [key, value] : {std::pair{"op", &c.op}, {"type", &c.type}, {"cost_form", &c.form}})
    p.data(key, *value);
  p.data("estimated", c.estimated);
  p.data("decomposed", c.decomposed);
  for (auto [key, value] : {std::pair{"flops", c.flops},
                            {"bytes", c.bytes},
                            {"compute_us", c.compute_us},
                            {"memory_us", c.memory_us}})
    p.data(key, value);
  p.data("bound", c.bound);
  if (!p.text_form())
    return;
  p.text("  op ");
  p.text(c.op);
  p.text(" (");
  p.text(c.type);
  p.text("): ");
  if (!c.estimated) {
    p.text("no estimate\n");
    return;
  }
  print_figures(p, {{c.flops / 1e6, 3, " MFLOP, "},
                    {c.bytes / 1e6, 3, " MB alone: compute "},
                    {c.compute_us, 1, " us, memory "},
                    {c.memory_us, 1, " us, "}});
  p.text(c.bound);
  p.text("-bound\n");
}
} // namespace

void print_op_cost(Printer &p, const OpCost &c) {
  print_later<OpCostRow, print_op_cost_row>(p, {c.op, c.type, c.form, c.bound, c.flops, c.bytes, c.compute_us,
                                                c.memory_us, c.estimated, c.decomposed});
}

void print(Printer &p, const Graph &g, const Estimate &e, const EstimateLists &lists) {
  print_headline(p, g, e, lists);
  bool shown = e.complete(); // without a total the text form shows only the headline
  print_rates(p, e, shown);
  print_left_out(p, e, shown, lists);
  if (shown || !p.text_form()) {
    List ops(p, "ops");
    lists.ops(p);
  }
  print_backend_order(p, e, shown);
}

void print(Printer &p, const Graph &g, const Estimate &e) {
  auto each = [](const std::vector<std::string> &names, void (*row)(Printer &, const std::string &, bool)) {
    return [&names, row](Printer &p) {
      for (size_t k = 0; k < names.size(); ++k)
        row(p, names[k], k == 0);
    };
  };
  auto ops = [&](Printer &p) {
    for (const OpCost &c : e.ops)
      print_op_cost(p, c);
  };
  print(p, g, e,
        {.unknown = each(e.unknown, print_unknown),
         .unestimated = each(e.unestimated, print_unestimated),
         .skipped = each(e.skipped, print_skipped),
         .ops = ops,
         .unknown_count = e.unknown.size()});
}

void print_place_summary(Printer &p, const Placement &pl, const std::string &share) {
  Placement::Counts c = pl.counts();
  p.data("target", pl.target);
  p.field("engine_partitions", c.engine_partitions);
  p.text(" engine partition(s), ");
  p.field("engine_ops", c.engine_ops);
  p.text(" of " + std::to_string(c.ops) + " operation(s) on the engine (" + share + " of the FLOPs), ");
  p.data("gpu_ops", c.gpu_ops);
  p.data("cpu_ops", c.cpu_ops);
  p.text(std::to_string(c.gpu_ops) + " on the GPU, " + std::to_string(c.cpu_ops) + " on the CPU");
  p.data("engine_flops_share", pl.flops > 0 ? Doc::number(pl.engine_flops / pl.flops) : Doc());
}

namespace {
struct PartitionRow {
  std::string_view backend, first_op, last_op;
  size_t number = 0, count = 0; // number: from 1
  double flops = 0, latency_us = 0;
  bool complete = true; // false: no latency
  auto tie() { return std::tie(backend, first_op, last_op, number, count, flops, latency_us, complete); }
};
void print_partition_row(Printer &p, const PartitionRow &part) {
  Object x(p);
  if (!p.text_form()) {
    p.field("backend", part.backend);
    p.field("first_op", part.first_op);
    p.data("ops", part.count);
    p.data("flops", part.flops); // a double: a document's number, as Doc::number gives
    if (part.complete)
      p.data("latency_us", part.latency_us);
    else
      p.data("latency_us", Doc());
    return;
  }
  char digits[24]; // a count's
  auto count = [&](size_t n) {
    return std::string_view(digits, std::to_chars(digits, std::end(digits), n).ptr);
  };
  p.text("  ");
  p.text(count(part.number));
  p.text(" ");
  p.field("backend", part.backend);
  p.text(": ");
  p.text(count(part.count));
  p.text(" op(s) ");
  p.field("first_op", part.first_op);
  if (part.count > 1) {
    p.text(" .. ");
    p.text(part.last_op);
  }
  p.text(", ");
  print_figures(p, {{part.flops / 1e6, 3, part.complete ? " MFLOP, " : " MFLOP\n"}});
  if (part.complete)
    print_figures(p, {{part.latency_us, 1, " us\n"}});
}
} // namespace

void print_partition(Printer &p, const Placement &pl, size_t k) {
  const Partition &part = pl.partitions[k];
  print_later<PartitionRow, print_partition_row>(p, {part.backend.str(), part.first_op, part.last_op, k + 1,
                                                     part.count, part.flops, part.latency_us, pl.complete});
}

namespace {
struct PlacedOpRow {
  std::string_view op, type, backend;
  Verdict verdict = Verdict::Native;
  auto tie() { return std::tie(op, type, backend, verdict); }
};
void print_placed_op_fields(Printer &p, const PlacedOpRow &o) {
  p.data("op", o.op);
  p.data("type", o.type);
  p.data("backend", o.backend);
  p.data("verdict", verdict_name(o.verdict));
  if (o.backend != "engine" && p.text_form())
    p.text("  " + std::string(o.op) + " (" + std::string(o.type) + ") -> " + std::string(o.backend) + "\n");
}

void print_placed_op_row(Printer &p, const PlacedOpRow &o) {
  Object x(p);
  print_placed_op_fields(p, o);
  List reasons(p, "reasons");
}
} // namespace

// An op with no reasons (on the engine, nearly every one) is printed whole, later.
void print_placed_op(Printer &p, const PlacedOp &o) {
  PlacedOpRow row{o.op, o.type, o.backend, o.verdict};
  if (o.reasons.empty())
    return print_later<PlacedOpRow, print_placed_op_row>(p, row);
  Object x(p);
  print_placed_op_fields(p, row);
  bool shown = o.backend != "engine";
  List reasons(p, "reasons");
  for (const Finding *f : o.reasons) {
    Object r(p);
    if (shown)
      p.text("    ");
    if (shown || !p.text_form())
      print(p, *f, {.object_shown = true});
    if (shown)
      p.text("\n");
  }
}

namespace {
// The shape as its five extents, written out by the printing thread; a symbolic one as its text.
struct BoundaryRow {
  std::string_view tensor;
  std::array<int64_t, 5> extents;
  std::string_view symbolic_shape, from, to;
  size_t partition = 0;
  double bytes = 0, transfer_us = 0, transfer_units = 0;
  auto tie() {
    return std::tie(tensor, extents, symbolic_shape, from, to, partition, bytes, transfer_us, transfer_units);
  }
};
void print_boundary_row(Printer &p, const BoundaryRow &b) {
  Object x(p);
  p.text("  ");
  p.field("tensor", b.tensor);
  p.text(" ");
  p.field("shape", b.symbolic_shape.empty() ? Shape{b.extents, {}}.str() : std::string(b.symbolic_shape));
  p.text(" ");
  p.field("from", b.from);
  p.text(" -> ");
  p.field("to", b.to);
  p.data("bytes", b.bytes);
  p.data("transfer_us", b.transfer_us);
  p.data("transfer_units", b.transfer_units);
  if (!p.text_form())
    return;
  p.text(" (into partition " + std::to_string(b.partition + 1) + "): ");
  print_figures(
      p,
      {{b.bytes / 1e3, 1, " kB, "}, {b.transfer_us, 2, " us, "}, {b.transfer_units, 2, " transfer units\n"}});
}
} // namespace

void print_boundary(Printer &p, const Graph &g, const Boundary &b) {
  const Shape &shape = g.tensor(b.tensor)->shape;
  std::string symbolic = shape.symbolic() ? shape.str() : "";
  print_later<BoundaryRow, print_boundary_row>(
      p, {b.tensor, shape.d, symbolic, b.from, b.to, b.partition, b.bytes, b.transfer_us, b.transfer_units});
}

void print(Printer &p, const Graph &g, const Placement &pl, const PlaceLists &lists) {
  p.text("place " + g.source + " on " + pl.target + ": ");
  print_place_summary(p, pl, pl.flops > 0 ? fixed(100.0 * pl.engine_flops / pl.flops, 1) + "%" : "-");
  p.text("\n");
  p.data("latency_us", pl.complete ? Doc::number(pl.latency_us) : Doc());
  p.data("transfer_us", Doc::number(pl.transfer_us));
  {
    p.text("partitions:\n");
    List partitions(p, "partitions");
    lists.partitions(p);
  }
  {
    p.text("fallbacks:\n");
    List ops(p, "ops");
    lists.ops(p);
  }
  {
    p.text("boundaries:\n");
    List boundaries(p, "boundaries");
    lists.boundaries(p);
  }
  if (!pl.complete) {
    p.text("estimate: unknown (shapes depend on unbound dimensions; no total is given)\n");
    print_list(p, "unbound", pl.unbound, "  unbound ");
    return;
  }
  List unbound(p, "unbound");
  p.text("estimate: " + fixed(pl.latency_us, 1) + " us placed (" + fixed(pl.transfer_us, 2) +
         " us of transfers; penalties " + fixed(pl.launch_units, 2) + " launch and " +
         fixed(pl.transfer_units, 2) + " transfer units, ch.18 table 18.3)\n");
}

void print(Printer &p, const Graph &g, const Placement &pl) {
  auto ops = [&](Printer &p) {
    for (const PlacedOp &o : pl.ops)
      print_placed_op(p, o);
  };
  auto boundaries = [&](Printer &p) {
    for (const Boundary &b : pl.boundaries)
      print_boundary(p, g, b);
  };
  auto partitions = [&](Printer &p) {
    for (size_t k = 0; k < pl.partitions.size(); ++k)
      print_partition(p, pl, k);
  };
  print(p, g, pl, {partitions, ops, boundaries});
}

namespace {
void print_output(Printer &p, const std::string &name, const Values *values) {
  Object o(p);
  p.text("  output ");
  p.field("name", name);
  p.data("computed", values != nullptr);
  if (!values) {
    p.text(": not computed\n");
    return;
  }
  {
    p.text(" [");
    List shape(p, "shape");
    for (size_t k = 0; k < values->d.size(); ++k) {
      p.text(k ? "," : "");
      p.item(values->d[k]);
    }
    p.text("]");
  }
  int64_t inf = std::count_if(values->v.begin(), values->v.end(), [](float x) { return std::isinf(x); });
  p.data("infinities", inf);
  p.text(inf ? ", " + std::to_string(inf) + " infinite value(s)\n" : "\n");
}
} // namespace

void print(Printer &p, const Graph &g, const EvalResult &r, const EvalOptions &o) {
  p.text("eval ");
  p.field("model", g.source);
  p.text(" (");
  p.field("precision", o.precision == Precision::fp16 ? "fp16" : "fp32");
  p.text(", ");
  p.field("gemm", o.gemm == Gemm::openblas ? "openblas" : "reference");
  p.data("gflop", r.report.flops / 1e9);
  p.text(" GEMM, " + fixed(r.report.flops / 1e9, 4) + " GFLOP)\n");
  {
    List outputs(p, "outputs");
    for (const std::string &name : g.outputs) {
      auto it = r.outputs.find(name);
      print_output(p, name, it == r.outputs.end() ? nullptr : &it->second);
    }
  }
  {
    List unevaluated(p, "unevaluated");
    for (const auto &[op, why] : r.report.unevaluated) {
      Object u(p);
      p.text("  not evaluated: ");
      p.field("op", op);
      p.text(" (");
      p.field("why", why);
      p.text(")\n");
    }
  }
  print_list(p, "seeded", r.report.seeded, "  seeded random values: ");
  print_list(p, "numerics", r.report.numerics, "  fp16: ");
  print_list(p, "skipped", r.report.skipped, "  skipped, moving no data: ");
}

} // namespace anec::compiler
