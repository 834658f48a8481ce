#include "anec/layout/layout.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/strict.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace anec::layout {
using anec::detail::Strict;

namespace {
constexpr const char *kCode = "ANEC-LAYOUT-001";

struct TypeInfo {
  Type type;
  const char *name;
  uint32_t width; // 0: the field declares `length`
};
constexpr TypeInfo kTypes[] = {{Type::U8, "u8", 1},       {Type::U16, "u16", 2},    {Type::U32, "u32", 4},
                               {Type::U64, "u64", 8},     {Type::I32, "i32", 4},    {Type::I64, "i64", 8},
                               {Type::Chars, "chars", 0}, {Type::Bytes, "bytes", 0}};
constexpr const char *kRoles[] = {"value",  "magic",    "size",    "count", "offset", "address",
                                  "stride", "reserved", "version", "flags", "kind"};

uint32_t u32(Strict &r, const Doc &d, const std::string &what) {
  if (!d.is(Doc::Kind::Int) || d.as_int() < 0 || d.as_int() > 0xffffffffll)
    r.fail(d, what + " must be a 32-bit unsigned integer");
  return uint32_t(d.as_int());
}

Modifier parse_modifier(Strict &r, const Doc &d) {
  static const std::pair<const char *, Modifier::Kind> kinds[] = {
      {"shl", Modifier::Kind::Shl}, {"scale", Modifier::Kind::Scale}, {"minus", Modifier::Kind::Minus}};
  const std::string &s = d.as_string();
  for (auto [name, kind] : kinds) {
    std::string head = std::string(name) + "(";
    if (s.rfind(head, 0) != 0 || s.back() != ')')
      continue;
    std::string arg = s.substr(head.size(), s.size() - head.size() - 1);
    if (arg.empty() || arg.size() > 9 || !std::all_of(arg.begin(), arg.end(), ::isdigit))
      break;
    Modifier m{kind, std::stoull(arg)};
    if ((kind == Modifier::Kind::Shl && m.n > 63) || (kind == Modifier::Kind::Scale && m.n == 0))
      break;
    return m;
  }
  r.fail(d, "modifier must be shl(N), scale(N) or minus(N), found \"" + s + "\"");
}

Field parse_field(const Doc &fd, const std::string &source, const std::string &owner) {
  const Doc *nd = fd.find("name");
  std::string ctx = owner + " field" + (nd && nd->is(Doc::Kind::String) ? " '" + nd->as_string() + "'" : "");
  Strict r(fd, source, kCode, ctx);
  Field f;
  f.name = r.req("name", Doc::Kind::String).as_string();
  f.offset = u32(r, r.req("offset", Doc::Kind::Int), "offset");
  const Doc &td = r.req("type", Doc::Kind::String);
  auto type =
      std::find_if(std::begin(kTypes), std::end(kTypes), [&](auto &t) { return td.as_string() == t.name; });
  if (type == std::end(kTypes))
    r.fail(td, "unknown type '" + td.as_string() + "'");
  f.type = type->type;
  f.width = type->width;
  if (const Doc *l = r.opt("length", Doc::Kind::Int)) {
    if (type->width)
      r.fail(*l, "length is for chars and bytes fields");
    f.width = u32(r, *l, "length");
  }
  constexpr uint32_t kMaxExtent = 1u << 20; // keeps width x elements within 64 bits
  if (f.width > kMaxExtent)
    r.fail(fd, ctx + ": length above " + std::to_string(kMaxExtent));
  if (!f.width)
    r.fail(fd, ctx + " (" + td.as_string() + ") needs a length");
  if (const Doc *c = r.opt("count", Doc::Kind::Array)) {
    for (const Doc &n : c->items())
      f.dims.push_back(u32(r, n, "count"));
    if (f.dims.empty() || f.dims.size() > 2 || std::count(f.dims.begin(), f.dims.end(), 0u) ||
        std::any_of(f.dims.begin(), f.dims.end(), [&](uint32_t d) { return d > kMaxExtent; }))
      r.fail(*c, "count must list one or two extents from 1 to " + std::to_string(kMaxExtent));
  }
  if (const Doc *ro = r.opt("role", Doc::Kind::String)) {
    auto it = std::find(std::begin(kRoles), std::end(kRoles), ro->as_string());
    if (it == std::end(kRoles))
      r.fail(*ro, "unknown role '" + ro->as_string() + "'");
    f.role = Role(it - std::begin(kRoles));
  }
  if (const Doc *v = r.opt("value", Doc::Kind::Int))
    f.value = uint64_t(v->as_int());
  if ((f.role == Role::Magic) != f.value.has_value() && f.role != Role::Reserved)
    r.fail(fd, ctx + ": a magic needs its value, and only magics and reserved fields have one");
  if (const Doc *e = r.opt("enum", Doc::Kind::String))
    f.enumeration = e->as_string();
  if (const Doc *m = r.opt("modifier", Doc::Kind::String))
    f.modifier = parse_modifier(r, *m);
  if (const Doc *b = r.opt("bits", Doc::Kind::String)) {
    unsigned hi = 0, lo = 0;
    char tail = 0;
    if (std::sscanf(b->as_string().c_str(), "%u:%u%c", &hi, &lo, &tail) != 2 || hi < lo ||
        hi >= 8 * f.width || f.type > Type::U64)
      r.fail(*b,
             "bits must be \"hi:lo\" within an unsigned field's " + std::to_string(8 * f.width) + " bits");
    f.bits = {{hi, lo}};
  }
  if ((f.type == Type::Chars || f.type == Type::Bytes) &&
      (f.modifier.kind != Modifier::Kind::None || f.value))
    r.fail(fd, ctx + ": chars and bytes take no modifier or value");
  f.meaning = r.req("meaning", Doc::Kind::String).as_string();
  if (const Doc *s = r.opt("source", Doc::Kind::String))
    f.source = s->as_string();
  if (const Doc *c = r.opt("confidence", Doc::Kind::String)) {
    auto conf = parse_confidence(c->as_string());
    if (!conf)
      r.fail(*c, "unknown confidence '" + c->as_string() + "'");
    f.confidence = *conf;
  }
  r.finish();
  return f;
}

Struct parse_struct(const Doc &sd, const std::string &source) {
  const Doc *nd = sd.find("name");
  std::string ctx =
      "struct" + (nd && nd->is(Doc::Kind::String) ? " '" + nd->as_string() + "'" : std::string());
  Strict r(sd, source, kCode, ctx);
  Struct s;
  s.name = r.req("name", Doc::Kind::String).as_string();
  s.bytes = u32(r, r.req("bytes", Doc::Kind::Int), "bytes");
  s.meaning = r.req("meaning", Doc::Kind::String).as_string();
  s.source = r.req("source", Doc::Kind::String).as_string();
  const Doc &cd = r.req("confidence", Doc::Kind::String);
  auto conf = parse_confidence(cd.as_string());
  if (!conf)
    r.fail(cd, "unknown confidence '" + cd.as_string() + "'");
  s.confidence = *conf;
  if (const Doc *e = r.opt("endian", Doc::Kind::String)) {
    if (e->as_string() != "little" && e->as_string() != "big")
      r.fail(*e, "endian must be \"little\" or \"big\"");
    s.big_endian = e->as_string() == "big";
  }
  if (const Doc *v = r.opt("variant_of", Doc::Kind::String))
    s.variant_of = v->as_string();
  if (const Doc *w = r.opt("when", Doc::Kind::Array))
    for (const Doc &cdoc : w->items()) {
      Strict rc(cdoc, source, kCode, ctx + " condition");
      Condition c;
      c.field = rc.req("field", Doc::Kind::String).as_string();
      const Doc *eq = rc.opt("equals", Doc::Kind::Int), *ge = rc.opt("at_least", Doc::Kind::Int);
      if (!eq == !ge)
        rc.fail(cdoc, "a condition has either equals or at_least");
      if (eq)
        c.equals = uint64_t(eq->as_int());
      if (ge)
        c.at_least = uint64_t(ge->as_int());
      rc.finish();
      s.when.push_back(std::move(c));
    }
  if (s.when.empty() != s.variant_of.empty())
    r.fail(sd, ctx + ": a variant names its family and its conditions");
  const Doc &fields = r.req("field", Doc::Kind::Array);
  std::set<std::string> names;
  for (const Doc &fd : fields.items()) {
    Field f = parse_field(fd, source, ctx);
    if (!names.insert(f.name).second)
      r.fail(fd, ctx + ": duplicate field '" + f.name + "'");
    if (uint64_t(f.offset) + f.bytes() > s.bytes)
      r.fail(fd, ctx + ": field '" + f.name + "' at " + hex(f.offset) + "+" + hex(f.bytes()) +
                     " runs past the struct's " + hex(s.bytes) + " bytes");
    for (const Field &o : s.fields) {
      bool shared_word = f.bits && o.bits && f.offset == o.offset && f.width == o.width && f.dims == o.dims;
      if (shared_word ? (f.mask() << f.bits->second & o.mask() << o.bits->second) != 0
                      : f.offset < o.offset + o.bytes() && o.offset < f.offset + f.bytes())
        r.fail(fd, ctx + ": field '" + f.name + "' overlaps field '" + o.name + "'");
    }
    s.fields.push_back(std::move(f));
  }
  for (const Condition &c : s.when)
    if (!s.find(c.field))
      r.fail(sd, ctx + ": condition on unknown field '" + c.field + "'");
  r.finish();
  std::sort(s.fields.begin(), s.fields.end(),
            [](const Field &a, const Field &b) { return a.offset < b.offset; });
  s.reindex();
  return s;
}

Enum parse_enum(const Doc &ed, const std::string &source) {
  Strict r(ed, source, kCode, "enum");
  Enum e;
  e.name = r.req("name", Doc::Kind::String).as_string();
  r.req("source", Doc::Kind::String);
  std::set<std::string> names;
  std::set<uint64_t> values;
  for (const Doc &vd : r.req("values", Doc::Kind::Array).items()) {
    Strict rv(vd, source, kCode, "enum '" + e.name + "' value");
    std::string n = rv.req("name", Doc::Kind::String).as_string();
    uint64_t v = uint64_t(rv.req("value", Doc::Kind::Int).as_int());
    rv.finish();
    if (!names.insert(n).second || !values.insert(v).second)
      rv.fail(vd, "enum '" + e.name + "' repeats '" + n + "' or its value");
    e.values.push_back({n, v});
  }
  r.finish();
  return e;
}
} // namespace

