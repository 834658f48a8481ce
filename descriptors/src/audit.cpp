#include "anec/descriptors/audit.hpp"

#include "anec/layout/layout.hpp"
#include "anec/support/format.hpp"

namespace anec::desc {

namespace {
// The value of register `reg` (e.g. "CoeffBfrSize[2]") in the same descriptor as `near`.
std::optional<uint32_t> sibling(const Chain &c, uint64_t near, const std::string &reg) {
  for (const Td &td : c.tds) {
    if (near < td.offset || near >= td.offset + td.size)
      continue;
    for (const Stream &st : td.streams)
      for (const Word &w : st.words)
        for (const FieldValue &f : w.fields)
          if (f.field->reg == reg)
            return f.value;
  }
  return std::nullopt;
}

// Strides in tile granules (guide ch.23: a row is a 64-byte tile row; planes and batches are whole
// rows), the width stride one element, and every stride covering the axis inside it.
void out_stride_findings(const HwxTensor &l, std::vector<Finding> &out) {
  static const std::pair<const char *, uint64_t> sizes[] = {
      {"float16", 2}, {"float", 4}, {"int8", 1}, {"uint8", 1}, {"int16", 2}};
  if (l.extents.size() != 4)
    return;
  auto bad = [&](const std::string &m) {
    out.push_back(finding_at("ANEC-AUD-009", 0, "tensor " + l.name + ": " + m));
  };
  for (const auto &[name, size] : sizes)
    if (l.dtype == name && l.strides[3] != size)
      bad("width stride " + std::to_string(l.strides[3]) + " is not one " + name + " element");
  for (size_t k = 0; k < 3; ++k) {
    if (l.strides[k] % 64)
      bad(std::string(1, l.extents[k].first) + " stride " + std::to_string(l.strides[k]) +
          " is not a multiple of the 64-byte tile row");
    if (l.strides[k] < l.strides[k + 1] * l.extents[k + 1].second)
      bad(std::string(1, l.extents[k].first) + " stride " + std::to_string(l.strides[k]) +
          " is smaller than " + std::to_string(l.extents[k + 1].second) + " x " +
          std::to_string(l.strides[k + 1]));
  }
}
} // namespace

namespace {
// What the chain checks read of each descriptor, from the tree or the flat form.
struct TdSummary {
  uint64_t offset = 0;
  bool eon = false;
  std::optional<uint32_t> tid, next_pointer;
};

void check_eon(std::span<const TdSummary> tds, size_t i, std::vector<Finding> &out) {
  bool last = i + 1 == tds.size();
  if (tds[i].eon != last)
    out.push_back(finding_at(
        "ANEC-AUD-001", tds[i].offset,
        std::string("descriptor ") + std::to_string(i) +
            (tds[i].eon ? " is marked EON but is not the last" : " is the last but not marked EON")));
}

void check_tid(std::span<const TdSummary> tds, size_t i, std::vector<Finding> &out) {
  if (auto tid = tds[i].tid; tid && *tid != i)
    out.push_back(finding_at("ANEC-AUD-002", tds[i].offset,
                             "descriptor " + std::to_string(i) + " has TID " + std::to_string(*tid)));
}

void check_next_pointer(std::span<const TdSummary> tds, size_t i, std::vector<Finding> &out) {
  uint64_t want = i + 1 == tds.size() ? 0 : tds[i + 1].offset - tds.front().offset;
  if (auto np = tds[i].next_pointer; np && *np != want)
    out.push_back(finding_at("ANEC-AUD-003", tds[i].offset,
                             "NextPointer " + hex(*np) + ", the next descriptor is at " + hex(want)));
}

// The decoder's findings, then per descriptor the EON (not for sized chains), TID and NextPointer checks.
std::vector<Finding> chain_checks(const std::vector<Finding> &decoder, std::span<const TdSummary> tds,
                                  bool sized) {
  std::vector<Finding> out = decoder;
  for (size_t i = 0; i < tds.size(); ++i) {
    if (!sized)
      check_eon(tds, i, out);
    check_tid(tds, i, out);
    check_next_pointer(tds, i, out);
  }
  return out;
}
} // namespace

std::vector<Finding> audit_chain(const Chain &c) {
  std::vector<TdSummary> tds;
  tds.reserve(c.tds.size());
  for (const Td &td : c.tds)
    tds.push_back({td.offset, td.eon, header_field(td, "TID"), header_field(td, "NextPointer")});
  return chain_checks(c.findings, tds, c.sized);
}

std::vector<Finding> audit_chain(const FlatChain &c, const TdSchema &s) {
  std::vector<TdSummary> tds;
  tds.reserve(c.tds.size());
  for (const FlatTd &td : c.tds)
    tds.push_back(
        {td.offset, td.eon, c.header_value(td, s.flat().tid), c.header_value(td, s.flat().next_pointer)});
  return chain_checks(c.findings, tds, c.sized);
}

std::vector<FieldValue> enabled_slots(const Td &td) {
  std::vector<FieldValue> out;
  for (const Word &w : td.header)
    for (const FieldValue &slot : w.fields)
      if (slot.field->role == "slot")
        if (auto on = header_field(td, slot.field->pair); on && *on)
          out.push_back(slot);
  return out;
}

std::vector<Finding> audit_hwx(const Hwx &h) {
  std::vector<Finding> out = audit_chain(h.chain);
  const std::vector<HwxReloc> none; // relocations are checked against the decoded chain only
  for (const HwxReloc &r : h.chain_not_decoded.empty() ? h.relocations : none) {
    uint64_t at = uint64_t(h.text.offset) + r.address;
    const Word *w = r.address + 4ull <= h.text.size ? find_word(h.chain, at) : nullptr;
    const FieldValue *base = nullptr;
    if (w)
      for (const FieldValue &f : w->fields)
        if (f.field->role == "address")
          base = &f;
    if (!base) {
      out.push_back(
          finding_at("ANEC-AUD-004", at,
                     "relocation at __text+" + hex(r.address) + " against " + r.symbol +
                         (w ? " patches " + w->block + "." + hex(w->address) + ", not a base-address register"
                            : " lands on no register word")));
      continue;
    }
    const HwxSection *target = nullptr;
    for (const HwxSegment &g : h.segments)
      for (const HwxSection &s : g.sections)
        if (s.segment + "." + s.name == r.symbol)
          target = &s;
    const std::string &reg = base->field->reg;
    auto size = target && !base->field->pair.empty() ? sibling(h.chain, at, base->field->pair) : std::nullopt;
    if (target && size) {
      uint64_t begin = uint64_t(base->value) * 64, len = uint64_t(*size) * 64;
      if (begin + len > target->size)
        out.push_back(finding_at("ANEC-AUD-005", at,
                                 reg + " covers " + hex(begin) + "+" + hex(len) + " of " + r.symbol +
                                     ", which is " + hex(target->size) + " bytes"));
    }
  }
  for (const HwxTensor &l : h.layouts) {
    const HwxTensorState *st = nullptr;
    for (const HwxTensorState &t : h.states)
      if (t.name == l.name)
        st = &t;
    if (!st) {
      out.push_back(
          finding_at("ANEC-AUD-006", 0, "tensor " + l.name + " has a shape string but no thread state"));
      continue;
    }
    bool same = l.extents.size() == 4;
    for (size_t k = 0; same && k < 4; ++k)
      same = l.extents[k].second == st->extents[k] && l.strides[k] == st->strides[k];
    if (!same)
      out.push_back(finding_at("ANEC-AUD-006", st->offset,
                               "tensor " + l.name +
                                   ": the thread state's extents or strides disagree with its shape string"));
  }
  if (const auto &p = h.program) {
    auto bad = [&](const std::string &m) {
      out.push_back(finding_at("ANEC-AUD-007", p->offset, "program state: " + m));
    };
    if (p->td_base != h.text.addr)
      bad("chain base " + hex(p->td_base) + ", __text is at " + hex(h.text.addr));
    if (h.chain_not_decoded.empty() && p->td_count != h.chain.tds.size())
      bad(std::to_string(p->td_count) + " descriptor(s) declared, the chain has " +
          std::to_string(h.chain.tds.size()));
    for (const Td &td : h.chain.tds)
      if (p->td_bytes && p->td_bytes != td.size)
        bad("descriptor size " + hex(p->td_bytes) + ", the descriptor at " + hex(td.offset) + " is " +
            hex(td.size));
    for (const Td &td : h.chain.tds)
      for (const FieldValue &slot : enabled_slots(td))
        if (slot.value >= HwxProgramState::kBars || !p->bars[slot.value])
          out.push_back(finding_at("ANEC-AUD-008", td.offset,
                                   slot.field->name + " = " + std::to_string(slot.value) +
                                       " is enabled but buffer slot " + std::to_string(slot.value) +
                                       " holds no address"));
  }
  for (const HwxTensor &l : h.layouts)
    out_stride_findings(l, out);
  return out;
}

namespace {
// ": layout.field" for the byte `rel` into a load command read with a layout (a segment's section
// records after its head: "macho.section_64[k].field").
std::string command_field(const layout::Database &db, const HwxCommand &cmd, uint64_t rel) {
  if (cmd.layout.empty())
    return "";
  const layout::Struct &s = db.get(cmd.layout);
  if (rel < s.bytes) {
    std::string f = s.field_at(rel);
    return f.empty() ? "" : ": " + s.name + "." + f;
  }
  if (s.name != "macho.segment_64")
    return "";
  const layout::Struct &sect = db.get("macho.section_64");
  return ": " + sect.name + "[" + std::to_string((rel - s.bytes) / sect.bytes) + "]." +
         sect.field_at((rel - s.bytes) % sect.bytes);
}
} // namespace

std::string explain(std::span<const uint8_t> file, const Chain &c, const Hwx *h, uint64_t off) {
  std::string out;
  if (off >= file.size())
    return hex(off) + " lies past the end of the file (" + hex(file.size()) + " bytes)\n";
  if (h) {
    const layout::Database &db = layout::Database::builtin();
    if (off < db.get("hwx.header").bytes)
      out += hex(off) + ": hwx header " + db.get("hwx.header").field_at(off) + "\n";
    for (const HwxCommand &cmd : h->commands)
      if (off >= cmd.offset && off < cmd.offset + cmd.size)
        out += hex(off) + ": load command " + hex(cmd.cmd) + " at " + hex(cmd.offset) + " (+" +
               hex(off - cmd.offset) + " of " + hex(cmd.size) + ")" +
               command_field(db, cmd, off - cmd.offset) + "\n";
    for (const HwxSegment &g : h->segments)
      for (const HwxSection &s : g.sections)
        if (s.offset && off >= s.offset && off < s.offset + s.size)
          out += hex(off) + ": section " + s.segment + "." + s.name + " +" + hex(off - s.offset) + " (vm " +
                 hex(s.addr + off - s.offset) + ")\n";
    for (const HwxReloc &r : h->relocations)
      if (off >= h->text.offset + uint64_t(r.address) && off < h->text.offset + uint64_t(r.address) + 4)
        out += hex(off) + ": relocated against " + r.symbol + "\n";
  }
  for (size_t i = 0; i < c.tds.size(); ++i) {
    const Td &td = c.tds[i];
    if (off < td.offset || off >= td.offset + td.size)
      continue;
    auto word = [&](const Word &w, const std::string &what) {
      if (off < w.offset || off >= w.offset + 4)
        return;
      out += hex(off) + ": TD " + std::to_string(i) + " " + what + " word " + hex(w.raw);
      for (const FieldValue &f : w.fields)
        out += " " + f.field->path() + "=" + std::to_string(f.value);
      if (w.fields.empty())
        out +=
            " " + (w.block.empty() ? std::string("?") : w.block) + "." + hex(w.address) + " (no field named)";
      out += "\n";
    };
    for (const Word &w : td.header)
      word(w, "header");
    for (const Stream &st : td.streams) {
      if (off >= st.offset && off < st.offset + 4)
        out += hex(off) + ": TD " + std::to_string(i) + " stream header " + hex(st.header) + ": " +
               std::to_string(st.count) + " words from register " + hex(st.address) + "\n";
      for (const Word &w : st.words)
        word(w, "register");
    }
  }
  if (!h && off >= c.kernel_offset && c.kernel_size)
    out += hex(off) + ": kernel data +" + hex(off - c.kernel_offset) + "\n";
  if (out.empty())
    out = hex(off) + ": no decoded structure (padding or unreferenced bytes)\n";
  return out;
}

} // namespace anec::desc
