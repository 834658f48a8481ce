#include "anec/descriptors/flat.hpp"

#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

namespace anec::desc {

namespace {
// The register addresses of one stream in order (RecordShape).
class Addresses {
public:
  explicit Addresses(const RecordShape &r) : r_(r), mask_(r.mask), next_(r.base) {}
  uint32_t next() {
    uint32_t a = next_;
    if (!r_.masked)
      next_ += 4;
    else if (mask_) {
      next_ = r_.base + 4 * (uint32_t(std::countr_zero(mask_)) + 1);
      mask_ &= mask_ - 1;
    }
    return a;
  }

private:
  const RecordShape &r_;
  uint32_t mask_, next_;
};

// The words of a run of consecutive words and slots, as a random-access iterator for vector::insert.
struct RunWords {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = FlatWord;
  using difference_type = std::ptrdiff_t;
  using pointer = const FlatWord *;
  using reference = FlatWord;
  const uint8_t *bytes;
  const FlatWord *pattern; // FlatSchema::pattern

  // The pattern anded, lane by lane, with the raw value in its raw lane: one vector and (a GCC and
  // Clang vector type), where field by field the compiler unpacks the pattern and repacks it.
  FlatWord operator*() const {
    static_assert(offsetof(FlatWord, raw) == 0 && offsetof(FlatWord, slot) == 4 && sizeof(FlatWord) == 8,
                  "the lanes are raw, slot");
    using Lanes = uint32_t __attribute__((vector_size(8)));
    return std::bit_cast<FlatWord>(std::bit_cast<Lanes>(*pattern) & Lanes{le32({bytes, 4}, 0), ~0u});
  }
  RunWords &operator++() { return *this += 1; }
  RunWords &operator--() { return *this += -1; }
  RunWords &operator+=(difference_type n) {
    bytes += 4 * n, pattern += n;
    return *this;
  }
  RunWords operator+(difference_type n) const { return RunWords(*this) += n; }
  difference_type operator-(const RunWords &o) const { return pattern - o.pattern; }
  bool operator==(const RunWords &o) const { return pattern == o.pattern; }
};

class Walker {
public:
  Walker(std::span<const uint8_t> b, const TdSchema &s, FlatChain &c, const EachTd *each = nullptr)
      : b_(b), s_(s), f_(s.flat()), c_(c), keep_words_(c.detail == FlatDetail::Words), each_(each) {}

  // One descriptor at `offset`, its streams walked until `end`; as a step of the chain walk
  // (`chain_walk`), it ends instead at the first stream header whose block is unknown or already
  // seen in it (a descriptor writes each block once). Returns where it ends.
  uint64_t td(uint64_t offset, uint64_t end, bool chain_walk) {
    if (offset + s_.header_bytes > b_.size())
      throw Error("ANEC-TD-001", "descriptor at " + hex(offset) + " needs a " + hex(s_.header_bytes) +
                                     "-byte header, " + hex(b_.size() - offset) + " bytes remain");
    FlatTd td{offset, 0, false, uint32_t(c_.words.size()), uint32_t(c_.streams.size()), 0};
    consecutive_words(offset, 0, kHeaderBlock, s_.header_bytes / 4);
    td.eon = c_.header_value(td, f_.eon).value_or(0) != 0;
    seen_.assign(s_.blocks.size(), false);
    uint64_t p = offset + s_.header_bytes;
    while (chain_walk ? p + 4 <= b_.size() : p < end) {
      if (p + 4 > b_.size())
        throw Error("ANEC-TD-002", "stream header at " + hex(p) + " runs past the end " + hex(b_.size()));
      RecordShape shape = f_.record(le32(b_, p));
      BlockId block = f_.block_at(shape.base);
      if (chain_walk && !s_.raw() && (block == kNoBlock || seen_[block]))
        break;
      if (block != kNoBlock)
        seen_[block] = true;
      p = stream(p, shape, block, end);
      ++td.streams;
    }
    td.size = uint32_t(p - offset);
    c_.tds.push_back(td);
    std::span<const FlatWord> header = c_.header(c_.tds.back(), s_);
    for (size_t k = 0; k < header.size() && !s_.raw(); ++k) // a raw layout knows no reserved bits
      if (uint32_t reserved = FlatChain::reserved(header[k], s_))
        c_.findings.push_back(finding_at("ANEC-TD-103", c_.header_offset(td, k),
                                         "reserved header bits " + hex(reserved) + " set"));
    return p;
  }

