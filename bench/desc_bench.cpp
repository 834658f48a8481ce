// Decode throughput of raw task-descriptor chains: a synthetic chain of N copies of a real H13
// descriptor (eiln relu6), TIDs counting up, each NextPointer on the next, EON on the last (a chain
// without findings). The reference is a word sum over the same bytes, measured in the same run.
#include "anec/descriptors/audit.hpp"
#include "anec/descriptors/flat.hpp"
#include "anec/descriptors/td.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/file.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <map>

using namespace anec;

namespace {
constexpr size_t kStride = 0x300, kDescriptorBytes = 0x274;

// N copies of the real descriptor, kStride apart.
std::vector<uint8_t> chain_of(size_t n) {
  static const auto one = read_file(std::filesystem::path(ANEC_BENCH_SHARED_DIR) /
                                    "testdata/external/eiln-ane/kernels/activation/relu6.bin");
  std::vector<uint8_t> chain(n * kStride + 0x80, 0);
  for (size_t i = 0; i < n; ++i) {
    std::copy(one.begin(), one.begin() + kDescriptorBytes, chain.begin() + long(i * kStride));
    uint32_t first = le32(chain, i * kStride) & ~0xffffu; // header word 0: TID in bits 15:0, EON bit 25
    store_le(chain, i * kStride, (first | uint32_t(i & 0xffff)) & ~(i + 1 < n ? 1u << 25 : 0u), 4);
    store_le(chain, i * kStride + 0x1c, i + 1 < n ? (i + 1) * kStride : 0, 4); // NextPointer
  }
  return chain;
}

const desc::TdSchema &gen7() {
  static const desc::TdSchema schema =
      desc::TdSchema::load(std::filesystem::path(ANEC_BENCH_TABLES_DIR) / "schema" / "td" / "gen7.toml");
  return schema;
}

uint32_t word_sum(const std::vector<uint8_t> &chain) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 4 <= chain.size(); i += 4) {
    uint32_t w;
    std::memcpy(&w, chain.data() + i, 4);
    sum += w;
  }
  return sum;
}

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// The word sum's rate (bytes per CPU second) over the chain of n descriptors, measured once per n
// in this process for at least 0.2 s: the yardstick of the "of_word_sum" counters.
double word_sum_rate(size_t n) {
  static std::map<size_t, double> rates;
  if (auto it = rates.find(n); it != rates.end())
    return it->second;
  std::vector<uint8_t> chain = chain_of(n);
  const size_t batch = std::max<size_t>(1, (64u << 20) / chain.size()); // 64 MB between clock reads
  size_t rounds = 0;
  double start = cpu_seconds(), elapsed = 0;
  for (; elapsed < 0.2; elapsed = cpu_seconds() - start)
    for (size_t k = 0; k < batch; ++k, ++rounds)
      benchmark::DoNotOptimize(word_sum(chain));
  return rates[n] = double(rounds * chain.size()) / elapsed;
}

// Runs `body` as the benchmark's loop and reports bytes per second and "of_word_sum": that rate
// over the word sum's on the same chain, both in CPU time.
template <typename Body> void measure(benchmark::State &state, size_t n, size_t bytes, Body &&body) {
  double rate = word_sum_rate(n), start = cpu_seconds();
  for (auto _ : state)
    body();
  double seconds = cpu_seconds() - start;
  state.SetBytesProcessed(int64_t(state.iterations() * bytes));
  state.SetItemsProcessed(int64_t(state.iterations() * n)); // descriptors
  state.counters["of_word_sum"] = double(state.iterations() * bytes) / seconds / rate;
}
} // namespace

// The tree model (Chain/Td/Stream/Word), built from the flat decode.
static void BM_DecodeRawChain(benchmark::State &state) {
  const size_t n = size_t(state.range(0));
  std::vector<uint8_t> chain = chain_of(n);
  measure(state, n, chain.size(), [&] {
    auto c = desc::decode_raw_chain(chain, gen7());
    benchmark::DoNotOptimize(c.tds.data());
  });
}
BENCHMARK(BM_DecodeRawChain)->Arg(1)->Arg(64)->Arg(4096)->Unit(benchmark::kMicrosecond);

// The flat decode: every word (its field values read from it on access), into buffers reused from
// call to call (one call before the loop grows them).
static void BM_FlatDecodeRawChain(benchmark::State &state) {
  const size_t n = size_t(state.range(0));
  std::vector<uint8_t> chain = chain_of(n);
  desc::FlatChain flat;
  desc::decode_flat(chain, gen7(), flat);
  measure(state, n, chain.size(), [&] {
    desc::decode_flat(chain, gen7(), flat);
    benchmark::DoNotOptimize(flat.words.data());
  });
}
BENCHMARK(BM_FlatDecodeRawChain)->Arg(1)->Arg(64)->Arg(4096)->Arg(65536)->Unit(benchmark::kMicrosecond);

// What `anec-desc audit` does with a raw chain once it is in memory: the flat decode of its
// structure and header words (FlatDetail::Headers), then the chain checks.
static void BM_AuditRawChain(benchmark::State &state) {
  const size_t n = size_t(state.range(0));
  std::vector<uint8_t> chain = chain_of(n);
  desc::FlatChain flat;
  measure(state, n, chain.size(), [&] {
    desc::decode_flat(chain, gen7(), flat, desc::FlatDetail::Headers);
    auto findings = desc::audit_chain(flat, gen7());
    benchmark::DoNotOptimize(findings.data());
  });
}
BENCHMARK(BM_AuditRawChain)->Arg(65536)->Unit(benchmark::kMicrosecond);

// The reference: one pass summing the chain's 32-bit words (what any decoder must at least read).
static void BM_WordSumRawChain(benchmark::State &state) {
  std::vector<uint8_t> chain = chain_of(size_t(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(word_sum(chain));
  state.SetBytesProcessed(int64_t(state.iterations() * chain.size()));
  state.SetItemsProcessed(int64_t(state.iterations() * state.range(0)));
}
BENCHMARK(BM_WordSumRawChain)->Arg(1)->Arg(64)->Arg(4096)->Arg(65536)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
