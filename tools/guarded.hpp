// The command-line tools' error boundary: every failure becomes a message with its reason code on
// stderr and exit code 2 (conventions: 2 = the input could not be read or used).
#pragma once
#include "anec/support/error.hpp"

#include <boost/program_options/errors.hpp>
#include <cstdio>
#include <exception>

namespace anec::tools {

template <typename Body> int guarded(const char *tool, Body &&body) {
  try {
    return body();
  } catch (const Error &e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
  } catch (const boost::program_options::error &e) {
    std::fprintf(stderr, "%s: error: ANEC-CLI-001: %s\n", tool, e.what());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: error: ANEC-INTERNAL: %s\n", tool, e.what());
  }
  return 2;
}

} // namespace anec::tools
