// A large JSON document read a piece at a time: the array under one top-level key is handed out
// element by element, and the rest of the document is kept as text with that array emptied. It
// holds a read buffer and the current element, not the document, so a model graph of millions of
// operations is read in memory that does not grow with it.
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

namespace anec::json {

class ArrayStream {
public:
  // ANEC-IO-001 when the file cannot be opened or read; nullopt as above.
  static std::optional<ArrayStream> open(const std::filesystem::path &path, std::string_view key);

  // The document with the streamed array emptied ("key": []).
  const std::string &rest() const { return rest_; }
  // How many elements the array holds (its top-level commas, plus one), to size what they fill.
  size_t elements() const { return elements_; }
  // The next element's text (valid until the next call), or nullopt after the last one.
  std::optional<std::string_view> next();

private:
  struct Closer {
    void operator()(std::FILE *f) const { std::fclose(f); }
  };
  bool fill(); // reads the next chunk of the array; false at its end
  void drop_trailing_space();

  std::unique_ptr<std::FILE, Closer> file_;
  std::string path_, rest_, chunk_, element_;
  size_t elements_ = 0;
  uint64_t next_offset_ = 0, end_offset_ = 0; // the array's bytes still to read: [next, end)
  size_t pos_ = 0;                            // in chunk_
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false, after_comma_ = false;
};

} // namespace anec::json
