// libFuzzer target: arbitrary bytes as an anec-graph JSON document, a network plist and an ONNX
// model, through shape inference, the checker, the cost model and the placement on one target. The
// bytes are also written to a file and summarized while it is read (summarize_model): any
// difference from the whole-graph path (another error, or another verdict, count or latency) aborts.
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/onnx.hpp"
#include "anec/compiler/frontends/plist.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/compiler/pipeline/summary.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/error.hpp"
#include "anec/support/json.hpp"
#include "anec/support/plist.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;

namespace {
bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

void stream_agrees_with_whole(std::string_view text, const OpCatalog &catalog, const hal::Target &t) {
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("anec-model-fuzz-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(text.data(), std::streamsize(text.size()));
  std::string whole_error, stream_error;
  ModelSummary whole, streamed;
  try {
    Graph g = load_model(file, catalog);
    whole = {check(g, catalog, {&t}, Detail::Summary),
             estimate(g, catalog, {&t}, nullptr, "", Detail::Summary)};
  } catch (const Error &e) {
    whole_error = e.what();
  }
  try {
    streamed = summarize_model(file, catalog, {}, {&t}, nullptr);
  } catch (const Error &e) {
    stream_error = e.what();
  }
  if (whole_error != stream_error)
    std::abort();
  if (!whole_error.empty())
    return;
  const CheckResult &cw = whole.checks[0], &cs = streamed.checks[0];
  const Estimate &ew = whole.estimates[0], &es = streamed.estimates[0];
  if (cw.verdict != cs.verdict || cw.counts != cs.counts || !same(ew.latency_us, es.latency_us) ||
      !same(ew.bytes, es.bytes) || ew.unknown != es.unknown || ew.unestimated != es.unestimated)
    std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path tables = ANEC_FUZZ_TABLES_DIR;
  static const hal::Schema schema = hal::Schema::load(tables / "schema" / "hal.toml");
  static const hal::Registry registry =
      hal::Registry::load(schema, hal::load_lineup(tables / "reference" / "lineup.toml"), tables / "targets");
  static const OpCatalog catalog = OpCatalog::load(tables / "schema" / "ops.toml");
  static const Calibration calibration = Calibration::load(tables / "calibration" / "fitted.toml");
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto run = [&](Graph g) {
    infer_shapes(g, catalog);
    const hal::Target &t = registry.get("h13");
    CheckResult r = check(g, catalog, t);
    place(g, catalog, t, r, estimate(g, catalog, t));
    estimate(g, catalog, t, calibration, "M1");
  };
  try {
    run(read_graph_json(std::string(text), "fuzz.json"));
  } catch (const Error &) {
  }
  stream_agrees_with_whole(text, catalog, registry.get("h13"));
  try {
    run(read_network_plist(plist::parse(text, "fuzz.plist"), "fuzz.plist", catalog));
  } catch (const Error &) {
  }
  try {
    Graph g = read_onnx(text, "fuzz.onnx", catalog);
    const hal::Target &t = registry.get("h13");
    CheckResult r = check(g, catalog, t);
    place(g, catalog, t, r, estimate(g, catalog, t));
    estimate(g, catalog, t, calibration);
  } catch (const Error &) {
  }
  return 0;
}
