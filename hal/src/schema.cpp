#include "anec/hal/schema.hpp"

#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace anec::hal {
using anec::detail::Strict;

namespace {

struct TypeInfo {
  Type type;
  const char *name;
  uint32_t width; // 0: outside the blob; Bytes takes `width` from the field
};
constexpr TypeInfo kTypes[] = {
    {Type::U8, "u8", 1},        {Type::U16, "u16", 2},       {Type::U32, "u32", 4},
    {Type::U64, "u64", 8},      {Type::F64, "f64", 8},       {Type::Ptr, "ptr", 8},
    {Type::Str24, "str24", 24}, {Type::Bytes, "bytes", 0},   {Type::Int, "int", 0},
    {Type::Float, "float", 0},  {Type::String, "string", 0}, {Type::Strings, "strings", 0},
    {Type::Bool, "bool", 0}};

// The blob fields as a layout struct: integers and pointers by width, doubles as their bit
// patterns, strings and byte runs as bytes (codec.cpp interprets those).
layout::Struct layout_of(const Schema &s) {
  layout::Struct out;
  out.name = "hal.ZinIrHalParameters";
  out.bytes = s.blob_size();
  out.meaning = "the HAL parameter table (guide ch.24)";
  out.source = "tables/schema/hal.toml";
  for (const Field &f : s.fields()) {
    if (!f.in_blob())
      continue;
    layout::Field l;
    l.name = f.name;
    l.offset = *f.offset;
    l.width = f.width;
    l.type = f.type == Type::Str24 || f.type == Type::Bytes ? layout::Type::Bytes
             : f.width == 1                                 ? layout::Type::U8
             : f.width == 2                                 ? layout::Type::U16
             : f.width == 4                                 ? layout::Type::U32
                                                            : layout::Type::U64;
    l.meaning = f.meaning;
    l.source = f.source;
    l.confidence = f.confidence;
    out.fields.push_back(std::move(l));
  }
  out.reindex();
  return out;
}

} // namespace

const char *type_name(Type t) {
  for (auto &i : kTypes)
    if (i.type == t)
      return i.name;
  return "?";
}
bool is_blob_type(Type t) {
  return t <= Type::Bytes;
}

const std::vector<std::string> &Schema::section_order() {
  static const std::vector<std::string> order = {"identity", "datapath",   "limits",  "memory", "capability",
                                                 "formats",  "cost_model", "hazards", "dead",   "unknown"};
  return order;
}

const Field *Schema::find(std::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](size_t i, std::string_view n) { return fields_[i].name < n; });
  return it != by_name_.end() && fields_[*it].name == name ? &fields_[*it] : nullptr;
}

