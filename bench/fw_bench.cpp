// Validation throughput of host-to-firmware commands: the described test commands, encoded, then
// validated in a loop (commands per second and bytes per second).
#include "anec/firmware/wire.hpp"
#include "anec/support/crc32.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"

#include <benchmark/benchmark.h>

using namespace anec;

namespace {
const fw::CommandTable &table() {
  static const fw::CommandTable t = fw::CommandTable::load(std::filesystem::path(ANEC_BENCH_TABLES_DIR) / "schema" / "firmware" / "commands.toml");
  return t;
}
std::vector<std::vector<uint8_t>> messages() {
  std::vector<std::vector<uint8_t>> out;
  for (auto &e : std::filesystem::directory_iterator(ANEC_BENCH_COMMANDS_DIR))
    if (e.path().extension() == ".toml") out.push_back(fw::encode(fw::command_from_doc(toml::parse_file(e.path()), table(), e.path().string()), table()));
  return out;
}
} // namespace

static void BM_ValidateCommand(benchmark::State &state) {
  static const auto ms = messages();
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const auto &m = ms[i++ % ms.size()];
    benchmark::DoNotOptimize(fw::validate(m, table()).violations.size());
    bytes += m.size();
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
  state.SetBytesProcessed(int64_t(bytes));
}
BENCHMARK(BM_ValidateCommand);

// The reference in the same run: zlib's CRC-32 alone over the same messages (the validator's checksum
// check is one such pass; the rest is the validator's own work).
static void BM_Crc32SameBytes(benchmark::State &state) {
  static const auto ms = messages();
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const auto &m = ms[i++ % ms.size()];
    benchmark::DoNotOptimize(anec::crc32(m));
    bytes += m.size();
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
  state.SetBytesProcessed(int64_t(bytes));
}
BENCHMARK(BM_Crc32SameBytes);

// `anec-fw validate --stream` without the file: N described commands back to back, then zlib's
// CRC-32 over the same capture as the reference.
std::vector<uint8_t> capture(size_t n) {
  static const auto ms = messages();
  std::vector<uint8_t> out;
  for (size_t i = 0; i < n; ++i)
    out.insert(out.end(), ms[i % ms.size()].begin(), ms[i % ms.size()].end());
  return out;
}
static void BM_ValidateStream(benchmark::State &state) {
  const std::vector<uint8_t> c = capture(size_t(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(fw::validate_stream(c, table()).accepted);
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
  state.SetBytesProcessed(int64_t(state.iterations() * c.size()));
}
BENCHMARK(BM_ValidateStream)->Arg(1 << 16)->Unit(benchmark::kMillisecond);
static void BM_Crc32Stream(benchmark::State &state) {
  const std::vector<uint8_t> c = capture(size_t(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(anec::crc32(c));
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
  state.SetBytesProcessed(int64_t(state.iterations() * c.size()));
}
BENCHMARK(BM_Crc32Stream)->Arg(1 << 16)->Unit(benchmark::kMillisecond);

static void BM_EncodeCommand(benchmark::State &state) {
  static const fw::Command c = fw::command_from_doc(toml::parse_file(std::filesystem::path(ANEC_BENCH_COMMANDS_DIR) / "procedure_call.toml"), table(), "pc");
  for (auto _ : state) benchmark::DoNotOptimize(fw::encode(c, table()).data());
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_EncodeCommand);

BENCHMARK_MAIN();
