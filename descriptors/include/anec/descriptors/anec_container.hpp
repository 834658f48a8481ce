// The anec container of the Linux engine driver's user library (eiln/ane libane and eiln/anecc, MIT):
// a packed 0x6a8-byte header zero-padded to the payload offset — 0x800 where libane reads it, 0x1000
// where anecc writes it, the two sizes in the wild — then `size` payload bytes: the descriptor chain
// (`tsk_size` bytes, descriptors of `td_size` bytes) and, from round_up(tsk_size, 16), `krn_size`
// bytes of kernel data. Buffer slots follow libane: slot 0 the command buffer, 3 the intermediate,
// 4.. the outputs, then the inputs; `tiles[k]` counts 0x4000-byte tiles of slot k and `nchw[k]` holds
// N, C, H, W, the plane stride and the row stride in bytes.
#pragma once
#include "anec/descriptors/hwx.hpp"
#include "anec/descriptors/td.hpp"
#include "anec/support/printer.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace anec::desc {

struct AnecHeader {
  static constexpr uint32_t kSlots = 32, kTile = 0x4000,
                            kFirstOutput = 4; // layout: tables/schema/layout/anec.toml
  uint64_t size = 0;
  uint32_t td_size = 0, td_count = 0;
  uint64_t tsk_size = 0, krn_size = 0;
  uint32_t src_count = 0, dst_count = 0;
  uint32_t tiles[kSlots] = {};
  uint64_t nchw[kSlots][6] = {};
};

struct Anec {
  AnecHeader header;
  uint32_t header_bytes = 0; // the payload offset, 0x800 or 0x1000
  Chain chain;
};

// True when `bytes` has the shape of an anec container: a size field that, with one of the two
// payload offsets, accounts for the whole file, and a zero pad after the header.
bool looks_like_anec(std::span<const uint8_t> bytes);

// Errors: ANEC-ANEC-001 not an anec container (the size field and file length agree with neither
// payload offset), ANEC-ANEC-002 a header that cannot describe the payload (chain larger than the
// payload, descriptor size zero or past the chain); chain errors as ANEC-TD-*.
Anec read_anec(std::span<const uint8_t> bytes, const TdSchema &schema);

// The dump of an anec container (`file` holds it): its header and slot table, then its chain
// (print_chain); `only` selects one descriptor.
void print(Printer &p, const Anec &a, const TdSchema &schema, std::span<const uint8_t> file,
           std::optional<size_t> only = std::nullopt);

// The header field at byte `offset` ("size", "tiles[4]", "nchw[5][1]", "pad"), or "" past the header.
std::string anec_header_field(const Anec &a, uint64_t offset);

// check_anec_sizes (ANEC-AUD-010): size = round_up(tsk_size, 16) + krn_size, the chain has
//   td_count descriptors of td_size bytes, and the command tiles hold the payload.
// check_anec_slots (ANEC-AUD-011): at least one input and one output, every slot fits the 32, each
//   input and output slot has tiles, a shape, and room for N x C planes.
// check_anec_strides (ANEC-AUD-012): row and plane strides are multiples of 64 bytes, the row holds
//   W fp16 elements and the plane H rows.
// Plus the chain checks of audit_chain.
std::vector<Finding> audit_anec(const Anec &a);

// The conversion anecc performs: an hwx's __text and kernel __const as the payload, its program
// state's buffer slots and its tensor states as the slot table. ANEC-CONV-001 when the hwx lacks
// what the header needs (program state, kernel section, a slot order other than libane's).
std::vector<uint8_t> hwx_to_anec(const Hwx &h, std::span<const uint8_t> file, uint32_t header_bytes);

} // namespace anec::desc
