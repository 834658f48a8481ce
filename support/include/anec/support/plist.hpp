// Property-list adapter: the only place that includes libplist. XML and binary plists become a Doc
// (dict -> table, array -> array, integer, real, boolean, string; data and dates as strings).
//
// Limits before work: libplist builds the whole tree before we see it, so the bytes are checked
// first and libplist never starts on an input over a budget below: a binary plist against all
// three, an XML plist against the depth (its size is linear in the text, bounded by the caller's
// read limit).
// - Binary (bplist00): an object is referenced by index, so one object can be referenced from many
//   places, and libplist copies it once per reference: 24 levels of arrays holding the next level
//   twice (164 bytes) expand to 2^25 nodes (22.8 s, 7.9 GB before this check); 40 levels never end.
//   The object graph is walked once with memoisation to find its expanded size, depth and cycles.
// - XML: nothing is shared, so the tree is linear in the text, but libplist frees it (and we convert
//   it) recursively: 200,000 nested <array> overflow the stack. The text is scanned for depth.
#pragma once
#include "anec/support/doc.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace anec::plist {

// Budgets. Engine network plists are far inside them (tinygrad net.plist: 108 nodes, 5 levels).
// Nested arrays, dicts and sets, the outermost counting as 1; a leaf may sit inside the 64th.
inline constexpr unsigned max_depth = 64;
// Nodes after expanding shared references, dict keys included. Each costs ~300 bytes as a libplist
// node plus a Doc: at this budget the worst a few hundred shared-reference bytes can make us build is
// ~300 MB and ~1.5 s (measured, -O2; 1 << 22 would allow 1.2 GB and 6 s), with ~10x headroom over a
// network of thousands of layers.
inline constexpr uint64_t max_nodes = 1ull << 20;
// String and data bytes after expanding shared references: the largest plist the front-ends read
// (256 MiB, compiler/src/frontends/load.cpp) can hold no more without sharing.
inline constexpr uint64_t max_bytes = 256ull << 20;

// ANEC-PLIST-001 "<source>: not a property list (...)" when libplist cannot read it, or when a binary
// plist's trailer, offsets, counts or references point outside the file or form a cycle.
// ANEC-PLIST-002 "<source>: ..." when the input exceeds a budget, naming the budget and where
// (object index for binary, byte offset for XML). Messages never quote the input.
Doc parse(std::string_view bytes, const std::string &source_name);

} // namespace anec::plist
