// A decoded task-descriptor chain in flat form: one vector of words with per-descriptor and
// per-stream index ranges, filled by the one chain walker through the compiled schema
// (flat_schema.hpp) and reused from call to call. A word's field values are not stored: they are
// read from its raw value on access (FlatChain::extracts). The tree model (td.hpp) is built from it.
#pragma once
#include "anec/descriptors/td_schema.hpp"
#include "anec/support/diagnostic.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace anec::desc {

struct FlatStream {
  uint64_t offset = 0; // of the stream header word
  uint32_t header = 0, address = 0, count = 0;
  uint32_t first_word = 0; // its `count` words
};

struct FlatTd {
  uint64_t offset = 0;
  uint32_t size = 0; // header plus streams
  bool eon = false;
  uint32_t first_word = 0;                // the header's words: header_bytes / 4 of them
  uint32_t first_stream = 0, streams = 0; // streams walked (none kept under FlatDetail::Headers)
};

// Headers walks every stream and checks every register word's block (the findings are the same)
// but keeps only the descriptors and their header words: what the chain audits read.
enum class FlatDetail { Words, Headers };

struct FlatChain {
  FlatDetail detail = FlatDetail::Words;
  std::vector<FlatTd> tds;
  std::vector<FlatStream> streams;
  std::vector<FlatWord> words;
  // The addresses no slot gives (a word outside every block or off a word address): (index into
  // words, address), in index order.
  std::vector<std::pair<uint32_t, uint32_t>> loose_addresses;
  bool sized = false;
  uint64_t kernel_offset = 0, kernel_size = 0;
  std::vector<Diagnostic> findings;

  std::span<const FlatWord> header(const FlatTd &td, const TdSchema &s) const {
    return std::span(words).subspan(td.first_word, s.header_bytes / 4);
  }
  std::span<const FlatStream> streams_of(const FlatTd &td) const {
    return detail == FlatDetail::Words ? std::span(streams).subspan(td.first_stream, td.streams)
                                       : std::span<const FlatStream>{};
  }
  std::span<const FlatWord> words_of(const FlatStream &st) const {
    return std::span(words).subspan(st.first_word, st.count);
  }
  uint64_t header_offset(const FlatTd &td, size_t k) const { return td.offset + 4 * k; }
  uint64_t stream_offset(const FlatStream &st, size_t i) const { return st.offset + 4 + 4 * i; }
  // The address of words[index]: a header byte offset, or a register address.
  uint32_t address(uint32_t index, const TdSchema &s) const {
    uint32_t a = s.flat().address_of(words[index].slot);
    if (a != FlatSchema::kNoAddress)
      return a;
    auto it = std::lower_bound(loose_addresses.begin(), loose_addresses.end(), std::pair(index, 0u));
    return it != loose_addresses.end() && it->first == index ? it->second : 0;
  }
  // The word's set bits that no field covers.
  static uint32_t reserved(const FlatWord &w, const TdSchema &s) {
    return w.raw & ~s.flat().slot(w.slot).covered;
  }
  // A word's block: kHeaderBlock, an index into TdSchema::blocks, or kNoBlock.
  static BlockId block(const FlatWord &w, const TdSchema &s) { return s.flat().slot(w.slot).block; }
  // A word's fields in database order: field x.field of `s` has the value x.get(w.raw).
  static std::span<const FieldExtract> extracts(const FlatWord &w, const TdSchema &s) {
    return s.flat().extracts(s.flat().slot(w.slot));
  }
  // The value of a header field the compiled schema names (FlatSchema::eon, tid, ...).
  std::optional<uint32_t> header_value(const FlatTd &td, const std::optional<HeaderRef> &ref) const {
    return ref ? std::optional(ref->extract.get(words[td.first_word + ref->word].raw)) : std::nullopt;
  }
};

struct ChainLayout {
  // Without a NextPointer, the next descriptor starts at the end rounded up to this.
  uint32_t td_alignment = 0x100;
  uint32_t data_alignment = 16; // kernel data starts at the last end rounded up to this
};

// The one chain walker (the rules are told at decode_raw_chain in td.hpp): `out` is cleared and
// refilled, its buffers reused. Errors ANEC-TD-00x are thrown as anec::Error; findings go to
// out.findings.
void decode_flat(std::span<const uint8_t> bytes, const TdSchema &schema, FlatChain &out,
                 FlatDetail detail = FlatDetail::Words, const ChainLayout &layout = {}, uint64_t begin = 0,
                 uint64_t end = UINT64_MAX);

// The same walk handing each descriptor to `each` (with `scratch`, which holds its words) as soon as
// it is walked, then dropping it: memory stays that of one descriptor. At the end `scratch` holds
// the chain's findings and kernel data but no descriptors. decode_raw_chain builds its tree so.
using EachTd = std::function<void(const FlatChain &scratch, const FlatTd &td)>;
void decode_flat_each(std::span<const uint8_t> bytes, const TdSchema &schema, FlatChain &scratch,
                      const EachTd &each, const ChainLayout &layout = {}, uint64_t begin = 0,
                      uint64_t end = UINT64_MAX);

// One descriptor at `offset`, its streams walked until `end` (appended to `out`; decode_td).
void decode_flat_td(std::span<const uint8_t> bytes, uint64_t offset, uint64_t end, const TdSchema &schema,
                    FlatChain &out);

} // namespace anec::desc
