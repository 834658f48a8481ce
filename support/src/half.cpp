#include "anec/support/half.hpp"

#include <bit>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace anec {

uint16_t to_half(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  uint32_t sign = (x >> 16) & 0x8000, mantissa = x & 0x7fffff;
  int exponent = int((x >> 23) & 0xff);
  if (exponent == 0xff) // infinity, or a NaN kept quiet with its top payload bits
    return uint16_t(sign | 0x7c00 | (mantissa ? 0x200 | (mantissa >> 13) : 0));
  int e = exponent - 127 + 15;
  if (e >= 0x1f)
    return uint16_t(sign | 0x7c00);
  // The bits below the half's last mantissa bit decide the rounding: to nearest, ties to even. A
  // carry out of the mantissa moves to the next exponent, or to infinity past the largest half.
  auto round = [](uint32_t kept, uint32_t dropped, uint32_t halfway) {
    return kept + (dropped > halfway || (dropped == halfway && (kept & 1)));
  };
  if (e <= 0) { // subnormal: the implicit bit joins the mantissa, shifted by the missing exponent
    if (e < -10)
      return uint16_t(sign);
    uint32_t full = mantissa | 0x800000, shift = uint32_t(14 - e);
    return uint16_t(sign | round(full >> shift, full & ((1u << shift) - 1), 1u << (shift - 1)));
  }
  return uint16_t(sign | round((uint32_t(e) << 10) | (mantissa >> 13), mantissa & 0x1fff, 0x1000));
}

float from_half(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000) << 16, e = (half >> 10) & 0x1f, m = half & 0x3ff;
  uint32_t bits;
  if (e == 0x1f) {
    bits = sign | 0x7f800000 | (m << 13);
  } else if (e != 0) {
    bits = sign | ((e + 112) << 23) | (m << 13);
  } else if (m == 0) {
    bits = sign;
  } else { // subnormal: m x 2^-24, normalised
    uint32_t exponent = 113;
    while (!(m & 0x400)) {
      m <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((m & 0x3ff) << 13);
  }
  return std::bit_cast<float>(bits);
}

namespace {
#if defined(__x86_64__)
// F16C and the AVX state the operating system saves (CPUID leaf 1 and XCR0).
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX) || !(c & bit_F16C))
    return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 6) == 6; // the XMM and YMM state
}

__attribute__((target("avx,f16c"))) void round_with_f16c(float *values, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m128i halves = _mm256_cvtps_ph(_mm256_loadu_ps(values + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(values + i, _mm256_cvtph_ps(halves));
  }
  for (; i < count; ++i)
    values[i] = round_to_half(values[i]);
}
#endif
} // namespace

void round_to_half(std::span<float> values) {
#if defined(__x86_64__)
  static const bool f16c = has_f16c();
  if (f16c)
    return round_with_f16c(values.data(), values.size());
#endif
  for (float &x : values)
    x = round_to_half(x);
}

} // namespace anec
