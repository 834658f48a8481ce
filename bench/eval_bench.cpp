// The host evaluator (anec::compiler::evaluate) against OpenBLAS called directly: one 1024^3 GEMM as
// a `matmul` (with the reference GEMM and with OpenBLAS) and as a `linear` (fp32, and fp16 to show the
// rounding passes), and a ResNet basic block (two 3x3 convs 64->64 over 56x56, batch_norm, relu, the residual
// add) against the same two convs as im2col and one cblas_sgemm each (the block with either GEMM). Rates are
// GFLOP/s in wall time (OpenBLAS runs threads); `of_openblas` is the rate over the reference's, the two run
// in turn. threads:0 is OpenBLAS's default, threads:1 one thread: the module loads the same libopenblas, so
// the setting holds for both.
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/shapes.hpp"

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <chrono>
#include <random>

using namespace anec;
using namespace anec::compiler;

namespace {
const std::filesystem::path kTables = ANEC_BENCH_TABLES_DIR;

const OpCatalog &catalog() {
  static const OpCatalog c = OpCatalog::load(kTables / "schema" / "ops.toml");
  return c;
}
const Numerics &numerics() {
  static const Numerics n = Numerics::load(kTables / "schema" / "numerics.toml");
  return n;
}

// OpenBLAS's thread count as the process started, then the count a benchmark asks for (0: that one).
int default_threads() {
  static const int n = openblas_get_num_threads();
  return n;
}
void use_threads(benchmark::State &state, int64_t t, bool config = false) {
  openblas_set_num_threads(t ? int(t) : default_threads());
  state.SetLabel((config ? openblas_get_config() + std::string(", ") : "") +
                 std::to_string(openblas_get_num_threads()) + " thread(s)");
}

Values filled(std::array<int64_t, 5> d, unsigned seed, float scale = 1) {
  Values v;
  v.d = d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  v.v.resize(size_t(v.elements()));
  for (float &x : v.v)
    x = u(rng);
  return v;
}

benchmark::Counter gflops(double flops) {
  return benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

Graph graph(const std::string &inputs, const std::string &constants, const std::string &ops,
            const std::string &outputs) {
  Graph g = read_graph_json(R"({"format": "anec-graph", "version": 1, "inputs": [)" + inputs +
                                R"(], "constants": [)" + constants + R"(], "ops": [)" + ops +
                                R"(], "outputs": [)" + outputs + "]}",
                            "bench.json");
  infer_shapes(g, catalog());
  return g;
}

// Times `evaluate` on `g` as the benchmark's loop (outputs checked once, beforehand), GFLOP/s from
// the evaluator's own count; `of_openblas` is that rate over `reference`'s (`ref_flops` a call), the
// reference run after each evaluation outside the timed region, so a drift in the machine hits both.
template <class F>
void measure(benchmark::State &state, const Graph &g, const EvalOptions &o, double ref_flops, F reference) {
  EvalResult r = evaluate(g, catalog(), numerics(), o);
  if (!r.report.unevaluated.empty() || !r.report.seeded.empty() || r.outputs.empty()) {
    state.SkipWithError("the graph did not evaluate from the given values alone");
    return;
  }
  using Clock = std::chrono::steady_clock;
  std::chrono::duration<double> eval{}, ref{};
  for (auto _ : state) {
    auto t0 = Clock::now();
    benchmark::DoNotOptimize(evaluate(g, catalog(), numerics(), o).outputs.size());
    auto t1 = Clock::now();
    state.PauseTiming();
    auto t2 = Clock::now();
    reference();
    ref += Clock::now() - t2;
    eval += t1 - t0;
    state.ResumeTiming();
  }
  state.counters["GFLOP/s"] = gflops(r.report.flops);
  state.counters["of_openblas"] = r.report.flops / eval.count() / (ref_flops / ref.count());
}

// ---- one GEMM -----------------------------------------------------------------------------------

struct Sgemm {
  int n;
  Values a, b;
  std::vector<float> c;
  explicit Sgemm(int64_t size)
      : n(int(size)), a(filled({1, 1, size, 1, size}, 1)), b(filled({1, 1, size, 1, size}, 2)),
        c(size_t(size * size)) {}
  void run() {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a.v.data(), n, b.v.data(), n, 0,
                c.data(), n);
  }
  double flops() const { return 2.0 * n * n * n; }
};

// y = a b as an evaluator graph: `matmul` of [1,1,n,1,n] x [1,1,n,1,n], or `linear` (weight [n, n]
// as the second input, contracting C at each of the n W positions).
void eval_gemm(benchmark::State &state, const std::string &op, Precision p, Gemm gemm = Gemm::reference) {
  use_threads(state, state.range(1));
  std::string n = std::to_string(state.range(0)), shape = "[1, 1, " + n + ", 1, " + n + "]";
  Graph g = graph(R"({"name": "a", "shape": )" + shape + R"(, "dtype": "fp32"}, {"name": "b", "shape": )" +
                      shape + R"(, "dtype": "fp32"})",
                  "",
                  R"({"name": "mm", "op": ")" + op + R"(", "inputs": [)" +
                      (op == "linear" ? R"("b", "a"], "attrs": {"out_features": )" + n + "}"
                                      : R"("a", "b"], "attrs": {})") +
                      R"(, "outputs": ["y"]})",
                  R"("y")");
  Sgemm m(state.range(0));
  EvalOptions o;
  o.precision = p;
  o.gemm = gemm;
  o.inputs = {{"a", m.a}, {"b", m.b}};
  measure(state, g, o, m.flops(), [&] { m.run(); });
}
} // namespace

