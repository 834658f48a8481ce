// The command-line tools' error boundary: every failure becomes a message with its reason code on
// stderr and exit code 2 (conventions: 2 = the input could not be read or used). Standard output is
// flushed inside it, so output lost to a full disk or a closed descriptor is a failure too.
#pragma once
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"

#include <cstdio>
#include <exception>

namespace anec::tools {

template <typename Body> int guarded(const char *tool, Body &&body) {
  try {
    int status = body();
    flush_stdout();
    return status;
  } catch (const Error &e) {
    // A message may quote the input; one line of an error stays readable whatever the input was.
    std::fprintf(stderr, "%s: error: %s\n", tool, terminal_safe(excerpt(e.what(), 1000), "\n\t").c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: error: ANEC-INTERNAL: %s\n", tool,
                 terminal_safe(excerpt(e.what(), 1000), "\n\t").c_str());
  }
  return 2;
}

} // namespace anec::tools
