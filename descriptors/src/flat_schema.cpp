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
  out.header_ = {0, s.header_bytes, kFirstHeaderSlot}; // a whole number of words (TdSchema::from_doc)
  uint32_t slots = kFirstHeaderSlot + s.header_bytes / 4 + 1;
  for (const TdBlock &b : s.blocks) {
    out.by_address_.push_back({b.address, 4 * b.words, BlockId(out.blocks_.size())});
    out.blocks_.push_back({b.address, 4 * b.words, slots});
    slots += b.words + 1;
  }
  std::ranges::sort(out.by_address_, {}, &Span::address);
  out.index_pages();
  std::vector<std::vector<FieldExtract>> by_slot(slots);
  for (const TdField &f : s.fields)
    by_slot[out.slot_index(f.block == "Header" ? kHeaderBlock : out.block_at(f.address), f.address)]
        .push_back(extract_of(s, f)); // TdSchema::from_doc placed the field in its named block
  out.slots_.resize(slots);
  out.patterns_.resize(slots);
  out.addresses_.assign(slots, kNoAddress);
  out.fill_slots(kHeaderBlock, out.header_, by_slot);
  for (BlockId b = 0; b < out.blocks_.size(); ++b)
    out.fill_slots(b, out.blocks_[b], by_slot);
  auto header_ref = [&](const char *name, uint32_t words) -> std::optional<HeaderRef> {
    for (uint32_t w = 0; w < words && w < out.header_.bytes / 4; ++w)
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

void FlatSchema::index_pages() {
  for (const Span &b : by_address_)
    top_ = std::max(top_, uint64_t(b.address) + b.bytes);
  while (top_ && (top_ - 1) >> page_shift_ >= kPages)
    ++page_shift_;
  pages_.resize(top_ ? ((top_ - 1) >> page_shift_) + 1 : 0);
  uint16_t k = 0;
  for (uint64_t page = 0; page < pages_.size(); ++page) {
    while (k < by_address_.size() &&
           uint64_t(by_address_[k].address) + by_address_[k].bytes <= page << page_shift_)
      ++k;
    pages_[page] = k;
  }
}

void FlatSchema::fill_slots(BlockId id, const Block &b,
                            const std::vector<std::vector<FieldExtract>> &by_slot) {
  for (uint32_t i = b.first_slot; i <= b.first_slot + b.bytes / 4; ++i) {
    WordSlot &w = slots_[i];
    w = {uint32_t(extracts_.size()), uint32_t(by_slot[i].size()), 0, id};
    for (const FieldExtract &x : by_slot[i])
      w.covered |= x.mask << x.shift;
    extracts_.insert(extracts_.end(), by_slot[i].begin(), by_slot[i].end());
    patterns_[i] = {~0u, i};
    if (i < b.first_slot + b.bytes / 4)
      addresses_[i] = b.address + 4 * (i - b.first_slot);
  }
}

// Field::extract then Modifier::decode, truncated to 32 bits as the header word is.
FlatSchema::HeaderBits FlatSchema::bits_of(const layout::Field &f) {
  using Kind = layout::Modifier::Kind;
  HeaderBits out{f.bits ? f.bits->second : 0, uint32_t(f.mask()), 1, 0};
  if (f.modifier.kind == Kind::Shl)
    out.scale = f.modifier.n < 32 ? 1u << f.modifier.n : 0;
  else if (f.modifier.kind == Kind::Scale)
    out.scale = uint32_t(f.modifier.n);
  else if (f.modifier.kind == Kind::Minus)
    out.add = uint32_t(f.modifier.n);
  return out;
}

FlatSchema::RecordFields FlatSchema::record_fields(const std::string &format) {
  const layout::Database &db = layout::Database::builtin();
  if (format == "td.record") {
    const layout::Struct &dense = db.get("td.record_dense"), &masked = db.get("td.record_masked");
    return {bits_of(dense.at("address")), bits_of(dense.at("count")),
            bits_of(db.get("td.record").at("masked")), bits_of(masked.at("address")),
            bits_of(masked.at("mask"))};
  }
  const layout::Struct &stream = db.get("td.stream");
  return {bits_of(stream.at("address")), bits_of(stream.at("count")), {}, {}, {}}; // never masked
}

// The blocks from the page's first that start at or before `address`: mostly one.
BlockId FlatSchema::block_at(uint32_t address) const {
  if (address >= top_)
    return kNoBlock;
  for (auto b = by_address_.begin() + pages_[address >> page_shift_]; b != by_address_.end(); ++b)
    if (address - b->address < b->bytes)
      return b->id;
    else if (b->address > address)
      break;
  return kNoBlock;
}

RecordShape FlatSchema::record(uint32_t header) const {
  if (record_.kind.get(header)) {
    uint32_t mask = record_.mask.get(header) & 0xffff; // 16 registers after the first
    return {record_.masked_address.get(header), 1 + uint32_t(std::popcount(mask)), mask, true};
  }
  return {record_.address.get(header), std::max(1u, record_.count.get(header)), 0,
          false}; // the base at least
}

} // namespace anec::desc