static void BM_OpenBlasSgemm(benchmark::State &state) {
  use_threads(state, state.range(1), true);
  Sgemm m(state.range(0));
  for (auto _ : state)
    m.run();
  state.counters["GFLOP/s"] = gflops(m.flops());
}
static void BM_EvalGemm(benchmark::State &state) {
  eval_gemm(state, "matmul", Precision::fp32);
}
static void BM_EvalGemmOpenBlas(benchmark::State &state) {
  eval_gemm(state, "matmul", Precision::fp32, Gemm::openblas);
}
static void BM_EvalGemmFp16(benchmark::State &state) {
  eval_gemm(state, "matmul", Precision::fp16);
}
static void BM_EvalLinear(benchmark::State &state) {
  eval_gemm(state, "linear", Precision::fp32);
}

// ---- a ResNet basic block -----------------------------------------------------------------------

namespace {
constexpr int64_t kC = 64, kH = 56, kW = 56;

// x [1,64,56,56] -> conv 3x3 pad 1 -> batch_norm -> relu -> conv 3x3 pad 1 -> batch_norm -> + x -> relu;
// the conv weights are graph inputs, the batch_norm parameters inline constants.
Graph resnet_block() {
  std::string constants, ops;
  std::string conv = R"("attrs": {"out_channels": 64, "kernel": [3, 3], "pad": [1, 1, 1, 1]})";
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  for (std::string bn : {"bn1", "bn2"})
    for (std::string p : {"mean", "var", "scale", "bias"}) {
      std::string data;
      for (int64_t c = 0; c < kC; ++c)
        data += (c ? ", " : "") + std::to_string(p == "mean" || p == "bias" ? u(rng) - 1 : u(rng));
      constants += std::string(constants.empty() ? "" : ", ") + R"({"name": ")" + bn + "_" + p +
                   R"(", "shape": [1, 64, 1, 1], "dtype": "fp32", "data": [)" + data + "]}";
    }
  auto op = [&](const std::string &name, const std::string &type, const std::string &in,
                const std::string &attrs = R"("attrs": {})") {
    ops += std::string(ops.empty() ? "" : ", ") + R"({"name": ")" + name + R"(", "op": ")" + type +
           R"(", "inputs": [)" + in + R"(], "outputs": [")" + name + R"("], )" + attrs + "}";
  };
  op("c1", "conv", R"("x", "w1")", conv);
  op("b1", "batch_norm", R"("c1", "bn1_mean", "bn1_var", "bn1_scale", "bn1_bias")");
  op("r1", "relu", R"("b1")");
  op("c2", "conv", R"("r1", "w2")", conv);
  op("b2", "batch_norm", R"("c2", "bn2_mean", "bn2_var", "bn2_scale", "bn2_bias")");
  op("sum", "add", R"("b2", "x")");
  op("y", "relu", R"("sum")");
  return graph(R"({"name": "x", "shape": [1, 64, 56, 56], "dtype": "fp32"}, )"
               R"({"name": "w1", "shape": [64, 64, 3, 3], "dtype": "fp32"}, )"
               R"({"name": "w2", "shape": [64, 64, 3, 3], "dtype": "fp32"})",
               constants, ops, R"("y")");
}

