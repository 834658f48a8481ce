// CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, initial and final value 0xFFFFFFFF), the
// checksum of the host-to-firmware command envelope. Adapter over zlib, the only place that
// includes it.
#pragma once
#include <cstdint>
#include <span>

namespace anec {

uint32_t crc32(std::span<const uint8_t> bytes);

} // namespace anec
