// CRC-32/ISO-HDLC two ways: slice-by-8 (Kounavis and Berry, "A Systematic Approach to Building High
// Performance Software-based CRC Generators", 2005) with tables built at compile time, and, for
// buffers of 64 bytes and more on x86-64 CPUs with PCLMULQDQ, carry-less folding (Gopal et al., Intel,
// "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction", 2009) whose last
// 16-byte remainder goes through the tables. Both are checked against zlib's crc32_z in
// tests/support/crc32_test.cpp.
#include "anec/support/crc32.hpp"

#include <zlib.h>

#include <array>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ANEC_CRC32_PCLMUL 1
#endif

namespace anec {

namespace {
constexpr uint32_t kReflected = 0xEDB88320; // x^32 + x^26 + ... + 1, bit-reversed, x^32 implied

// kTables[0][b] is the CRC register after shifting byte b through it; kTables[k][b] the same byte
// followed by k zero bytes, so eight bytes are folded with eight independent lookups.
constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t r = b;
    for (int bit = 0; bit < 8; ++bit)
      r = (r >> 1) ^ (r & 1 ? kReflected : 0);
    t[0][b] = r;
  }
  for (size_t k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b)
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  return t;
}
constexpr auto kTables = make_tables();

uint32_t load32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// The raw register (no initial or final inversion) after `bytes`.
uint32_t slice8(uint32_t r, std::span<const uint8_t> bytes) {
  const uint8_t *p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t lo = load32(p) ^ r, hi = load32(p + 4);
    r = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
        kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
  }
  for (; n > 0; ++p, --n)
    r = (r >> 8) ^ kTables[0][(r ^ *p) & 0xff];
  return r;
}

#ifdef ANEC_CRC32_PCLMUL
// x^n mod P, unreflected (bit i is the coefficient of x^i).
constexpr uint32_t x_pow_mod(unsigned n) {
  uint64_t r = 1;
  for (unsigned i = 0; i < n; ++i) {
    r <<= 1;
    if (r >> 32)
      r ^= 0x104C11DB7;
  }
  return uint32_t(r);
}
constexpr uint32_t reflect32(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i)
    r |= ((v >> i) & 1) << (31 - i);
  return r;
}
// The multiplier that moves a 64-bit half `bits` bits forward. A 16-byte lane loaded little-endian
// holds stream bit i at x^(127-i); carry-less multiplying its half H (bit i at x^(63-i)) by this
// constant (bit j at x^(32-j)) gives bit m at x^(95-m): read as a lane, H * x^32 * x^(bits-32) = H * x^bits.
constexpr uint64_t shift_by(unsigned bits) {
  return uint64_t(reflect32(x_pow_mod(bits - 32))) << 1;
}
// Folding a lane forward by D bits: its first half (the lane's low quadword) moves D + 64 bits, its
// second half D bits.
struct Fold {
  uint64_t first, second;
};
constexpr Fold kBy512{shift_by(512 + 64), shift_by(512)}, kBy128{shift_by(128 + 64), shift_by(128)};

[[gnu::target("pclmul")]] inline __m128i fold(__m128i lane, __m128i next, __m128i k) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), _mm_clmulepi64_si128(lane, k, 0x11)), next);
}

// The raw register after `bytes` (at least 64): the register is folded into the first four bytes,
// four lanes fold 64 bytes per step, then one lane 16 bytes per step; the lane left over is congruent
// to everything before it, so its 16 bytes and the tail go through the tables from a zero register.
[[gnu::target("pclmul")]] uint32_t folded(uint32_t r, std::span<const uint8_t> bytes) {
  const uint8_t *p = bytes.data();
  size_t n = bytes.size();
  auto load = [&](size_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + at)); };
  __m128i a = _mm_xor_si128(load(0), _mm_cvtsi32_si128(int(r))), b = load(16), c = load(32), d = load(48);
  p += 64;
  n -= 64;
  const __m128i by512 = _mm_set_epi64x(int64_t(kBy512.second), int64_t(kBy512.first));
  for (; n >= 64; p += 64, n -= 64) {
    a = fold(a, load(0), by512);
    b = fold(b, load(16), by512);
    c = fold(c, load(32), by512);
    d = fold(d, load(48), by512);
  }
  const __m128i by128 = _mm_set_epi64x(int64_t(kBy128.second), int64_t(kBy128.first));
  a = fold(fold(fold(a, b, by128), c, by128), d, by128);
  for (; n >= 16; p += 16, n -= 16)
    a = fold(a, load(0), by128);
  alignas(16) uint8_t rest[16];
  _mm_store_si128(reinterpret_cast<__m128i *>(rest), a);
  return slice8(slice8(0, rest), {p, n});
}

bool has_pclmul() {
  static const bool has = __builtin_cpu_supports("pclmul");
  return has;
}
#endif

} // namespace

uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc) {
#ifdef ANEC_CRC32_PCLMUL
  if (bytes.size() >= 64 && has_pclmul())
    return ~folded(~crc, bytes);
#endif
  return ~slice8(~crc, bytes);
}

uint32_t crc32_tables(std::span<const uint8_t> bytes, uint32_t crc) {
  return ~slice8(~crc, bytes);
}

uint32_t crc32_zlib(std::span<const uint8_t> bytes, uint32_t crc) {
  if (bytes.empty()) // zlib answers 0 for a null buffer, which an empty span may hold
    return crc;
  return uint32_t(::crc32_z(crc, bytes.data(), bytes.size()));
}

} // namespace anec
