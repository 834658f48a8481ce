// anec: check a model against one target or all 28, and estimate its latency. Argument parsing
// and printing only; the work is in anec::compiler.
#include "anec/compiler/calibrate/fit.hpp"
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/coreml.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/mil.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/compiler/passes/tune.hpp"
#include "anec/compiler/passes/tune_mil.hpp"
#include "anec/compiler/pipeline/context.hpp"
#include "anec/compiler/pipeline/documents.hpp"
#include "anec/compiler/pipeline/summary.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/checked.hpp"
#include "anec/support/corpus.hpp"
#include "anec/support/document.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/half.hpp"
#include "anec/support/inside.hpp"
#include "anec/support/json.hpp"
#include "anec/support/npy.hpp"
#include "anec/support/reasons.hpp"
#include "anec/support/table.hpp"
#include "report_html.hpp"
#include "tool_main.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

namespace fs = std::filesystem;
using namespace anec;
using namespace anec::compiler;

namespace {

// `explain CODE` or `explain --markdown`: the reason catalogue.
int explain(const fs::path &tables, const tools::Args &args) {
  bool markdown = args.given("markdown");
  if (args.positional().size() != (markdown ? 0 : 1))
    throw Error("ANEC-CLI-001", "explain needs one CODE (or --markdown)");
  ReasonCatalog catalog = ReasonCatalog::load(tables / "schema" / "reasons.toml");
  std::string out = markdown ? catalog.markdown() : catalog.explain(args.positional()[0]);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

// What a command needs from the tables, each read on first use: a single-target command reads one
// target table (through the index), `--target all` and `calibrate` the line-up.
using Ctx = compiler::ModelContext;

// The run's memory budget (--max-memory, ANEC-MEM-001).
double max_memory(const tools::Args &args) {
  return double(parse_size(args.value("max-memory"), 1, UINT64_MAX, "--max-memory"));
}

std::string percent(double part, double whole) {
  return whole > 0 ? fixed(100.0 * part / whole) + "%" : "-";
}

// The placement matrix: one row per target.
void print_place_matrix(const std::vector<Placement> &ps, const std::string &format,
                        const std::string &model) {
  Table table{{"target", "engine_partitions", "engine_ops", "gpu_ops", "cpu_ops", "engine_flops",
               "boundaries", "latency_us"},
              {},
              {}};
  table.keys = table.columns;
  table.keys[5] = "engine_flops_share";
  for (const Placement &p : ps) {
    Placement::Counts c = p.counts();
    table.add(
        {p.target,
         c.engine_partitions,
         c.engine_ops,
         c.gpu_ops,
         c.cpu_ops,
         {percent(p.engine_flops, p.flops), p.flops > 0 ? Doc::number(p.engine_flops / p.flops) : Doc()},
         p.boundaries.size(),
         {p.complete ? fixed(p.latency_us) : "unknown", p.complete ? Doc::number(p.latency_us) : Doc()}});
  }
  render_to_stdout(format, "anec.place-matrix", [&](Printer &p) {
    p.data("model", model);
    print(p, table, "targets");
  });
}

// Where the estimate's rates come from (the compute rate's provenance stands for the set).
std::string rates_provenance(const Estimate &e) {
  return e.model == "calibrated" ? e.rates.at(0).second.provenance : e.peak_tflops.provenance;
}

// The target matrix: one row per target.
void print_matrix(const std::vector<CheckResult> &cs, const std::vector<Estimate> &es,
                  const std::string &format, const std::string &model) {
  Table table{{"target", "verdict", "rejects", "decompositions", "warnings", "latency_us", "latency_low_us",
               "latency_high_us", "bound", "parameters"},
              {},
              {}};
  for (size_t i = 0; i < cs.size(); ++i) {
    const Estimate &e = es[i];
    auto banded = [&](double v) -> Cell {
      bool known = e.complete() && e.model == "calibrated";
      return {known ? fixed(v) : "-", known ? Doc::number(v) : Doc()};
    };
    table.add(
        {cs[i].target,
         verdict_name(cs[i].verdict),
         cs[i].count(Severity::Reject),
         cs[i].count(Severity::Decompose),
         cs[i].count(Severity::Warning),
         {e.complete() ? fixed(e.latency_us) : "unknown", e.complete() ? Doc::number(e.latency_us) : Doc()},
         banded(e.latency_low_us),
         banded(e.latency_high_us),
         {e.complete() ? e.bound : "unknown", Doc::string(e.bound)},
         rates_provenance(e)});
  }
  render_to_stdout(format, "anec.matrix", [&](Printer &p) {
    p.data("model", model);
    print(p, table, "targets");
  });
}

// The error table of a fit, one row per key: rows, then median, p90 and worst relative error of
// the fit and of leave-one-chip-out (percent).
Table error_rows(const ErrorTable &t, const std::string &key_name) {
  bool loco = !t.loco.empty(); // a fit has leave-one-chip-out columns, a --check has not
  Table table{{key_name, "rows", loco ? "fit_median" : "median", loco ? "fit_p90" : "p90",
               loco ? "fit_worst" : "worst"},
              {},
              {}};
  if (loco)
    table.columns.insert(table.columns.end(), {"loco_median", "loco_p90", "loco_worst"});
  for (const auto &[k, f] : t.fit) {
    table.rows.push_back(
        {k, std::to_string(f.rows), percent(f.median, 1), percent(f.p90, 1), percent(f.worst, 1)});
    if (!loco)
      continue;
    ErrorStats l = t.loco.count(k) ? t.loco.at(k) : ErrorStats{};
    for (double v : {l.median, l.p90, l.worst})
      table.rows.back().push_back(l.rows ? percent(v, 1) : "-");
  }
  return table;
}

Table rates_rows(const Calibration &c) {
  Table table{
      {"chip", "matmul_tflops", "weight_gbps", "activation_gbps", "call_floor_ms", "working_set_mb"}, {}, {}};
  for (const auto &[chip, r] : c.chips)
    table.rows.push_back({chip, fixed(r.tflops(), 2), fixed(r.weight_gbps(), 1),
                          fixed(r.activation_gbps(), 1), fixed(r.floor_ms(), 3),
                          fixed(r.working_set() / 1e6, 2)});
  return table;
}

Table family_rows(const Calibration &c) {
  Table table{{"family", "compute", "stream", "falloff_mb", "band_fit", "band_loco"}, {}, {}};
  auto pct = [](double v) { return fixed(100.0 * (std::exp(v) - 1), 0) + "%"; };
  for (const auto &[name, f] : c.families)
    table.rows.push_back({name, fixed(f.compute, 3), fixed(f.stream, 3),
                          f.falloff_bytes > 0 ? fixed(f.falloff_bytes / 1e6, 1) : "-",
                          pct(f.fit_low) + ".." + pct(f.fit_high),
                          pct(f.loco_low) + ".." + pct(f.loco_high)});
  return table;
}

// --rows: every row's measurement, prediction and error.
Table row_rows(const FitReport &rep, const std::vector<Row> &rows) {
  Table table{{"line", "machine", "op", "params", "family", "measured_ms", "predicted_ms", "error", "loco_ms",
               "loco_error", "left_out"},
              {},
              {}};
  for (const RowResult &r : rep.rows) {
    const Row &row = rows[r.row];
    double m = row.m.lat_ms;
    table.rows.push_back({std::to_string(row.m.line), row.machine, row.m.op, row.m.params, r.family,
                          fixed(m, 4), fixed(r.predicted_ms, 4),
                          fixed(100 * (r.predicted_ms / m - 1), 1) + "%",
                          r.loco_ms > 0 ? fixed(r.loco_ms, 4) : "-",
                          r.loco_ms > 0 ? fixed(100 * (r.loco_ms / m - 1), 1) + "%" : "-",
                          r.left_out.empty() ? "-" : r.left_out});
  }
  return table;
}

int calibrate_command(const Ctx &ctx, const tools::Args &args) {
  const std::string &out = args.value("out"), &format = args.value("format"),
                    &calibration_file = args.value("calibration"), &source = args.value("source"),
                    &cost_model = args.value("model");
  bool only_check = args.given("check"), per_row = args.given("rows");
  const std::string &file = args.positional()[0];
  if (cost_model == "analytic" && !only_check)
    throw Error("ANEC-CLI-002", "--model analytic has nothing to fit: use it with --check");
  if (only_check && !out.empty())
    throw Error("ANEC-CLI-002", "--check fits nothing, so there is nothing to write with --out");
  std::vector<std::string> skipped;
  std::vector<Row> rows =
      measured_rows(read_measurements(read_text_file(file), file), ctx.chips(), ctx.catalog, &skipped);
  std::string credit = source.empty() ? fs::path(file).filename().string() : source;
  FitReport rep = only_check ? check_calibration(rows, ctx.calibration(calibration_file), ctx.registry(),
                                                 ctx.catalog, cost_model == "analytic")
                             : calibrate(rows, ModelSpec::load(ctx.tables / "calibration" / "model.toml"),
                                         ctx.chips(), ctx.registry(), credit);
  ErrorTable by_chip = error_table(rep, rows, "chip"), by_family = error_table(rep, rows, "family");
  render_to_stdout(format, "anec.calibrate", [&](Printer &p) {
    p.text((only_check ? "check " : "calibrate ") + file + ": ");
    p.field("rows", rows.size());
    p.text(" rows used" + (skipped.empty() ? "\n" : ", " + std::to_string(skipped.size()) + " skipped:\n"));
    print_list(p, "skipped", skipped, "  skipped ");
    print_list(p, "outlier_machines", rep.outlier_machines, "outlier machine left out of the fit: ");
    p.text("\nrelative error by chip" + std::string(only_check ? "" : " (fit, and leave-one-chip-out)") +
           ":\n");
    print(p, error_rows(by_chip, "chip"), "by_chip");
    p.text("\nrelative error by op family (the family that takes most of the time):\n");
    print(p, error_rows(by_family, "family"), "by_family");
    if (per_row) {
      p.text("\nper row:\n");
      print(p, row_rows(rep, rows), "per_row");
    }
    if (!only_check) {
      p.text("\nrates per chip:\n");
      print(p, rates_rows(rep.calibration), "chips");
      p.text("\nfamily factors and error bands:\n");
      print(p, family_rows(rep.calibration), "families");
    }
  });
  if (!out.empty())
    write_output(out, fitted_toml(rep, rows));
  return 0;
}

// Many models at once (`check`/`estimate` with several files or a directory): the files are spread
// over the cores, one row per file and target, one summary. A file that cannot be read is a row
// with its error, not the end of the run.
int corpus(const Ctx &ctx, const std::string &cmd, const std::vector<fs::path> &files,
           const std::string &target, const std::string &format, const DimBindings &dims,
           const std::optional<Calibration> &calibration, double budget) {
  std::string chip;
  auto targets = ctx.targets(target, &chip);
  std::vector<std::vector<std::vector<std::string>>> rows(files.size());
  std::vector<int> outcome(files.size(), 0); // 0 pass, 1 a reject, 2 unreadable
  // Fewer files than cores: each file's targets take the cores left over.
  size_t cores = std::thread::hardware_concurrency();
  auto per_file = unsigned(std::max<size_t>(1, cores / std::max<size_t>(1, files.size())));
  spread_over_cores(files.size(), [&](size_t i) {
    try {
      ModelSummary summary = summarize_model(files[i], ctx.catalog, dims, targets,
                                             calibration ? &*calibration : nullptr, chip, budget, per_file);
      for (size_t k = 0; k < targets.size(); ++k) {
        const hal::Target *t = targets[k];
        const CheckResult &c = summary.checks[k];
        const Estimate &e = summary.estimates[k];
        outcome[i] = std::max(outcome[i], c.verdict == Verdict::Reject ? 1 : 0);
        rows[i].push_back(
            {files[i].string(), t->name, verdict_name(c.verdict), std::to_string(c.count(Severity::Reject)),
             std::to_string(c.count(Severity::Decompose)), std::to_string(c.count(Severity::Warning)),
             e.complete() ? fixed(e.latency_us) : "unknown", e.complete() ? e.bound : "unknown", ""});
      }
    } catch (const Error &e) {
      outcome[i] = 2;
      rows[i].push_back({files[i].string(), "", "error", "", "", "", "", "", e.what()});
    }
  });
  Corpus corpus{
      {{"file", "target", "verdict", "rejects", "decompositions", "warnings", "latency_us", "bound", "error"},
       {},
       {}},
      files.size(),
      size_t(std::count(outcome.begin(), outcome.end(), 1)),
      size_t(std::count(outcome.begin(), outcome.end(), 2)),
      "rejected",
      "without a reject",
      "with one"};
  for (auto &r : rows)
    corpus.rows.rows.insert(corpus.rows.rows.end(), r.begin(), r.end());
  render_to_stdout(format, "anec.corpus", [&](Printer &p) { print(p, corpus); });
  return corpus.unreadable ? 2 : cmd == "check" && corpus.failed ? 1 : 0;
}

DimBindings dim_bindings(const std::vector<std::string> &dim_args) {
  DimBindings dims;
  for (const std::string &d : dim_args) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("ANEC-CLI-002", "--dim " + quote_arg(d) + " is not NAME=POSITIVE-INTEGER");
    // The same cap as every model reader, so a bound dimension cannot overflow the shape arithmetic.
    std::string name = d.substr(0, eq);
    dims[name] = int64_t(parse_uint(d.substr(eq + 1), 1, uint64_t(kMaxDimension), "--dim " + name));
  }
  return dims;
}

// --input NAME=FILE.npy, each read as float32 values (its element count is checked by the evaluator).
std::map<std::string, Values> eval_inputs(const std::vector<std::string> &args) {
  std::map<std::string, Values> out;
  for (const std::string &a : args) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
      throw Error("ANEC-CLI-002", "--input " + quote_arg(a) + " is not NAME=FILE.npy");
    std::string path = a.substr(eq + 1);
    npy::Array array = npy::read(read_file(path), path);
    Values v;
    v.d = {1, 1, 1, 1, int64_t(array.count())};
    for (double x : array.values())
      v.v.push_back(float(x));
    if (!out.emplace(a.substr(0, eq), std::move(v)).second)
      throw Error("ANEC-CLI-002", "--input " + quote_arg(a.substr(0, eq)) + " is given twice");
  }
  return out;
}

