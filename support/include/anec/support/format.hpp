// Number formatting shared by the printers and error messages.
#pragma once
#include <cstdint>
#include <string>

namespace anec {

// "0x1f" ("0x001f" with width 4).
std::string hex(uint64_t v, int width = 0);

} // namespace anec
