#include "anec/compiler/pipeline/documents.hpp"

#include "anec/support/format.hpp"

#include <string_view>
#include <unordered_map>

namespace anec::compiler {

namespace {
// The header line of a check and its counts.
void print_check_summary(Printer &p, const Graph &g, const CheckResult &r, const hal::Target &t) {
  for (const std::string &n : g.notes)
    p.text("note: " + n + "\n");
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

// The text form lists each object's findings under it (those of no op first); the document form
// lists them after the ops.
void print_findings_of(Printer &p, const std::vector<const Finding *> *findings) {
  if (!findings || !p.text_form())
    return;
  for (const Finding *f : *findings) {
    p.text("    ");
    print(p, *f, {.object_shown = true});
    p.text("\n");
  }
}
} // namespace

void print(Printer &p, const Graph &g, const CheckResult &r, const hal::Target &t) {
  print_check_summary(p, g, r, t);
  // The findings of each object, grouped once: a scan of every finding per op is quadratic.
  std::unordered_map<std::string_view, std::vector<const Finding *>> by_object;
  for (const Finding &f : r.findings)
    by_object[f.object].push_back(&f);
  auto of = [&](const std::string &object) {
    auto found = by_object.find(object);
    return found == by_object.end() ? nullptr : &found->second;
  };
  print_findings_of(p, of(""));
  {
    List ops(p, "ops");
    for (const OpVerdict &v : r.ops) {
      Object o(p);
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
      print_findings_of(p, of(v.op));
    }
  }
  if (!p.text_form())
    print(p, r.findings, "findings");
}

Doc param_doc(const Param &p) {
  Doc d = Doc::table();
  d.set("value", Doc::number(p.value));
  d.set("provenance", Doc::string(p.provenance));
  return d;
}

Doc estimate_doc(const Estimate &e) {
  Doc d = Doc::table();
  d.set("target", Doc::string(e.target));
  d.set("latency_us", e.complete() ? Doc::number(e.latency_us) : Doc());
  Doc unknown = Doc::array();
  for (const std::string &n : e.unknown)
    unknown.push(Doc::string(n));
  d.set("unknown_ops", std::move(unknown));
  Doc skipped = Doc::array();
  for (const std::string &n : e.skipped)
    skipped.push(Doc::string(n));
  d.set("skipped_ops", std::move(skipped));
  d.set("skipped_us", Doc::number(e.skipped_us));
  d.set("compute_us", Doc::number(e.compute_us));
  d.set("memory_us", Doc::number(e.memory_us));
  d.set("floor_us", Doc::number(e.floor_us));
  d.set("bound", Doc::string(e.bound));
  d.set("kind", Doc::string(e.kind));
  d.set("flops", Doc::number(e.flops));
  d.set("bytes", Doc::number(e.bytes));
  d.set("model", Doc::string(e.model));
  d.set("chip", e.chip.empty() ? Doc() : Doc::string(e.chip));
  d.set("latency_low_us", e.complete() && e.model == "calibrated" ? Doc::number(e.latency_low_us) : Doc());
  d.set("latency_high_us", e.complete() && e.model == "calibrated" ? Doc::number(e.latency_high_us) : Doc());
  Doc p = Doc::table();
  if (e.model == "calibrated") {
    for (const auto &[name, param] : e.rates)
      p.set(name, param_doc(param));
  } else {
    p.set("peak_tflops", param_doc(e.peak_tflops));
    p.set("bandwidth_gbps", param_doc(e.bandwidth_gbps));
    p.set("dispatch_floor_ms", param_doc(e.floor_ms));
  }
  d.set("parameters", std::move(p));
  Doc un = Doc::array();
  for (const std::string &n : e.unestimated)
    un.push(Doc::string(n));
  d.set("unestimated_ops", std::move(un));
  Doc ops = Doc::array();
  for (const OpCost &c : e.ops) {
    Doc o = Doc::table();
    o.set("op", Doc::string(c.op));
    o.set("type", Doc::string(c.type));
    o.set("cost_form", Doc::string(c.form));
    o.set("estimated", Doc::boolean(c.estimated));
    o.set("decomposed", Doc::boolean(c.decomposed));
    o.set("flops", Doc::number(c.flops));
    o.set("bytes", Doc::number(c.bytes));
    o.set("compute_us", Doc::number(c.compute_us));
    o.set("memory_us", Doc::number(c.memory_us));
    o.set("bound", Doc::string(c.bound));
    ops.push(std::move(o));
  }
  d.set("ops", std::move(ops));
  Doc pl = Doc::array();
  for (const auto &b : e.placement) {
    Doc x = Doc::table();
    x.set("backend", Doc::string(b.backend));
    x.set("coarse_latency_us", Doc::number(b.coarse_us));
    x.set("launch_penalty_units", Doc::number(b.launch_units));
    pl.push(std::move(x));
  }
  d.set("placement", std::move(pl));
  return d;
}

void print_place_summary(Printer &p, const Placement &pl, const std::string &share) {
  p.data("target", pl.target);
  p.field("engine_partitions", pl.partitions_on("engine"));
  p.text(" engine partition(s), ");
  p.field("engine_ops", pl.count("engine"));
  p.text(" of " + std::to_string(pl.ops.size()) + " operation(s) on the engine (" + share +
         " of the FLOPs), ");
  p.data("gpu_ops", pl.count("gpu"));
  p.data("cpu_ops", pl.count("cpu"));
  p.text(std::to_string(pl.count("gpu")) + " on the GPU, " + std::to_string(pl.count("cpu")) + " on the CPU");
  p.data("engine_flops_share", pl.flops > 0 ? Doc::number(pl.engine_flops / pl.flops) : Doc());
}

namespace {
void print_partitions(Printer &p, const Placement &pl) {
  p.text("partitions:\n");
  List parts(p, "partitions");
  for (size_t k = 0; k < pl.partitions.size(); ++k) {
    const Partition &part = pl.partitions[k];
    Object x(p);
    p.text("  " + std::to_string(k + 1) + " ");
    p.field("backend", part.backend);
    p.text(": " + std::to_string(part.count) + " op(s) ");
    p.field("first_op", pl.ops[part.first].op);
    p.data("ops", part.count);
    p.data("flops", Doc::number(part.flops));
    p.data("latency_us", pl.complete ? Doc::number(part.latency_us) : Doc());
    p.text((part.count > 1 ? " .. " + pl.ops[part.first + part.count - 1].op : "") + ", " +
           fixed(part.flops / 1e6, 3) + " MFLOP" +
           (pl.complete ? ", " + fixed(part.latency_us, 1) + " us" : "") + "\n");
  }
}

// Every op's backend in the document; in the text form the ops off the engine, each with the
// findings that keep it off.
void print_placed_ops(Printer &p, const Placement &pl) {
  p.text("fallbacks:\n");
  List ops(p, "ops");
  for (const PlacedOp &o : pl.ops) {
    Object x(p);
    bool shown = o.backend != "engine";
    p.data("op", o.op);
    p.data("type", o.type);
    p.data("backend", o.backend);
    p.data("verdict", verdict_name(o.verdict));
    if (shown)
      p.text("  " + o.op + " (" + o.type + ") -> " + o.backend + "\n");
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
}

void print_boundaries(Printer &p, const Graph &g, const Placement &pl) {
  p.text("boundaries:\n");
  List bs(p, "boundaries");
  for (const Boundary &b : pl.boundaries) {
    Object x(p);
    std::string shape = g.tensor(b.tensor)->shape.str();
    p.text("  ");
    p.field("tensor", b.tensor);
    p.text(" ");
    p.field("shape", shape);
    p.text(" ");
    p.field("from", b.from);
    p.text(" -> ");
    p.field("to", b.to);
    p.data("bytes", Doc::number(b.bytes));
    p.data("transfer_us", Doc::number(b.transfer_us));
    p.data("transfer_units", Doc::number(b.transfer_units));
    p.text(" (into partition " + std::to_string(b.partition + 1) + "): " + fixed(b.bytes / 1e3, 1) + " kB, " +
           fixed(b.transfer_us, 2) + " us, " + fixed(b.transfer_units, 2) + " transfer units\n");
  }
}
} // namespace

void print(Printer &p, const Graph &g, const Placement &pl) {
  p.text("place " + g.source + " on " + pl.target + ": ");
  print_place_summary(p, pl, pl.flops > 0 ? fixed(100.0 * pl.engine_flops / pl.flops, 1) + "%" : "-");
  p.text("\n");
  p.data("latency_us", pl.complete ? Doc::number(pl.latency_us) : Doc());
  p.data("transfer_us", Doc::number(pl.transfer_us));
  print_partitions(p, pl);
  print_placed_ops(p, pl);
  print_boundaries(p, g, pl);
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

Doc eval_doc(const Graph &g, const EvalResult &r, const EvalOptions &o) {
  Doc d = Doc::table();
  d.set("model", Doc::string(g.source));
  d.set("precision", Doc::string(o.precision == Precision::fp16 ? "fp16" : "fp32"));
  d.set("gemm", Doc::string(o.gemm == Gemm::openblas ? "openblas" : "reference"));
  d.set("gflop", Doc::number(r.report.flops / 1e9));
  auto strings = [](const std::vector<std::string> &v) {
    Doc a = Doc::array();
    for (const std::string &s : v)
      a.push(Doc::string(s));
    return a;
  };
  Doc outputs = Doc::array();
  for (const std::string &name : g.outputs) {
    Doc o = Doc::table();
    o.set("name", Doc::string(name));
    auto it = r.outputs.find(name);
    o.set("computed", Doc::boolean(it != r.outputs.end()));
    if (it != r.outputs.end()) {
      const std::vector<float> &v = it->second.v;
      Doc shape = Doc::array();
      for (int64_t x : it->second.d)
        shape.push(Doc::integer(x));
      o.set("shape", std::move(shape));
      int64_t inf = std::count_if(v.begin(), v.end(), [](float x) { return std::isinf(x); });
      o.set("infinities", Doc::integer(inf));
    }
    outputs.push(std::move(o));
  }
  d.set("outputs", std::move(outputs));
  Doc un = Doc::array();
  for (const auto &[op, why] : r.report.unevaluated) {
    Doc u = Doc::table();
    u.set("op", Doc::string(op));
    u.set("why", Doc::string(why));
    un.push(std::move(u));
  }
  d.set("unevaluated", std::move(un));
  d.set("seeded", strings(r.report.seeded));
  d.set("numerics", strings(r.report.numerics));
  d.set("skipped", strings(r.report.skipped));
  return d;
}

} // namespace anec::compiler