// --precision, --seed, --input and the model's folder (for its constants' files), as eval and tune
// take them.
EvalOptions eval_options(const std::string &precision, uint64_t seed, const std::vector<std::string> &inputs,
                         const fs::path &model) {
  EvalOptions o;
  o.precision = precision == "fp16" ? Precision::fp16 : Precision::fp32;
  o.seed = seed;
  o.inputs = eval_inputs(inputs);
  o.base = model.parent_path();
  return o;
}

// One output as .npy: float32, or float16 in fp16 mode; 4-D [N, C, H, W] when its depth is 1.
std::string npy_of(const Values &v, Precision precision) {
  npy::Array a;
  a.dtype = precision == Precision::fp16 ? "f2" : "f4";
  a.shape.assign(v.d.begin(), v.d.end());
  if (a.shape[kD] == 1)
    a.shape.erase(a.shape.begin() + kD);
  for (float x : v.v) {
    uint8_t bytes[4];
    if (precision == Precision::fp16) {
      uint16_t h = to_half(x);
      std::memcpy(bytes, &h, 2);
      a.data.insert(a.data.end(), bytes, bytes + 2);
    } else {
      std::memcpy(bytes, &x, 4);
      a.data.insert(a.data.end(), bytes, bytes + 4);
    }
  }
  std::vector<uint8_t> file = npy::write(a);
  return std::string(file.begin(), file.end());
}

