// File input and output for tools pointed at files from anywhere.
//
// Inputs are regular files only (or "-" for standard input): a FIFO, a device, a socket or a
// directory is refused before anything is read, and the size is checked before the bytes are.
// Large inputs are mapped, so a parser that rejects a file after its magic touches one page.
//
// Outputs never replace what is not a regular file: a regular file (or a new one) is written
// through a temporary file and renamed over, keeping an existing file's mode and honouring the
// umask for a new one; a FIFO or a character device (/dev/null, /dev/stdout) is streamed to;
// anything else is refused. Symbolic links are followed to the file they name. Temporaries of
// runs that were killed are removed by the next write into the same directory.
#pragma once
#include "anec/support/sha256.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace anec {

// The bytes of one input file, mapped read-only when they come from a regular file.
// ANEC-IO-001 when it cannot be opened or read, ANEC-IO-002 when it is larger than max_bytes,
// ANEC-IO-004 when it is not a regular file.
class InputFile {
public:
  static InputFile open(const std::filesystem::path &path, uint64_t max_bytes);
  InputFile(InputFile &&other) noexcept;
  InputFile &operator=(InputFile &&other) noexcept;
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  ~InputFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  std::string_view text() const { return {reinterpret_cast<const char *>(data_), size_}; }

private:
  InputFile() = default;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  void *map_ = nullptr;        // the mapping, when the file was mapped
  std::vector<uint8_t> owned_; // the bytes, when they were read (standard input)
};

// Reads a whole input file into memory (same checks and codes as InputFile::open).
std::vector<uint8_t> read_file(const std::filesystem::path &path, uint64_t max_bytes = 1ull << 30);
std::string read_text_file(const std::filesystem::path &path, uint64_t max_bytes = 64ull << 20);

// Writes one output file as described above. ANEC-IO-003 when it cannot be written, ANEC-IO-006
// when the path names something that is neither a regular file, a FIFO nor a character device.
void write_output(const std::filesystem::path &path, std::span<const uint8_t> bytes);
void write_output(const std::filesystem::path &path, std::string_view text);

// Writes a set of files (name, content) as one directory: they are written into a fresh
// directory beside `dir`, which is then swapped in as a whole, so a reader sees the old set or
// the new one, never a mix. An existing `dir` may hold only files with the extensions of the set
// (an earlier set: what it holds beyond the new one is dropped); ANEC-IO-006 otherwise, naming the
// first other entry.
void write_output_set(const std::filesystem::path &dir,
                      const std::vector<std::pair<std::string, std::string>> &files);

// Flushes standard output; ANEC-IO-005 when anything written to it was lost (a full disk, a
// closed descriptor).
void flush_stdout();

// Lower-case hex of the bytes, two digits each.
std::string hex_bytes(std::span<const uint8_t> bytes);
// The bytes of pairs of hex digits (either case), or nullopt for an odd length or a non-hex character.
std::optional<std::vector<uint8_t>> bytes_from_hex(std::string_view digits);

} // namespace anec
