// libFuzzer target: arbitrary bytes as a firmware image, an IM4P or a bare Mach-O, through the
// table extraction (the IM4P reader, the binary loader and the three table scans).
#include "anec/firmware/image.hpp"
#include "anec/support/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    anec::fw::extract_tables({data, size}, "fuzz");
  } catch (const anec::Error &) {
  }
  return 0;
}
