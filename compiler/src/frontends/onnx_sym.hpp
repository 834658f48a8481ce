// Dimension arithmetic for the ONNX front-end: a value is a number, a product of a number and
// dimension symbols ("64*batch"), or unknown. Shape tensors carry these through Shape, Gather,
// Slice, Concat and arithmetic, so a reshape target computed from a symbolic input is still known.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace anec::compiler::onnx_front {

struct Sym {
  double k = 0;               // the numeric factor
  std::vector<std::string> s; // the symbols, sorted
  bool known = true;

  static Sym num(double v) { return {v, {}, true}; }
  static Sym sym(const std::string &name) { return {1, {name}, true}; }
  static Sym unknown() { return {0, {}, false}; }
  bool is_number() const { return known && s.empty(); }
  bool positive_integer() const { return is_number() && k >= 1 && k == std::floor(k) && k < 0x1p62; }
  bool operator==(const Sym &o) const { return known && o.known && k == o.k && s == o.s; }

  // "64*batch", "batch", "12", "?"
  std::string text() const {
    if (!known)
      return "?";
    std::string out = s.empty() || k != 1 ? number() : "";
    for (const std::string &x : s)
      out += (out.empty() ? "" : "*") + x;
    return out;
  }

private:
  std::string number() const {
    if (k == std::floor(k) && std::fabs(k) < 0x1p62)
      return std::to_string(int64_t(k));
    return std::to_string(k);
  }
};

inline Sym mul(const Sym &a, const Sym &b) {
  if (!a.known || !b.known)
    return Sym::unknown();
  Sym r{a.k * b.k, a.s, true};
  r.s.insert(r.s.end(), b.s.begin(), b.s.end());
  std::sort(r.s.begin(), r.s.end());
  return r;
}

// a / b when b's symbols all occur in a (integer division of the factors as ONNX Div does on
// integers when `integer`), else unknown.
inline Sym div(const Sym &a, const Sym &b, bool integer) {
  if (!a.known || !b.known || b.k == 0)
    return Sym::unknown();
  std::vector<std::string> rest = a.s;
  for (const std::string &x : b.s) {
    auto it = std::find(rest.begin(), rest.end(), x);
    if (it == rest.end())
      return Sym::unknown();
    rest.erase(it);
  }
  double k = a.k / b.k;
  if (integer) {
    if (!rest.empty() && k != std::floor(k))
      return Sym::unknown();
    k = std::floor(k);
  }
  return {k, rest, true};
}

inline Sym add(const Sym &a, const Sym &b, double sign) {
  if (!a.known || !b.known || a.s != b.s)
    return Sym::unknown();
  return {a.k + sign * b.k, a.s, true};
}

} // namespace anec::compiler::onnx_front
