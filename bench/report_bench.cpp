// Rendering the HTML pages: `anec report` of the synthetic chain on one target (the page alone: the
// check, estimate and placement are made once, before the loop) and `anec-desc dump --format html`
// of the real gemm.hwx (the dump printed into the page each time). Items are operations or tree nodes; bytes
// are the page written.
#include "anec/descriptors/program.hpp"
#include "desc_html.hpp"
#include "report_html.hpp"
#include "synthetic.hpp"

#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/calibration.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/support/file.hpp"
#include "anec/support/reasons.hpp"

#include <benchmark/benchmark.h>

using namespace anec;
using namespace anec::compiler;
using namespace anec::bench;

namespace {

void BM_ReportHtml(benchmark::State &state) {
  static const Calibration cal = Calibration::load(kTables / "calibration" / "fitted.toml");
  static const ReasonCatalog reasons = ReasonCatalog::load(kTables / "schema" / "reasons.toml");
  Graph g = chain(size_t(state.range(0)));
  std::vector<const hal::Target *> targets{&h13()};
  std::vector<CheckResult> checks{check(g, catalog(), h13())};
  std::vector<Estimate> estimates{estimate(g, catalog(), h13(), cal)};
  std::vector<Placement> placements{place(g, catalog(), h13(), checks[0], estimate(g, catalog(), h13()))};
  size_t bytes = 0;
  for (auto _ : state) {
    std::string page = tools::report_html({g, "synthetic", targets, checks, estimates, placements, reasons});
    bytes += page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
  state.SetBytesProcessed(int64_t(bytes));
}
BENCHMARK(BM_ReportHtml)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_DescHtml(benchmark::State &state) {
  std::vector<uint8_t> file =
      read_file(std::filesystem::path(ANEC_BENCH_SHARED_DIR) / "testdata/external/tinygrad/gemm.hwx");
  desc::Databases databases(
      kTables, [](uint32_t subtype) { return hal::generation_of_subtype(kTables / "targets", subtype); });
  desc::DescProgram p = desc::read_program(databases, file, -1, desc::RawChain::Tree, [](auto &) {});
  auto print = [&](Printer &printer) { desc::print(printer, p); };
  size_t bytes = 0;
  for (auto _ : state) { // the dump printed and drawn together, as the tool does
    std::string page;
    {
      TextOut out(page);
      tools::desc_html(print, p.bytes, "gemm.hwx", out);
    }
    bytes += page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.SetBytesProcessed(int64_t(bytes));
}
BENCHMARK(BM_DescHtml)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
