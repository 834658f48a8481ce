#include "anec/support/crc32.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>

namespace anec {

uint32_t crc32(std::span<const uint8_t> bytes) {
  uLong c = ::crc32(0L, Z_NULL, 0);
  while (!bytes.empty()) { // zlib takes at most UINT_MAX bytes a call
    size_t n = std::min<size_t>(bytes.size(), UINT_MAX);
    c = ::crc32(c, bytes.data(), uInt(n));
    bytes = bytes.subspan(n);
  }
  return uint32_t(c);
}

} // namespace anec