// What writing the outputs holds: every .npy file until the set is written, and while the largest
// is made, its data and the file's copy of it.
double npy_bytes(const Graph &g, Precision precision) {
  double each = precision == Precision::fp16 ? 2 : 4, sum = 0, largest = 0;
  for (const std::string &name : g.outputs) {
    double bytes = each * double(g.tensor(name)->shape.elements());
    sum += bytes;
    largest = std::max(largest, bytes);
  }
  return sum + 2 * largest;
}

// A tensor name as a file name: characters other than letters, digits, '.', '-' and '_' become '_'.
std::string file_name_of(const std::string &tensor) {
  std::string out = tensor;
  for (char &ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-' && ch != '_')
      ch = '_';
  return out + ".npy";
}

int eval_command(const Ctx &ctx, const tools::Args &args) {
  const std::string &out_dir = args.value("out"), &format = args.value("format"), &gemm = args.value("gemm");
  const std::vector<std::string> &dim_args = args.values("dim"), &models = args.positional();
  uint64_t seed = parse_uint(args.value("seed"), 0, UINT64_MAX, "--seed");
  if (models.size() != 1)
    throw Error("ANEC-CLI-001", "eval takes one MODEL");
  EvalOptions options = eval_options(args.value("precision"), seed, args.values("input"), models[0]);
  options.gemm = gemm == "openblas" ? Gemm::openblas : Gemm::reference;
  options.max_bytes = max_memory(args);
  Graph g = load_model(models[0], ctx.catalog, dim_bindings(dim_args), true, options.max_bytes);
  if (!out_dir.empty())
    options.reserved_bytes = npy_bytes(g, options.precision);
  EvalResult r = evaluate(g, ctx.catalog, Numerics::load(ctx.tables / "schema" / "numerics.toml"), options);
  if (!out_dir.empty()) {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto &[name, v] : r.outputs) {
      files.emplace_back(file_name_of(name), npy_of(v, options.precision));
      for (size_t k = 0; k + 1 < files.size(); ++k)
        if (files[k].first == files.back().first)
          throw Error("ANEC-CLI-002", "outputs '" + name + "' and another both write " + files.back().first);
    }
    write_output_set(out_dir, files);
  }
  render_to_stdout(format, "anec.eval", [&](Printer &p) { print(p, g, r, options); });
  return r.outputs.size() == g.outputs.size() ? 0 : 1;
}

