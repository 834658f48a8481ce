// The memory budget of a run (`--max-memory`), planned before anything large is made (ANEC-MEM-001).
#pragma once

namespace anec::compiler {

// The default, well under the 24 GiB of the machines it is built for, and the same on every machine:
// 2 GiB (a relu over the largest tensor the evaluator holds, input and output, fits).
inline constexpr double kDefaultMaxMemory = 2.0 * (1 << 30);
inline constexpr const char *kDefaultMaxMemoryText = "2G";

} // namespace anec::compiler