Database Database::from_docs(const std::vector<std::pair<Doc, std::string>> &docs) {
  Database db;
  std::vector<std::pair<const Doc *, std::string>> where; // for errors found after all files are read
  for (const auto &[doc, source] : docs) {
    Strict top(doc, source, kCode, "layout database");
    if (top.req("schema", Doc::Kind::String).as_string() != "anec-layout")
      top.fail(doc, "not an anec-layout database");
    top.req("version", Doc::Kind::String);
    top.req("source", Doc::Kind::String);
    if (const Doc *es = top.opt("enum", Doc::Kind::Array))
      for (const Doc &ed : es->items()) {
        Enum e = parse_enum(ed, source);
        if (db.enumeration(e.name))
          top.fail(ed, "duplicate enum '" + e.name + "'");
        db.enums_.push_back(std::move(e));
      }
    if (const Doc *ss = top.opt("struct", Doc::Kind::Array))
      for (const Doc &sd : ss->items()) {
        Struct s = parse_struct(sd, source);
        for (const Struct &o : db.structs_)
          if (o.name == s.name)
            top.fail(sd, "duplicate struct '" + s.name + "'");
        db.structs_.push_back(std::move(s));
        where.push_back({&sd, source});
      }
    top.finish();
  }
  for (size_t i = 0; i < db.structs_.size(); ++i) {
    const Struct &s = db.structs_[i];
    auto fail = [&](const std::string &m) {
      throw Error(kCode, detail::where(where[i].second, *where[i].first) + ": " + m);
    };
    for (const Field &f : s.fields)
      if (!f.enumeration.empty() && !db.enumeration(f.enumeration))
        fail("struct '" + s.name + "' field '" + f.name + "' names unknown enum '" + f.enumeration + "'");
    if (!s.variant_of.empty() && std::none_of(db.structs_.begin(), db.structs_.end(),
                                              [&](const Struct &o) { return o.name == s.variant_of; }))
      fail("struct '" + s.name + "' is a variant of unknown struct '" + s.variant_of + "'");
  }
  for (size_t i = 0; i < db.structs_.size(); ++i)
    db.by_name_.emplace(db.structs_[i].name, i);
  return db;
}

