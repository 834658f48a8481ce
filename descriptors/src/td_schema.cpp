#include "anec/descriptors/td_schema.hpp"

#include "anec/support/confidence.hpp"
#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace anec::desc {
using anec::detail::Strict;

namespace {
constexpr const char *kCode = "ANEC-TDS-001";

uint32_t u32(Strict &r, const Doc &d, const std::string &what) {
  if (!d.is(Doc::Kind::Int) || d.as_int() < 0 || d.as_int() > 0xffffffffll)
    r.fail(d, what + " must be a 32-bit unsigned integer");
  return uint32_t(d.as_int());
}
// "hi:lo" within 31:0.
void bits(Strict &r, const Doc &d, uint32_t &hi, uint32_t &lo) {
  unsigned h = 0, l = 0;
  char tail = 0;
  if (std::sscanf(d.as_string().c_str(), "%u:%u%c", &h, &l, &tail) != 2 || h < l || h > 31)
    r.fail(d, "bits must be \"hi:lo\" within 31:0, found \"" + d.as_string() + "\"");
  hi = h;
  lo = l;
}
// One of the scale's names (support/confidence.hpp), not free text.
std::string confidence(Strict &r, const Doc &d) {
  if (!parse_confidence(d.as_string()))
    r.fail(d, "unknown confidence '" + d.as_string() + "'");
  return d.as_string();
}
} // namespace

TdSchema TdSchema::from_doc(const Doc &doc, const std::string &source) {
  Strict top(doc, source, kCode, "register database");
  TdSchema s;
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-td")
    top.fail(doc, "not an anec-td database");
  s.version = top.req("version", Doc::Kind::String).as_string();
  const Doc &g = top.req("generation", Doc::Kind::Int);
  s.generation = int(u32(top, g, "generation"));
  s.complete = top.req("complete", Doc::Kind::Bool).as_bool();
  if (const Doc *h = top.opt("header_bytes", Doc::Kind::Int))
    s.header_bytes = u32(top, *h, "header_bytes"); // absent: unknown
  if (s.header_bytes % 4)
    top.fail(doc, "header_bytes must be a whole number of words");
  if (const Doc *f = top.opt("stream_format", Doc::Kind::String)) {
    s.stream_format = f->as_string();
    if (s.stream_format != "td.stream" && s.stream_format != "td.record")
      top.fail(*f, "stream_format must be \"td.stream\" or \"td.record\"");
  }
  if (const Doc *c = top.opt("chain", Doc::Kind::String)) {
    s.chain = c->as_string();
    if (s.chain != "linked" && s.chain != "sized")
      top.fail(*c, "chain must be \"linked\" or \"sized\"");
  }
  if (const Doc *a = top.opt("task_alignment", Doc::Kind::Int))
    s.task_alignment = u32(top, *a, "task_alignment");
  if (const Doc *f = top.opt("frame_bytes", Doc::Kind::Int))
    s.frame_bytes = u32(top, *f, "frame_bytes");
  if (s.chain == "sized" && (s.task_alignment == 0 || s.task_alignment % 4 || s.frame_bytes % 4))
    top.fail(doc, "a sized chain needs a task_alignment and frame_bytes in whole words");
  top.req("source", Doc::Kind::String);
  static const Doc empty = Doc::array();
  auto list = [&](const char *key) -> const Doc & {
    const Doc *d = top.opt(key, Doc::Kind::Array);
    return d ? *d : empty;
  };
  for (const Doc &bd : list("block").items()) {
    Strict r(bd, source, kCode, "block");
    TdBlock b;
    b.name = r.req("name", Doc::Kind::String).as_string();
    b.address = u32(r, r.req("address", Doc::Kind::Int), "address");
    b.words = u32(r, r.req("words", Doc::Kind::Int), "words");
    if (b.address % 4 || b.words == 0 || b.words > 256)
      r.fail(bd, "block '" + b.name + "' needs a word address and 1..256 words");
    b.source = r.req("source", Doc::Kind::String).as_string();
    b.confidence = confidence(r, r.req("confidence", Doc::Kind::String));
    r.finish();
    for (auto &o : s.blocks)
      if (o.name == b.name || (b.address < o.address + 4 * o.words && o.address < b.address + 4 * b.words))
        r.fail(bd, "block '" + b.name + "' repeats or overlaps block '" + o.name + "'");
    s.blocks.push_back(std::move(b));
  }
  std::map<std::pair<std::string, uint32_t>, uint32_t> used; // (block, address) -> bits taken
  std::map<std::string, bool> paths;
  for (const Doc &fd : list("field").items()) {
    Strict r(fd, source, kCode, "field");
    TdField f;
    f.block = r.req("block", Doc::Kind::String).as_string();
    f.reg = r.req("register", Doc::Kind::String).as_string();
    f.name = r.req("name", Doc::Kind::String).as_string();
    f.address = u32(r, r.req("address", Doc::Kind::Int), "address");
    bits(r, r.req("bits", Doc::Kind::String), f.hi, f.lo);
    if (const Doc *ro = r.opt("role", Doc::Kind::String)) {
      static const std::set<std::string> roles = {"address", "size", "slot", "enable"};
      if (!roles.count(ro->as_string()))
        r.fail(*ro, "role must be address, size, slot or enable");
      f.role = ro->as_string();
    }
    if (const Doc *pa = r.opt("pair", Doc::Kind::String))
      f.pair = pa->as_string();
    if (!f.pair.empty() && f.role != "address" && f.role != "slot")
      r.fail(fd, "only address and slot fields name a pair");
    if (const Doc *ac = r.opt("access", Doc::Kind::String)) {
      f.access = ac->as_string();
      if (f.role != "slot" || (f.access != "read" && f.access != "write"))
        r.fail(*ac, "access is read or write, on a slot field");
    }
    if (const Doc *g = r.opt("generations", Doc::Kind::String)) {
      unsigned lo = 0, hi = 0;
      char dash = 0, tail = 0;
      int n = std::sscanf(g->as_string().c_str(), "%u%c%u%c", &lo, &dash, &hi, &tail);
      bool open_end = n == 2 && dash == '-', closed = n == 3 && dash == '-';
      if (!(n == 1 || open_end || closed))
        r.fail(*g, "generations must be \"N\", \"N-\" or \"N-M\"");
      if (n == 1)
        hi = lo;
      if (s.generation < int(lo) || (!open_end && s.generation > int(hi)))
        r.fail(*g, "field " + f.path() + " exists on generations " + g->as_string() + ", not on " +
                       std::to_string(s.generation));
    }
    f.source = r.req("source", Doc::Kind::String).as_string();
    f.confidence = confidence(r, r.req("confidence", Doc::Kind::String));
    r.finish();
    if (f.address % 4)
      r.fail(fd, "field " + f.path() + " address is not word aligned");
    if (f.block == "Header") {
      if (f.address >= s.header_bytes)
        r.fail(fd, "header field " + f.path() + " lies past header_bytes");
    } else {
      const TdBlock *b = s.block_at(f.address);
      if (!b || b->name != f.block)
        r.fail(fd, "field " + f.path() + " at address lies in no block named " + f.block);
    }
    if (paths[f.path()])
      r.fail(fd, "duplicate field " + f.path());
    paths[f.path()] = true;
    uint32_t &taken = used[{f.block, f.address}];
    if (taken & f.mask())
      r.fail(fd, "field " + f.path() + " overlaps another field of its word");
    taken |= f.mask();
    s.fields.push_back(std::move(f));
  }
  for (const Doc &od : list("object_field").items()) {
    Strict r(od, source, kCode, "object_field");
    TdObjectField f;
    f.name = r.req("name", Doc::Kind::String).as_string();
    f.offset = u32(r, r.req("offset", Doc::Kind::Int), "offset");
    if (const Doc *b = r.opt("bits", Doc::Kind::String)) {
      uint32_t hi = 0, lo = 0;
      bits(r, *b, hi, lo);
      f.bits = std::to_string(hi) + ":" + std::to_string(lo);
    }
    f.source = r.req("source", Doc::Kind::String).as_string();
    f.confidence = confidence(r, r.req("confidence", Doc::Kind::String));
    r.finish();
    for (const TdObjectField &o : s.object_fields)
      if (o.name == f.name)
        r.fail(od, "duplicate object field " + f.name);
    s.object_fields.push_back(std::move(f));
  }
  if ((s.blocks.empty() || !s.header_bytes) && s.complete)
    top.fail(doc, "a database without a header size and blocks cannot be complete");
  top.finish();
  for (const TdField &f :
       s.fields) // a pair names a register (address) or a header field (slot) of the database
    if (!f.pair.empty() && std::none_of(s.fields.begin(), s.fields.end(), [&](const TdField &o) {
          return f.role == "address" ? o.reg == f.pair && o.role == "size"
                                     : o.block == "Header" && o.name == f.pair && o.role == "enable";
        }))
      top.fail(doc, "field " + f.path() + " pairs with '" + f.pair + "', which the database has no " +
                        (f.role == "address" ? "size register" : "enable field") + " of");
  if (s.chain == "sized" && std::none_of(s.fields.begin(), s.fields.end(), [](const TdField &f) {
        return f.block == "Header" && f.address == 0 && f.name == "TaskWords";
      }))
    top.fail(doc, "a sized chain needs the Header field TaskWords in its first word");
  s.flat_ = FlatSchema::compile(s);
  return s;
}