// The written graph read back through its front-end and the pipeline: whether it has the tuned
// graph's shapes (a front-end such as ONNX may give shapes the format's shape functions do not
// reproduce; "same", or what differs) and its estimate summed over the targets (a MIL program may
// need ops the tuned graph does without).
struct ReadBack {
  std::string shapes;
  double estimate_us = NAN;
};

ReadBack read_back(const std::function<Graph()> &read, const Graph &best, const Ctx &ctx,
                   const std::vector<const hal::Target *> &targets, const Calibration &calibration) {
  try {
    Graph back = read();
    size_t differ = 0;
    std::string first;
    for (const Tensor &t : best.tensors)
      if (const Tensor *b = back.tensor(t.name); b && b->shape.d != t.shape.d && !differ++)
        first = t.name + " " + t.shape.str() + " reads back as " + b->shape.str();
    ReadBack r{differ ? std::to_string(differ) + " tensor shape(s) differ, first " + first : "same", 0};
    for (const Estimate &e : estimate(back, ctx.catalog, targets, &calibration, "", Detail::Summary))
      r.estimate_us += e.complete() ? e.latency_us : INFINITY;
    return r;
  } catch (const Error &e) {
    return ReadBack{std::string("it does not read back: ") + e.what()};
  }
}

// A copy of `from` at `to` (its folders made), written as every output file is (write_output); the
// source is mapped, not read into memory, as weight files may be large.
void copy_output(const fs::path &from, const fs::path &to) {
  std::error_code ec;
  fs::create_directories(to.parent_path().empty() ? fs::path(".") : to.parent_path(), ec);
  write_output(to, InputFile::open(from, std::numeric_limits<uint64_t>::max()).bytes());
}

// BEST.json written to another folder: the .npy files its constants name are copied beside it, at
// the same relative paths, since a graph reads no file outside its folder.
void copy_constant_files(const Graph &g, const fs::path &from_dir, const fs::path &to_dir) {
  fs::path from = from_dir.empty() ? "." : from_dir, to = to_dir.empty() ? "." : to_dir;
  std::error_code ec;
  if (fs::equivalent(from, to, ec))
    return;
  for (const auto &[name, v] : g.values)
    if (!v.file.empty())
      if (std::optional<fs::path> real = resolve_inside(from, v.file); real && fs::exists(*real, ec))
        copy_output(*real, to / v.file);
}

// BEST.mil: the MIL text `model` was read from (a .mil file, or a .mlmodelc bundle's model.mil) with
// the kept rewrites written in; written to another folder, the weight files it names are copied
// beside it (at the same paths under @model_path), so it reads again with its weights.
void write_tuned_mil(const fs::path &model, const fs::path &out, const TuneResult &r,
                     const std::vector<Rewrite> &rules) {
  fs::path mil = model;
  if (is_bundle(model)) {
    BundleModel b = resolve_bundle(model);
    mil = b.format == "mil" ? b.file : fs::path();
  }
  if (mil.extension() != ".mil")
    throw Error("ANEC-CLI-002", out.string() +
                                    ": MIL text is written for a model read from MIL text (a .mil file or a "
                                    "compiled .mlmodelc bundle), and " +
                                    model.string() + " is not one; write BEST.json");
  TunedMil tuned = tuned_mil(read_text_file(mil, kMilMaxBytes), mil.string(), "main", r, rules);
  fs::path from = mil.parent_path().empty() ? "." : mil.parent_path(),
           to = out.parent_path().empty() ? "." : out.parent_path();
  std::error_code ec;
  if (!fs::equivalent(from, to, ec))
    for (const std::string &blob : tuned.blobs) // one the reader found absent stays absent
      if (std::optional<fs::path> file = mil_blob_file(from, blob, mil.string()))
        copy_output(*file, to / mil_blob_relative(blob));
  write_output(out, tuned.text);
}

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void print_tune_step(Printer &p, const TuneStep &s) {
  Object x(p);
  p.text("  ");
  p.field("rewrite", s.rewrite);
  p.data("source", s.source);
  p.text(" at " + join(s.sites, ", ") + ": error ");
  if (!p.text_form())
    print_list(p, "sites", s.sites, "");
  bool finite = std::isfinite(s.error);
  p.data("error", finite ? Doc::number(s.error) : Doc::string("inf"));
  p.text((finite ? shortest(s.error) : "inf") + ", ");
  p.data("before_us", s.before_us);
  p.data("after_us", std::isfinite(s.after_us) ? Doc::number(s.after_us) : Doc());
  p.data("kept", s.kept);
  p.field("why", s.why);
  p.text("\n");
}

