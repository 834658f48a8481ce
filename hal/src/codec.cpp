#include "anec/hal/codec.hpp"

#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace anec::hal {

namespace {

// libc++ short-string layout (little-endian): byte 0 = size * 2 (low bit clear = short form),
// characters from byte 1, NUL padded to 24 bytes.
void store_str24(Bytes &b, uint32_t off, const std::string &s) {
  b[off] = static_cast<uint8_t>(s.size() * 2);
  std::memcpy(&b[off + 1], s.data(), s.size());
}
std::string load_str24(std::span<const uint8_t> b, const Field &f) {
  uint32_t off = *f.offset;
  uint8_t tag = b[off];
  if (tag & 1)
    throw Error("ANEC-HAL-002", "field '" + f.name + "' at " + hex(off) +
                                    " holds a long-form string (heap pointer), which a blob cannot carry");
  size_t n = tag / 2;
  if (n > 22)
    throw Error("ANEC-HAL-002", "field '" + f.name + "' at " + hex(off) + ": short-string length " +
                                    std::to_string(n) + " exceeds 22");
  std::string s(reinterpret_cast<const char *>(&b[off + 1]), n);
  if (s.find('\0') != std::string::npos)
    throw Error("ANEC-HAL-002", "field '" + f.name + "' at " + hex(off) + ": NUL inside the string");
  for (size_t i = off + 1 + n; i < off + 24; ++i)
    if (b[i] != 0)
      throw Error("ANEC-HAL-002", "field '" + f.name + "' at " + hex(off) + ": nonzero byte " + hex(b[i]) +
                                      " after the string at " + hex(i) + " would be lost");
  return s;
}

} // namespace

Bytes encode(const Schema &schema, const Target &target) {
  layout::Writer w(schema.blob_layout());
  Bytes blob(schema.blob_size(), 0); // strings and byte runs, laid over the writer's integers below
  for (const Field &f : schema.fields()) {
    if (!f.in_blob())
      continue;
    const Entry *e = target.find(f.name);
    if (!e)
      continue; // unknown regions that were zero; missing named fields are zero too
    if (std::string why = check_value(f, e->value); !why.empty())
      throw Error("ANEC-HAL-004", "target '" + target.name + "', field '" + f.name + "': " + why);
    uint32_t off = *f.offset;
    switch (f.type) {
    case Type::F64:
      w.set(f.name, std::bit_cast<uint64_t>(std::get<double>(e->value)));
      break;
    case Type::Str24:
      store_str24(blob, off, std::get<std::string>(e->value));
      break;
    case Type::Bytes: {
      auto &b = std::get<Bytes>(e->value);
      std::copy(b.begin(), b.end(), blob.begin() + off);
      break;
    }
    default:
      w.set(f.name, std::get<uint64_t>(e->value));
    }
  }
  for (size_t i = 0; i < blob.size(); ++i)
    blob[i] |= w.bytes()[i]; // the two write disjoint fields
  return blob;
}

Target decode(const Schema &schema, std::span<const uint8_t> blob, const std::string &name,
              const Target *donor, const Provenance &unmatched) {
  if (blob.size() != schema.blob_size())
    throw Error("ANEC-HAL-001", "blob is " + std::to_string(blob.size()) + " bytes; a HAL table is " +
                                    std::to_string(schema.blob_size()) + " (" + hex(schema.blob_size()) +
                                    ")" +
                                    (blob.size() < schema.blob_size() ? " — truncated" : " — oversized"));
  layout::View view(schema.blob_layout(), blob, 0, "ANEC-HAL-001");
  Target t;
  t.name = name;
  if (donor)
    t.aliases = donor->aliases;
  for (const Field &f : schema.fields()) {
    const Entry *d = donor ? donor->find(f.name) : nullptr;
    if (!f.in_blob()) {
      if (d)
        t.values[f.name] = *d;
      continue;
    }
    Value v;
    uint32_t off = *f.offset;
    switch (f.type) {
    case Type::F64:
      v = std::bit_cast<double>(view.get(f.name));
      break;
    case Type::Str24:
      v = load_str24(blob, f);
      break;
    case Type::Bytes:
      v = Bytes(blob.begin() + off, blob.begin() + off + f.width);
      break;
    default:
      v = view.get(f.name);
    }
    if (f.synthesized) {
      auto &b = std::get<Bytes>(v);
      if (std::all_of(b.begin(), b.end(), [](uint8_t c) { return c == 0; }) && !d)
        continue;
    }
    Entry e{v, unmatched};
    if (d && d->value == v)
      e.provenance = d->provenance;
    t.values[f.name] = std::move(e);
  }
  return t;
}

} // namespace anec::hal
