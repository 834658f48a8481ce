// libFuzzer target: arbitrary bytes as a Core ML model (.mlmodel, the protobuf of Model.proto)
// through the module's validation and parse, the front-end's mapping of layers, pipelines and
// mlProgram functions, shape inference, the checker, the cost model and the placement on one
// target.
#include "read_check_place.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return read_check_place(data, size, "coreml", "fuzz.mlmodel");
}