// `anec tune`: the latency before and after, each rewrite tried and why it was kept or not, whether
// the written graph reads back as the tuned one, and the outputs whose accuracy is not checked.
void print_tune(Printer &p, const Graph &g, const TuneResult &r, const TuneOptions &o,
                const std::string &target, const ReadBack &back) {
  p.text("tune ");
  p.field("model", g.source);
  p.text(" on ");
  p.field("target", target);
  p.data("before_us", r.before_us);
  p.data("after_us", r.after_us);
  p.text(": " + fixed(r.before_us) + " -> " + fixed(r.after_us) + " us (");
  p.field("metric", o.metric == Metric::cosine ? "cosine" : "max_abs");
  p.data("tolerance", o.tolerance);
  p.text(" tolerance " + shortest(o.tolerance) + ", evaluated with the ");
  p.field("gemm", "reference"); // the tuner's evaluations always use it (compiler/src/passes/tune.cpp)
  p.text(" GEMM)\n");
  {
    List steps(p, "rewrites");
    for (const TuneStep &s : r.steps)
      print_tune_step(p, s);
  }
  p.data("read_back", back.shapes);
  if (back.shapes != "same")
    p.text("  warning: the written graph, read back, is not the tuned one (the format's shape functions "
           "do not reproduce the front-end's): " +
           back.shapes + "\n");
  p.data("written_us", std::isfinite(back.estimate_us) ? Doc::number(back.estimate_us) : Doc());
  if (std::isfinite(back.estimate_us) && fixed(back.estimate_us) != fixed(r.after_us))
    p.text("  the written graph, read back, estimates " + fixed(back.estimate_us) + " us: " +
           (back.shapes == "same" ? "the ops its format needs around the rewrites cost what the tuned graph "
                                    "does without\n"
                                  : "it reads back with other shapes (above)\n"));
  List unchecked(p, "unchecked_outputs");
  for (const std::string &n : r.unchecked) {
    p.text("  output ");
    p.item(n);
    p.text(" cannot be evaluated: its accuracy is not checked\n");
  }
}

int tune_command(const Ctx &ctx, const tools::Args &args) {
  const std::string &target = args.value("target"), &metric = args.value("metric"), &out = args.value("out"),
                    &rules = args.value("rules"), &format = args.value("format");
  const std::vector<std::string> &dim_args = args.values("dim"), &models = args.positional();
  TuneOptions options;
  options.tolerance = args.number("tolerance");
  uint64_t seed = parse_uint(args.value("seed"), 0, UINT64_MAX, "--seed");
  if (!(options.tolerance >= 0))
    throw Error("ANEC-CLI-002", "--tolerance must be 0 or more");
  options.metric = metric == "cosine" ? Metric::cosine : Metric::max_abs;
  options.eval = eval_options(args.value("precision"), seed, args.values("input"), models[0]);
  options.source_dir = options.eval.base;
  std::vector<Rewrite> rewrites =
      load_rewrites(rules.empty() ? ctx.tables / "schema" / "rewrites.toml" : fs::path(rules));
  Graph g = load_model(models[0], ctx.catalog, dim_bindings(dim_args), true);
  std::string chip;
  auto targets = ctx.targets(target, &chip);
  Calibration calibration = ctx.calibration("");
  TuneResult r = tune(g, ctx.catalog, Numerics::load(ctx.tables / "schema" / "numerics.toml"), rewrites,
                      targets, &calibration, options);
  std::function<Graph()> written;
  std::string best;
  if (fs::path(out).extension() == ".mil") {
    write_tuned_mil(models[0], out, r, rewrites);
    written = [&] { return load_model(out, ctx.catalog, dim_bindings(dim_args)); };
  } else {
    best = json::write(graph_doc(r.best, options.source_dir, options.source_dir));
    copy_constant_files(r.best, options.source_dir, fs::path(out).parent_path());
    write_output(out, best);
    written = [&] { return read_model(best, "json", out, ctx.catalog); };
  }
  ReadBack back = read_back(written, r.best, ctx, targets, calibration);
  render_to_stdout(format, "anec.tune", [&](Printer &p) { print_tune(p, g, r, options, target, back); });
  return 0;
}

// What a command holds per operation and target before it prints, with the per-op rows of a graph
// read whole: the check's verdict and findings, the estimates' op rows and the placement's. Measured
// on a report (the most it holds): a 100,000-op chain of relus with two findings each peaked at
// 3.19 GB on 28 targets (1.14 KB per op and target, the graph included) and 190 MB on one.
constexpr double kResultBytesPerOpTarget = 1280;

