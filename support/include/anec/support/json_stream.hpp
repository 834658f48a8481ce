// A large JSON document read a piece at a time: the array under one top-level key is handed out
// element by element, and the rest of the document is kept as text with that array emptied. It
// holds a read buffer and where each element ends (8 bytes an element), not the document, so a
// model graph of millions of operations is read in a few bytes an operation. The first pass over a
// file of 8 MiB or more runs on two threads, a half each.
//
// It only splits the text (strings, escapes, nesting); each piece is parsed by the caller, which
// also reports any malformed piece. A document it cannot split this way (no such key, the key given
// twice, a value that is not an array, unbalanced nesting) opens as nullopt: the caller reads it
// whole instead, so every error is reported as the whole-document reader reports it.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace anec::json {

class ArrayStream {
public:
  // ANEC-IO-001 when the file cannot be opened or read; nullopt as above.
  static std::optional<ArrayStream> open(const std::filesystem::path &path, std::string_view key);

  // The document with the streamed array emptied ("key": []).
  const std::string &rest() const { return rest_; }
  // How many elements the array holds (its top-level commas, plus one), to size what they fill.
  size_t elements() const { return ends_.size(); }
  // The next element's text (valid until the next call), or nullopt after the last one.
  std::optional<std::string_view> next();

private:
  struct Closer {
    void operator()(std::FILE *f) const { std::fclose(f); }
  };
  std::string_view bytes(uint64_t from, uint64_t to); // of the file, through the chunk read last

  std::unique_ptr<std::FILE, Closer> file_;
  std::string path_, rest_, chunk_;
  // Where each element ends: the offsets of the array's own commas, which the first pass found,
  // then of its ']' (8 bytes an element, so that no element is searched for twice).
  std::vector<uint64_t> ends_;
  size_t next_ = 0;           // the element next() gives
  uint64_t next_offset_ = 0;  // where it starts
  uint64_t chunk_offset_ = 0; // where chunk_ starts in the file
};

} // namespace anec::json