const Struct &Database::get(std::string_view name) const {
  if (auto it = by_name_.find(std::string(name)); it != by_name_.end())
    return structs_[it->second];
  throw Error("ANEC-LAYOUT-002", "no layout named '" + std::string(name) + "'");
}

const Enum *Database::enumeration(std::string_view name) const {
  for (const Enum &e : enums_)
    if (e.name == name)
      return &e;
  return nullptr;
}

const Struct *Database::variant(std::string_view family, std::span<const uint8_t> bytes, uint64_t at) const {
  for (const Struct &s : structs_) {
    if (s.variant_of != family || at > bytes.size() || bytes.size() - at < s.bytes)
      continue;
    View v(s, bytes, at, "ANEC-LAYOUT-002");
    if (std::all_of(s.when.begin(), s.when.end(), [&](const Condition &c) {
          uint64_t x = v.get(c.field);
          return c.at_least ? x >= *c.at_least : x == c.equals;
        }))
      return &s;
  }
  return nullptr;
}

void Struct::reindex() {
  index.clear();
  for (uint32_t i = 0; i < fields.size(); ++i)
    index.emplace(fields[i].name, i);
}

const Field *Struct::find(std::string_view n) const {
  if (!index.empty()) {
    auto it = index.find(std::string(n));
    return it == index.end() ? nullptr : &fields[it->second];
  }
  for (const Field &f : fields)
    if (f.name == n)
      return &f;
  return nullptr;
}

