// Overflow-checked integer arithmetic for sizes, shapes and counts, and a strict parser for the
// numbers a user types on a command line. A model whose sizes do not fit in 64 bits is bad input:
// it must be rejected with a reason code, never wrap into a negative size (signed overflow is
// undefined behaviour; unsigned wrap turns "-1" into 2^64-1).
#pragma once
#include "anec/support/error.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace anec {

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

namespace detail {
[[noreturn]] inline void overflow(const std::string &code, const std::string &what, int64_t a, const char *op,
                                  int64_t b) {
  throw Error(code, what + ": " + std::to_string(a) + " " + op + " " + std::to_string(b) +
                        " does not fit in a signed 64-bit integer");
}
} // namespace detail

// Throwing forms: anec::Error(code, "<what>: a x b does not fit ...") names both operands.
inline int64_t add_or_throw(int64_t a, int64_t b, const std::string &code, const std::string &what) {
  if (auto r = checked_add(a, b))
    return *r;
  detail::overflow(code, what, a, "+", b);
}
inline int64_t sub_or_throw(int64_t a, int64_t b, const std::string &code, const std::string &what) {
  if (auto r = checked_sub(a, b))
    return *r;
  detail::overflow(code, what, a, "-", b);
}
inline int64_t mul_or_throw(int64_t a, int64_t b, const std::string &code, const std::string &what) {
  if (auto r = checked_mul(a, b))
    return *r;
  detail::overflow(code, what, a, "x", b);
}

// A command-line argument for an error message: quoted, at most 40 characters (then "..."), control
// bytes shown as '?', so a hostile argument cannot flood or corrupt the terminal.
inline std::string quote_arg(std::string_view text) {
  std::string s(text.substr(0, 40));
  for (char &c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  return "'" + s + (text.size() > 40 ? "...'" : "'");
}

namespace detail {
inline int digit(char c, unsigned base) {
  int v = c >= '0' && c <= '9'   ? c - '0'
          : c >= 'a' && c <= 'f' ? c - 'a' + 10
          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                 : 99;
  return v < int(base) ? v : -1;
}
[[noreturn]] inline void bad_number(const std::string &what, std::string_view text, const std::string &why,
                                    uint64_t min, uint64_t max) {
  throw Error("ANEC-CLI-002", what + " " + quote_arg(text) + " " + why + " (expected a whole number from " +
                                  std::to_string(min) + " to " + std::to_string(max) + ")");
}
} // namespace detail

// A whole number typed by a user: decimal, or hexadecimal after 0x. No sign (strtoull and
// boost::program_options read "-1" as 2^64-1), no spaces, nothing after the digits, and within
// [min, max]. Anything else is ANEC-CLI-002 naming `what` and quoting the text.
inline uint64_t parse_uint(std::string_view text, uint64_t min, uint64_t max, const std::string &what) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+'))
    detail::bad_number(what, text, "has a sign", min, max);
  unsigned base = text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') ? 16 : 10;
  std::string_view digits = base == 16 ? text.substr(2) : text;
  if (digits.empty())
    detail::bad_number(what, text, "is not a number", min, max);
  uint64_t v = 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    int d = detail::digit(digits[i], base);
    if (d < 0)
      detail::bad_number(what, text, i ? "has text after the number" : "is not a number", min, max);
    if (__builtin_mul_overflow(v, uint64_t(base), &v) || __builtin_add_overflow(v, uint64_t(d), &v))
      detail::bad_number(what, text, "is out of range", min, max);
  }
  if (v < min || v > max)
    detail::bad_number(what, text, "is out of range", min, max);
  return v;
}

// A size in bytes typed by a user: a whole number as parse_uint reads it, optionally followed by K, M
// or G (binary: 2^10, 2^20, 2^30), within [min, max] bytes; anything else is ANEC-CLI-002.
inline uint64_t parse_size(std::string_view text, uint64_t min, uint64_t max, const std::string &what) {
  static constexpr std::string_view kUnits = "KMG";
  size_t unit = text.empty() ? std::string_view::npos : kUnits.find(text.back());
  if (unit == std::string_view::npos)
    return parse_uint(text, min, max, what);
  uint64_t v = parse_uint(text.substr(0, text.size() - 1), 0, max >> (10 * (unit + 1)), what);
  v <<= 10 * (unit + 1);
  if (v < min)
    detail::bad_number(what, text, "is out of range", min, max);
  return v;
}

} // namespace anec
