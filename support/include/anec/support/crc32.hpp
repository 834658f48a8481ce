// CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, initial and final value 0xFFFFFFFF), the
// checksum of the host-to-firmware command envelope. Our own slice-by-8, with a PCLMULQDQ folding path
// on x86-64 CPUs that have it; zlib's crc32_z stays as the reference the tests and benchmarks compare
// against (crc32.cpp is the only place that includes zlib).
#pragma once
#include <cstdint>
#include <span>

namespace anec {

// The CRC of `bytes`; `crc` is the CRC of the bytes before them (0 for none), so crc32(b, crc32(a)) is
// the CRC of a followed by b, as with zlib's crc32(crc, buf, len).
uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc = 0);

// The same value computed by zlib's crc32_z: the oracle of the tests and the reference of the benchmarks.
uint32_t crc32_zlib(std::span<const uint8_t> bytes, uint32_t crc = 0);

// The table path alone (what crc32 runs below 64 bytes or without PCLMULQDQ), so that the tests check it
// at every length on any CPU.
uint32_t crc32_tables(std::span<const uint8_t> bytes, uint32_t crc = 0);

} // namespace anec
