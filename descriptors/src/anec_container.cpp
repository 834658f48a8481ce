#include "anec/descriptors/anec_container.hpp"

#include "anec/descriptors/audit.hpp"
#include "anec/descriptors/dump.hpp"
#include "anec/layout/layout.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>

namespace anec::desc {

namespace {
// tables/schema/layout/anec.toml
const layout::Struct &header_layout() {
  return layout::Database::builtin().get("anec.header");
}
const layout::Enum &payload_offsets() {
  return *layout::Database::builtin().enumeration("anec_payload_offset");
}

// The payload offset the size field implies, or 0.
uint32_t payload_offset(std::span<const uint8_t> b) {
  if (b.size() < header_layout().bytes)
    return 0;
  uint64_t size = layout::View(header_layout(), b, 0, "ANEC-ANEC-001").get("size");
  for (auto [name, h] : payload_offsets().values)
    if (size && size <= b.size() && b.size() - size == h)
      return uint32_t(h);
  return 0;
}

std::string slot_role(const AnecHeader &h, size_t k) {
  if (k == 0)
    return "command";
  if (k == 3)
    return "intermediate";
  if (k >= AnecHeader::kFirstOutput && k < AnecHeader::kFirstOutput + h.dst_count)
    return "output " + std::to_string(k - AnecHeader::kFirstOutput);
  if (k >= AnecHeader::kFirstOutput + h.dst_count && k < AnecHeader::kFirstOutput + h.dst_count + h.src_count)
    return "input " + std::to_string(k - AnecHeader::kFirstOutput - h.dst_count);
  return "unassigned";
}
} // namespace

bool looks_like_anec(std::span<const uint8_t> b) {
  uint32_t h = payload_offset(b);
  return h && std::all_of(b.begin() + header_layout().bytes, b.begin() + h, [](uint8_t x) { return x == 0; });
}

Anec read_anec(std::span<const uint8_t> b, const TdSchema &schema) {
  Anec a;
  a.header_bytes = payload_offset(b);
  if (!a.header_bytes)
    throw Error("ANEC-ANEC-001",
                "not an anec container: " +
                    (b.size() < header_layout().bytes
                         ? "the file is " + hex(b.size()) + " bytes, shorter than the " +
                               hex(header_layout().bytes) + "-byte header"
                         : "size field " +
                               hex(layout::View(header_layout(), b, 0, "ANEC-ANEC-001").get("size")) +
                               " and file length " + hex(b.size()) +
                               " leave neither a 0x800- nor a 0x1000-byte header"));
  for (uint64_t i = header_layout().bytes; i < a.header_bytes; ++i)
    if (b[i])
      throw Error("ANEC-ANEC-001",
                  "not an anec container: header pad byte at " + hex(i) + " is " + hex(b[i]) + ", not zero");
  AnecHeader &h = a.header;
  layout::View v(header_layout(), b, 0, "ANEC-ANEC-001");
  h.size = v.get("size");
  h.td_size = uint32_t(v.get("td_size"));
  h.td_count = uint32_t(v.get("td_count"));
  h.tsk_size = v.get("tsk_size");
  h.krn_size = v.get("krn_size");
  h.src_count = uint32_t(v.get("src_count"));
  h.dst_count = uint32_t(v.get("dst_count"));
  for (uint32_t k = 0; k < AnecHeader::kSlots; ++k) {
    h.tiles[k] = uint32_t(v.get("tiles", {k}));
    for (uint32_t j = 0; j < 6; ++j)
      h.nchw[k][j] = v.get("nchw", {k, j});
  }
  if (h.tsk_size == 0 || h.tsk_size > h.size)
    throw Error("ANEC-ANEC-002", "chain size tsk_size " + hex(h.tsk_size) + " does not fit the " +
                                     hex(h.size) + "-byte payload");
  if (h.td_size == 0 || h.td_size > h.tsk_size)
    throw Error("ANEC-ANEC-002", "descriptor size td_size " + hex(h.td_size) + " does not fit the " +
                                     hex(h.tsk_size) + "-byte chain");
  a.chain = decode_raw_chain(b, schema, {}, a.header_bytes);
  return a;
}

namespace {
// A slot of the header's table that holds anything: its role, tiles and shape (the text shows the
// shape when one is set).
void print_slot(Printer &p, const AnecHeader &h, size_t k) {
  const uint64_t *s = h.nchw[k];
  Object slot(p);
  p.text("slot ");
  p.field("slot", k);
  p.text(" ");
  p.field("role", slot_role(h, k));
  p.text(": ");
  p.field("tiles", h.tiles[k]);
  p.text(" tile(s)");
  if (s[0] || s[1] || s[2] || s[3] || !p.text_form()) {
    p.text(", nchw [");
    {
      List nchw(p, "nchw");
      for (size_t j = 0; j < 4; ++j) {
        p.text(j ? " " : "");
        p.item(s[j]);
      }
    }
    p.text("], plane stride ");
    p.field("plane_stride_bytes", s[4]);
    p.text(", row stride ");
    p.field("row_stride_bytes", s[5]);
  }
  p.text("\n");
}

void print_header(Printer &p, const Anec &a) {
  const AnecHeader &h = a.header;
  Object header(p, "anec");
  p.text("anec container: header ");
  p.field("header_bytes", Hex{a.header_bytes});
  p.text(" bytes, payload ");
  p.field("size", Hex{h.size});
  p.data("td_size", h.td_size);
  p.data("td_count", h.td_count);
  p.text(" bytes: chain ");
  p.field("tsk_size", Hex{h.tsk_size});
  p.text(" bytes (" + std::to_string(h.td_count) + " descriptor(s) of " + hex(h.td_size) +
         " bytes), kernel ");
  p.field("krn_size", Hex{h.krn_size});
  p.text(" bytes; ");
  p.field("src_count", h.src_count);
  p.text(" input(s), ");
  p.field("dst_count", h.dst_count);
  p.text(" output(s)\n");
  List slots(p, "slots");
  for (size_t k = 0; k < AnecHeader::kSlots; ++k) {
    const uint64_t *s = h.nchw[k];
    if (h.tiles[k] || s[0] || s[1] || s[2] || s[3] || s[4] || s[5])
      print_slot(p, h, k);
  }
}
} // namespace

void print(Printer &p, const Anec &a, const TdSchema &schema, std::span<const uint8_t> file,
           std::optional<size_t> only) {
  selected_tds(a.chain, only); // ANEC-TD-005 before anything is printed
  // The document (anec-desc.dump) holds the chain before the header, the text after it.
  p.data("container", "anec");
  if (!p.text_form())
    print_chain(p, a.chain, schema, file, only);
  print_header(p, a);
  if (!p.text_form())
    return;
  p.text("\n");
  print_chain(p, a.chain, schema, file, only);
}

std::string anec_header_field(const Anec &a, uint64_t off) {
  if (off >= a.header_bytes)
    return "";
  if (off >= header_layout().bytes)
    return "pad";
  return header_layout().field_at(off);
}

namespace {
// What the descriptors address against what the header binds there (the driver programs buffer
// slot k with slot k's tiles: eiln/ane ane_drv.c, ane_nn_map): an enabled slot with no tiles
// (ANEC-AUD-008; slot 1 is the kernel data, which the driver places after the chain), and a slot a
// descriptor writes that the header binds as an input (ANEC-AUD-013).
void slot_bindings(const Anec &a, std::vector<Finding> &out) {
  const AnecHeader &h = a.header;
  for (const Td &td : a.chain.tds)
    for (const FieldValue &slot : enabled_slots(td)) {
      std::string what = slot.field->name + " = " + std::to_string(slot.value);
      if (slot.value != 1 && (slot.value >= AnecHeader::kSlots || !h.tiles[slot.value]))
        out.push_back(finding_at("ANEC-AUD-008", td.offset,
                                 what + " is enabled but the header gives slot " +
                                     std::to_string(slot.value) + " no tiles"));
      else if (slot.field->access == "write" && slot_role(h, slot.value).starts_with("input"))
        out.push_back(finding_at("ANEC-AUD-013", td.offset,
                                 "the descriptor writes slot " + std::to_string(slot.value) + " (" + what +
                                     "), which the header binds as " + slot_role(h, slot.value)));
    }
}
} // namespace

std::vector<Finding> audit_anec(const Anec &a) {
  const AnecHeader &h = a.header;
  std::vector<Finding> out = audit_chain(a.chain);
  auto sizes = [&](const std::string &m) { out.push_back(finding_at("ANEC-AUD-010", 0, m)); };
  if (h.size != align_up(h.tsk_size, 16) + h.krn_size)
    sizes("size " + hex(h.size) + " is not round_up(tsk_size " + hex(h.tsk_size) + ", 16) + krn_size " +
          hex(h.krn_size));
  if (h.td_count != a.chain.tds.size())
    sizes("td_count " + std::to_string(h.td_count) + ", the chain has " + std::to_string(a.chain.tds.size()));
  for (const Td &td : a.chain.tds)
    if (td.size != h.td_size)
      sizes("td_size " + hex(h.td_size) + ", the descriptor at " + hex(td.offset) + " is " + hex(td.size));
  if (!a.chain.tds.empty() &&
      a.chain.tds.back().offset + a.chain.tds.back().size != a.header_bytes + h.tsk_size)
    sizes("the chain ends at " + hex(a.chain.tds.back().offset + a.chain.tds.back().size) +
          ", tsk_size puts its end at " + hex(a.header_bytes + h.tsk_size));
  if (uint64_t(h.tiles[0]) * AnecHeader::kTile < h.size)
    sizes("command slot has " + std::to_string(h.tiles[0]) + " tile(s), the payload needs " +
          std::to_string(align_up(h.size, AnecHeader::kTile) / AnecHeader::kTile));
  auto slots = [&](const std::string &m) { out.push_back(finding_at("ANEC-AUD-011", 0, m)); };
  if (!h.src_count || !h.dst_count)
    slots(std::to_string(h.src_count) + " input(s) and " + std::to_string(h.dst_count) +
          " output(s); each needs one at least");
  if (uint64_t(AnecHeader::kFirstOutput) + h.dst_count + h.src_count > AnecHeader::kSlots) {
    slots(std::to_string(h.dst_count) + " outputs and " + std::to_string(h.src_count) +
          " inputs from slot 4 overrun the 32 slots");
    return out;
  }
  for (size_t k = AnecHeader::kFirstOutput; k < AnecHeader::kFirstOutput + h.dst_count + h.src_count; ++k) {
    const uint64_t *s = h.nchw[k];
    std::string who = "slot " + std::to_string(k) + " (" + slot_role(h, k) + ")";
    if (!h.tiles[k] || !s[0] || !s[1] || !s[2] || !s[3]) {
      slots(who + " lacks tiles or a shape");
      continue;
    }
    if (s[0] * s[1] * s[4] > uint64_t(h.tiles[k]) * AnecHeader::kTile)
      slots(who + ": " + std::to_string(s[0]) + " x " + std::to_string(s[1]) + " planes of " +
            std::to_string(s[4]) + " bytes exceed its " + std::to_string(h.tiles[k]) + " tile(s)");
    auto strides = [&](const std::string &m) {
      out.push_back(finding_at("ANEC-AUD-012", 0, who + ": " + m));
    };
    if (s[5] % 64 || s[4] % 64)
      strides("plane stride " + std::to_string(s[4]) + " and row stride " + std::to_string(s[5]) +
              " must be multiples of 64");
    if (s[5] < 2 * s[3])
      strides("row stride " + std::to_string(s[5]) + " holds fewer than W = " + std::to_string(s[3]) +
              " fp16 elements");
    if (s[4] < s[2] * s[5])
      strides("plane stride " + std::to_string(s[4]) + " holds fewer than H = " + std::to_string(s[2]) +
              " rows");
  }
  slot_bindings(a, out);
  return out;
}

std::vector<uint8_t> hwx_to_anec(const Hwx &x, std::span<const uint8_t> file, uint32_t header_bytes) {
  auto fail = [](const std::string &m) -> Error { return Error("ANEC-CONV-001", m); };
  if (payload_offsets().name_of(header_bytes).starts_with("unknown"))
    throw fail("header size " + hex(header_bytes) + " is neither 0x800 nor 0x1000");
  if (!x.program)
    throw fail("the hwx has no program thread state (buffer slots, descriptor count)");
  const HwxProgramState &p = *x.program;
  AnecHeader h;
  h.tsk_size = x.text.size;
  if (!p.td_bytes)
    throw fail("the program state (flavor " + std::to_string(p.flavor) +
               ") gives no descriptor size; the driver format needs one");
  h.td_size = uint32_t(p.td_bytes);
  h.td_count = p.td_count;
  const HwxSection *kernel = nullptr;
  for (const HwxSegment &g : x.segments)
    for (const HwxSection &s : g.sections)
      if (s.segment == "__TEXT" && s.name == "__const")
        kernel = &s;
  // The kernel data moves to where the driver format puts it (round_up(tsk_size, 16)); descriptors
  // address it through its buffer slot, not by its distance from the chain.
  if (kernel && (kernel->addr < x.text.addr + x.text.size || !kernel->offset))
    throw fail("kernel section __TEXT.__const at " + hex(kernel->addr) + " does not follow the chain at " +
               hex(x.text.addr) + "+" + hex(x.text.size));
  h.krn_size = kernel ? kernel->size : 0;
  h.size = align_up(h.tsk_size, 16) + h.krn_size;
  h.tiles[0] = uint32_t(align_up(h.size, AnecHeader::kTile) / AnecHeader::kTile);
  // Outputs first from slot 4, then inputs, the order libane binds them.
  bool inputs_started = false;
  for (size_t k = 2; k < HwxProgramState::kBars; ++k) {
    if (!p.bars[k])
      continue;
    std::string name = hwx_what_is(x, p.bars[k]);
    const HwxTensorState *t = nullptr;
    for (const HwxTensorState &s : x.states)
      if (s.name == name)
        t = &s;
    if (!t)
      throw fail("buffer slot " + std::to_string(k) + " (" + hex(p.bars[k]) +
                 ") holds no tensor with a thread state");
    bool output = t->direction == 2;
    if (k != AnecHeader::kFirstOutput + h.dst_count + h.src_count || (output && inputs_started) ||
        (t->direction != 1 && !output))
      throw fail(
          "buffer slot " + std::to_string(k) + " (" + name + ", " + (output ? "an output" : "an input") +
          ") breaks the anec header's order: it binds outputs from slot 4, then inputs, by position, "
          "and the driver gives slot k the k-th buffer (eiln/ane ane_drv.c), while the descriptors "
          "address the slots the program state gives (slot 4: " +
          (p.bars[AnecHeader::kFirstOutput] ? hwx_what_is(x, p.bars[AnecHeader::kFirstOutput]) : "empty") +
          "); bound by position, the buffers would swap places (eiln/anecc does so, and audit then "
          "reports ANEC-AUD-013)");
    inputs_started |= !output;
    ++(output ? h.dst_count : h.src_count);
    const uint64_t nchw[6] = {t->extents[0], t->extents[1], t->extents[2],
                              t->extents[3], t->strides[1], t->strides[2]};
    std::copy(std::begin(nchw), std::end(nchw), h.nchw[k]);
    h.tiles[k] = uint32_t(align_up(nchw[0] * nchw[1] * nchw[4], AnecHeader::kTile) / AnecHeader::kTile);
  }
  std::vector<uint8_t> out(header_bytes + h.size, 0);
  layout::Writer w(header_layout());
  w.set("size", h.size).set("td_size", h.td_size).set("td_count", h.td_count).set("tsk_size", h.tsk_size);
  w.set("krn_size", h.krn_size).set("src_count", h.src_count).set("dst_count", h.dst_count);
  for (uint32_t k = 0; k < AnecHeader::kSlots; ++k) {
    w.set("tiles", h.tiles[k], {k});
    for (uint32_t j = 0; j < 6; ++j)
      w.set("nchw", h.nchw[k][j], {k, j});
  }
  w.write_to(out, 0);
  std::copy_n(file.begin() + x.text.offset, x.text.size, out.begin() + header_bytes);
  if (kernel)
    std::copy_n(file.begin() + kernel->offset, kernel->size,
                out.begin() + header_bytes + align_up(h.tsk_size, 16));
  return out;
}

} // namespace anec::desc
