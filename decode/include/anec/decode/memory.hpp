// The small memory-reader interface decoders read through, so the same code runs on a file's
// mapped image, an emulator's memory after a run, or a plain buffer.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace anec::decode {

class MemoryReader {
public:
  virtual ~MemoryReader() = default;
  // False when any byte of [addr, addr + out.size()) is not mapped.
  virtual bool read(uint64_t addr, std::span<uint8_t> out) const = 0;

  std::optional<uint64_t> read_u64(uint64_t addr) const;
  // A NUL-terminated string of at most max_len characters; nullopt when unmapped or unterminated.
  std::optional<std::string> read_cstring(uint64_t addr, size_t max_len = 256) const;
};

} // namespace anec::decode