// The block's two convs alone, each as im2col and one cblas_sgemm: out[64, 3136] = w[64, 576] col.
struct Convs {
  Values x = filled({1, 1, kC, kH, kW}, 4), w1 = filled({1, kC, kC, 3, 3}, 5, 1 / 24.f),
         w2 = filled({1, kC, kC, 3, 3}, 6, 1 / 24.f);
  std::vector<float> col = std::vector<float>(size_t(kC * 9 * kH * kW)), y1 = x.v, y2 = x.v;
  static void im2col(const float *in, float *col) { // 3x3, pad 1, stride 1
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t q = 0; q < 3; ++q)
          for (int64_t h = 0; h < kH; ++h, col += kW)
            for (int64_t w = 0, ih = h + r - 1; w < kW; ++w) {
              int64_t iw = w + q - 1;
              col[w] = ih < 0 || ih >= kH || iw < 0 || iw >= kW ? 0 : in[(c * kH + ih) * kW + iw];
            }
  }
  void conv(const float *in, const Values &w, float *out) {
    im2col(in, col.data());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(kC), int(kH * kW), int(kC * 9), 1, w.v.data(),
                int(kC * 9), col.data(), int(kH * kW), 0, out, int(kH * kW));
  }
  void run() {
    conv(x.v.data(), w1, y1.data());
    conv(y1.data(), w2, y2.data());
  }
  static double flops() { return 2 * 2.0 * kC * kH * kW * kC * 9; }
};

} // namespace

static void eval_resnet_block(benchmark::State &state, Gemm gemm) {
  use_threads(state, state.range(0));
  static const Graph g = resnet_block();
  Convs c;
  EvalOptions o;
  o.gemm = gemm;
  o.inputs = {{"x", c.x}, {"w1", c.w1}, {"w2", c.w2}};
  measure(state, g, o, Convs::flops(), [&] { c.run(); });
}
static void BM_EvalResNetBlock(benchmark::State &state) {
  eval_resnet_block(state, Gemm::reference);
}
static void BM_EvalResNetBlockOpenBlas(benchmark::State &state) {
  eval_resnet_block(state, Gemm::openblas);
}
static void BM_Im2colSgemmConvs(benchmark::State &state) {
  use_threads(state, state.range(0));
  Convs c;
  for (auto _ : state)
    c.run();
  state.counters["GFLOP/s"] = gflops(Convs::flops());
}

#define GEMM_ARGS ->Args({1024, 0})->Args({1024, 1})->ArgNames({"", "threads"})
#define BLOCK_ARGS ->Arg(0)->Arg(1)->ArgName("threads")
#define WALL ->UseRealTime()->Unit(benchmark::kMillisecond)
BENCHMARK(BM_OpenBlasSgemm) GEMM_ARGS WALL;
BENCHMARK(BM_EvalGemm) GEMM_ARGS WALL;
BENCHMARK(BM_EvalGemmOpenBlas) GEMM_ARGS WALL;
BENCHMARK(BM_EvalGemmFp16) GEMM_ARGS WALL;
BENCHMARK(BM_EvalLinear) GEMM_ARGS WALL;
BENCHMARK(BM_Im2colSgemmConvs) BLOCK_ARGS WALL;
BENCHMARK(BM_EvalResNetBlock) BLOCK_ARGS WALL;
BENCHMARK(BM_EvalResNetBlockOpenBlas) BLOCK_ARGS WALL;

BENCHMARK_MAIN();
