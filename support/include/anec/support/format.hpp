// Number formatting shared by the printers and error messages.
#pragma once
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace anec {

// Whether two texts are equal: one of up to 16 bytes (a tensor's name, an op type, a field) compared in
// two overlapping words, without a call to memcmp; the per-op passes' lookups ask it millions of times.
inline bool same_text(std::string_view a, std::string_view b) {
  size_t n = a.size();
  if (n != b.size())
    return false;
  const char *p = a.data(), *q = b.data();
  auto same = [&](size_t at, auto word) {
    std::memcpy(&word, p + at, sizeof word);
    decltype(word) other;
    std::memcpy(&other, q + at, sizeof other);
    return word == other;
  };
  if (n > 16)
    return std::memcmp(p, q, n) == 0;
  if (n >= 8)
    return same(0, uint64_t()) && same(n - 8, uint64_t());
  if (n >= 4)
    return same(0, uint32_t()) && same(n - 4, uint32_t());
  for (size_t k = 0; k < n; ++k)
    if (p[k] != q[k])
      return false;
  return true;
}

// A text's hash, taken a word at a time: the per-op lookups hash names of a few bytes (a tensor's
// name, an op type, a key) millions of times. The last word of a text of 8 bytes or more overlaps the
// one before, which the length mixed in keeps apart.
inline uint64_t text_hash(std::string_view s) {
  const char *p = s.data();
  size_t n = s.size();
  auto word = [p](size_t at, auto w) {
    std::memcpy(&w, p + at, sizeof w);
    return uint64_t(w);
  };
  auto mix = [](uint64_t h, uint64_t w) {
    h = (h ^ w) * 0xff51afd7ed558ccd;
    return h ^ (h >> 32);
  };
  uint64_t h = n;
  if (n >= 8) {
    for (size_t at = 0; at + 8 < n; at += 8)
      h = mix(h, word(at, uint64_t()));
    return mix(h, word(n - 8, uint64_t()));
  }
  if (n >= 4)
    return mix(mix(h, word(0, uint32_t())), word(n - 4, uint32_t()));
  for (size_t at = 0; at < n; ++at)
    h = mix(h, uint8_t(p[at]));
  return h;
}
// text_hash for the unordered containers keyed by text (transparent: a string_view finds a string).
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return text_hash(s); }
};

// "0x1f" ("0x001f" with width 4).
std::string hex(uint64_t v, int width = 0);

// One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF, quotes doubled.
std::string csv_field(const std::string &s);

// Fixed-point text with `digits` after the point, as printf's "%.*f" writes it, without the locale.
std::string fixed(double v, int digits = 1);
// The same written into `b`, which holds kFixedRoom bytes; its length.
constexpr size_t kFixedRoom = 400; // the longest double in fixed notation, with its sign and fraction
size_t fixed_to(char *b, double v, int digits);

// A byte count for a message: "512 B", "3.5 KiB", "2.0 MiB", "5.2 GiB".
std::string size_text(double bytes);

// Bytes as hex rows of 16, each led by its offset ("0x4000: 00 00 47 00 ..."), for a part whose
// layout is unknown.
std::string hex_rows(std::span<const uint8_t> bytes, uint64_t first_offset);

// A text that came from an input, safe to print on a terminal: each control character (below 0x20,
// and 0x7f) as \xHH, so a name can neither recolour the terminal (ESC) nor forge a line (CR, LF);
// `keep` lists control characters left as they are (a message's own line breaks).
std::string terminal_safe(std::string_view text, std::string_view keep = {});
void append_terminal_safe(std::string &out, std::string_view text, std::string_view keep = {});
inline bool terminal_control(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

// At most `limit` characters of a text that came from an input, for an error message: a longer
// one is cut, with the count of what was left out ("... (33012 more bytes)").
std::string excerpt(std::string_view text, size_t limit = 80);

// The parts of `text` between separators: n separators give n + 1 parts (empty ones kept).
std::vector<std::string_view> split(std::string_view text, char separator);

// The items with `separator` between them ("a, b, c").
std::string join(const std::vector<std::string> &items, std::string_view separator);

} // namespace anec
