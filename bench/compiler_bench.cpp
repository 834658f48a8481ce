// Check, estimate and placement throughput on synthetic graphs of N ops (a chain of conv, relu and
// add layers, every seventh a host operation so the placement has partitions and boundaries, 1k to
// 1M ops) against one target, to show how the time grows with graph size (Complexity: oN fit).
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/compiler/passes/tune.hpp"
#include "anec/compiler/pipeline/summary.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json_view.hpp"
#include "synthetic.hpp"

#include <benchmark/benchmark.h>
#include <chrono>

using namespace anec;
using namespace anec::compiler;
using namespace anec::bench;

namespace {
// The same chain as an anec-graph JSON file's text.
std::string chain_json(size_t n) {
  std::string ops;
  for (size_t i = 0; i < n; ++i) {
    std::string type = i % 7 == 6 ? "tan" : i % 3 == 0 ? "conv" : i % 3 == 1 ? "relu" : "add";
    std::string in = "\"t" + std::to_string(i) + "\"";
    if (type == "add")
      in += ", \"t" + std::to_string(i > 1 ? i - 1 : 0) + "\"";
    ops += std::string(i ? ", " : "") + "{\"name\": \"op" + std::to_string(i) + "\", \"op\": \"" + type +
           "\", \"inputs\": [" + in + "], \"outputs\": [\"t" + std::to_string(i + 1) + "\"]" +
           (type == "conv" ? ", \"attrs\": {\"out_channels\": 64, \"kernel\": [3, 3], \"pad\": [1, 1, 1, 1]}"
                           : "") +
           "}";
  }
  return R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "t0", "shape": [1, 64, 56, 56]}], )"
         R"("ops": [)" +
         ops + R"(], "outputs": ["t)" + std::to_string(n) + "\"]}";
}

// A residual stack of n ops for the tuner: blocks of linear (64 -> 64 channels over 16 rows), gelu, a
// permute of two size-1 axes and a residual add.
Graph tune_stack(size_t n) {
  std::string ops, prev = "x";
  for (size_t i = 0; i + 4 <= n; i += 4) {
    std::string b = std::to_string(i / 4);
    ops += std::string(i ? ", " : "") + R"({"name": "fc)" + b + R"(", "op": "linear", "inputs": [")" + prev +
           R"("], "outputs": ["l)" + b + R"("], "attrs": {"out_features": 64}}, )" + R"({"name": "g)" + b +
           R"(", "op": "gelu", "inputs": ["l)" + b + R"("], "outputs": ["a)" + b + R"("]}, )" +
           R"({"name": "t)" + b + R"(", "op": "transpose", "inputs": ["a)" + b + R"("], "outputs": ["p)" + b +
           R"("], "attrs": {"perm": [1, 0, 2, 3, 4]}}, )" + R"({"name": "r)" + b +
           R"(", "op": "add", "inputs": ["p)" + b + R"(", ")" + prev + R"("], "outputs": ["y)" + b + R"("]})";
    prev = "y" + b;
  }
  Graph g = read_graph_json(
      R"({"format": "anec-graph", "version": 1, )"
      R"("inputs": [{"name": "x", "shape": [1, 1, 64, 1, 16]}], "ops": [)" +
          ops + R"(], "outputs": [")" + prev + "\"]}",
      "stack.json");
  infer_shapes(g, catalog());
  mark_skippable(g, catalog());
  return g;
}

// The reference for reading a graph: the JSON parser's own pass over the same text (no graph built),
// in bytes per second, the best of five.
double tokenizer_rate(const std::string &text) {
  double best = 0;
  for (int k = 0; k < 5; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    json::Document doc(text, "bench.json");
    std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
    best = std::max(best, double(text.size()) / s.count());
  }
  return best;
}
} // namespace

