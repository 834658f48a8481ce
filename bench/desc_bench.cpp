// Decode throughput of raw task-descriptor chains: a synthetic chain of N copies of a real H13
// descriptor (eiln relu6), EON on the last.
#include "anec/descriptors/td.hpp"
#include "anec/support/file.hpp"

#include <benchmark/benchmark.h>

#include <cstring>

using namespace anec;

namespace {
// N copies of the real descriptor, 0x300 apart, EON only on the last.
std::vector<uint8_t> chain_of(size_t n) {
  static const auto one = read_file(std::filesystem::path(ANEC_BENCH_SHARED_DIR) / "testdata/external/eiln-ane/kernels/activation/relu6.bin");
  std::vector<uint8_t> chain(n * 0x300 + 0x80, 0);
  for (size_t i = 0; i < n; ++i) {
    std::copy(one.begin(), one.begin() + 0x274, chain.begin() + long(i * 0x300));
    if (i + 1 < n)
      chain[i * 0x300 + 3] &= ~0x02;
  }
  return chain;
}
} // namespace

static void BM_DecodeRawChain(benchmark::State &state) {
  static const desc::TdSchema schema =
      desc::TdSchema::load(std::filesystem::path(ANEC_BENCH_TABLES_DIR) / "schema" / "td" / "gen7.toml");
  const size_t n = size_t(state.range(0));
  std::vector<uint8_t> chain = chain_of(n);
  for (auto _ : state) {
    auto c = desc::decode_raw_chain(chain, schema);
    benchmark::DoNotOptimize(c.tds.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations() * chain.size()));
  state.SetItemsProcessed(int64_t(state.iterations() * n)); // descriptors
}
BENCHMARK(BM_DecodeRawChain)->Arg(1)->Arg(64)->Arg(4096)->Unit(benchmark::kMicrosecond);

// The reference in the same run: one pass summing the chain's 32-bit words (what any decoder must
// at least read).
static void BM_WordSumRawChain(benchmark::State &state) {
  std::vector<uint8_t> chain = chain_of(size_t(state.range(0)));
  for (auto _ : state) {
    uint32_t sum = 0;
    for (size_t i = 0; i + 4 <= chain.size(); i += 4) {
      uint32_t w;
      std::memcpy(&w, chain.data() + i, 4);
      sum += w;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(int64_t(state.iterations() * chain.size()));
  state.SetItemsProcessed(int64_t(state.iterations() * state.range(0)));
}
BENCHMARK(BM_WordSumRawChain)->Arg(1)->Arg(64)->Arg(4096)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
