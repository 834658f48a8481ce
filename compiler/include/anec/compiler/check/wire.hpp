// A program's inputs and outputs as the engine holds them: fp16 (the boundary casts convert the
// host's layout to the engine's channel-interleaved one and back, guide ch.23), channels padded to
// the interleave factor (ch.17, "a channel dimension that is not a multiple of the interleave factor
// is padded out"), rows padded to the DMA granule (dram_alignment, ch.21 and ch.24 table 24.1).
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/hal/target.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace anec::compiler {

struct WirePort {
  std::string tensor;
  bool input = true;
  std::string dtype;      // the model's: another than fp16 is cast at the boundary
  std::string host_value; // a value the host holds, not a tensor: "string", "dictionary", "sequence"
  Shape shape;
  // Unknown (-1) while the shape is symbolic.
  int64_t channels = -1, padded_channels = -1, row_bytes = -1, padded_row_bytes = -1, bytes = -1;
};

struct Wire {
  int64_t interleave = 1;            // the target's channel interleave (a port may declare its own)
  std::string interleave_provenance; // its confidence ("measured", "placeholder", ...)
  int64_t granule = 16;              // the DMA granule in bytes (dram_alignment)
  std::string granule_provenance;
  std::vector<WirePort> ports; // the graph's inputs, then its outputs
};

Wire wire_of(const Graph &g, const hal::Target &t);

} // namespace anec::compiler
