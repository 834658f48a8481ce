// libFuzzer target: arbitrary bytes as MIL text, parsed, taken to a graph (no weight folder: every
// BLOBFILE is sized from its type), then checked, estimated and placed on one target. The parse is
// bounded (nesting, item and size caps), so any input ends in a graph or an Error.
#include "read_check_place.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return read_check_place(data, size, "mil", "fuzz.mil", {{"S", 8}});
}
