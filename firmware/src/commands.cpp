#include "anec/firmware/commands.hpp"
#include "anec/firmware/wire_rules.hpp"

#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>

namespace anec::fw {
using anec::detail::Strict;

namespace {
constexpr const char *kCode = "ANEC-FWT-001";

uint64_t uint_of(Strict &r, const Doc &d, const std::string &what) {
  if (!d.is(Doc::Kind::Int) || d.as_int() < 0)
    r.fail(d, what + " must be a non-negative integer");
  return uint64_t(d.as_int());
}

FieldSpec field_of(const Doc &d, const std::string &source) {
  Strict r(d, source, kCode, "field");
  FieldSpec f;
  f.name = r.req("name", Doc::Kind::String).as_string();
  f.type = r.req("type", Doc::Kind::String).as_string();
  if (f.type != "u32" && f.type != "i32" && f.type != "u64")
    r.fail(d, "field " + f.name + ": type must be u32, i32 or u64");
  if (const Doc *x = r.opt("equals", Doc::Kind::Int))
    f.equals = uint_of(r, *x, "equals");
  if (const Doc *x = r.opt("min", Doc::Kind::Int))
    f.min = uint_of(r, *x, "min");
  if (const Doc *x = r.opt("max", Doc::Kind::Int))
    f.max = uint_of(r, *x, "max");
  if (const Doc *x = r.opt("nonzero", Doc::Kind::Bool))
    f.nonzero = x->as_bool();
  r.finish();
  return f;
}
} // namespace

size_t RecordSpec::bytes() const {
  size_t n = 0;
  for (const FieldSpec &f : fields) n += f.bytes();
  return n;
}

const RecordSpec *record_spec(const std::string &name) {
  auto field = [](const char *n, const char *type) {
    FieldSpec f;
    f.name = n;
    f.type = type;
    return f;
  };
  static const std::vector<RecordSpec> records = {
      {"event",
       {field("type", "u32"), field("targetMask", "u32"), field("id", "u64"), field("value", "u64")}},
      {"bar", {field("type", "u32"), field("config", "u32"), field("address", "u64")}},
      {"buffer", {field("type", "u32"), field("outputBufferSetId", "u32"), field("address", "u64")}},
      {"order", {field("index", "u32")}}};
  for (const RecordSpec &r : records)
    if (r.name == name) return &r;
  return nullptr;
}

CommandTable CommandTable::from_doc(const Doc &doc, const std::string &source) {
  Strict top(doc, source, kCode, "command table");
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-fw-commands")
    top.fail(doc, "not an anec-fw-commands table");
  top.req("version", Doc::Kind::String);
  CommandTable t;
  for (const Doc &cd : top.req("command", Doc::Kind::Array).items()) {
    Strict r(cd, source, kCode, "command");
    CommandSpec c;
    c.id = uint32_t(uint_of(r, r.req("id", Doc::Kind::Int), "id"));
    c.name = r.req("name", Doc::Kind::String).as_string();
    c.direction = r.req("direction", Doc::Kind::String).as_string();
    if (c.direction != "host-to-firmware" && c.direction != "firmware-to-host" && c.direction != "both")
      r.fail(cd, "unknown direction " + c.direction);
    c.subsystem = r.req("subsystem", Doc::Kind::String).as_string();
    c.purpose = r.req("purpose", Doc::Kind::String).as_string();
    r.finish();
    bool same_id = std::any_of(t.commands_.begin(), t.commands_.end(),
                               [&](const CommandSpec &o) { return o.id == c.id; });
    if (same_id || t.by_name(c.name)) r.fail(cd, "duplicate command " + c.name);
    t.commands_.push_back(std::move(c));
  }
  for (const Doc &fd : top.req("family", Doc::Kind::Array).items()) {
    Strict r(fd, source, kCode, "family");
    Family f{uint32_t(uint_of(r, r.req("first", Doc::Kind::Int), "first")),
             uint32_t(uint_of(r, r.req("last", Doc::Kind::Int), "last")),
             r.req("name", Doc::Kind::String).as_string()};
    r.finish();
    t.families_.push_back(std::move(f));
  }
  for (const Doc &ed : top.req("exeloop", Doc::Kind::Array).items()) {
    Strict r(ed, source, kCode, "exeloop");
    t.exeloop_.push_back({uint32_t(uint_of(r, r.req("id", Doc::Kind::Int), "id")),
                          r.req("meaning", Doc::Kind::String).as_string()});
    r.finish();
  }
  {
    const Doc &ld = top.req("limits", Doc::Kind::Table);
    Strict r(ld, source, kCode, "limits");
    t.limits_.priority_max = uint32_t(uint_of(r, r.req("priority_max", Doc::Kind::Int), "priority_max"));
    t.limits_.program_id_max =
        uint32_t(uint_of(r, r.req("program_id_max", Doc::Kind::Int), "program_id_max"));
    t.limits_.procedure_id_max =
        uint32_t(uint_of(r, r.req("procedure_id_max", Doc::Kind::Int), "procedure_id_max"));
    t.limits_.max_command_bytes =
        uint32_t(uint_of(r, r.req("max_command_bytes", Doc::Kind::Int), "max_command_bytes"));
    t.limits_.interface_major =
        uint32_t(uint_of(r, r.req("interface_major", Doc::Kind::Int), "interface_major"));
    t.limits_.interface_minor =
        uint32_t(uint_of(r, r.req("interface_minor", Doc::Kind::Int), "interface_minor"));
    r.finish();
  }
  for (const Doc &bd : top.req("body", Doc::Kind::Array).items()) {
    Strict r(bd, source, kCode, "body");
    BodySpec b;
    b.command = r.req("command", Doc::Kind::String).as_string();
    if (!t.by_name(b.command)) r.fail(bd, "body for unknown command " + b.command);
    b.layout = r.req("layout", Doc::Kind::String).as_string();
    b.source = r.req("source", Doc::Kind::String).as_string();
    for (const Doc &f : r.req("scalars", Doc::Kind::Array).items()) b.scalars.push_back(field_of(f, source));
    if (const Doc *as = r.opt("arrays", Doc::Kind::Array))
      for (const Doc &ad : as->items()) {
        Strict a(ad, source, kCode, "array");
        ArraySpec x{a.req("name", Doc::Kind::String).as_string(),
                    a.req("count", Doc::Kind::String).as_string(),
                    a.req("record", Doc::Kind::String).as_string()};
        a.finish();
        if (!record_spec(x.record)) a.fail(ad, "unknown record type " + x.record);
        if (std::none_of(b.scalars.begin(), b.scalars.end(),
                         [&](const FieldSpec &f) { return f.name == x.count; }))
          a.fail(ad, "array " + x.name + " is counted by '" + x.count + "', which is no scalar of the body");
        b.arrays.push_back(std::move(x));
      }
    if (const Doc *rs = r.opt("rules", Doc::Kind::Array))
      for (const Doc &rd : rs->items()) {
        if (!rd.is(Doc::Kind::String) ||
            (rd.as_string() != "events_nonempty" && rd.as_string() != "chained_buffers" &&
             rd.as_string() != "interface_version"))
          r.fail(rd, "unknown rule");
        b.rules.push_back(rd.as_string());
      }
    r.finish();
    if (t.body(b.command)) r.fail(bd, "a second body for " + b.command);
    t.bodies_.push_back(std::move(b));
  }
  top.finish();
  t.index();
  return t;
}

void CommandTable::index() {
  by_id_.clear();
  body_by_id_.clear();
  for (size_t i = 0; i < commands_.size(); ++i) {
    uint32_t id = commands_[i].id;
    if (id >= by_id_.size()) {
      by_id_.resize(id + 1, -1);
      body_by_id_.resize(id + 1, -1);
    }
    by_id_[id] = int(i);
    for (size_t b = 0; b < bodies_.size(); ++b)
      if (bodies_[b].command == commands_[i].name) body_by_id_[id] = int(b);
  }
  rules_ = std::make_shared<const WireRules>(*this);
}

CommandTable CommandTable::load(const std::filesystem::path &path) {
  return from_doc(toml::parse_file(path), path.string());
}

const CommandSpec *CommandTable::by_id(uint32_t id) const {
  return id < by_id_.size() && by_id_[id] >= 0 ? &commands_[size_t(by_id_[id])] : nullptr;
}
const BodySpec *CommandTable::body_by_id(uint32_t id) const {
  return id < body_by_id_.size() && body_by_id_[id] >= 0 ? &bodies_[size_t(body_by_id_[id])] : nullptr;
}
const CommandSpec *CommandTable::by_name(const std::string &name) const {
  for (const CommandSpec &c : commands_)
    if (c.name == name) return &c;
  return nullptr;
}
const BodySpec *CommandTable::body(const std::string &command) const {
  for (const BodySpec &b : bodies_)
    if (b.command == command) return &b;
  return nullptr;
}
bool CommandTable::exeloop_accepts(uint32_t id) const {
  return std::any_of(exeloop_.begin(), exeloop_.end(), [&](auto &e) { return e.first == id; });
}

} // namespace anec::fw
