#include "anec/support/format.hpp"

#include <cstdio>

namespace anec {

std::string hex(uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

std::string excerpt(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) + "... (" + std::to_string(text.size() - limit) + " more bytes)";
}

} // namespace anec
