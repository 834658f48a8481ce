#include "anec/decode/memory.hpp"

#include "anec/support/bytes.hpp"

#include <array>

namespace anec::decode {

std::optional<uint64_t> MemoryReader::read_u64(uint64_t addr) const {
  std::array<uint8_t, 8> b;
  if (!read(addr, b)) return std::nullopt;
  return le64(b, 0);
}

std::optional<std::string> MemoryReader::read_cstring(uint64_t addr, size_t max_len) const {
  std::string s;
  for (size_t i = 0; i <= max_len; ++i) {
    uint8_t c;
    if (!read(addr + i, {&c, 1})) return std::nullopt;
    if (c == 0) return s;
    s += char(c);
  }
  return std::nullopt;
}

} // namespace anec::decode
