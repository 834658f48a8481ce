#include "anec/support/compiled_doc.hpp"

#include <cstdio>
#include <cstring>

namespace anec::compiled {
namespace {

// Header: magic, format version, then the length and hash of the text the Doc was parsed from.
constexpr char kMagic[8] = {'A', 'N', 'E', 'C', 'D', 'O', 'C', '\0'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = sizeof kMagic + 4 + 8 + 8;
// Deeper nesting than any table has; it bounds the decoder's recursion on a damaged file.
constexpr int kMaxDepth = 256;

// A node: one byte (kind in the low 3 bits, then the hex and inline-table hints), the source line and
// column as varints, then the payload: a byte for a bool, a zigzag varint for an integer, 8 bytes for
// a float, a length and bytes for a string, a count and the nodes for an array, a count and
// (key, node) pairs for a table.
enum Flag : uint8_t { kHex = 1 << 3, kInline = 1 << 4 };

uint64_t mix(uint64_t h) {
  h *= 0x9fb21c651e98df25ull;
  return h ^ (h >> 29);
}

void put_varint(std::string &out, uint64_t v) {
  for (; v >= 0x80; v >>= 7)
    out += static_cast<char>(v | 0x80);
  out += static_cast<char>(v);
}

void put_fixed(std::string &out, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i)
    out += static_cast<char>(v >> (8 * i));
}

void put_text(std::string &out, std::string_view s) {
  put_varint(out, s.size());
  out += s;
}

void put_node(std::string &out, const Doc &d) {
  out +=
      static_cast<char>(static_cast<uint8_t>(d.kind()) | (d.hex ? kHex : 0) | (d.inline_table ? kInline : 0));
  put_varint(out, d.line);
  put_varint(out, d.column);
  switch (d.kind()) {
  case Doc::Kind::Null:
    break;
  case Doc::Kind::Bool:
    out += static_cast<char>(d.as_bool());
    break;
  case Doc::Kind::Int: {
    auto u = static_cast<uint64_t>(d.as_int());
    put_varint(out, (u << 1) ^ (d.as_int() < 0 ? ~uint64_t{0} : 0));
    break;
  }
  case Doc::Kind::Float: {
    uint64_t bits;
    double f = d.as_float();
    std::memcpy(&bits, &f, sizeof bits);
    put_fixed(out, bits, 8);
    break;
  }
  case Doc::Kind::String:
    put_text(out, d.as_string());
    break;
  case Doc::Kind::Array:
    put_varint(out, d.items().size());
    for (auto &i : d.items())
      put_node(out, i);
    break;
  case Doc::Kind::Table:
    put_varint(out, d.members().size());
    for (auto &m : d.members()) {
      put_text(out, m.key);
      put_node(out, m.value);
    }
    break;
  }
}

struct Malformed {};

class Reader {
public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ == bytes_.size(); }

  std::string_view take(size_t n) {
    if (n > bytes_.size() - pos_)
      throw Malformed{};
    auto s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  uint64_t fixed(size_t n) {
    auto s = take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i)
      v |= uint64_t{static_cast<uint8_t>(s[i])} << (8 * i);
    return v;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      auto b = static_cast<uint8_t>(take(1)[0]);
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80))
        return v;
    }
    throw Malformed{};
  }
  // A count of things that each take at least one byte: more than the bytes left is malformed.
  size_t count() {
    uint64_t n = varint();
    if (n > bytes_.size() - pos_)
      throw Malformed{};
    return n;
  }
  uint32_t position() {
    uint64_t v = varint();
    if (v > UINT32_MAX)
      throw Malformed{};
    return static_cast<uint32_t>(v);
  }

  Doc node(int depth) {
    if (depth > kMaxDepth)
      throw Malformed{};
    auto tag = static_cast<uint8_t>(take(1)[0]);
    uint32_t line = position(), column = position();
    Doc d = payload(static_cast<Doc::Kind>(tag & 7), depth);
    d.line = line;
    d.column = column;
    d.hex = tag & kHex;
    d.inline_table = tag & kInline;
    return d;
  }

private:
  Doc payload(Doc::Kind kind, int depth) {
    switch (kind) {
    case Doc::Kind::Null:
      return Doc();
    case Doc::Kind::Bool:
      return Doc::boolean(take(1)[0] != 0);
    case Doc::Kind::Int: {
      uint64_t z = varint();
      return Doc::integer(static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1)));
    }
    case Doc::Kind::Float: {
      uint64_t bits = fixed(8);
      double f;
      std::memcpy(&f, &bits, sizeof f);
      return Doc::number(f);
    }
    case Doc::Kind::String:
      return Doc::string(std::string(take(count())));
    case Doc::Kind::Array: {
      std::vector<Doc> items(count());
      for (auto &i : items)
        i = node(depth + 1);
      return Doc::array(std::move(items));
    }
    case Doc::Kind::Table: {
      size_t n = count();
      Doc t = Doc::table(n);
      for (; n > 0; --n) {
        std::string key(take(count()));
        t.append(std::move(key), node(depth + 1));
      }
      return t;
    }
    }
    throw Malformed{};
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

} // namespace

uint64_t text_hash(std::string_view text) {
  // Four independent lanes over 32-byte blocks, then the tail word by word.
  uint64_t lane[4] = {1, 2, 3, 4};
  size_t i = 0;
  for (; i + 32 <= text.size(); i += 32)
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, text.data() + i + 8 * k, 8);
      lane[k] = mix(lane[k] ^ w);
    }
  uint64_t h = mix(0x9e3779b97f4a7c15ull ^ text.size());
  for (uint64_t l : lane)
    h = mix(h ^ l);
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    h = mix(h ^ w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, text.data() + i, text.size() - i);
  return mix(mix(h ^ tail));
}

std::string file_name(std::string_view text) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.doc", static_cast<unsigned long long>(text_hash(text)));
  return name;
}

std::string encode(const Doc &doc, std::string_view text) {
  std::string out(kMagic, sizeof kMagic);
  put_fixed(out, kVersion, 4);
  put_fixed(out, text.size(), 8);
  put_fixed(out, text_hash(text), 8);
  put_node(out, doc);
  return out;
}

std::optional<Doc> decode(std::string_view bytes, std::string_view text) {
  if (bytes.size() < kHeaderBytes ||
      bytes.substr(0, sizeof kMagic) != std::string_view(kMagic, sizeof kMagic))
    return std::nullopt;
  try {
    Reader r(bytes.substr(sizeof kMagic));
    if (r.fixed(4) != kVersion || r.fixed(8) != text.size() || r.fixed(8) != text_hash(text))
      return std::nullopt;
    Doc d = r.node(0);
    if (!r.done())
      return std::nullopt;
    return d;
  } catch (const Malformed &) {
    return std::nullopt;
  }
}

} // namespace anec::compiled