  // Descriptors linked by NextPointer from `begin` to the one marked EON; `bounded`: the bytes end
  // where a container's section does.
  void linked(const ChainLayout &layout, uint64_t begin, bool bounded) {
    uint64_t off = begin;
    // No cap on the count: every step moves forward (a NextPointer back is ANEC-TD-004), so the walk
    // ends within the bytes; real programs hold more than ten thousand descriptors.
    while (true) {
      if (off + s_.header_bytes > b_.size())
        throw Error("ANEC-TD-003", "the chain ends at " + hex(off) + " without a descriptor marked EON");
      uint64_t end = s_.raw() ? td(off, raw_end(begin, off), false) : td(off, b_.size(), true);
      const FlatTd last = c_.tds.back();
      // The header's NextPointer is the next descriptor's offset from the start of the chain;
      // without one, the next descriptor is assumed at the end rounded up to the alignment.
      uint64_t next_ptr = c_.header_value(last, f_.next_pointer).value_or(0);
      hand_over(last);
      if (last.eon) {
        if (bounded && end != b_.size())
          c_.findings.push_back(
              finding_at("ANEC-TD-105", end,
                         "the descriptors end at " + hex(end) + ", the section at " + hex(b_.size())));
        c_.kernel_offset = std::min<uint64_t>(align_up(end, layout.data_alignment), b_.size());
        c_.kernel_size = b_.size() - c_.kernel_offset;
        padding(end, c_.kernel_offset, "between the last descriptor and the kernel data");
        return;
      }
      uint64_t next = align_up(end, layout.td_alignment);
      if (next_ptr) {
        if (begin + next_ptr < end)
          throw Error("ANEC-TD-004",
                      "descriptor at " + hex(last.offset) + " points its NextPointer " + hex(next_ptr) +
                          " back into itself or an earlier descriptor (it ends at " + hex(end - begin) + ")");
        next = begin + next_ptr;
      } else {
        c_.findings.push_back(
            finding_at("ANEC-TD-106", last.offset,
                       "descriptor without EON has no NextPointer; next assumed at " + hex(next)));
      }
      padding(end, next, "between descriptors");
      off = next;
    }
  }

  // Where a descriptor of a raw layout ends: where its NextPointer points, or, marked EON or without
  // a NextPointer, at the end of the bytes (a stream running past it is ANEC-TD-002).
  uint64_t raw_end(uint64_t begin, uint64_t off) const {
    auto header = [&](const std::optional<HeaderRef> &ref) -> uint64_t {
      return ref ? ref->extract.get(le32(b_, off + 4 * ref->word)) : 0;
    };
    uint64_t next = header(f_.next_pointer);
    if (header(f_.eon) || !next || next > b_.size() - begin)
      return b_.size();
    return std::max(begin + next, off + s_.header_bytes);
  }

  // Descriptors that give their own size (TaskWords in the first header word) and follow each
  // other on task_alignment to the end of the bytes; a frame whose TaskWords is 0 is skipped whole.
  void sized(uint64_t begin) {
    c_.sized = true;
    uint64_t off = begin;
    while (off < b_.size()) {
      if (b_.size() - off < 4)
        throw Error("ANEC-TD-001",
                    "descriptor at " + hex(off) + ": " + hex(b_.size() - off) + " bytes remain");
      uint64_t words = f_.task_words->extract.get(le32(b_, off)); // TdSchema::from_doc checks it is there
      if (!words) {
        off += std::max<uint32_t>(s_.frame_bytes, 4);
        continue;
      }
      if (4 * words < s_.header_bytes || 4 * words > b_.size() - off)
        throw Error("ANEC-TD-002", "descriptor at " + hex(off) + " gives " + std::to_string(words) +
                                       " words; " + hex(b_.size() - off) +
                                       " bytes remain and the header takes " + hex(s_.header_bytes));
      td(off, off + 4 * words, false);
      hand_over(c_.tds.back());
      off = align_up(off + 4 * words, s_.task_alignment);
    }
    c_.kernel_offset = b_.size();
  }

private:
  // A descriptor the walk is done with goes to `each_`, if given, and is then dropped.
  void hand_over(const FlatTd &td) {
    if (!each_)
      return;
    (*each_)(c_, td);
    c_.tds.clear();
    c_.streams.clear();
    c_.words.clear();
    c_.loose_addresses.clear();
  }

  void word(uint64_t offset, uint32_t address, BlockId block) {
    uint32_t slot = f_.slot_index(block, address);
    if (f_.address_of(slot) == FlatSchema::kNoAddress)
      c_.loose_addresses.emplace_back(uint32_t(c_.words.size()), address);
    c_.words.push_back({le32(b_, offset), slot});
  }

  // The common stream: consecutive words inside its block, so consecutive slots; appended in one
  // range insert, which grows the buffer once and writes each word once.
  void consecutive_words(uint64_t at, uint32_t address, BlockId block, uint32_t count) {
    RunWords first{b_.data() + at, &f_.pattern(f_.slot_index(block, address))};
    c_.words.insert(c_.words.end(), first, first + count);
  }

