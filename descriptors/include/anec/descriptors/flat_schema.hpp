// A register database compiled once into flat tables for the decoder's hot path (as Mesa's generated
// unpackers do): per header word and per register word of each block, a contiguous span of field
// extracts (shift, mask, field index); blocks by id; the stream-header format as bit fields. The
// decoder looks words up by integer address only: no string keys, nothing allocated per word.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace anec::layout {
struct Field;
}

namespace anec::desc {

struct TdSchema;

// An index into TdSchema::blocks, or one of these two.
using BlockId = uint16_t;
inline constexpr BlockId kHeaderBlock = 0xfffe, kNoBlock = 0xffff;

struct FieldExtract {
  uint32_t field = 0;           // index into TdSchema::fields
  uint32_t shift = 0, mask = 0; // the value is raw >> shift & mask
  uint32_t get(uint32_t raw) const { return raw >> shift & mask; }
};

// The fields of one word: extracts [first, first + count) and the bits they cover.
struct WordSlot {
  uint32_t first = 0, count = 0, covered = 0;
};

// The register words one stream or record header writes: `count` words from `base`, or, masked,
// one at `base` and one at base + 4 (i + 1) for each set bit i of `mask`.
struct RecordShape {
  uint32_t base = 0, count = 0, mask = 0;
  bool masked = false;
};

// A header field the chain walk or the audit reads: its header word and its extract.
struct HeaderRef {
  uint32_t word = 0;
  FieldExtract extract;
};

class FlatSchema {
public:
  // The database's blocks and fields must be final: the tables index into them.
  static FlatSchema compile(const TdSchema &schema);

  BlockId block_at(uint32_t address) const;
  bool in_block(BlockId block, uint32_t address) const {
    return block < blocks_.size() && address - blocks_[block].address < blocks_[block].bytes;
  }
  // The index of the word at `address` (a header byte offset for kHeaderBlock); kNoSlot, an empty
  // slot, outside the block or off a word address. A block's consecutive words have consecutive slots.
  uint32_t slot_index(BlockId block, uint32_t address) const {
    if (address % 4)
      return kNoSlot; // fields sit on word addresses
    if (block == kHeaderBlock)
      return address / 4 < header_words_ ? kFirstHeaderSlot + address / 4 : kNoSlot;
    if (!in_block(block, address))
      return kNoSlot;
    return blocks_[block].first_slot + (address - blocks_[block].address) / 4;
  }
  const WordSlot &slot(uint32_t index) const { return slots_[index]; }
  const WordSlot &slot(BlockId block, uint32_t address) const { return slot(slot_index(block, address)); }
  std::span<const FieldExtract> extracts(const WordSlot &slot) const {
    return std::span(extracts_).subspan(slot.first, slot.count);
  }
  RecordShape record(uint32_t header) const;

  // The first header field of each name in header order (TdSchema::fields_at order), if any.
  std::optional<HeaderRef> eon, tid, next_pointer;
  std::optional<HeaderRef> task_words; // in the first header word only (sized chains)

private:
  static constexpr uint32_t kNoSlot = 0, kFirstHeaderSlot = 1;
  struct Block {
    uint32_t address = 0, bytes = 0, first_slot = 0;
  };
  // The stream or record header fields (tables/schema/layout/td.toml) of the database's format.
  struct RecordFields {
    const layout::Field *address = nullptr, *count = nullptr, *kind = nullptr, *masked_address = nullptr,
                        *mask = nullptr;
  };
  uint32_t header_words_ = 0;
  std::vector<Block> blocks_;          // TdSchema::blocks order: a BlockId indexes both
  std::vector<WordSlot> slots_{{}};    // kNoSlot, the header's words, then each block's words
  std::vector<FieldExtract> extracts_; // by slot, in TdSchema::fields order
  static RecordFields record_fields(const std::string &format); // "td.stream" or "td.record"
  RecordFields record_ = record_fields("td.stream");            // a default TdSchema's format too
};

} // namespace anec::desc
