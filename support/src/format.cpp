#include "anec/support/format.hpp"

#include <cstdio>

namespace anec {

std::string hex(uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

} // namespace anec
