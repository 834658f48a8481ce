#include "anec/descriptors/td.hpp"

#include "anec/layout/layout.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>

namespace anec::desc {

namespace {
// The fields of the stream and record words (tables/schema/layout/td.toml), looked up once.
struct RecordWords {
  const layout::Struct &stream, &masked, &dense;
  const layout::Field &stream_address, &stream_count, &kind, &masked_address, &mask, &dense_address,
      &dense_count;
  static const RecordWords &get() {
    static const RecordWords w = [] {
      const layout::Database &db = layout::Database::builtin();
      const layout::Struct &s = db.get("td.stream"), &m = db.get("td.record_masked"),
                           &d = db.get("td.record_dense");
      return RecordWords{s,
                         m,
                         d,
                         s.at("address"),
                         s.at("count"),
                         db.get("td.record").at("masked"),
                         m.at("address"),
                         m.at("mask"),
                         d.at("address"),
                         d.at("count")};
    }();
    return w;
  }
};

// The register addresses one stream or record header writes.
std::vector<uint32_t> record_addresses(const TdSchema &s, uint32_t header) {
  const RecordWords &w = RecordWords::get();
  auto field = [&](const layout::Field &f) { return uint32_t(f.modifier.decode(f.extract(header))); };
  bool record = s.stream_format == "td.record", masked = record && field(w.kind);
  uint32_t base = field(!record ? w.stream_address : masked ? w.masked_address : w.dense_address);
  std::vector<uint32_t> out{base};
  if (masked) { // one word for the address, then one per set bit i at address + 4 (i + 1)
    for (uint32_t i = 0, mask = field(w.mask); i < 16; ++i)
      if (mask >> i & 1)
        out.push_back(base + 4 * (i + 1));
    return out;
  }
  for (uint32_t i = 1, n = field(record ? w.dense_count : w.stream_count); i < n; ++i)
    out.push_back(base + 4 * i);
  return out;
}

Word decode_word(const TdSchema &s, const std::string &block, uint32_t address, uint32_t raw,
                 uint64_t offset) {
  Word w;
  w.offset = offset;
  w.block = block;
  w.address = address;
  w.raw = raw;
  uint32_t covered = 0;
  const std::vector<const TdField *> &fields = s.fields_at(block, address);
  w.fields.reserve(fields.size());
  for (const TdField *f : fields) {
    w.fields.push_back({f, f->get(raw)});
    covered |= f->mask();
  }
  w.reserved = raw & ~covered;
  return w;
}
} // namespace

std::optional<uint32_t> header_field(const Td &td, const std::string &name) {
  for (const Word &w : td.header)
    for (const FieldValue &f : w.fields)
      if (f.field->name == name)
        return f.value;
  return std::nullopt;
}

const Word *find_word(const Chain &c, uint64_t offset) {
  for (const Td &td : c.tds)
    for (const Stream &st : td.streams)
      for (const Word &w : st.words)
        if (w.offset == offset)
          return &w;
  return nullptr;
}

Td decode_td(std::span<const uint8_t> b, uint64_t offset, uint64_t end, const TdSchema &s,
             std::vector<Finding> &findings) {
  if (offset + s.header_bytes > b.size())
    throw Error("ANEC-TD-001", "descriptor at " + hex(offset) + " needs a " + hex(s.header_bytes) +
                                   "-byte header, " + hex(b.size() - offset) + " bytes remain");
  Td td;
  td.offset = offset;
  td.header.reserve(s.header_bytes / 4);
  for (uint32_t a = 0; a < s.header_bytes; a += 4)
    td.header.push_back(decode_word(s, "Header", a, le32(b, offset + a), offset + a));
  td.eon = header_field(td, "EON").value_or(0) != 0;
  uint64_t p = offset + s.header_bytes;
  while (p < end) {
    if (p + 4 > b.size())
      throw Error("ANEC-TD-002", "stream header at " + hex(p) + " runs past the end " + hex(b.size()));
    Stream st;
    st.offset = p;
    st.header = le32(b, p);
    std::vector<uint32_t> addresses = record_addresses(s, st.header);
    st.count = uint32_t(addresses.size());
    st.address = addresses.front();
    uint64_t data_end = p + 4 + 4ull * st.count;
    if (data_end > end || data_end > b.size())
      throw Error("ANEC-TD-002", "stream at " + hex(p) + " (header " + hex(st.header) + ": " +
                                     std::to_string(st.count) + " words at " + hex(st.address) +
                                     ") runs past the descriptor end " +
                                     hex(std::min<uint64_t>(end, b.size())));
    const TdBlock *blk = s.block_at(st.address);
    st.words.reserve(st.count);
    if (!blk)
      findings.push_back(finding_at(
          "ANEC-TD-101", p, "stream at register address " + hex(st.address) + " is in no known block"));
    for (uint32_t i = 0; i < st.count; ++i) {
      uint32_t addr = addresses[i];
      const TdBlock *wb = s.block_at(addr);
      Word w = decode_word(s, wb ? wb->name : "", addr, le32(b, p + 4 + 4 * i), p + 4 + 4 * i);
      if (blk && wb != blk)
        findings.push_back(
            finding_at("ANEC-TD-102", w.offset,
                       "stream starting in " + blk->name + " runs into " +
                           (wb ? wb->name : "register address " + hex(addr) + ", outside every block")));
      st.words.push_back(std::move(w));
    }
    td.streams.push_back(std::move(st));
    p = data_end;
  }
  td.size = uint32_t(p - offset);
  for (const Word &w : td.header)
    if (w.reserved)
      findings.push_back(
          finding_at("ANEC-TD-103", w.offset, "reserved header bits " + hex(w.reserved) + " set"));
  return td;
}

uint64_t walk_end(std::span<const uint8_t> b, uint64_t offset, const TdSchema &s) {
  std::vector<const TdBlock *> seen;
  uint64_t p = offset + s.header_bytes;
  while (p + 4 <= b.size()) {
    std::vector<uint32_t> addresses = record_addresses(s, le32(b, p));
    const TdBlock *blk = s.block_at(addresses.front());
    if (!blk || std::find(seen.begin(), seen.end(), blk) != seen.end())
      break;
    seen.push_back(blk);
    p += 4 + 4ull * addresses.size();
  }
  return p;
}

namespace {
// Descriptors that give their own size (TaskWords in the first header word) and follow each other
// on task_alignment to the end of the bytes; a frame whose TaskWords is 0 is skipped whole.
Chain decode_sized_chain(std::span<const uint8_t> b, const TdSchema &s, uint64_t begin) {
  const TdField *size = nullptr;
  for (const TdField *f : s.fields_at("Header", 0))
    if (f->name == "TaskWords")
      size = f; // present: TdSchema::from_doc checks it
  Chain c;
  c.sized = true;
  uint64_t off = begin;
  while (off < b.size()) {
    if (b.size() - off < 4)
      throw Error("ANEC-TD-001", "descriptor at " + hex(off) + ": " + hex(b.size() - off) + " bytes remain");
    uint64_t words = size->get(le32(b, off));
    if (!words) {
      off += std::max<uint32_t>(s.frame_bytes, 4);
      continue;
    }
    if (4 * words < s.header_bytes || 4 * words > b.size() - off)
      throw Error("ANEC-TD-002", "descriptor at " + hex(off) + " gives " + std::to_string(words) +
                                     " words; " + hex(b.size() - off) +
                                     " bytes remain and the header takes " + hex(s.header_bytes));
    c.tds.push_back(decode_td(b, off, off + 4 * words, s, c.findings));
    off = align_up(off + 4 * words, s.task_alignment);
  }
  c.kernel_offset = b.size();
  return c;
}
} // namespace

Chain decode_raw_chain(std::span<const uint8_t> all, const TdSchema &s, const ChainLayout &layout,
                       uint64_t begin, uint64_t end_limit) {
  if (begin > all.size())
    throw Error("ANEC-TD-001", "chain start " + hex(begin) + " lies past the end " + hex(all.size()));
  std::span<const uint8_t> b = all.first(std::min<uint64_t>(end_limit, all.size()));
  if (s.chain == "sized")
    return decode_sized_chain(b, s, begin);
  Chain c;
  auto padding = [&](uint64_t from, uint64_t to, const char *where) {
    for (uint64_t i = from; i < to && i < b.size(); ++i)
      if (b[i]) {
        c.findings.push_back(finding_at("ANEC-TD-104", i, std::string("nonzero padding ") + where));
        return;
      }
  };
  uint64_t off = begin;
  // No cap on the count: every step moves forward (a NextPointer back is ANEC-TD-004), so the walk
  // ends within the bytes; real programs hold more than ten thousand descriptors.
  while (true) {
    if (off + s.header_bytes > b.size())
      throw Error("ANEC-TD-003", "the chain ends at " + hex(off) + " without a descriptor marked EON");
    Td td = decode_td(b, off, std::min<uint64_t>(walk_end(b, off, s), b.size()), s, c.findings);
    uint64_t end = td.offset + td.size;
    bool last = td.eon;
    c.tds.push_back(std::move(td));
    if (last) {
      if (end_limit != UINT64_MAX && end != b.size())
        c.findings.push_back(finding_at(
            "ANEC-TD-105", end, "the descriptors end at " + hex(end) + ", the section at " + hex(b.size())));
      c.kernel_offset = std::min<uint64_t>(align_up(end, layout.data_alignment), b.size());
      c.kernel_size = b.size() - c.kernel_offset;
      padding(end, c.kernel_offset, "between the last descriptor and the kernel data");
      return c;
    }
    // The header's NextPointer is the next descriptor's offset from the start of the chain; without
    // one, the next descriptor is assumed at the end rounded up to the alignment.
    uint64_t next_ptr = header_field(c.tds.back(), "NextPointer").value_or(0);
    uint64_t next = align_up(end, layout.td_alignment);
    if (next_ptr) {
      if (begin + next_ptr < end)
        throw Error("ANEC-TD-004",
                    "descriptor at " + hex(c.tds.back().offset) + " points its NextPointer " + hex(next_ptr) +
                        " back into itself or an earlier descriptor (it ends at " + hex(end - begin) + ")");
      next = begin + next_ptr;
    } else {
      c.findings.push_back(
          finding_at("ANEC-TD-106", c.tds.back().offset,
                     "descriptor without EON has no NextPointer; next assumed at " + hex(next)));
    }
    padding(end, next, "between descriptors");
    off = next;
  }
}

} // namespace anec::desc
