// Throughput of the HAL codec and the target-definition I/O over all 28 generated tables.
#include "anec/hal/codec.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/hal/target_io.hpp"
#include "anec/support/compiled_doc.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"

#include <benchmark/benchmark.h>

using namespace anec;
using namespace anec::hal;

namespace {
struct Data {
  std::filesystem::path root = ANEC_BENCH_TABLES_DIR;
  Schema schema = Schema::load(root / "schema" / "hal.toml");
  Lineup lineup = load_lineup(root / "reference" / "lineup.toml");
  Registry registry = Registry::load(schema, lineup, root / "targets");
  std::vector<Bytes> blobs;
  std::vector<std::string> texts;
  Data() {
    for (auto &t : registry.targets()) {
      blobs.push_back(encode(schema, t));
      texts.push_back(to_toml(schema, t));
    }
  }
};
const Data &data() {
  static const Data d;
  return d;
}
const Provenance kProv{"bench", Confidence::Decoded};
} // namespace

// One iteration decodes and re-encodes all 28 blobs.
static void BM_DecodeEncodeAll28(benchmark::State &state) {
  const Data &d = data();
  for (auto _ : state) {
    for (size_t i = 0; i < d.blobs.size(); ++i) {
      const Target &donor = d.registry.targets()[i];
      Target t = decode(d.schema, d.blobs[i], donor.name, &donor, kProv);
      Bytes b = encode(d.schema, t);
      benchmark::DoNotOptimize(b.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * int64_t(d.blobs.size()));
  state.SetBytesProcessed(state.iterations() * int64_t(d.blobs.size() * d.schema.blob_size()));
}
BENCHMARK(BM_DecodeEncodeAll28);

static void BM_DecodeOnly(benchmark::State &state) {
  const Data &d = data();
  const Target &donor = d.registry.get("h13");
  for (auto _ : state) benchmark::DoNotOptimize(decode(d.schema, d.blobs[4], "h13", &donor, kProv));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeOnly);

static void BM_EncodeOnly(benchmark::State &state) {
  const Data &d = data();
  const Target &t = d.registry.get("h13");
  for (auto _ : state) benchmark::DoNotOptimize(encode(d.schema, t));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeOnly);

// Strict TOML read and deterministic write of all 28 target definitions.
static void BM_TomlReadWriteAll28(benchmark::State &state) {
  const Data &d = data();
  for (auto _ : state) {
    for (auto &text : d.texts) {
      Target t = from_doc(d.schema, toml::parse(text, "bench"), "bench");
      benchmark::DoNotOptimize(to_toml(d.schema, t));
    }
  }
  state.SetItemsProcessed(state.iterations() * int64_t(d.texts.size()));
}
BENCHMARK(BM_TomlReadWriteAll28);

// The whole `generate` pipeline in memory: reference files -> targets -> blobs -> TOML.
static void BM_GenerateAll28(benchmark::State &state) {
  const Data &d = data();
  for (auto _ : state) {
    auto ref = load_reference(d.schema, d.lineup, d.root / "reference");
    for (auto &r : ref)
      benchmark::DoNotOptimize(to_toml(d.schema, decode(d.schema, encode(d.schema, r), r.name, &r, kProv)));
  }
  state.SetItemsProcessed(state.iterations() * 28);
}
BENCHMARK(BM_GenerateAll28);

#ifdef ANEC_BENCH_FIXTURE
#include "anec/hal/extract.hpp"
// Extraction of all 28 tables from the arm64 fixture: load, find, emulate 28 constructors, walk
// the maps. Arg 1 decodes the data-symbol variant instead (no emulation).
static void BM_ExtractAll28(benchmark::State &state) {
  const Data &d = data();
  std::string file =
      std::string(ANEC_BENCH_FIXTURE) + (state.range(0) ? "/libhal_data.dylib" : "/libhal_O2.dylib");
  uint64_t instructions = 0;
  for (auto _ : state) {
    auto bin = decode::Binary::load(file);
    auto tables = extract(d.schema, d.registry, bin, {});
    for (auto &t : tables) instructions += t.instructions;
    benchmark::DoNotOptimize(tables.data());
  }
  state.SetItemsProcessed(state.iterations() * 28);
  state.counters["emulated_insns_per_table"] = double(instructions) / double(state.iterations() * 28);
}
BENCHMARK(BM_ExtractAll28)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
#endif

// Reading a table: toml++ over the text and conversion to a Doc, against the compiled form of the
// same text (compiled_doc.hpp). Arg 0 is the largest table (the gen7 descriptor schema, 52 KB),
// 1 a target table.
static void BM_ReadTable(benchmark::State &state, bool compiled_form) {
  std::filesystem::path root = ANEC_BENCH_TABLES_DIR;
  std::string text =
      read_text_file(state.range(0) == 0 ? root / "schema/td/gen7.toml" : root / "targets/h13.toml");
  std::string bytes = compiled::encode(toml::parse(text, "table"), text);
  for (auto _ : state) {
    if (compiled_form)
      benchmark::DoNotOptimize(compiled::decode(bytes, text));
    else
      benchmark::DoNotOptimize(toml::parse(text, "table"));
  }
  state.SetBytesProcessed(state.iterations() * int64_t(text.size()));
}
BENCHMARK_CAPTURE(BM_ReadTable, toml, false)->Arg(0)->Arg(1);
BENCHMARK_CAPTURE(BM_ReadTable, compiled, true)->Arg(0)->Arg(1);

BENCHMARK_MAIN();