TdSchema TdSchema::raw_layout(const TdSchema &like, int generation) {
  TdSchema s;
  s.version = like.version;
  s.generation = generation;
  s.raw_like = like.generation;
  s.header_bytes = like.header_bytes;
  s.stream_format = like.stream_format;
  s.chain = like.chain;
  s.task_alignment = like.task_alignment;
  s.frame_bytes = like.frame_bytes;
  for (const TdField &f : like.fields)
    if (f.block == "Header" && (f.name == "EON" || f.name == "NextPointer" || f.name == "TaskWords"))
      s.fields.push_back(f);
  s.flat_ = FlatSchema::compile(s);
  return s;
}

TdSchema TdSchema::load(const std::filesystem::path &path) {
  return from_doc(toml::parse_file(path), path.string());
}

const TdBlock *TdSchema::block_at(uint32_t address) const {
  for (auto &b : blocks)
    if (address >= b.address && address < b.address + 4 * b.words)
      return &b;
  return nullptr;
}

std::vector<const TdField *> TdSchema::fields_at(const std::string &block, uint32_t address) const {
  BlockId id = block == "Header" ? kHeaderBlock : flat_.block_at(address);
  std::vector<const TdField *> out;
  if (id == kHeaderBlock || (id != kNoBlock && blocks[id].name == block))
    for (const FieldExtract &x : flat_.extracts(flat_.slot(id, address)))
      out.push_back(&fields[x.field]);
  return out;
}

} // namespace anec::desc
