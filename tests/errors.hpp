// Test helper: the reason code an anec::Error carries, or "none".
#pragma once
#include "anec/support/error.hpp"

#include <functional>
#include <string>

namespace anec::test {

inline std::string code_of(const std::function<void()> &f, std::string *message = nullptr) {
  try {
    f();
  } catch (const Error &e) {
    if (message) *message = e.what();
    return e.code();
  }
  return "none";
}

} // namespace anec::test
