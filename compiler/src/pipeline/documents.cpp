#include "anec/compiler/pipeline/documents.hpp"

namespace anec::compiler {

Doc check_doc(const CheckResult &r) {
  Doc d = Doc::table();
  d.set("target", Doc::string(r.target));
  d.set("verdict", Doc::string(verdict_name(r.verdict)));
  d.set("rejects", Doc::integer(int64_t(r.count(Severity::Reject))));
  d.set("decompositions", Doc::integer(int64_t(r.count(Severity::Decompose))));
  d.set("warnings", Doc::integer(int64_t(r.count(Severity::Warning))));
  Doc ops = Doc::array();
  for (const OpVerdict &v : r.ops) {
    Doc o = Doc::table();
    o.set("op", Doc::string(v.op));
    o.set("type", Doc::string(v.type));
    o.set("verdict", Doc::string(verdict_name(v.verdict)));
    if (!v.decompose_with.empty())
      o.set("decompose_with", Doc::string(v.decompose_with));
    ops.push(std::move(o));
  }
  d.set("ops", std::move(ops));
  Doc fs = Doc::array();
  for (const Finding &f : r.findings)
    fs.push(printed_doc([&](Printer &p) { print(p, f); }));
  d.set("findings", std::move(fs));
  return d;
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

Doc place_summary_doc(const Placement &p) {
  Doc d = Doc::table();
  d.set("target", Doc::string(p.target));
  d.set("engine_partitions", Doc::integer(int64_t(p.partitions_on("engine"))));
  for (const char *b : {"engine", "gpu", "cpu"})
    d.set(std::string(b) + "_ops", Doc::integer(int64_t(p.count(b))));
  d.set("engine_flops_share", p.flops > 0 ? Doc::number(p.engine_flops / p.flops) : Doc());
  return d;
}

std::string place_summary_text(const Placement &p, const std::string &share) {
  return std::to_string(p.partitions_on("engine")) + " engine partition(s), " +
         std::to_string(p.count("engine")) + " of " + std::to_string(p.ops.size()) +
         " operation(s) on the engine (" + share + " of the FLOPs), " + std::to_string(p.count("gpu")) +
         " on the GPU, " + std::to_string(p.count("cpu")) + " on the CPU";
}

Doc place_doc(const Graph &g, const Placement &p) {
  Doc d = place_summary_doc(p);
  d.set("latency_us", p.complete ? Doc::number(p.latency_us) : Doc());
  d.set("transfer_us", Doc::number(p.transfer_us));
  Doc parts = Doc::array();
  for (const Partition &part : p.partitions) {
    Doc x = Doc::table();
    x.set("backend", Doc::string(part.backend));
    x.set("first_op", Doc::string(p.ops[part.first].op));
    x.set("ops", Doc::integer(int64_t(part.count)));
    x.set("flops", Doc::number(part.flops));
    x.set("latency_us", p.complete ? Doc::number(part.latency_us) : Doc());
    parts.push(std::move(x));
  }
  d.set("partitions", std::move(parts));
  Doc ops = Doc::array();
  for (const PlacedOp &o : p.ops) {
    Doc x = Doc::table();
    x.set("op", Doc::string(o.op));
    x.set("type", Doc::string(o.type));
    x.set("backend", Doc::string(o.backend));
    x.set("verdict", Doc::string(verdict_name(o.verdict)));
    Doc reasons = Doc::array();
    for (const Finding *f : o.reasons)
      reasons.push(printed_doc([&](Printer &p) { print(p, *f); }));
    x.set("reasons", std::move(reasons));
    ops.push(std::move(x));
  }
  d.set("ops", std::move(ops));
  Doc bs = Doc::array();
  for (const Boundary &b : p.boundaries) {
    Doc x = Doc::table();
    x.set("tensor", Doc::string(b.tensor));
    x.set("shape", Doc::string(g.tensor(b.tensor)->shape.str()));
    x.set("from", Doc::string(b.from));
    x.set("to", Doc::string(b.to));
    x.set("bytes", Doc::number(b.bytes));
    x.set("transfer_us", Doc::number(b.transfer_us));
    x.set("transfer_units", Doc::number(b.transfer_units));
    bs.push(std::move(x));
  }
  d.set("boundaries", std::move(bs));
  Doc unbound = Doc::array();
  for (const std::string &u : p.unbound)
    unbound.push(Doc::string(u));
  d.set("unbound", std::move(unbound));
  return d;
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
