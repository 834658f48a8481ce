// Explicit little-endian loads from and stores into byte buffers (never pointer casts into file
// bytes). The caller bounds-checks `off`.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>

namespace anec {

inline uint64_t load_le(std::span<const uint8_t> b, uint64_t off, uint32_t width) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < width; ++i) v |= uint64_t(b[off + i]) << (8 * i);
  return v;
}
inline uint16_t le16(std::span<const uint8_t> b, uint64_t off) { return uint16_t(load_le(b, off, 2)); }
// One 4-byte load where the host is little-endian (decoders read every word through this).
inline uint32_t le32(std::span<const uint8_t> b, uint64_t off) {
  if constexpr (std::endian::native != std::endian::little)
    return uint32_t(load_le(b, off, 4));
  uint32_t v;
  std::memcpy(&v, b.data() + off, 4);
  return v;
}
inline uint64_t le64(std::span<const uint8_t> b, uint64_t off) { return load_le(b, off, 8); }

// v rounded up to a multiple of a (a > 0).
inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

inline void store_le(std::span<uint8_t> b, uint64_t off, uint64_t v, uint32_t width) {
  for (uint32_t i = 0; i < width; ++i) b[off + i] = uint8_t(v >> (8 * i));
}

} // namespace anec