const Field &Struct::at(std::string_view n) const {
  if (const Field *f = find(n))
    return *f;
  throw Error("ANEC-LAYOUT-002", "layout '" + name + "' has no field '" + std::string(n) + "'");
}

std::string Struct::field_at(uint64_t off) const {
  for (const Field &f : fields) {
    if (off < f.offset || off >= uint64_t(f.offset) + f.bytes())
      continue;
    std::string out = f.name;
    uint64_t element = (off - f.offset) / f.width;
    std::string index;
    for (size_t d = f.dims.size(); d-- > 0;) {
      index = "[" + std::to_string(element % f.dims[d]) + "]" + index;
      element /= f.dims[d];
    }
    return out + index;
  }
  return "";
}

uint64_t Field::elements() const {
  uint64_t n = 1;
  for (uint32_t d : dims)
    n *= d; // at most two extents of 32 bits each: no overflow
  return n;
}

uint64_t Field::mask() const {
  uint32_t n = bits ? bits->first - bits->second + 1 : 8 * width;
  return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
}

uint64_t Field::extract(uint64_t element) const {
  return bits ? element >> bits->second & mask() : element;
}

std::string Enum::name_of(uint64_t v) const {
  for (const auto &[n, x] : values)
    if (x == v)
      return n;
  return "unknown(" + hex(v) + ")";
}

const char *type_name(Type t) {
  return kTypes[int(t)].name;
}
const char *role_name(Role r) {
  return kRoles[int(r)];
}

} // namespace anec::layout
