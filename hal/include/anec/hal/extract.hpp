// Recovers target tables from a compiler binary (guide ch.24, ch.34): finds the per-target
// constructors and runs each under the emulator, or reads the tables where they are plain data,
// then normalises the bytes through the schema (process pointers are not table content) and walks
// the interchange-format map the constructor built on the heap.
#pragma once
#include "anec/decode/binary.hpp"
#include "anec/decode/emulator.hpp"
#include "anec/hal/registry.hpp"
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"

#include <functional>
#include <string>
#include <vector>

namespace anec::hal {

struct ExtractedTable {
  std::string target; // canonical name
  Bytes blob;         // schema-sized, pointer fields zeroed
  std::vector<std::string> interchange_formats;
  std::string symbol, method;
  uint64_t address = 0, instructions = 0;
};

struct ExtractOptions {
  std::vector<std::string> targets; // empty: every target found
  decode::EmuLimits limits;
  std::function<void(size_t done, size_t total, const std::string &target)> progress;
  // Told of each target whose candidates were all rejected while others were recovered.
  std::function<void(const std::string &message)> warn;
};

// Candidates are found by the demangled class, whatever the name or signature: every function of
// ZinIrHal<T> for a known target T that takes no argument (the table as `this`, or returned through
// the sret register) or a ZinIrHalParameters pointer or reference (static or member), and every data
// symbol of ZinIrHal<T>; each is run (or read) and kept when it fills the table, a target's first
// such candidate winning. Without any, the exported dispatcher
// CreateHalFromString(char const*, ZinIrHalParameters*) is called with each line-up name.
// Errors: ANEC-EXT-001 nothing recovered (says what was tried and why each candidate was rejected),
// ANEC-EXT-002 a requested target not found, ANEC-EXT-003 a map that cannot be walked, plus the
// binary and emulator errors, prefixed with the target and symbol.
std::vector<ExtractedTable> extract(const Schema &schema, const Registry &registry,
                                    const decode::Binary &binary, const ExtractOptions &options);

// The extracted table as a target definition: values decoded through the schema, identity and
// outside facts and the provenance of unchanged values from the registry's target of that name,
// and an [extraction] record of where it came from.
Target to_target(const Schema &schema, const Registry &registry, const decode::Binary &binary,
                 const ExtractedTable &t);

} // namespace anec::hal
