// libFuzzer target: arbitrary bytes as an anec-graph JSON document, shaped and run by the host
// evaluator in fp32 and in fp16 (tensors capped small, so a run stays quick), then tuned when it is
// small. Errors are reason codes; an op the evaluator cannot compute is reported, never a crash.
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"
#include "anec/compiler/passes/tune.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/error.hpp"

using namespace anec;
using namespace anec::compiler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path tables = ANEC_FUZZ_TABLES_DIR;
  static const OpCatalog catalog = OpCatalog::load(tables / "schema" / "ops.toml");
  static const Numerics numerics = Numerics::load(tables / "schema" / "numerics.toml");
  static const std::vector<Rewrite> rewrites = load_rewrites(tables / "schema" / "rewrites.toml");
  static const hal::Schema schema = hal::Schema::load(tables / "schema" / "hal.toml");
  static const hal::Registry registry =
      hal::Registry::load(schema, hal::load_lineup(tables / "reference" / "lineup.toml"), tables / "targets");
  try {
    Graph g = read_graph_json(std::string(reinterpret_cast<const char *>(data), size), "fuzz.json");
    infer_shapes(g, catalog);
    mark_skippable(g, catalog);
    EvalOptions options;
    options.max_elements = 1 << 14;
    options.base = "/nonexistent"; // a constant's file is never read from the fuzzer's folder
    for (Precision p : {Precision::fp32, Precision::fp16}) {
      options.precision = p;
      evaluate(g, catalog, numerics, options);
    }
    if (g.ops.size() <= 8) {
      TuneOptions tune_options;
      tune_options.eval = options;
      tune(g, catalog, numerics, rewrites, {&registry.get("h13")}, nullptr, tune_options);
    }
  } catch (const Error &) {
  }
  return 0;
}
