// Target definitions as TOML (the checked-in tables/targets format, docs/target-format.md),
// JSON and text. Reading is strict; writing is deterministic.
#pragma once
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"
#include "anec/support/doc.hpp"
#include "anec/support/printer.hpp"

#include <filesystem>
#include <string>

namespace anec::hal {

inline constexpr const char *kTargetFormat = "anec-target/1";

// The text form: "target NAME (aliases: ...)", then per section a line per field (offset, name,
// value and unit, confidence, source). The document form: the definition (TOML, JSON).
void print(Printer &p, const Schema &schema, const Target &target);
// The definition file: a comment naming the format, then the TOML document.
std::string to_toml(const Schema &schema, const Target &target);

// Errors: ANEC-HAL-003 (unknown key, wrong format or schema version, offset that disagrees with the
// schema), ANEC-HAL-004 (a value of the wrong type or one that does not fit), each with line:column.
Target from_doc(const Schema &schema, const Doc &doc, const std::string &source);
Target load_target(const Schema &schema, const std::filesystem::path &path);

// A value as written in a definition: integers (hex for ptr, tags and byte offsets), floats,
// strings, lists, booleans, bytes as a hex string.
Doc value_doc(const Field &f, const Value &v);
// The inverse, checking type and width against the field; ANEC-HAL-004 on mismatch.
Value value_from_doc(const Field &f, const Doc &d, const std::string &source);

} // namespace anec::hal
