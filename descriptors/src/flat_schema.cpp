#include "anec/descriptors/flat_schema.hpp"

#include "anec/descriptors/td_schema.hpp"
#include "anec/layout/layout.hpp"

#include <algorithm>
#include <bit>

namespace anec::desc {

namespace {
FieldExtract extract_of(const TdSchema &s, const TdField &f) {
  return {uint32_t(&f - s.fields.data()), f.lo, f.mask() >> f.lo};
}
} // namespace

FlatSchema FlatSchema::compile(const TdSchema &s) {
  FlatSchema out;
  out.header_words_ = s.header_bytes / 4;
  uint32_t slots = kFirstHeaderSlot + out.header_words_;
  for (const TdBlock &b : s.blocks) {
    out.blocks_.push_back({b.address, 4 * b.words, slots});
    slots += b.words;
  }
  out.slots_.resize(slots);
  auto slot_index = [&](const TdField &f) {
    if (f.block == "Header")
      return kFirstHeaderSlot + f.address / 4;
    BlockId b = out.block_at(f.address); // TdSchema::from_doc placed the field in its named block
    return out.blocks_[b].first_slot + (f.address - out.blocks_[b].address) / 4;
  };
  std::vector<std::vector<FieldExtract>> by_slot(slots);
  for (const TdField &f : s.fields)
    by_slot[slot_index(f)].push_back(extract_of(s, f));
  for (uint32_t i = kFirstHeaderSlot; i < slots; ++i) {
    WordSlot &w = out.slots_[i];
    w.first = uint32_t(out.extracts_.size());
    w.count = uint32_t(by_slot[i].size());
    for (const FieldExtract &x : by_slot[i])
      w.covered |= x.mask << x.shift;
    out.extracts_.insert(out.extracts_.end(), by_slot[i].begin(), by_slot[i].end());
  }
  auto header_ref = [&](const char *name, uint32_t words) -> std::optional<HeaderRef> {
    for (uint32_t w = 0; w < words && w < out.header_words_; ++w)
      for (const FieldExtract &x : out.extracts(out.slots_[kFirstHeaderSlot + w]))
        if (s.fields[x.field].name == name)
          return HeaderRef{w, x};
    return std::nullopt;
  };
  out.eon = header_ref("EON", UINT32_MAX);
  out.tid = header_ref("TID", UINT32_MAX);
  out.next_pointer = header_ref("NextPointer", UINT32_MAX);
  out.task_words = header_ref("TaskWords", 1);
  out.record_ = record_fields(s.stream_format);
  return out;
}

FlatSchema::RecordFields FlatSchema::record_fields(const std::string &format) {
  const layout::Database &db = layout::Database::builtin();
  if (format == "td.record") {
    const layout::Struct &dense = db.get("td.record_dense"), &masked = db.get("td.record_masked");
    return {&dense.at("address"), &dense.at("count"), &db.get("td.record").at("masked"),
            &masked.at("address"), &masked.at("mask")};
  }
  const layout::Struct &stream = db.get("td.stream");
  return {&stream.at("address"), &stream.at("count")};
}

BlockId FlatSchema::block_at(uint32_t address) const {
  for (size_t b = 0; b < blocks_.size(); ++b)
    if (address - blocks_[b].address < blocks_[b].bytes)
      return BlockId(b);
  return kNoBlock;
}

RecordShape FlatSchema::record(uint32_t header) const {
  auto field = [&](const layout::Field *f) { return uint32_t(f->modifier.decode(f->extract(header))); };
  if (record_.kind && field(record_.kind)) {
    uint32_t mask = field(record_.mask) & 0xffff; // 16 registers after the first
    return {field(record_.masked_address), 1 + uint32_t(std::popcount(mask)), mask, true};
  }
  return {field(record_.address), std::max(1u, field(record_.count)), 0, false}; // the base at least
}

} // namespace anec::desc
