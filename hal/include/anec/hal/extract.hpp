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
  std::string target; // canonical name; a new target's name as its class spells it, file-safe
  Bytes blob;         // schema-sized, pointer fields zeroed
  std::vector<std::string> interchange_formats;
  std::string symbol, method;
  uint64_t address = 0, instructions = 0;
  std::string class_name; // the class that named the table (T of ZinIrHal<T>), as the binary spells it
  bool known = true;      // the name is a target of the registry
  // A known target: itself, and the fields in which the table differs from the registry's. A new
  // one: the nearest known target — the one it differs from in the fewest schema fields (blob fields
  // but pointers, and the interchange-format names), the earlier in the line-up on a tie — and those
  // fields.
  std::string nearest;
  std::vector<std::string> differing;
};

struct ExtractOptions {
  // Known targets (names or aliases) or new ones (by the name extraction gives them); empty: all.
  std::vector<std::string> targets;
  decode::EmuLimits limits;
  std::function<void(size_t done, size_t total, const std::string &target)> progress;
  // Told of each target whose candidates were all rejected while others were recovered.
  std::function<void(const std::string &message)> warn;
};

// Candidates are found by what they can do, whatever they are called: every function of ZinIrHal<T>
// (any T: a class, in any namespace, a number, an enum value) that takes no argument (the table as
// `this`, or returned through the sret register) or a ZinIrHalParameters pointer or reference
// (static or member), and every data symbol of ZinIrHal<T>; each is run (or read) and kept when it
// fills a table that decodes under the schema, a target's first such candidate winning. Without any,
// the exported dispatcher CreateHalFromString(char const*, ZinIrHalParameters*) is called with each
// line-up name; without it, every function a data word points to is run (at most 4096).
// A table is named by its class: without namespaces and the ZinIrTarget prefix (ZinIrTargetH13 is
// h13), a known target's name or alias; anything else is a new target named as written, file-safe
// (lower case, other characters as '_'). A function reached through a pointer is named by the
// string its table entry points to.
// Errors: ANEC-EXT-001 nothing recovered (says what was tried and why each candidate was rejected),
// ANEC-EXT-002 a requested target not found, ANEC-EXT-003 a map that cannot be walked, ANEC-EXT-004
// a table that does not decode, plus the binary and emulator errors, prefixed with the target and
// symbol.
std::vector<ExtractedTable> extract(const Schema &schema, const Registry &registry,
                                    const decode::Binary &binary, const ExtractOptions &options);

// The fields in which a table differs from a target's: blob fields whose bytes differ (pointers,
// process addresses, excepted), and interchange_formats when the map's names differ.
std::vector<std::string> differing_fields(const Schema &schema, const ExtractedTable &t, const Target &ref);

// "matches the table of h13", "differs from the table of h14 in 1 field", "new target; nearest known
// target h18, 1 field differs".
std::string status_text(const ExtractedTable &t);

// The extracted table as a target definition: values decoded through the schema, identity and
// outside facts and the provenance of unchanged values from the registry's target of that name (a
// new target has none: only what its table holds), and an [extraction] record of where it came
// from, its class and its status.
Target to_target(const Schema &schema, const Registry &registry, const decode::Binary &binary,
                 const ExtractedTable &t);

} // namespace anec::hal
