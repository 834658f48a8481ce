// The hwx program container (guide ch.23): a Mach-O-shaped file with the magic 0xbeefface holding
// segments, tensor-name commands, thread states, a build banner, a symbol table, and the
// task-descriptor chain in __TEXT.__text with its relocations. Every load command is kept raw.
#pragma once
#include "anec/descriptors/td.hpp"
#include "anec/support/printer.hpp"

#include <optional>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace anec::desc {

struct HwxSection {
  std::string segment, name;
  uint64_t addr = 0, size = 0;
  uint32_t offset = 0, align = 0, reloff = 0, nreloc = 0, flags = 0;
};

struct HwxSegment {
  std::string name;
  uint64_t vmaddr = 0, vmsize = 0, fileoff = 0, filesize = 0;
  uint32_t maxprot = 0, initprot = 0, flags = 0;
  std::vector<HwxSection> sections;
};

struct HwxCommand {
  uint32_t cmd = 0, size = 0;
  uint64_t offset = 0;
  std::string layout; // the layout it was read with (tables/schema/layout), "" when kept raw
};

// A tensor name bound to its window address. Load command 0x6 (fvmlib-shaped, compilers of macOS
// 11): {u32 name offset, u32 minor version, u32 address} then the name. Load command 0x40 (compiler
// v7.5.8 and later: ../shared/testdata/newer): {u32 name offset (0x18), u32 0, u64 address} then the
// name. Guide ch.23 ("On-disk container") reads that first word as a size; in every real file it is
// 0x18, the name's offset, whatever the tensor's size. The size is that of the section mapped at
// the address (the tensor's __FVMLIB section), when there is one.
struct HwxTensorName {
  uint32_t cmd = 0x6;
  uint64_t vmaddr = 0, bytes = 0; // bytes: the size of the section at vmaddr, 0 when none
  std::string name;
};

// The program's thread state (layouts hwx.program_state and hwx.segment_state in
// tables/schema/layout/hwx.toml): a table of buffer base addresses, one per buffer slot (BAR) that
// the descriptor header's base fields index — slot 0 the descriptor chain (__text), 1 the kernel
// data (__const), then the tensors (macOS 11: the output at 4, then the inputs; v7.5.8: by address,
// inputs first) — then the chain and the program's name. Flavor 1 (H11, H13) gives the descriptor
// size; flavor 4 (H14 on) the text segment's words and the zero-size frame before the first
// descriptor instead.
struct HwxProgramState {
  static constexpr uint32_t kBars = 32; // the descriptor header's base fields are 5 bits wide
  uint32_t flavor = 1;
  uint64_t offset = 0; // of the load command
  uint64_t bars[kBars] = {};
  uint64_t td_base = 0;
  uint64_t td_bytes = 0; // one descriptor's size, 0 when the state does not give it (flavor 4)
  uint32_t td_count = 0, ene = 0;
  uint32_t prefix_words = 0, segment_words = 0; // flavor 4
  std::string name;
  std::vector<std::pair<uint32_t, uint32_t>> other; // (state offset, value): nonzero words no field names
};

// A tensor's layout from its stabs-style shape string (symbol type 0x20): `name:tK=` then one
// `ar1;0;<extent>;<id>=s<stride><axis>:` per axis (n, c, h, w; stride in bytes), then the element
// type index, resolved through the container's type catalogue (`float16:t5=...`, type 0x80).
struct HwxTensor {
  std::string name, dtype;
  std::vector<std::pair<char, uint64_t>> extents; // axis letter, extent
  std::vector<uint64_t> strides;                  // bytes, in the same order
  uint64_t vmaddr = 0;                            // from the tensor-name command, 0 when none
};

// A per-tensor thread state (layout hwx.tensor_state: flavor 3, 30 words from the compilers of
// macOS 11, 842 from v7.5.8 on): direction, element-type index, n, c, h, w, byte strides, the
// buffer's size and the tensor's name.
struct HwxTensorState {
  uint64_t offset = 0; // of the load command
  uint32_t direction = 0, dtype_index = 0;
  uint64_t extents[4] = {}, strides[4] = {}, bytes = 0;
  std::string name;
};

struct HwxSymbol {
  std::string name;
  uint8_t type = 0, sect = 0;
  uint16_t desc = 0;
  uint64_t value = 0;
};

struct HwxReloc {
  uint32_t address = 0; // offset in __text
  uint32_t symbolnum = 0;
  bool pcrel = false, external = false;
  uint8_t length = 0, type = 0;
  std::string symbol;   // the symbol (external) or the section (segment.section) it is against
  std::string target;   // the register field the relocated word holds, from the decoded chain
};

struct Hwx {
  uint32_t cputype = 0, cpusubtype = 0, filetype = 0, flags = 0;
  std::vector<HwxCommand> commands;
  std::vector<HwxSegment> segments;
  std::vector<HwxTensorName> tensors;
  std::vector<HwxTensor> layouts;
  std::vector<HwxTensorState> states;
  std::optional<HwxProgramState> program;
  std::string banner;
  std::vector<HwxSymbol> symbols;
  HwxSection text;
  std::vector<HwxReloc> relocations; // on __text
  Chain chain;
  // Why the chain in __text was not decoded (no register database walks this generation's
  // descriptors), or empty when it was: the container is still read and the chain shown raw.
  std::string chain_not_decoded;
  std::vector<uint8_t> chain_raw; // the __text bytes, kept when the chain is not decoded
};

// What a virtual address is in the container: "segment.section", a tensor name, or "".
std::string hwx_what_is(const Hwx &h, uint64_t vmaddr);

// Errors: ANEC-HWX-001 not an hwx (magic), ANEC-HWX-002 truncated or inconsistent structure (the
// offending command and offsets named), ANEC-HWX-003 no __TEXT.__text; chain errors as ANEC-TD-*.
// A schema that cannot walk descriptors (schema.walkable() false) leaves the chain undecoded.
Hwx read_hwx(std::span<const uint8_t> bytes, const TdSchema &schema);

// The dump of an hwx (`file` holds it): the container's structure, tensors, program state and
// symbols, then its chain (print_chain); `only` selects one descriptor.
void print(Printer &p, const Hwx &h, const TdSchema &schema, std::span<const uint8_t> file,
           std::optional<size_t> only = std::nullopt);

} // namespace anec::desc