// `what`: the document ("report"); `fix`: how to need less.
void check_results_budget(const Graph &g, size_t targets, double budget, const std::string &what,
                          const std::string &fix) {
  double need = double(g.ops.size()) * double(targets) * kResultBytesPerOpTarget;
  if (need > budget)
    throw Error("ANEC-MEM-001", g.source + ": the " + what + " of " + std::to_string(g.ops.size()) +
                                    " operation(s) on " + std::to_string(targets) +
                                    " target(s) needs about " + size_text(need) + " (" +
                                    size_text(kResultBytesPerOpTarget) +
                                    " per operation and target), more than the memory budget of " +
                                    size_text(budget) + " (--max-memory); " + fix);
}

// `report`: the check, the estimate (calibrated unless --model analytic) and the placement (the
// analytic estimate, as `place` uses) on each target, rendered as one page (report_html.cpp).
int report_command(const Ctx &ctx, const tools::Args &args) {
  const std::string &target = args.value("target"), &out = args.value("out"),
                    &cost_model = args.value("model"), &calibration_file = args.value("calibration");
  const std::vector<std::string> &dim_args = args.values("dim"), &models = args.positional();
  size_t top = size_t(parse_uint(args.value("top"), 1, 1000000, "--top"));
  double budget = max_memory(args);
  Graph g = load_model(models[0], ctx.catalog, dim_bindings(dim_args), false, budget);
  std::string chip;
  auto targets = ctx.targets(target, &chip);
  check_results_budget(g, targets.size(), budget, "report", "report on fewer targets");
  std::optional<Calibration> calibration;
  if (cost_model == "calibrated")
    calibration = ctx.calibration(calibration_file);
  std::vector<CheckResult> cs = check(g, ctx.catalog, targets);
  std::vector<Estimate> es = estimate(g, ctx.catalog, targets, calibration ? &*calibration : nullptr, chip);
  std::vector<Estimate> analytic = calibration ? estimate(g, ctx.catalog, targets, nullptr, chip) : es;
  std::vector<Placement> ps = ctx.place(g, targets, cs, analytic);
  ReasonCatalog reasons = ReasonCatalog::load(ctx.tables / "schema" / "reasons.toml");
  write_output(out, tools::report_html({g, models[0], targets, cs, es, ps, reasons, top}));
  std::fprintf(stderr, "report: %zu target(s) written to %s\n", targets.size(), out.c_str());
  return 0;
}

// `check`, `estimate` and `place`.
int run(const Ctx &ctx, const tools::Args &args) {
  const std::string cmd(args.command());
  const std::string &target = args.value("target"), &format = args.value("format");
  const std::vector<std::string> &dim_args = args.values("dim"), &models = args.positional();
  // Only `estimate` takes a cost model.
  const std::string cost_model = cmd == "estimate" ? args.value("model") : "calibrated",
                    calibration_file = cmd == "estimate" ? args.value("calibration") : "";
  if (models.empty() || target.empty()) throw Error("ANEC-CLI-001", cmd + " needs MODEL and --target T|all");
  const std::string &model = models.front();
  DimBindings dims = dim_bindings(dim_args);
  double budget = max_memory(args);
  std::optional<Calibration> calibration; // only `estimate` uses the calibrated model
  if (cmd == "estimate" && cost_model == "calibrated")
    calibration = ctx.calibration(calibration_file);
  if (models.size() > 1 || (fs::is_directory(model) && !is_bundle(model))) {
    if (cmd == "place") throw Error("ANEC-CLI-001", "place takes one MODEL");
    return corpus(ctx, cmd, input_files(models, model_extensions(), kBundleExtensions), target, format, dims,
                  calibration, budget);
  }
  std::string chip;
  auto targets = ctx.targets(target, &chip);
  const Calibration *cal = calibration ? &*calibration : nullptr;
  auto rejects = [](const std::vector<CheckResult> &cs) {
    return std::any_of(cs.begin(), cs.end(),
                       [](const CheckResult &r) { return r.verdict == Verdict::Reject; });
  };
  // A matrix over targets (--target all, csv) prints one summary row per target: the model is checked
  // and estimated while it is read.
  if (cmd != "place" && (target == "all" || format == "csv")) {
    ModelSummary summary = summarize_model(model, ctx.catalog, dims, targets, cal, chip, budget,
                                           std::thread::hardware_concurrency());
    print_matrix(summary.checks, summary.estimates, format, model);
    return cmd == "check" && rejects(summary.checks) ? 1 : 0;
  }
  // One target's check, estimate or placement of an anec-graph file is printed while the file is read
  // op by op.
  if (target != "all" && format != "csv") {
    using Kind = OneTargetReport::Kind;
    Kind kind = cmd == "check" ? Kind::Check : cmd == "estimate" ? Kind::Estimate : Kind::Place;
    if (auto report = OneTargetReport::read(kind, model, ctx.catalog, dims, *targets[0], cal, chip,
                                            form_named(format))) {
      render_to_stdout(format, "anec." + cmd, [&](Printer &p) { report->print(p); });
      return report->rejects() ? 1 : 0;
    }
  }
  Graph g = load_model(model, ctx.catalog, dims, false, budget);
  check_results_budget(g, targets.size(), budget, cmd == "place" ? "placement" : cmd,
                       cmd == "place" ? "place on fewer targets"
                                      : "write the model as an anec-graph file, read op by op on one target");
  // A single-target estimate prints no check: it is not run.
  std::vector<CheckResult> cs;
  if (cmd != "estimate")
    cs = check(g, ctx.catalog, targets);
  std::vector<Estimate> es = estimate(g, ctx.catalog, targets, cal, chip);
  // The placement is printed by `place` and by a single-target `check`.
  std::vector<Placement> ps;
  if (cmd != "estimate")
    ps = ctx.place(g, targets, cs, es); // analytic: only `estimate` calibrates
  if (cmd == "place" && (target == "all" || format == "csv"))
    print_place_matrix(ps, format, model);
  else if (cmd == "place")
    render_to_stdout(format, "anec.place", [&](Printer &p) { print(p, g, ps[0]); });
  else if (cmd == "check")
    render_to_stdout(format, "anec.check", [&](Printer &p) {
      print(p, g, cs[0], *targets[0]);
      p.text("\n");
      Object placement(p, "placement");
      print(p, g, ps[0]);
    });
  else
    render_to_stdout(format, "anec.estimate", [&](Printer &p) { print(p, g, es[0]); });
  return cmd == "check" && rejects(cs) ? 1 : 0;
}

