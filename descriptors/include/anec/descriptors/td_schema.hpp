// A task-descriptor register database (tables/schema/td/gen<N>.toml): the header fields, the
// register blocks (streams) and each register field's address and bit range.
#pragma once
#include "anec/descriptors/flat_schema.hpp"
#include "anec/support/doc.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace anec::desc {

struct TdBlock {
  std::string name;
  uint32_t address = 0, words = 0;
  std::string source, confidence;
};

struct TdField {
  std::string block, reg, name; // block "Header" addresses the descriptor header by byte offset
  uint32_t address = 0;         // register byte address (stream space), or header word offset
  uint32_t lo = 0, hi = 0;      // bit range within the 32-bit word
  // What the field is for, so checks never go by its name: "address" (a buffer offset in 64-byte
  // units; `pair` names the register holding its size), "size", "slot" (a buffer-slot index; `pair`
  // names the header field that enables it), "enable", or "" (a plain value).
  std::string role, pair;
  std::string access; // a slot field: "read" or "write" (the buffer it names), "" when not known
  std::string source, confidence;

  uint32_t mask() const { return uint32_t((uint64_t{1} << (hi - lo + 1)) - 1) << lo; }
  uint32_t get(uint32_t word) const { return (word & mask()) >> lo; }
  std::string path() const { return (block == "Header" ? "" : block + ".") + reg + "." + name; }
};

// A field the compiler's descriptor object `ZinAneTd<N>` holds at a byte offset (guide ch.35, ch.36):
// known for generations whose stream layout is not, so it cannot be placed on a stream register.
struct TdObjectField {
  std::string name;
  uint32_t offset = 0;
  std::string bits; // "hi:lo", or empty when the source gives no bit range
  std::string source, confidence;
};

struct TdSchema {
  // Movable, not copyable: the compiled tables index `blocks` and `fields`.
  TdSchema() = default;
  TdSchema(TdSchema &&) = default;
  TdSchema &operator=(TdSchema &&) = default;
  TdSchema(const TdSchema &) = delete;
  TdSchema &operator=(const TdSchema &) = delete;

  std::string version;
  int generation = 0;
  bool complete = false;
  uint32_t header_bytes = 0;
  // How register writes are encoded: the layout family in tables/schema/layout/td.toml
  // ("td.stream" up to generation 7, "td.record" from generation 8).
  std::string stream_format = "td.stream";
  // How descriptors follow each other: "linked" (NextPointer and EON in the header) or "sized"
  // (each descriptor's header field TaskWords gives its words; descriptors start on task_alignment
  // and a frame of frame_bytes whose TaskWords is 0 is skipped).
  std::string chain = "linked";
  uint32_t task_alignment = 0, frame_bytes = 0;
  std::vector<TdBlock> blocks;
  std::vector<TdField> fields;
  std::vector<TdObjectField> object_fields;

  // A layout without a register map, borrowed from the database of generation `raw_like` (raw_layout):
  // every stream is in no block, and a linked descriptor ends where its NextPointer points, the
  // last one at the end of the bytes (not at the first block it would repeat, as blocks are unknown).
  int raw_like = -1;
  bool raw() const { return raw_like >= 0; }

  // A database with no blocks cannot walk a descriptor's streams (only its object fields are known).
  bool walkable() const { return !blocks.empty() || raw(); }

  // Strict: unknown keys, duplicate field paths, overlapping bits within a word, bits past 31,
  // header fields past header_bytes, and register fields outside every block are ANEC-TDS-001.
  static TdSchema from_doc(const Doc &doc, const std::string &source);
  static TdSchema load(const std::filesystem::path &path);
  // `like`'s header size, stream encoding and chain, with only the header fields that chain
  // descriptors (EON, NextPointer, TaskWords), for descriptors of `generation`, which no database
  // maps: their streams are walked, their words shown raw.
  static TdSchema raw_layout(const TdSchema &like, int generation);

  const TdBlock *block_at(uint32_t address) const;
  // Fields of the word at `address` in `block` ("Header" for the descriptor header).
  std::vector<const TdField *> fields_at(const std::string &block, uint32_t address) const;
  // The decoder's tables, compiled by from_doc.
  const FlatSchema &flat() const { return flat_; }

private:
  FlatSchema flat_;
};

} // namespace anec::desc