  // The stream at `p` (its header read into `shape`, its first address in `block`); returns its end.
  uint64_t stream(uint64_t p, const RecordShape &shape, BlockId block, uint64_t end) {
    uint64_t data_end = p + 4 + 4ull * shape.count;
    if (data_end > end || data_end > b_.size())
      throw Error("ANEC-TD-002", "stream at " + hex(p) + " (header " + hex(le32(b_, p)) + ": " +
                                     std::to_string(shape.count) + " words at " + hex(shape.base) +
                                     ") runs past the descriptor end " +
                                     hex(std::min<uint64_t>(end, b_.size())));
    if (block == kNoBlock && !s_.raw())
      c_.findings.push_back(finding_at(
          "ANEC-TD-101", p, "stream at register address " + hex(shape.base) + " is in no known block"));
    if (keep_words_)
      c_.streams.push_back({p, le32(b_, p), shape.base, shape.count, uint32_t(c_.words.size())});
    uint32_t last = shape.base + 4 * (shape.count - 1);
    if (!shape.masked && shape.base % 4 == 0 && f_.in_block(block, shape.base) && f_.in_block(block, last)) {
      if (keep_words_)
        consecutive_words(p + 4, shape.base, block, shape.count);
      return data_end;
    }
    Addresses addresses(shape);
    for (uint32_t i = 0; i < shape.count; ++i) {
      uint32_t address = addresses.next();
      BlockId in = f_.in_block(block, address) ? block : f_.block_at(address);
      if (keep_words_)
        word(p + 4 + 4 * i, address, in);
      if (block != kNoBlock && in != block)
        c_.findings.push_back(
            finding_at("ANEC-TD-102", p + 4 + 4 * i,
                       "stream starting in " + s_.blocks[block].name + " runs into " +
                           (in != kNoBlock ? s_.blocks[in].name
                                           : "register address " + hex(address) + ", outside every block")));
    }
    return data_end;
  }

  // ANEC-TD-104 at the first nonzero byte of [from, to), read eight bytes at a time.
  void padding(uint64_t from, uint64_t to, const char *where) {
    uint64_t i = from, stop = std::min<uint64_t>(to, b_.size());
    for (uint64_t eight = 0; i + 8 <= stop; i += 8) {
      std::memcpy(&eight, b_.data() + i, 8); // only compared with zero: byte order does not matter
      if (eight)
        break;
    }
    for (; i < stop; ++i)
      if (b_[i]) {
        c_.findings.push_back(finding_at("ANEC-TD-104", i, std::string("nonzero padding ") + where));
        return;
      }
  }

  std::span<const uint8_t> b_;
  const TdSchema &s_;
  const FlatSchema &f_;
  FlatChain &c_;
  bool keep_words_;
  const EachTd *each_;
  std::vector<bool> seen_; // per block, within the descriptor being walked
};
} // namespace

namespace {
void walk_chain(std::span<const uint8_t> all, const TdSchema &s, FlatChain &out, FlatDetail detail,
                const ChainLayout &layout, uint64_t begin, uint64_t end, const EachTd *each) {
  out.detail = detail;
  out.tds.clear();
  out.streams.clear();
  out.words.clear();
  out.loose_addresses.clear();
  out.findings.clear();
  out.sized = false;
  out.kernel_offset = out.kernel_size = 0;
  if (begin > all.size())
    throw Error("ANEC-TD-001", "chain start " + hex(begin) + " lies past the end " + hex(all.size()));
  std::span<const uint8_t> bytes = all.first(std::min<uint64_t>(end, all.size()));
  if (detail == FlatDetail::Words && !each && begin < bytes.size()) // each word has 4 bytes of its own
    out.words.reserve((bytes.size() - begin) / 4);
  Walker w(bytes, s, out, each);
  if (s.chain == "sized")
    w.sized(begin);
  else
    w.linked(layout, begin, end != UINT64_MAX);
}
} // namespace

void decode_flat(std::span<const uint8_t> bytes, const TdSchema &s, FlatChain &out, FlatDetail detail,
                 const ChainLayout &layout, uint64_t begin, uint64_t end) {
  walk_chain(bytes, s, out, detail, layout, begin, end, nullptr);
}

void decode_flat_each(std::span<const uint8_t> bytes, const TdSchema &s, FlatChain &scratch,
                      const EachTd &each, const ChainLayout &layout, uint64_t begin, uint64_t end) {
  walk_chain(bytes, s, scratch, FlatDetail::Words, layout, begin, end, &each);
}

void decode_flat_td(std::span<const uint8_t> bytes, uint64_t offset, uint64_t end, const TdSchema &s,
                    FlatChain &out) {
  Walker(bytes, s, out).td(offset, end, false);
}

} // namespace anec::desc
