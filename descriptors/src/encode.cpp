#include "anec/descriptors/encode.hpp"

#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

namespace anec::desc {

namespace {
const Doc &need(const Doc &t, const char *key, Doc::Kind kind, const std::string &where) {
  const Doc *d = t.is(Doc::Kind::Table) ? t.find(key) : nullptr;
  if (!d || !d->is(kind)) throw Error("ANEC-ENC-001", where + ": missing or mistyped '" + key + "'");
  return *d;
}
uint64_t uint_of(const Doc &t, const char *key, const std::string &where, uint64_t max = UINT64_MAX) {
  const Doc &d = need(t, key, Doc::Kind::Int, where);
  if (d.as_int() < 0 || uint64_t(d.as_int()) > max)
    throw Error("ANEC-ENC-003",
                where + ": '" + key + "' = " + std::to_string(d.as_int()) + " is out of range");
  return uint64_t(d.as_int());
}

struct Writer {
  std::vector<uint8_t> out;
  void put32(uint64_t off, uint32_t v, const std::string &where) {
    if (off > out.size() || out.size() - off < 4)
      throw Error("ANEC-ENC-004", where + ": word at " + hex(off) + " lies outside the file");
    store_le(out, off, v, 4);
  }
};

uint32_t pack(const Doc &word, const TdSchema &s, const std::string &where) {
  std::string block = need(word, "block", Doc::Kind::String, where).as_string();
  uint32_t address = uint32_t(uint_of(word, "address", where, 0xffffffff));
  uint32_t raw = uint32_t(uint_of(word, "raw", where, 0xffffffff));
  const Doc &fields = need(word, "fields", Doc::Kind::Table, where);
  if (fields.members().empty()) return raw;
  uint32_t v = 0;
  if (const Doc *r = word.find("reserved")) {
    if (!r->is(Doc::Kind::Int) || r->as_int() < 0 || r->as_int() > 0xffffffffll)
      throw Error("ANEC-ENC-003", where + ": bad 'reserved'");
    v = uint32_t(r->as_int());
  }
  const auto &known = s.fields_at(block, address);
  for (const DocMember &m : fields.members()) {
    const TdField *f = nullptr;
    for (const TdField *k : known)
      if (k->reg + "." + k->name == m.key) f = k;
    if (!f)
      throw Error("ANEC-ENC-002",
                  where + ": " + block + " has no field '" + m.key + "' at register " + hex(address));
    if (!m.value.is(Doc::Kind::Int) || m.value.as_int() < 0 ||
        uint64_t(m.value.as_int()) > (f->mask() >> f->lo))
      throw Error("ANEC-ENC-003", where + ": " + f->path() + " = " +
                                      (m.value.is(Doc::Kind::Int) ? std::to_string(m.value.as_int()) : "?") +
                                      " does not fit bits " + std::to_string(f->hi) + ":" +
                                      std::to_string(f->lo));
    v |= uint32_t(m.value.as_int()) << f->lo;
  }
  return v;
}
} // namespace

std::vector<uint8_t> encode_dump(const Doc &d, const TdSchema &s, const std::string &source) {
  if (!need(d, "complete", Doc::Kind::Bool, source).as_bool())
    throw Error("ANEC-ENC-001",
                source + ": a dump of selected descriptors cannot rebuild the file; dump without --td");
  if (uint_of(d, "generation", source) != uint64_t(s.generation))
    throw Error("ANEC-ENC-001", source + ": dump of generation " +
                                    std::to_string(uint_of(d, "generation", source)) +
                                    ", database of generation " + std::to_string(s.generation));
  Writer w;
  w.out.assign(uint_of(d, "file_bytes", source, 1ull << 30), 0);
  for (const Doc &r : need(d, "regions", Doc::Kind::Array, source).items()) {
    uint64_t off = uint_of(r, "offset", source);
    const std::string &digits = need(r, "hex", Doc::Kind::String, source).as_string();
    if (digits.size() % 2 || off > w.out.size() || digits.size() / 2 > w.out.size() - off)
      throw Error("ANEC-ENC-004", source + ": region at " + hex(off) + " of " +
                                      std::to_string(digits.size() / 2) + " bytes lies outside the file");
    for (size_t i = 0; i < digits.size(); i += 2) {
      auto nib = [&](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        throw Error("ANEC-ENC-001", source + ": region at " + hex(off) + " has a non-hex character");
      };
      w.out[off + i / 2] = uint8_t(nib(digits[i]) << 4 | nib(digits[i + 1]));
    }
  }
  for (const Doc &td : need(d, "tds", Doc::Kind::Array, source).items()) {
    std::string where = source + ": TD " + std::to_string(uint_of(td, "index", source));
    for (const Doc &word : need(td, "header", Doc::Kind::Array, where).items())
      w.put32(uint_of(word, "offset", where), pack(word, s, where), where);
    for (const Doc &st : need(td, "streams", Doc::Kind::Array, where).items()) {
      w.put32(uint_of(st, "offset", where), uint32_t(uint_of(st, "header", where, 0xffffffff)), where);
      for (const Doc &word : need(st, "registers", Doc::Kind::Array, where).items())
        w.put32(uint_of(word, "offset", where), pack(word, s, where), where);
    }
  }
  return w.out;
}

} // namespace anec::desc
