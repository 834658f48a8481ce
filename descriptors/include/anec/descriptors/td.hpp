// Task-descriptor chains: the header, then register streams walked by their header words (never
// by fixed offsets), every word kept with its raw value, known fields decoded, unknown registers
// and set reserved bits reported.
#pragma once
#include "anec/descriptors/flat.hpp"
#include "anec/descriptors/td_schema.hpp"
#include "anec/support/diagnostic.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace anec::desc {

struct FieldValue {
  const TdField *field;
  uint32_t value;
};

struct Word {
  uint64_t offset = 0;   // in the file
  std::string block;     // "Header", a block name, or "" when no block covers the address
  uint32_t address = 0;  // header byte offset, or register address
  uint32_t raw = 0;
  std::vector<FieldValue> fields;
  uint32_t reserved = 0; // set bits no field covers
};

struct Stream {
  uint64_t offset = 0; // of the stream header word
  uint32_t header = 0, address = 0, count = 0;
  std::vector<Word> words;
};

// A decoder's or an audit's finding: code, message and file offset (support/diagnostic.hpp).
using Finding = Diagnostic;

struct Td {
  uint64_t offset = 0;
  uint32_t size = 0; // header plus streams
  std::vector<Word> header;
  std::vector<Stream> streams;
  bool eon = false;
};

struct Chain {
  std::vector<Td> tds;
  bool sized = false; // descriptors give their own size (no NextPointer or EON to check)
  uint64_t kernel_offset = 0, kernel_size = 0; // data after the last descriptor
  std::vector<Finding> findings;
};

// Decodes a raw chain (descriptors linked by NextPointer, an offset from the chain start, the last
// marked EON, then kernel data): the layout of the eiln H13 kernels and of an hwx __text. A
// descriptor has no size field, so it ends at the first stream header whose block is unknown or
// already seen in it (a descriptor writes each block once). Errors the chain cannot survive (a stream past
// the end, no EON before the bytes run out) are anec::Error ANEC-TD-00x; anything decodable but odd is a
// Finding (ANEC-TD-1xx). `begin`/`end` bound the chain within `bytes` (a container's text section); offsets
// stay file offsets. Built from decode_flat's result (flat.hpp), the walker both share.
Chain decode_raw_chain(std::span<const uint8_t> bytes, const TdSchema &schema, const ChainLayout &layout = {},
                       uint64_t begin = 0, uint64_t end = UINT64_MAX);

// The value of the header field `name` (EON, TID, NextPointer, ...), if the database names it.
std::optional<uint32_t> header_field(const Td &td, const std::string &name);
// The decoded register word at file offset `offset`, or null.
const Word *find_word(const Chain &chain, uint64_t offset);

// The tree of one descriptor of a flat walk (flat.hpp), as decode_raw_chain makes each.
Td tree_td(const FlatChain &flat, const TdSchema &schema, const FlatTd &td);

// One descriptor at `offset`, streams walked until `end` or the expected size.
Td decode_td(std::span<const uint8_t> bytes, uint64_t offset, uint64_t end, const TdSchema &schema,
             std::vector<Finding> &findings);

} // namespace anec::desc
