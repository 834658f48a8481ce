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

// The fields of one word: extracts [first, first + count), the bits they cover, and its block.
struct WordSlot {
  uint32_t first = 0, count = 0, covered = 0;
  BlockId block = kNoBlock;
};

// A word's file offset is where it lies in its run: the header's k-th word at the descriptor's
// offset + 4 k, a stream's i-th word at the stream's offset + 4 + 4 i (FlatChain::header_offset,
// stream_offset). Its block, its fields, the bits they leave uncovered and, but for a word outside
// every block or off a word address, its address follow from its slot (FlatChain::block, extracts,
// reserved, address), so that the word takes 8 bytes.
struct FlatWord {
  uint32_t raw = 0;
  uint32_t slot = 0; // FlatSchema::slot_index of its block and address
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
  // The index of the word at `address` (a header byte offset for kHeaderBlock): kNoSlot outside the
  // block; off a word address, the block's empty slot after its words (fields sit on word addresses).
  // A block's consecutive words have consecutive slots; slot(index).block gives the block back.
  uint32_t slot_index(BlockId block, uint32_t address) const {
    const Block *b = block == kHeaderBlock ? &header_ : block < blocks_.size() ? &blocks_[block] : nullptr;
    if (!b || address - b->address >= b->bytes)
      return kNoSlot;
    return b->first_slot + (address % 4 ? b->bytes : address - b->address) / 4;
  }
  const WordSlot &slot(uint32_t index) const { return slots_[index]; }
  // The word a slot gives with every raw bit set: anding a raw value into its raw gives that word.
  // Consecutive slots' patterns are consecutive.
  const FlatWord &pattern(uint32_t index) const { return patterns_[index]; }
  // The address of the word in a slot (a header byte offset for the header's), or kNoAddress for
  // kNoSlot and a block's slot for off-word addresses, which many addresses share.
  uint32_t address_of(uint32_t index) const { return addresses_[index]; }
  static constexpr uint32_t kNoAddress = UINT32_MAX;
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
    uint32_t address = 0, bytes = 0, first_slot = 0; // bytes / 4 words, then an empty slot
  };
  // A stream or record header field, decoded as (header >> shift & mask) * scale + add (its
  // layout::Field with its modifier); mask 0 for a field the format lacks.
  struct HeaderBits {
    uint32_t shift = 0, mask = 0, scale = 1, add = 0;
    uint32_t get(uint32_t header) const { return (header >> shift & mask) * scale + add; }
  };
  // The stream or record header fields (tables/schema/layout/td.toml) of the database's format.
  struct RecordFields {
    HeaderBits address, count, kind, masked_address, mask;
  };
  Block header_;                       // at 0, kFirstHeaderSlot
  std::vector<Block> blocks_;          // TdSchema::blocks order: a BlockId indexes both
  // block_at's index: the blocks by address (they do not overlap), and for each page (address >>
  // page_shift_, below top_, at most kPages of them) the first of them ending past its start.
  struct Span {
    uint32_t address = 0, bytes = 0;
    BlockId id = kNoBlock;
  };
  static constexpr uint64_t kPages = 4096;
  std::vector<Span> by_address_;
  uint64_t top_ = 0; // the end of the highest block
  uint32_t page_shift_ = 0;
  std::vector<uint16_t> pages_;
  std::vector<WordSlot> slots_{{}};    // kNoSlot, then the header's and each block's slots
  std::vector<FlatWord> patterns_;     // by slot
  std::vector<uint32_t> addresses_;    // by slot
  std::vector<FieldExtract> extracts_; // by slot, in TdSchema::fields order
  void index_pages();
  void fill_slots(BlockId id, const Block &b, const std::vector<std::vector<FieldExtract>> &by_slot);
  static HeaderBits bits_of(const layout::Field &f);
  static RecordFields record_fields(const std::string &format); // "td.stream" or "td.record"
  RecordFields record_ = record_fields("td.stream");            // a default TdSchema's format too
};

} // namespace anec::desc
