// JSON adapter: the only place that includes nlohmann-json.
#pragma once
#include "anec/support/doc.hpp"
#include <string>

namespace anec::json {

// Pretty-printed JSON (2-space indent, member order kept), newline-terminated.
std::string write(const Doc &doc);

} // namespace anec::json
