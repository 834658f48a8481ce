// `anec-desc dump FILE --format html`: the dump document (the one --format json writes) as a tree —
// container, descriptors, streams, registers, fields — beside a hex view of the file. The tree is
// drawn as the dump is printed (a Printer back end), so the document never exists as a tree: what
// is held is the part of the page drawn (kTreeNodes at most), not what the dump holds. Selecting a
// node highlights the bytes it covers; selecting a byte selects the innermost node covering it and
// opens the tree down to it. `#sel=NODE-ID` and `#byte=OFFSET` in the page's address do the same as
// the clicks (node ids are the document paths: `tds/0/streams/1/registers/3`).
#pragma once
#include "anec/support/doc.hpp"
#include "anec/support/printer.hpp"
#include "anec/support/text_out.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace anec::tools {

// A document node's byte range in the file, from its own members: `offset` with `bytes`, with `raw`
// (a 32-bit register word), with `hex` (bytes held by no descriptor), with `fields.cmdsize` (a
// Mach-O load command), or — a stream — its header word together with what its children cover.
// None for a node without an `offset` (names, tensor states, symbols: no file bytes of their own).
struct ByteRange {
  uint64_t begin = 0, end = 0;
};
std::optional<ByteRange> own_range(const Doc &node, std::optional<ByteRange> children);

// At most this many bytes are shown in the hex view (a larger file says so); ranges past it are
// still listed in the tree.
inline constexpr uint64_t kHexViewBytes = 1u << 20;

// At most this many tree nodes are drawn (a hundred descriptors of a raw chain, a page of some
// 10 MB): an array's items past it are counted in one leaf, and the page's header says so.
inline constexpr size_t kTreeNodes = 20000;

// The page of the dump `print` prints, written to `out` once the print has ended (an error the print
// throws leaves nothing written).
void desc_html(const PrintFn &print, std::span<const uint8_t> file, const std::string &title, TextOut &out);

} // namespace anec::tools
