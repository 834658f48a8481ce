// anec::crc32 (the dispatching entry: PCLMULQDQ folding from 64 bytes where the CPU has it) and
// anec::crc32_tables (slice-by-8 alone) against zlib's crc32_z: every length 0..4096 at every
// alignment 0..15, chained calls, a buffer of several MB, and the catalogue's check value.
#include "anec/support/crc32.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <vector>

using namespace anec;

namespace {
using Crc = uint32_t (*)(std::span<const uint8_t>, uint32_t);

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (uint8_t &b : out)
    b = uint8_t(rng());
  return out;
}

// Bytes at a 64-byte boundary of `v`, so offsets 0..15 from it are the alignments under test.
std::span<const uint8_t> aligned(const std::vector<uint8_t> &v) {
  size_t skip = (64 - reinterpret_cast<uintptr_t>(v.data()) % 64) % 64;
  return std::span<const uint8_t>(v).subspan(skip);
}

// Every length 0..4096 at every alignment 0..15; reports the first few disagreements only.
void every_length_and_alignment(Crc crc) {
  const auto v = random_bytes(4096 + 16 + 64, 1);
  const auto base = aligned(v);
  int wrong = 0;
  for (size_t align = 0; align < 16; ++align)
    for (size_t n = 0; n <= 4096; ++n) {
      auto s = base.subspan(align, n);
      uint32_t want = crc32_zlib(s);
      if (uint32_t got = crc(s, 0); got != want && ++wrong <= 5)
        ADD_FAILURE() << "length " << n << " alignment " << align << ": " << std::hex << got << ", zlib "
                      << want;
    }
  EXPECT_EQ(wrong, 0);
}

// crc(B, crc(A)) == crc(A + B) == zlib's, for every split of buffers on both sides of 64 bytes.
void chained(Crc crc) {
  int wrong = 0;
  for (size_t total : {0, 1, 63, 64, 65, 127, 200, 1031}) {
    const auto v = random_bytes(total, uint32_t(total) + 2);
    const std::span<const uint8_t> all(v);
    const uint32_t whole = crc32_zlib(all);
    EXPECT_EQ(crc(all, 0), whole) << total;
    for (size_t cut = 0; cut <= total; ++cut) {
      uint32_t got = crc(all.subspan(cut), crc(all.first(cut), 0));
      if (got != whole && ++wrong <= 5)
        ADD_FAILURE() << "total " << total << " cut at " << cut << ": " << std::hex << got << ", zlib "
                      << whole;
    }
  }
  EXPECT_EQ(wrong, 0);
}
} // namespace

TEST(Crc32, CheckValue) {
  // The CRC catalogue's check value of CRC-32/ISO-HDLC: the CRC of the ASCII digits 1..9.
  constexpr std::string_view digits = "123456789";
  std::span<const uint8_t> s(reinterpret_cast<const uint8_t *>(digits.data()), digits.size());
  EXPECT_EQ(crc32(s), 0xCBF43926u);
  EXPECT_EQ(crc32_tables(s), 0xCBF43926u);
  EXPECT_EQ(crc32_zlib(s), 0xCBF43926u);
  EXPECT_EQ(crc32({}), 0u);
  EXPECT_EQ(crc32({}, 0x12345678), 0x12345678u);
}

TEST(Crc32, EveryLengthAndAlignmentMatchesZlib) {
  every_length_and_alignment(crc32);
}
TEST(Crc32, TablesEveryLengthAndAlignmentMatchZlib) {
  every_length_and_alignment(crc32_tables);
}

TEST(Crc32, ChainedCallsMatchOneCall) {
  chained(crc32);
}
TEST(Crc32, TablesChainedCallsMatchOneCall) {
  chained(crc32_tables);
}

// Chained calls starting from zlib's value, and zlib continuing from ours: the two interoperate.
TEST(Crc32, ContinuesFromZlibAndBack) {
  const auto v = random_bytes(5000, 3);
  const std::span<const uint8_t> s(v);
  for (size_t cut : {0, 7, 64, 100, 4096}) {
    EXPECT_EQ(crc32(s.subspan(cut), crc32_zlib(s.first(cut))), crc32_zlib(s)) << cut;
    EXPECT_EQ(crc32_zlib(s.subspan(cut), crc32(s.first(cut))), crc32_zlib(s)) << cut;
  }
}

TEST(Crc32, LargeBufferMatchesZlib) {
  const auto v = random_bytes((8 << 20) + 13, 4); // 8 MiB and an odd tail
  const std::span<const uint8_t> s(v);
  const uint32_t want = crc32_zlib(s);
  EXPECT_EQ(crc32(s), want);
  EXPECT_EQ(crc32_tables(s), want);
  EXPECT_EQ(crc32(s.subspan(3)), crc32_zlib(s.subspan(3))); // misaligned start
  // In pieces of several sizes, each continuing the last.
  for (size_t piece : {size_t(64), size_t(1000), size_t(1) << 20}) {
    uint32_t c = 0;
    for (size_t at = 0; at < s.size(); at += piece)
      c = crc32(s.subspan(at, std::min(piece, s.size() - at)), c);
    EXPECT_EQ(c, want) << piece;
  }
}

// Buffers of all zeros and all ones, where a wrong register inversion or a lost lane shows.
TEST(Crc32, ConstantBuffersMatchZlib) {
  for (uint8_t fill : {uint8_t(0), uint8_t(0xff)})
    for (size_t n : {16, 64, 65, 128, 1024, 100000}) {
      std::vector<uint8_t> v(n, fill);
      EXPECT_EQ(crc32(v), crc32_zlib(v)) << int(fill) << " x " << n;
    }
}
