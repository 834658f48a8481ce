// File input and atomic output.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <span>
#include <string>
#include <vector>

namespace anec {

// Reads a whole file; ANEC-IO-001 when it cannot be opened or read, ANEC-IO-002 when it is
// larger than max_bytes.
std::vector<uint8_t> read_file(const std::filesystem::path &path, uint64_t max_bytes = 1ull << 30);
std::string read_text_file(const std::filesystem::path &path, uint64_t max_bytes = 64ull << 20);

// Writes through a temporary file in the same directory and renames it over the target, so an
// interrupted run never leaves a truncated file. ANEC-IO-003 on failure.
void write_file_atomic(const std::filesystem::path &path, std::span<const uint8_t> bytes);
void write_file_atomic(const std::filesystem::path &path, std::string_view text);

// Lower-case hex of the bytes, two digits each.
std::string hex_bytes(std::span<const uint8_t> bytes);
// The bytes of pairs of hex digits (either case), or nullopt for an odd length or a non-hex character.
std::optional<std::vector<uint8_t>> bytes_from_hex(std::string_view digits);
std::string sha256_hex(std::span<const uint8_t> bytes);

} // namespace anec
