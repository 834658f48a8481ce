// The Target model: one value per schema field, each with its provenance.
#pragma once
#include "anec/hal/schema.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace anec::hal {

using Bytes = std::vector<uint8_t>;
// Integers of every width (and ptr) are uint64_t; f64/float are double; str24/string are string;
// strings is a list; bool; bytes (unk regions, byte lists) are Bytes.
using Value = std::variant<uint64_t, double, std::string, std::vector<std::string>, bool, Bytes>;

struct Provenance {
  std::string source;
  Confidence confidence = Confidence::Placeholder;
};

struct Entry {
  Value value;
  Provenance provenance;
};

struct Target {
  std::string name; // canonical, lower case
  std::vector<std::string> aliases;
  std::map<std::string, Entry, std::less<>> values;
  // Where the values were extracted from (binary, sha256, uuid, symbol, address, method), when
  // they were; written as the [extraction] table of a definition.
  std::vector<std::pair<std::string, std::string>> extraction;

  const Entry *find(std::string_view field) const;
  // Typed accessors; ANEC-HAL-007 when the field is missing or of another type.
  uint64_t uint(std::string_view field) const;
  double real(std::string_view field) const;
  const std::string &text(std::string_view field) const;
  bool flag(std::string_view field) const;
  const std::vector<std::string> &list(std::string_view field) const;
};

// The value a field takes when nothing is known of it: zero, empty, false.
Value zero_value(const Field &f);
// Empty when the value suits the field's type and storage width, else the reason.
std::string check_value(const Field &f, const Value &v);
// Human-readable value (hex for pointers and tags, decimal otherwise).
std::string format_value(const Field &f, const Value &v);

} // namespace anec::hal
