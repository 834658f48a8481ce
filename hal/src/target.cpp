#include "anec/hal/target.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"

#include <cmath>
#include <cstdio>

namespace anec::hal {

const Entry *Target::find(std::string_view field) const {
  auto it = values.find(field);
  return it == values.end() ? nullptr : &it->second;
}

namespace {
template <typename T> const T &get(const Target &t, std::string_view field) {
  const Entry *e = t.find(field);
  if (!e)
    throw Error("ANEC-HAL-007", "target '" + t.name + "' has no value for '" + std::string(field) + "'");
  const T *v = std::get_if<T>(&e->value);
  if (!v)
    throw Error("ANEC-HAL-007", "target '" + t.name + "': '" + std::string(field) + "' has another type");
  return *v;
}
} // namespace

uint64_t Target::uint(std::string_view f) const { return get<uint64_t>(*this, f); }
double Target::real(std::string_view f) const { return get<double>(*this, f); }
const std::string &Target::text(std::string_view f) const { return get<std::string>(*this, f); }
bool Target::flag(std::string_view f) const { return get<bool>(*this, f); }
const std::vector<std::string> &Target::list(std::string_view f) const {
  return get<std::vector<std::string>>(*this, f);
}

Value zero_value(const Field &f) {
  switch (f.type) {
  case Type::F64:
  case Type::Float: return 0.0;
  case Type::Str24:
  case Type::String: return std::string();
  case Type::Strings: return std::vector<std::string>();
  case Type::Bool: return false;
  case Type::Bytes: return Bytes(f.width, 0);
  default: return uint64_t{0};
  }
}

std::string check_value(const Field &f, const Value &v) {
  switch (f.type) {
  case Type::U8:
  case Type::U16:
  case Type::U32: {
    auto *u = std::get_if<uint64_t>(&v);
    if (!u) return "expected an integer";
    uint64_t limit = (uint64_t{1} << (8 * f.width)) - 1;
    if (*u > limit)
      return "value " + std::to_string(*u) + " does not fit " + type_name(f.type) + " (max " +
             std::to_string(limit) + ")";
    return {};
  }
  case Type::U64:
  case Type::Ptr:
  case Type::Int: return std::holds_alternative<uint64_t>(v) ? "" : "expected a non-negative integer";
  case Type::F64:
  case Type::Float: return std::holds_alternative<double>(v) ? "" : "expected a number";
  case Type::Str24: {
    auto *s = std::get_if<std::string>(&v);
    if (!s) return "expected a string";
    if (s->size() > 22)
      return "string \"" + *s + "\" is " + std::to_string(s->size()) +
             " characters; a str24 holds at most 22";
    if (s->find('\0') != std::string::npos) return "string holds a NUL character";
    return {};
  }
  case Type::String: return std::holds_alternative<std::string>(v) ? "" : "expected a string";
  case Type::Strings:
    return std::holds_alternative<std::vector<std::string>>(v) ? "" : "expected a list of strings";
  case Type::Bool: return std::holds_alternative<bool>(v) ? "" : "expected true or false";
  case Type::Bytes: {
    auto *b = std::get_if<Bytes>(&v);
    if (!b) return "expected a hex byte string";
    if (b->size() != f.width)
      return "expected " + std::to_string(f.width) + " bytes, found " + std::to_string(b->size());
    return {};
  }
  }
  return "unknown type";
}

std::string format_value(const Field &f, const Value &v) {
  if (auto *u = std::get_if<uint64_t>(&v))
    return (f.type == Type::Ptr || f.name == "generation_tag") ? hex(*u) : std::to_string(*u);
  if (auto *d = std::get_if<double>(&v)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", *d);
    return buf;
  }
  if (auto *s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  if (auto *l = std::get_if<std::vector<std::string>>(&v)) {
    std::string out = "[";
    for (size_t i = 0; i < l->size(); ++i) out += (i ? ", " : "") + (*l)[i];
    return out + "]";
  }
  if (auto *b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return hex_bytes(std::get<Bytes>(v));
}

} // namespace anec::hal