// A command's handler, run on the model context of the tables.
template <int (*Run)(const Ctx &, const tools::Args &)>
int on_model(const fs::path &tables, const tools::Args &args) {
  Ctx ctx(tables);
  return Run(ctx, args);
}

using tools::Completion;
using tools::Option;
using tools::Positional;

const Option kTarget{.name = "target",
                     .short_name = 't',
                     .value = "T|all",
                     .required = true,
                     .long_in_usage = true,
                     .completes = Completion::targets_or_all,
                     .help = "the target, a chip or a Mac model identifier; all: every target"};

const Option kDim{.name = "dim",
                  .value = "NAME=N",
                  .repeatable = true,
                  .help = "bind a symbolic input dimension (NAME, or INPUT:AXIS) to N"};
const Option kCostModel{
    .name = "model", .choices = "calibrated|analytic", .fallback = "calibrated", .help = "the cost model"};
const Option kCalibration{.name = "calibration",
                          .value = "FILE",
                          .completes = Completion::files,
                          .help = "the calibration table (default: tables/calibration/fitted.toml)"};
const Option kInput{.name = "input",
                    .value = "NAME=FILE.npy",
                    .repeatable = true,
                    .completes = Completion::files,
                    .help = "the values of a graph input"};
const Option kPrecision{.name = "precision",
                        .choices = "fp32|fp16",
                        .fallback = "fp32",
                        .help = "fp16 rounds where the engine rounds"};
const Option kSeed{.name = "seed", .value = "N", .fallback = "1", .help = "the seed of the random values"};
const Option kMaxMemory{.name = "max-memory",
                        .value = "BYTES",
                        .fallback = kDefaultMaxMemoryText,
                        .help = "the memory budget, with K, M or G (2^10, 2^20, 2^30): a run planned to "
                                "need more is refused before it starts (ANEC-MEM-001)"};

const Positional kModels[] = {{.name = "MODEL", .max = -1}};
const Positional kModel[] = {{.name = "MODEL"}};
const Positional kMeasurements[] = {{.name = "MEASUREMENTS.tsv"}};
const Positional kCode[] = {{.name = "CODE", .min = 0, .completes = Completion::none}};

const Option kCheckOptions[] = {kTarget, tools::kFormatTextJsonCsv, kDim, kMaxMemory};
const Option kEstimateOptions[] = {kTarget, kCostModel, kCalibration, tools::kFormatTextJsonCsv,
                                   kDim,    kMaxMemory};
const Option kCalibrateOptions[] = {
    {.name = "out",
     .short_name = 'o',
     .value = "FILE",
     .long_in_usage = true,
     .completes = Completion::files,
     .help = "the calibration table written"},
    {.name = "check", .help = "fit nothing: report how the current calibration predicts the file"},
    {.name = "model",
     .choices = "calibrated|analytic",
     .fallback = "calibrated",
     .help = "the cost model --check reports on"},
    kCalibration,
    {.name = "rows", .help = "list every row"},
    tools::kFormatTextJson,
    {.name = "source", .value = "TEXT", .help = "the credit of the fit (default: the file's name)"}};
const Option kEvalOptions[] = {kInput,
                               kPrecision,
                               kSeed,
                               kDim,
                               {.name = "gemm",
                                .choices = "reference|openblas",
                                .fallback = "reference",
                                .help = "the GEMM of the matrix products"},
                               {.name = "out",
                                .short_name = 'o',
                                .value = "DIR",
                                .completes = Completion::dirs,
                                .help = "the directory receiving each output as NAME.npy"},
                               kMaxMemory,
                               tools::kFormatTextJson};
const Option kTuneOptions[] = {
    kTarget,
    {.name = "out",
     .short_name = 'o',
     .value = "BEST.json",
     .required = true,
     .completes = Completion::files,
     .help = "the best graph written: anec-graph JSON, or MIL text (.mil) for a MIL model"},
    {.name = "tolerance", .value = "X", .fallback = "0", .help = "the largest error a kept rewrite may make"},
    {.name = "metric",
     .choices = "max_abs|cosine",
     .fallback = "max_abs",
     .help = "how the error is measured"},
    {.name = "rules",
     .value = "FILE",
     .completes = Completion::files,
     .help = "the rewrites (default: tables/schema/rewrites.toml)"},
    kInput,
    kPrecision,
    kSeed,
    kDim,
    tools::kFormatTextJson};
const Option kReportOptions[] = {kTarget,
                                 {.name = "out",
                                  .short_name = 'o',
                                  .value = "REPORT.html",
                                  .required = true,
                                  .completes = Completion::files,
                                  .help = "the page written"},
                                 kCostModel,
                                 kCalibration,
                                 {.name = "top",
                                  .value = "N",
                                  .fallback = "10",
                                  .help = "the most expensive operations listed per target"},
                                 kDim,
                                 kMaxMemory};
