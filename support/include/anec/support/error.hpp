// Errors the user can act on: a stable reason code plus a message naming the offending value.
#pragma once
#include <stdexcept>
#include <string>

namespace anec {

// An input could not be read or parsed (exit code 2 at the command line).
class Error : public std::runtime_error {
public:
  Error(std::string code, const std::string &message)
      : std::runtime_error(code + ": " + message), code_(std::move(code)) {}
  const std::string &code() const { return code_; }

private:
  std::string code_;
};

} // namespace anec