Schema Schema::from_doc(const Doc &doc, const std::string &source) {
  const std::string code = "ANEC-SCHEMA-001";
  Strict top(doc, source, code, "schema");
  Schema s;
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-hal")
    top.fail(doc, "not an anec-hal schema (schema = \"anec-hal\" expected)");
  s.version_ = top.req("version", Doc::Kind::String).as_string();
  const Doc &bs = top.req("blob_size", Doc::Kind::Int);
  if (bs.as_int() <= 0 || bs.as_int() > (1 << 20))
    top.fail(bs, "blob_size out of range");
  s.blob_size_ = static_cast<uint32_t>(bs.as_int());
  for (const char *k : {"capability_region", "cost_model_region"}) {
    const Doc &r = top.req(k, Doc::Kind::Array);
    if (r.items().size() != 2 || !r.items()[0].is(Doc::Kind::Int) || !r.items()[1].is(Doc::Kind::Int))
      top.fail(r, std::string(k) + " must be [begin, end]");
  }

  std::vector<Field> blob, outside;
  std::map<std::string, const Doc *> names;
  const Doc *fields = top.opt("field", Doc::Kind::Array);
  if (!fields || fields->items().empty())
    top.fail(doc, "schema has no [[field]]");
  for (const Doc &fd : fields->items()) {
    Field f;
    const Doc *nd = fd.find("name");
    Strict rf(fd, source, code,
              nd && nd->is(Doc::Kind::String) ? "field '" + nd->as_string() + "'" : "field");
    f.name = rf.req("name", Doc::Kind::String).as_string();
    if (f.name.rfind("unk_", 0) == 0)
      rf.fail(fd, "field names starting with unk_ are reserved for gaps");
    if (auto [it, fresh] = names.emplace(f.name, &fd); !fresh)
      rf.fail(fd, "duplicate field name '" + f.name + "' (first at line " + std::to_string(it->second->line) +
                      ")");
    const Doc &td = rf.req("type", Doc::Kind::String);
    const TypeInfo *ti = nullptr;
    for (auto &i : kTypes)
      if (td.as_string() == i.name)
        ti = &i;
    if (!ti)
      rf.fail(td, "unknown type '" + td.as_string() + "'");
    f.type = ti->type;
    f.section = rf.req("section", Doc::Kind::String).as_string();
    if (std::find(section_order().begin(), section_order().end(), f.section) == section_order().end() ||
        f.section == "unknown")
      rf.fail(fd, "unknown section '" + f.section + "'");
    f.unit = rf.req("unit", Doc::Kind::String).as_string();
    f.meaning = rf.req("meaning", Doc::Kind::String).as_string();
    f.source = rf.req("source", Doc::Kind::String).as_string();
    if (f.meaning.empty() || f.source.empty())
      rf.fail(fd, "meaning and source must not be empty");
    const Doc &cd = rf.req("confidence", Doc::Kind::String);
    auto c = parse_confidence(cd.as_string());
    if (!c)
      rf.fail(cd, "unknown confidence '" + cd.as_string() + "'");
    f.confidence = *c;
    if (auto *d = rf.opt("min", Doc::Kind::Float))
      f.min = detail::as_number(*d);
    if (auto *d = rf.opt("max", Doc::Kind::Float))
      f.max = detail::as_number(*d);
    if (auto *d = rf.opt("monotone", Doc::Kind::Bool))
      f.monotone = d->as_bool();
    if (auto *d = rf.opt("floor", Doc::Kind::Int)) {
      if (d->as_int() < 0 || d->as_int() > 7)
        rf.fail(*d, "floor must be a family index 0..7");
      f.floor = static_cast<int>(d->as_int());
    }
    const Doc *od = rf.opt("offset", Doc::Kind::Int);
    const Doc *wd = rf.opt("width", Doc::Kind::Int);
    if (is_blob_type(f.type)) {
      if (!od)
        rf.fail(fd, "a " + td.as_string() + " field needs an offset");
      if (od->as_int() < 0 || od->as_int() >= s.blob_size_)
        rf.fail(*od, "offset " + hex(uint64_t(od->as_int())) + " is outside the blob");
      f.offset = static_cast<uint32_t>(od->as_int());
      if (f.type == Type::Bytes) {
        if (!wd || wd->as_int() <= 0)
          rf.fail(fd, "a bytes field needs a positive width");
        f.width = static_cast<uint32_t>(wd->as_int());
      } else {
        if (wd)
          rf.fail(*wd, "width is implied by type " + td.as_string());
        f.width = ti->width;
      }
      if (uint64_t(*f.offset) + f.width > s.blob_size_)
        rf.fail(*od,
                "field ends at " + hex(*f.offset + f.width) + ", past the blob end " + hex(s.blob_size_));
    } else if (od || wd) {
      rf.fail(od ? *od : *wd,
              "a " + td.as_string() + " field lives outside the blob and takes no offset or width");
    }
    rf.finish();
    (f.in_blob() ? blob : outside).push_back(std::move(f));
  }

  const Doc *regions = top.opt("region", Doc::Kind::Array);
  if (regions) {
    for (const Doc &rd : regions->items()) {
      Strict r(rd, source, code, "region");
      Region g;
      g.name = r.req("name", Doc::Kind::String).as_string();
      const Doc &b = r.req("begin", Doc::Kind::Int), &e = r.req("end", Doc::Kind::Int);
      if (b.as_int() < 0 || e.as_int() < b.as_int() || e.as_int() > s.blob_size_)
        r.fail(rd, "region '" + g.name + "' bounds out of order or past the blob");
      g.begin = uint32_t(b.as_int());
      g.end = uint32_t(e.as_int());
      g.meaning = r.req("meaning", Doc::Kind::String).as_string();
      r.finish();
      s.regions_.push_back(std::move(g));
    }
  }
  top.finish();

  std::stable_sort(blob.begin(), blob.end(), [](auto &a, auto &b) { return *a.offset < *b.offset; });
  uint32_t at = 0;
  auto gap = [&](uint32_t from, uint32_t to) {
    Field u;
    u.name = "unk_" + hex(from);
    u.type = Type::Bytes;
    u.offset = from;
    u.width = to - from;
    u.section = "unknown";
    u.meaning = "bytes no published field covers";
    u.source = "gap between named fields";
    u.confidence = Confidence::Placeholder;
    u.synthesized = true;
    s.fields_.push_back(std::move(u));
  };
  for (auto &f : blob) {
    if (*f.offset < at) {
      const Field &prev = s.fields_.back();
      throw Error(code, source + ":" + std::to_string(names[f.name]->line) + ": field '" + f.name + "' at " +
                            hex(*f.offset) + " overlaps '" + prev.name + "' (" + hex(*prev.offset) + ".." +
                            hex(*prev.offset + prev.width) + ")");
    }
    if (*f.offset > at)
      gap(at, *f.offset);
    at = *f.offset + f.width;
    s.fields_.push_back(std::move(f));
  }
  if (at < s.blob_size_)
    gap(at, s.blob_size_);
  for (auto &f : outside)
    s.fields_.push_back(std::move(f));
  s.by_name_.resize(s.fields_.size());
  std::iota(s.by_name_.begin(), s.by_name_.end(), size_t(0));
  std::stable_sort(s.by_name_.begin(), s.by_name_.end(),
                   [&](size_t a, size_t b) { return s.fields_[a].name < s.fields_[b].name; });
  s.blob_layout_ = layout_of(s);
  return s;
}

Schema Schema::load(const std::filesystem::path &path) {
  return from_doc(toml::parse_file(path), path.string());
}

} // namespace anec::hal