const Option kExplainOptions[] = {
    {.name = "markdown", .help = "print the whole catalogue as docs/reasons.md"}};

const tools::Command kCommands[] = {
    {"check", kModels, kCheckOptions,
     R"(`check` validates every operation against the target's tables: native, decomposed (into what) or
rejected, each finding with its reason code, the offending value, the limit and its provenance, and
a fix; then padding, group/core, working-set and pitfall warnings.
)",
     on_model<run>},
    {"estimate", kModels, kEstimateOptions,
     R"(`estimate` gives the latency with an error band: by default the calibrated model (per-op rooflines
with separate weight and activation bandwidths, per-family factors and a per-call floor, fitted to
measured silicon: tables/calibration/fitted.toml or --calibration FILE); --model analytic gives the
guide's ch.18 form (one roofline for the fused program plus one dispatch floor). Each rate says
where it comes from: measured-fit, published or predicted-by-rule. With --target all, one row per
target: verdict, rejects, decompositions, warnings, estimated latency, bound. With an unbound
dimension no latency is given: the unknown shapes are listed with how to bind them.
)",
     on_model<run>},
    {"place", kModel, kCheckOptions,
     R"(`place` says where each operation runs on the target (engine, GPU or CPU, ch.18's placement model):
the engine partitions and their share of the FLOPs, every fallback with its reason codes and the fix
that would bring it back, the transfer at each boundary, and the estimate of the placed model; with
--target all, one row per target (partitions, operations off the engine, FLOP share, latency).
)",
     on_model<run>},
    {"calibrate", kMeasurements, kCalibrateOptions,
     R"(`calibrate` fits the calibrated model to a measurement file (columns chip, model_id, op, params,
gflop, lat_ms, source_file; see docs/calibration.md) with a robust loss, reports the fit and the
leave-one-chip-out error per chip and per op family, and with --out writes the calibration table
(then `anec-hal generate` puts the per-target rates into the target tables). --check fits nothing:
it reports how the current calibration (or, with --model analytic, the guide's form) predicts the
file's rows; --rows lists every row.
)",
     on_model<calibrate_command>},
    {"eval", kModel, kEvalOptions,
     R"(`eval` runs the model on the host (docs/graph-format.md, "Evaluation"): inputs from .npy files, a
missing one and every constant without values from seeded random values (said in the report);
--precision fp16 rounds where the engine rounds and applies its cliffs (tables/schema/numerics.toml,
guide ch.3). -o DIR receives each graph output as NAME.npy (float32, or float16 in fp16 mode). An
operation the evaluator does not compute is reported with its reason, and what depends on it is not
computed: the exit code is then 1. GEMMs and convolutions run through anec's reference GEMM, whose
bits are the same on every host; --gemm openblas is faster, but its last bits depend on the kernel
OpenBLAS picks for the CPU.
)",
     on_model<eval_command>},
    {"tune", kModel, kTuneOptions,
     R"(`tune` tries the rewrites of tables/schema/rewrites.toml (or --rules FILE) in order where they
match, evaluates each rewritten graph against the original on the same inputs (seeded where not
given, always with the reference GEMM, so the verdict is the same on every host), and keeps it when
its error is within --tolerance (default 0; --metric max_abs, or cosine: 1 minus the cosine
similarity), the checker rejects nothing more and the calibrated estimate, summed over the targets,
falls; it writes the best graph to BEST.json (anec-graph), or for a model read from MIL text to
BEST.mil (the source program with the kept rewrites written in, its weight files copied beside it),
and reports each rewrite: where, its error, the estimate before and after, kept or why not.
)",
     on_model<tune_command>},
    {"report", kModel, kReportOptions,
     R"(`report` writes one self-contained HTML page (no network: its style, script and charts are inline)
with the target matrix as a heat map (latency over the fastest target's, rejects marked), a roofline
chart per target (each operation placed by its FLOPs, bytes and estimated time under the estimate's
rates), the placement partitions and fallbacks as `place` gives them, the --top N (default 10) most
expensive operations per target, and the check's findings with their catalogue entries.
)",
     on_model<report_command>},
    {"explain", kCode, kExplainOptions,
     R"(`explain` says what a reason code (ANEC-XXX-NNN, from any of the four tools) means and what to do
about it; --markdown prints the whole catalogue (tables/schema/reasons.toml) as docs/reasons.md.
)",
     explain},
};

const tools::ToolTable kTool{
    "anec", kCommands,
    R"(MODEL is an anec-graph JSON file (docs/graph-format.md), an engine network plist (.plist) or an ONNX
model (.onnx). `check` and `estimate` take several MODELs or a directory (its .json, .plist and
.onnx files): they are spread over the cores and reported one row per file and target with one
summary; an unreadable file is a row with its error (exit 2 if any, else 1 for a reject in check). T
is a target (h13, h17s, ...), a chip ("M4 Pro") or a Mac model identifier (Mac16,7): a chip runs its
target (tables/reference/chips.toml) and, when it was measured, its own calibration. --dim binds a
symbolic input dimension to a value from 1 to 2^40 (the dimension limit of every model reader;
anything else is rejected): by name (an ONNX dim_param, --dim batch=1) or, for an unnamed one, by
input and axis counted in that input's own shape (--dim x:1=512).
)",
    "Exit codes: 0 success, 1 a reject verdict (check), 2 bad input.\n"};

} // namespace

int main(int argc, char **argv) {
  return anec::tools::tool_main(kTool, argc, argv);
}