static void BM_JsonTokenize(benchmark::State &state) {
  std::string text = chain_json(size_t(state.range(0)));
  for (auto _ : state)
    json::Document doc(text, "bench.json");
  state.SetBytesProcessed(int64_t(state.iterations() * text.size()));
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}
// Reading the graph file's text into the graph (and inferring shapes), with its rate as a share of the
// parser's own pass in the same run (`of_tokenizer`).
static void BM_ReadGraphJson(benchmark::State &state) {
  std::string text = chain_json(size_t(state.range(0)));
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Graph g = read_graph_json(text, "bench.json");
    infer_shapes(g, catalog());
    benchmark::DoNotOptimize(g.ops.data());
  }
  std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
  state.counters["of_tokenizer"] =
      double(state.iterations() * text.size()) / s.count() / tokenizer_rate(text);
  state.SetBytesProcessed(int64_t(state.iterations() * text.size()));
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}

// Checking and estimating while reading (`anec check|estimate --target all|--format csv`, a corpus):
// the file is read op by op and the graph is never held, one target, the analytic model. The rate
// is a share of the parser's pass over the whole text held in memory (`of_tokenizer`).
static void BM_SummarizeWhileReading(benchmark::State &state) {
  std::string text = chain_json(size_t(state.range(0)));
  std::filesystem::path file = std::filesystem::temp_directory_path() / "anec-bench-chain.json";
  write_output(file, text);
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    benchmark::DoNotOptimize(summarize_model(file, catalog(), {}, {&h13()}, nullptr).estimates.data());
  std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
  state.counters["of_tokenizer"] =
      double(state.iterations() * text.size()) / s.count() / tokenizer_rate(text);
  std::filesystem::remove(file);
  state.SetBytesProcessed(int64_t(state.iterations() * text.size()));
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}

static void BM_Check(benchmark::State &state) {
  Graph g = chain(size_t(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(check(g, catalog(), h13()).ops.data());
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}
static void BM_Estimate(benchmark::State &state) {
  Graph g = chain(size_t(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(estimate(g, catalog(), h13()).latency_us);
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}
// The calibrated model (the default of `anec estimate`): per-op terms, rates and the error band.
static void BM_EstimateCalibrated(benchmark::State &state) {
  static const Calibration cal = Calibration::load(kTables / "calibration" / "fitted.toml");
  Graph g = chain(size_t(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(estimate(g, catalog(), h13(), cal).latency_us);
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}
// Placement alone, on the checker's and the cost model's results.
static void BM_Place(benchmark::State &state) {
  Graph g = chain(size_t(state.range(0)));
  CheckResult r = check(g, catalog(), h13());
  Estimate e = estimate(g, catalog(), h13());
  for (auto _ : state) benchmark::DoNotOptimize(place(g, catalog(), h13(), r, e).latency_us);
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
  state.SetComplexityN(state.range(0));
}
// The tuner on the residual stack: both rewrites that match (linear as conv, the permute dropped)
// are evaluated, checked and estimated on h13; the time is the whole tune.
static void BM_Tune(benchmark::State &state) {
  Graph g = tune_stack(size_t(state.range(0)));
  Numerics numerics = Numerics::load(kTables / "schema" / "numerics.toml");
  Calibration calibration = Calibration::load(kTables / "calibration" / "fitted.toml");
  std::vector<Rewrite> rewrites = load_rewrites(kTables / "schema" / "rewrites.toml");
  size_t kept = 0;
  for (auto _ : state) {
    TuneResult r = tune(g, catalog(), numerics, rewrites, {&h13()}, &calibration, TuneOptions{});
    kept = size_t(std::count_if(r.steps.begin(), r.steps.end(), [](const TuneStep &s) { return s.kept; }));
    benchmark::DoNotOptimize(r.after_us);
  }
  state.counters["ops"] = double(g.ops.size());
  state.counters["kept"] = double(kept);
  state.counters["ops_per_s"] =
      benchmark::Counter(double(g.ops.size()), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Tune)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JsonTokenize)->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadGraphJson)->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SummarizeWhileReading)->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Check)->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Estimate)->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EstimateCalibrated)->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Place)
    ->RangeMultiplier(10)
    ->Range(1000, 1000000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

BENCHMARK_MAIN();
