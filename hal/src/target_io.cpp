#include "anec/hal/target_io.hpp"

#include "anec/support/json.hpp"
#include "anec/support/toml.hpp"
#include "anec/support/strict.hpp"

#include <cstdio>

namespace anec::hal {
using anec::detail::Strict;
using anec::detail::where;

namespace {

std::string schema_tag(const Schema &s) { return "anec-hal/" + s.version(); }

bool hex_display(const Field &f) { return f.type == Type::Ptr || f.name == "generation_tag"; }

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

[[noreturn]] void bad(const std::string &source, const Doc &d, const Field &f, const std::string &why) {
  throw Error("ANEC-HAL-004", where(source, d) + ": field '" + f.name + "': " + why);
}

} // namespace

Doc value_doc(const Field &f, const Value &v) {
  if (auto *u = std::get_if<uint64_t>(&v)) {
    // TOML integers are signed 64-bit: larger values are written as a hex string.
    if (*u > uint64_t(INT64_MAX)) return Doc::string(hex(*u));
    return Doc::integer(int64_t(*u), hex_display(f));
  }
  if (auto *d = std::get_if<double>(&v)) return Doc::number(*d);
  if (auto *s = std::get_if<std::string>(&v)) return Doc::string(*s);
  if (auto *l = std::get_if<std::vector<std::string>>(&v)) {
    Doc a = Doc::array();
    for (auto &s : *l) a.push(Doc::string(s));
    return a;
  }
  if (auto *b = std::get_if<bool>(&v)) return Doc::boolean(*b);
  return Doc::string(format_value(f, v));
}

Value value_from_doc(const Field &f, const Doc &d, const std::string &source) {
  Value v;
  switch (f.type) {
  case Type::U8:
  case Type::U16:
  case Type::U32:
  case Type::U64:
  case Type::Ptr:
  case Type::Int:
    if (d.is(Doc::Kind::Int)) {
      if (d.as_int() < 0) bad(source, d, f, "negative value " + std::to_string(d.as_int()));
      v = uint64_t(d.as_int());
    } else if (d.is(Doc::Kind::String) && d.as_string().rfind("0x", 0) == 0 && d.as_string().size() > 2 &&
               d.as_string().size() <= 18) {
      uint64_t u = 0;
      for (char c : d.as_string().substr(2)) {
        int h = hexval(c);
        if (h < 0) bad(source, d, f, "bad hex integer \"" + d.as_string() + "\"");
        u = u << 4 | uint64_t(h);
      }
      v = u;
    } else {
      bad(source, d, f, std::string("expected an integer, found ") + Doc::kind_name(d.kind()));
    }
    break;
  case Type::F64:
  case Type::Float:
    if (!d.is(Doc::Kind::Float) && !d.is(Doc::Kind::Int))
      bad(source, d, f, std::string("expected a number, found ") + Doc::kind_name(d.kind()));
    v = detail::as_number(d);
    break;
  case Type::Str24:
  case Type::String:
    if (!d.is(Doc::Kind::String))
      bad(source, d, f, std::string("expected a string, found ") + Doc::kind_name(d.kind()));
    v = d.as_string();
    break;
  case Type::Strings: {
    if (!d.is(Doc::Kind::Array))
      bad(source, d, f, std::string("expected a list, found ") + Doc::kind_name(d.kind()));
    std::vector<std::string> l;
    for (auto &i : d.items()) {
      if (!i.is(Doc::Kind::String)) bad(source, i, f, "list items must be strings");
      l.push_back(i.as_string());
    }
    v = std::move(l);
    break;
  }
  case Type::Bool:
    if (!d.is(Doc::Kind::Bool))
      bad(source, d, f, std::string("expected true or false, found ") + Doc::kind_name(d.kind()));
    v = d.as_bool();
    break;
  case Type::Bytes: {
    if (!d.is(Doc::Kind::String) || d.as_string().size() % 2)
      bad(source, d, f, "expected an even-length hex string");
    Bytes b;
    const std::string &s = d.as_string();
    for (size_t i = 0; i < s.size(); i += 2) {
      int hi = hexval(s[i]), lo = hexval(s[i + 1]);
      if (hi < 0 || lo < 0) bad(source, d, f, "bad hex byte '" + s.substr(i, 2) + "'");
      b.push_back(uint8_t(hi << 4 | lo));
    }
    v = std::move(b);
    break;
  }
  }
  if (std::string why = check_value(f, v); !why.empty()) bad(source, d, f, why);
  return v;
}

namespace {
// One section's fields: a line each in text (offset, name, value with its unit, confidence,
// source), a table per field in the document (inline in TOML).
void print_section(Printer &p, const Schema &schema, const Target &target, const std::string &section) {
  std::vector<std::pair<const Field *, const Entry *>> entries;
  for (const Field &f : schema.fields())
    if (const Entry *e = f.section == section ? target.find(f.name) : nullptr)
      entries.push_back({&f, e});
  if (entries.empty())
    return;
  Object sec(p, section);
  p.text("\n[" + section + "]\n");
  for (auto [f, e] : entries) {
    p.begin_object(f->name);
    p.inline_object();
    p.text("  ");
    if (f->in_blob())
      p.field("offset", Hex{*f->offset}, 8);
    else
      p.text("-       ");
    p.text(std::string(f->name) + std::string(f->name.size() < 33 ? 33 - f->name.size() : 1, ' '));
    std::string val = format_value(*f, e->value);
    if (!f->unit.empty() && f->unit != "flag" && std::holds_alternative<uint64_t>(e->value))
      val += " " + f->unit;
    p.data("value", value_doc(*f, e->value));
    p.text(val + std::string(val.size() < 25 ? 25 - val.size() : 1, ' '));
    p.field("confidence", confidence_name(e->provenance.confidence), 12);
    p.field("source", e->provenance.source);
    p.text("\n");
    p.end();
  }
}
} // namespace

void print(Printer &p, const Schema &schema, const Target &target) {
  p.data("format", kTargetFormat);
  p.data("schema", schema_tag(schema));
  p.text("target ");
  p.field("name", target.name);
  {
    List aliases(p, "aliases");
    p.text(target.aliases.empty() ? "" : " (aliases:");
    for (auto &a : target.aliases) {
      p.text(" ");
      p.item(a);
    }
    p.text(target.aliases.empty() ? "\n" : ")\n");
  }
  for (const std::string &section : Schema::section_order())
    print_section(p, schema, target, section);
  if (!target.extraction.empty()) {
    Object ex(p, "extraction");
    for (auto &[k, v] : target.extraction)
      p.data(k, v);
  }
}

std::string to_toml(const Schema &schema, const Target &target) {
  return "# anec target definition (" + std::string(kTargetFormat) +
         ", docs/target-format.md). Check it with `anec-hal validate`.\n" +
         toml::write(printed_doc([&](Printer &p) { print(p, schema, target); }));
}

Target from_doc(const Schema &schema, const Doc &doc, const std::string &source) {
  const std::string code = "ANEC-HAL-003";
  Strict top(doc, source, code, "target definition");
  const Doc &fmt = top.req("format", Doc::Kind::String);
  if (fmt.as_string() != kTargetFormat)
    top.fail(fmt, "format \"" + fmt.as_string() + "\" is not " + kTargetFormat);
  const Doc &sch = top.req("schema", Doc::Kind::String);
  if (sch.as_string() != schema_tag(schema))
    top.fail(sch, "written for schema \"" + sch.as_string() + "\", this build reads " + schema_tag(schema));
  Target t;
  const Doc &nm = top.req("name", Doc::Kind::String);
  t.name = nm.as_string();
  if (t.name.empty()) top.fail(nm, "empty target name");
  for (auto &a : top.req("aliases", Doc::Kind::Array).items()) {
    if (!a.is(Doc::Kind::String)) top.fail(a, "aliases must be strings");
    t.aliases.push_back(a.as_string());
  }
  for (const std::string &section : Schema::section_order()) {
    const Doc *sec = top.opt(section, Doc::Kind::Table);
    if (!sec) continue;
    for (const DocMember &m : sec->members()) {
      const Field *f = schema.find(m.key);
      if (!f) top.fail(m.value, "unknown field '" + m.key + "' in [" + section + "]");
      if (f->section != section)
        top.fail(m.value, "field '" + m.key + "' belongs in [" + f->section + "], not [" + section + "]");
      Strict e(m.value, source, code, section + "." + m.key);
      const Doc *off = e.opt("offset", Doc::Kind::Int);
      if (f->in_blob() != (off != nullptr) || (off && off->as_int() != int64_t(*f->offset)))
        e.fail(off ? *off : m.value,
               "offset " + (off ? hex(uint64_t(off->as_int())) : std::string("(none)")) +
                   " disagrees with the schema (" +
                   (f->in_blob() ? hex(*f->offset) : std::string("outside the blob")) + ")");
      const Doc &vd = e.req_any("value");
      Entry entry;
      entry.value = value_from_doc(*f, vd, source);
      const Doc &cd = e.req("confidence", Doc::Kind::String);
      auto c = parse_confidence(cd.as_string());
      if (!c) e.fail(cd, "unknown confidence '" + cd.as_string() + "'");
      entry.provenance.confidence = *c;
      entry.provenance.source = e.req("source", Doc::Kind::String).as_string();
      e.finish();
      t.values[m.key] = std::move(entry);
    }
  }
  if (const Doc *ex = top.opt("extraction", Doc::Kind::Table)) {
    for (const DocMember &m : ex->members()) {
      if (!m.value.is(Doc::Kind::String)) top.fail(m.value, "extraction." + m.key + " must be a string");
      t.extraction.push_back({m.key, m.value.as_string()});
    }
  }
  top.finish();
  return t;
}

Target load_target(const Schema &schema, const std::filesystem::path &path) {
  return from_doc(schema, toml::parse_file(path), path.string());
}

} // namespace anec::hal
