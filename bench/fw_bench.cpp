// Validation throughput of host-to-firmware commands: the described test commands, encoded, then
// validated one at a time (validate: every check, named fields decoded) and as a capture of 1 M
// commands back to back (validate_stream: the compiled checks over the raw bytes), in commands and
// bytes per second, against zlib's CRC-32 over the same bytes.
#include "anec/firmware/wire.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/crc32.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <ctime>

using namespace anec;

namespace {
const fw::CommandTable &table() {
  static const fw::CommandTable t = fw::CommandTable::load(std::filesystem::path(ANEC_BENCH_TABLES_DIR) /
                                                           "schema" / "firmware" / "commands.toml");
  return t;
}
std::vector<std::vector<uint8_t>> messages() {
  std::vector<std::vector<uint8_t>> out;
  for (auto &e : std::filesystem::directory_iterator(ANEC_BENCH_COMMANDS_DIR))
    if (e.path().extension() == ".toml")
      out.push_back(
          fw::encode(fw::command_from_doc(toml::parse_file(e.path()), table(), e.path().string()), table()));
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

// The reference in the same run: anec::crc32 alone over the same messages (the validator's checksum
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

// `anec-fw validate --stream` without the file: N described commands back to back (mixed kinds),
// against zlib's CRC-32 over the same capture.
std::vector<uint8_t> capture(size_t n) {
  static const auto ms = messages();
  std::vector<uint8_t> out;
  for (size_t i = 0; i < n; ++i)
    out.insert(out.end(), ms[i % ms.size()].begin(), ms[i % ms.size()].end());
  return out;
}

// CPU seconds of this thread, the clock Google Benchmark's rates divide by.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// CPU seconds per zlib CRC-32 pass over `bytes`, the best of a few passes (zlib's, not anec::crc32:
// of_crc32 keeps one yardstick whatever our own CRC does).
double crc32_seconds(std::span<const uint8_t> bytes) {
  double best = 1e30;
  for (int pass = 0; pass < 5; ++pass) {
    double start = thread_cpu_seconds();
    benchmark::DoNotOptimize(anec::crc32_zlib(bytes));
    best = std::min(best, thread_cpu_seconds() - start);
  }
  return best;
}

constexpr int64_t kStreamCommands = 1 << 20;

// of_crc32: the validator's byte rate over zlib's CRC-32 rate on the same capture in this process
// (a rate counter of CRC seconds per pass: divided by the validator's seconds per pass).
static void BM_ValidateStream(benchmark::State &state) {
  const std::vector<uint8_t> c = capture(size_t(state.range(0)));
  double crc_seconds = crc32_seconds(c);
  for (auto _ : state)
    benchmark::DoNotOptimize(fw::validate_stream(c, table()).accepted);
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
  state.SetBytesProcessed(int64_t(state.iterations() * c.size()));
  state.counters["of_crc32"] =
      benchmark::Counter(crc_seconds * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ValidateStream)->Arg(kStreamCommands)->Unit(benchmark::kMillisecond);

// One CRC-32 over the whole capture: anec::crc32 (BM_Crc32Stream/anec), zlib's (/zlib), our
// slice-by-8 without the PCLMULQDQ path (/tables).
static void BM_Crc32Stream(benchmark::State &state, uint32_t (*crc)(std::span<const uint8_t>, uint32_t)) {
  const std::vector<uint8_t> c = capture(size_t(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(crc(c, 0));
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
  state.SetBytesProcessed(int64_t(state.iterations() * c.size()));
}
BENCHMARK_CAPTURE(BM_Crc32Stream, anec, anec::crc32)->Arg(kStreamCommands)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Crc32Stream, zlib, anec::crc32_zlib)
    ->Arg(kStreamCommands)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Crc32Stream, tables, anec::crc32_tables)
    ->Arg(kStreamCommands)
    ->Unit(benchmark::kMillisecond);

// The checksum check alone: a CRC-32 once per message of the same capture, over the bytes each
// envelope's checksum covers (header, body, magic; framed before timing). The validator makes these
// calls too, so its of_crc32 stays below this one's. anec::crc32 (BM_Crc32PerMessage/anec) against
// zlib's (/zlib, the ~70-byte calls the validator made before it had its own CRC) and our slice-by-8
// alone (/tables).
std::vector<std::span<const uint8_t>> checksummed(std::span<const uint8_t> capture) {
  const layout::Field &size = fw::command_header_layout().at("size");
  const uint64_t before_sum = fw::kHeaderBytes + fw::envelope_layout().at("checksum").offset;
  std::vector<std::span<const uint8_t>> out;
  for (uint64_t at = 0; at < capture.size();) {
    uint64_t body = load_le(capture, at + size.offset, size.width);
    out.push_back(capture.subspan(at, before_sum + body));
    at += align_up(fw::kHeaderBytes + body + fw::envelope_layout().bytes, fw::kGranule);
  }
  return out;
}
static void BM_Crc32PerMessage(benchmark::State &state, uint32_t (*crc)(std::span<const uint8_t>, uint32_t)) {
  const std::vector<uint8_t> c = capture(size_t(state.range(0)));
  const auto spans = checksummed(c);
  double crc_seconds = crc32_seconds(c);
  for (auto _ : state) {
    uint32_t sum = 0;
    for (std::span<const uint8_t> m : spans)
      sum ^= crc(m, 0);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
  state.SetBytesProcessed(int64_t(state.iterations() * c.size()));
  state.counters["of_crc32"] =
      benchmark::Counter(crc_seconds * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_Crc32PerMessage, anec, anec::crc32)->Arg(kStreamCommands)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Crc32PerMessage, zlib, anec::crc32_zlib)
    ->Arg(kStreamCommands)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Crc32PerMessage, tables, anec::crc32_tables)
    ->Arg(kStreamCommands)
    ->Unit(benchmark::kMillisecond);

static void BM_EncodeCommand(benchmark::State &state) {
  static const fw::Command c = fw::command_from_doc(
      toml::parse_file(std::filesystem::path(ANEC_BENCH_COMMANDS_DIR) / "procedure_call.toml"), table(),
      "pc");
  for (auto _ : state)
    benchmark::DoNotOptimize(fw::encode(c, table()).data());
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_EncodeCommand);

BENCHMARK_MAIN();
