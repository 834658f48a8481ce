#include "anec/support/format.hpp"
#include "anec/support/text_out.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iterator>

namespace anec {

std::string hex(uint64_t v, int width) {
  std::string out;
  TextOut(out).hex(v, width);
  return out;
}

std::string fixed(double v, int digits) {
  char b[kFixedRoom];
  return std::string(b, fixed_to(b, v, digits));
}

size_t fixed_to(char *b, double v, int digits) {
  auto [end, ec] = std::to_chars(b, b + kFixedRoom, v, std::chars_format::fixed, digits);
  if (ec == std::errc())
    return size_t(end - b);
  std::string text = std::to_string(v); // at most 317 bytes
  return size_t(std::copy(text.begin(), text.end(), b) - b);
}

std::string size_text(double bytes) {
  static const char *const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t u = 0;
  for (; bytes >= 1024 && u + 1 < std::size(kUnits); ++u)
    bytes /= 1024;
  return (u ? fixed(bytes, 1) : fixed(bytes, 0)) + " " + kUnits[u];
}

std::string csv_field(const std::string &s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string hex_rows(std::span<const uint8_t> bytes, uint64_t first_offset) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t row = 0; row < bytes.size(); row += 16) {
    out += "  " + hex(first_offset + row, 8) + ":";
    for (size_t i = row; i < std::min(bytes.size(), row + 16); ++i) {
      out += ' ';
      out += digits[bytes[i] >> 4];
      out += digits[bytes[i] & 15];
    }
    out += '\n';
  }
  return out;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    size_t end = text.find(separator, at);
    out.push_back(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return out;
    at = end + 1;
  }
}

std::string join(const std::vector<std::string> &items, std::string_view separator) {
  std::string out;
  for (const std::string &s : items) {
    if (!out.empty()) out += separator;
    out += s;
  }
  return out;
}

void append_terminal_safe(std::string &out, std::string_view text, std::string_view keep) {
  auto control = [&](char c) { return terminal_control(c) && keep.find(c) == std::string_view::npos; };
  if (std::none_of(text.begin(), text.end(), control)) {
    out.append(text);
    return;
  }
  static constexpr const char *kDigits = "0123456789abcdef";
  for (char c : text)
    if (control(c))
      out.append("\\x").append(1, kDigits[(c >> 4) & 15]).append(1, kDigits[c & 15]);
    else
      out += c;
}

std::string terminal_safe(std::string_view text, std::string_view keep) {
  std::string out;
  append_terminal_safe(out, text, keep);
  return out;
}

std::string excerpt(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) + "... (" + std::to_string(text.size() - limit) + " more bytes)";
}

} // namespace anec
