// JSON adapter: the only place that includes nlohmann-json.
#pragma once
#include "anec/support/doc.hpp"
#include <string>

namespace anec::json {

// Pretty-printed JSON (2-space indent, member order kept), newline-terminated.
std::string write(const Doc &doc);

// Parses JSON; ANEC-JSON-001 "<source>: byte <n>: <reason>" on malformed text. Integers that fit
// int64 stay integers.
Doc parse(std::string_view text, const std::string &source_name);

} // namespace anec::json
