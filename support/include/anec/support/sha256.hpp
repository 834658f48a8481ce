// SHA-256 (FIPS 180-4), fed in pieces so that a large input is hashed where it lies.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace anec {

class Sha256 {
public:
  void update(std::span<const uint8_t> bytes);
  // The digest as 64 lower-case hex digits; the object is spent afterwards.
  std::string hex_digest();

private:
  void block(const uint8_t *p);
  std::array<uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<uint8_t, 64> pending_{};
  size_t pending_bytes_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::span<const uint8_t> bytes);

} // namespace anec
