#include "anec/firmware/wire.hpp"
#include "anec/firmware/wire_rules.hpp"

#include "anec/support/crc32.hpp"

#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <array>

namespace anec::fw {

namespace {

uint64_t width_max(const std::string &type) {
  return type == "u64" ? UINT64_MAX : 0xffffffffull;
}

void put(std::vector<uint8_t> &out, uint64_t v, uint32_t n) { // append
  out.resize(out.size() + n);
  store_le(out, out.size() - n, v, n);
}

uint64_t get_int(const Doc &d, const std::string &what, const std::string &source) {
  if (d.is(Doc::Kind::Int))
    return uint64_t(d.as_int());
  if (d.is(Doc::Kind::String)) { // hex for 64-bit values past int64
    const std::string &s = d.as_string();
    size_t used = 0;
    uint64_t v = 0;
    try {
      v = std::stoull(s, &used, 0);
    } catch (const std::exception &) {
    }
    if (used && used == s.size())
      return v;
  }
  throw Error("ANEC-FWC-001", source + ": " + what + " must be an integer");
}
} // namespace

const layout::Struct &command_header_layout() {
  static const layout::Struct &s = layout::Database::builtin().get("fw.command_header");
  return s;
}
const layout::Struct &envelope_layout() {
  static const layout::Struct &s = layout::Database::builtin().get("fw.command_envelope");
  return s;
}

uint32_t crc32(std::span<const uint8_t> bytes) { return anec::crc32(bytes); }

const char *disposition_name(Disposition d) {
  switch (d) {
  case Disposition::Reject:
    return "reject";
  case Disposition::Drop:
    return "drop";
  case Disposition::Fault:
    return "fault-and-reset";
  default:
    return "warn";
  }
}

bool Validation::accepted() const {
  return std::none_of(violations.begin(), violations.end(),
                      [](const Violation &v) { return v.disposition != Disposition::Warn; });
}

Command command_from_doc(const Doc &d, const CommandTable &t, const std::string &source) {
  auto fail = [&](const std::string &m) { return Error("ANEC-FWC-001", source + ": " + m); };
  if (!d.is(Doc::Kind::Table))
    throw fail("a command description is a table");
  Command c;
  const Doc *cmd = d.find("command");
  if (!cmd)
    throw fail("missing 'command' (a name or an id)");
  const CommandSpec *spec = cmd->is(Doc::Kind::String) ? t.by_name(cmd->as_string())
                                                       : t.by_id(uint32_t(get_int(*cmd, "command", source)));
  if (!spec)
    throw fail("unknown command " +
               (cmd->is(Doc::Kind::String) ? cmd->as_string() : hex(get_int(*cmd, "command", source))));
  c.id = spec->id;
  for (const auto &m : d.members()) {
    if (m.key == "command" || m.key == "body" || m.key == "raw_body")
      continue;
    uint64_t v = get_int(m.value, m.key, source);
    if (m.key == "priority")
      c.priority = uint32_t(v);
    else if (m.key == "program_id")
      c.program_id = int32_t(v);
    else if (m.key == "process_id")
      c.process_id = int32_t(v);
    else if (m.key == "procedure_id")
      c.procedure_id = uint32_t(v);
    else
      throw fail("unknown key '" + m.key + "'");
  }
  const BodySpec *layout = t.body(spec->name);
  if (const Doc *raw = d.find("raw_body")) {
    if (layout)
      throw fail(spec->name + " has a body layout; give [body], not raw_body");
    auto bytes = raw->is(Doc::Kind::String) ? bytes_from_hex(raw->as_string()) : std::nullopt;
    if (!bytes)
      throw fail("raw_body must be pairs of hex digits");
    c.raw_body = std::move(*bytes);
    return c;
  }
  const Doc *body = d.find("body");
  if (!layout) {
    if (body)
      throw fail(spec->name + " has no body layout in the table; give raw_body as hex");
    return c;
  }
  static const Doc empty = Doc::table();
  const Doc &b = body && body->is(Doc::Kind::Table) ? *body : empty;
  for (const auto &m : b.members()) {
    bool known =
        std::any_of(layout->scalars.begin(), layout->scalars.end(),
                    [&](auto &f) { return f.name == m.key; }) ||
        std::any_of(layout->arrays.begin(), layout->arrays.end(), [&](auto &a) { return a.name == m.key; });
    if (!known)
      throw fail(spec->name + " body has no field '" + m.key + "'");
  }
  for (const ArraySpec &a : layout->arrays) {
    auto &records = c.arrays[a.name];
    const Doc *arr = b.find(a.name);
    if (!arr)
      continue;
    if (!arr->is(Doc::Kind::Array))
      throw fail(a.name + " must be an array of tables");
    const RecordSpec *rs = record_spec(a.record);
    for (const Doc &rec : arr->items()) {
      if (!rec.is(Doc::Kind::Table))
        throw fail(a.name + " records are tables");
      std::vector<uint64_t> values;
      for (const FieldSpec &f : rs->fields) {
        const Doc *v = rec.find(f.name);
        values.push_back(v ? get_int(*v, a.name + "." + f.name, source) : 0);
      }
      for (const auto &m : rec.members())
        if (std::none_of(rs->fields.begin(), rs->fields.end(), [&](auto &f) { return f.name == m.key; }))
          throw fail(a.name + " record has no field '" + m.key + "'");
      records.push_back(std::move(values));
    }
  }
  for (const FieldSpec &f : layout->scalars) {
    const Doc *v = b.find(f.name);
    uint64_t value = 0;
    if (v)
      value = get_int(*v, f.name, source);
    else
      for (const ArraySpec &a : layout->arrays)
        if (a.count == f.name)
          value = c.arrays[a.name].size(); // counts default to the array lengths
    c.scalars.push_back({f.name, value});
  }
  return c;
}

namespace {
// A record's field in the document form: hex where the TOML form should show it so (above 0xffff).
Scalar body_value(uint64_t v) {
  return v > 0xffff ? Scalar(Hex{v}) : Scalar(v);
}

void print_body(Printer &p, const Command &c, const BodySpec &layout) {
  Object body(p, "body");
  for (auto &[name, v] : c.scalars) {
    p.text("  " + name + " = " + std::to_string(v) + (v > 9 ? " (" + hex(v) + ")" : "") + "\n");
    p.data(name, body_value(v));
  }
  for (const ArraySpec &a : layout.arrays) {
    auto it = c.arrays.find(a.name);
    if (it == c.arrays.end() || it->second.empty())
      continue;
    const RecordSpec *rs = record_spec(a.record);
    List records(p, a.name);
    for (size_t r = 0; r < it->second.size(); ++r) {
      Object record(p);
      p.text("  " + a.name + "[" + std::to_string(r) + "]");
      for (size_t k = 0; k < rs->fields.size() && k < it->second[r].size(); ++k) {
        p.text(" " + rs->fields[k].name + "=" + hex(it->second[r][k]));
        p.data(rs->fields[k].name, body_value(it->second[r][k]));
      }
      p.text("\n");
    }
  }
}
} // namespace

void print(Printer &p, const Command &c, const CommandTable &t) {
  const CommandSpec *spec = t.by_id(c.id);
  p.text("command " + hex(c.id) + " ");
  if (spec) {
    p.field("command", spec->name);
    p.text(" (" + spec->subsystem + ", " + spec->direction + ")");
  } else {
    p.data("command", Hex{c.id});
    p.text("(unknown)");
  }
  p.text("\n  priority ");
  p.field("priority", c.priority);
  p.text(", programId ");
  p.field("program_id", c.program_id);
  p.text(", processId ");
  p.field("process_id", c.process_id);
  p.text(", procedureId ");
  p.field("procedure_id", c.procedure_id);
  p.text("\n");
  const BodySpec *layout = spec ? t.body(spec->name) : nullptr;
  if (layout)
    print_body(p, c, *layout);
  if (c.raw_body.empty())
    return;
  p.text("  raw body " + hex_bytes(c.raw_body) + "\n");
  if (!layout)
    p.data("raw_body", hex_bytes(c.raw_body));
}

void print(Printer &p, const Violation &v) {
  print(p, static_cast<const Diagnostic &>(v), {.in_file = true});
  p.text(" (check ");
  p.field("check", v.check);
  p.text(": ");
  p.field("disposition", disposition_name(v.disposition));
  if (v.status) {
    p.text(", status ");
    p.field("status", Hex{v.status});
  }
  p.text(")");
}

void print(Printer &p, const StreamValidation &s, const std::string &title) {
  p.data("bytes", s.bytes);
  p.data("messages", s.messages);
  p.data("accepted", s.accepted);
  p.data("unframed", s.unframed);
  p.text(title + ": " + std::to_string(s.messages) + " message(s) in " + std::to_string(s.bytes) +
         " bytes, " + std::to_string(s.accepted) + " accepted");
  {
    Object by(p, "by_disposition");
    for (Disposition x : kDispositions) {
      p.text(", ");
      p.field(disposition_name(x), s.by_disposition[int(x)]);
      p.text(std::string(" ") + disposition_name(x));
    }
  }
  p.text(", " + std::to_string(s.unframed) + " granule(s) unframed");
  p.data("truncated", s.truncated);
  if (s.truncated)
    p.text(", the last message cut short at " + hex(s.truncated_offset) + " (its header frames " +
           std::to_string(s.truncated_length) + " bytes, " + std::to_string(s.bytes - s.truncated_offset) +
           " remain)");
  p.text("\n");
  List first(p, "first_findings");
  for (const auto &f : s.first) {
    Object o(p);
    p.text("  message at " + hex(f.offset) + ": ");
    print(p, f.violation);
    p.data("message_offset", f.offset);
    p.text("\n");
  }
}

void print(Printer &p, const Validation &v, const CommandTable &t) {
  p.data("accepted", v.accepted());
  p.data("decoded", v.decoded);
  p.data("bytes", v.total_bytes);
  {
    Object command(p, "command");
    print(p, v.command, t);
  }
  {
    List violations(p, "violations");
    for (const Violation &x : v.violations) {
      Object o(p);
      print(p, x);
      p.text("\n");
    }
  }
  p.text(v.accepted() ? "accepted\n" : "not accepted\n");
}

namespace {
Error encode_error(const std::string &m) {
  return Error("ANEC-FWC-002", m);
}

void encode_scalars(std::vector<uint8_t> &body, const Command &c, const BodySpec &layout) {
  for (size_t i = 0; i < layout.scalars.size(); ++i) {
    const FieldSpec &f = layout.scalars[i];
    uint64_t v = i < c.scalars.size() ? c.scalars[i].second : 0;
    if (f.type == "i32" ? (int64_t(v) < INT32_MIN || int64_t(v) > INT32_MAX) : v > width_max(f.type))
      throw encode_error(f.name + " = " + std::to_string(v) + " does not fit " + f.type);
    put(body, v, uint32_t(f.bytes()));
  }
}

void encode_array(std::vector<uint8_t> &body, const Command &c, const BodySpec &layout, const ArraySpec &a) {
  const RecordSpec *rs = record_spec(a.record);
  auto it = c.arrays.find(a.name);
  size_t n = it == c.arrays.end() ? 0 : it->second.size();
  for (size_t i = 0; i < layout.scalars.size(); ++i)
    if (layout.scalars[i].name == a.count && i < c.scalars.size() && c.scalars[i].second != n)
      throw encode_error(a.count + " = " + std::to_string(c.scalars[i].second) + " but " + a.name + " has " +
                         std::to_string(n) + " record(s)");
  for (size_t r = 0; r < n; ++r)
    for (size_t k = 0; k < rs->fields.size(); ++k) {
      uint64_t v = k < it->second[r].size() ? it->second[r][k] : 0;
      if (v > width_max(rs->fields[k].type))
        throw encode_error(a.name + "[" + std::to_string(r) + "]." + rs->fields[k].name + " does not fit " +
                           rs->fields[k].type);
      put(body, v, uint32_t(rs->fields[k].bytes()));
    }
}

// The body from the table's layout for the command, else its raw bytes.
std::vector<uint8_t> encode_body(const Command &c, const CommandTable &t) {
  const CommandSpec *spec = t.by_id(c.id);
  const BodySpec *layout = spec ? t.body(spec->name) : nullptr;
  if (!layout)
    return c.raw_body;
  std::vector<uint8_t> body;
  encode_scalars(body, c, *layout);
  for (const ArraySpec &a : layout->arrays)
    encode_array(body, c, *layout, a);
  return body;
}

// The envelope at `at`: the magic, then the checksum of every byte before the checksum.
void seal(std::span<uint8_t> out, uint64_t at) {
  const layout::Struct &e = envelope_layout();
  layout::Writer w(e);
  w.write_to(out, at);
  w.set("checksum", crc32(out.first(at + e.at("checksum").offset))).write_to(out, at);
}
} // namespace

std::vector<uint8_t> encode(const Command &c, const CommandTable &t) {
  std::vector<uint8_t> body = encode_body(c, t);
  const layout::Struct &h = command_header_layout();
  uint64_t total = align_up(h.bytes + body.size() + envelope_layout().bytes, kGranule);
  if (total > t.limits().max_command_bytes)
    throw encode_error("the command is " + std::to_string(total) + " bytes, past the " +
                       std::to_string(t.limits().max_command_bytes) + "-byte slot");
  std::vector<uint8_t> out(total, 0);
  layout::Writer w(h);
  w.set("id", c.id).set("size", body.size()).set("priority", c.priority);
  w.set("programId", uint64_t(int64_t(c.program_id))).set("processId", uint64_t(int64_t(c.process_id)));
  w.set("procedureId", c.procedure_id).write_to(out, 0);
  std::copy(body.begin(), body.end(), out.begin() + h.bytes);
  seal(out, h.bytes + body.size());
  return out;
}

namespace {
// The header's fields, looked up by name once.
struct HeaderFields {
  const layout::Field &id, &size, &priority, &program_id, &process_id, &procedure_id;
};
const HeaderFields &header_fields() {
  static const layout::Struct &h = command_header_layout();
  static const HeaderFields f{h.at("id"),        h.at("size"),      h.at("priority"),
                              h.at("programId"), h.at("processId"), h.at("procedureId")};
  return f;
}

void read_header(Command &c, const layout::View &h) {
  const HeaderFields &f = header_fields();
  c.id = uint32_t(h.raw(f.id));
  c.priority = uint32_t(h.raw(f.priority));
  c.program_id = int32_t(h.raw(f.program_id));
  c.process_id = int32_t(h.raw(f.process_id));
  c.procedure_id = uint32_t(h.raw(f.procedure_id));
}

uint64_t scalar(const Command &c, const std::string &name) {
  for (auto &[n, x] : c.scalars)
    if (n == name)
      return x;
  return 0;
}

// The body's named fields: the scalars that fit, and the counted records once the checks found the
// body to match its layout (`whole`). The checks are the compiled rules' (wire_rules.cpp).
void decode_body(Command &c, std::span<const uint8_t> body, const BodySpec &layout, bool whole) {
  size_t off = 0;
  c.scalars.reserve(layout.scalars.size());
  for (const FieldSpec &f : layout.scalars) {
    if (off + f.bytes() > body.size())
      return;
    c.scalars.push_back({f.name, load_le(body, off, uint32_t(f.bytes()))});
    off += f.bytes();
  }
  if (!whole)
    return;
  for (const ArraySpec &a : layout.arrays) {
    const RecordSpec *rs = record_spec(a.record);
    auto &records = c.arrays[a.name];
    for (uint64_t r = 0; r < scalar(c, a.count); ++r) {
      std::vector<uint64_t> rec;
      for (const FieldSpec &f : rs->fields) {
        rec.push_back(load_le(body, off, uint32_t(f.bytes())));
        off += f.bytes();
      }
      records.push_back(std::move(rec));
    }
  }
}

// The command's named fields, as far as the checks found them readable.
void decode(Command &c, std::span<const uint8_t> m, const CommandTable &t, Channel channel,
            const WireRules::Checked &checked) {
  if (m.size() < uint64_t(command_header_layout().bytes) + envelope_layout().bytes)
    return;
  layout::View h(command_header_layout(), m, 0, "ANEC-FW-001");
  read_header(c, h);
  if (!checked.framed || channel == Channel::ExeLoop) // the ExeLoop channel reads no ring body layout
    return;
  std::span<const uint8_t> body = m.subspan(h.end(), h.raw(header_fields().size));
  if (const BodySpec *layout = t.body_by_id(c.id))
    decode_body(c, body, *layout, checked.decoded);
  else if (checked.decoded)
    c.raw_body.assign(body.begin(), body.end());
}
} // namespace

Validation validate(std::span<const uint8_t> m, const CommandTable &t, Channel channel) {
  Validation v;
  WireRules::Checked checked = t.rules().check(m, channel, v.violations);
  v.decoded = checked.decoded;
  v.total_bytes = checked.total_bytes;
  decode(v.command, m, t, channel, checked);
  return v;
}

StreamValidation validate_stream(std::span<const uint8_t> capture, const CommandTable &t, Channel channel,
                                 size_t keep_findings) {
  StreamValidation s;
  s.bytes = capture.size();
  const WireRules &rules = t.rules();
  std::vector<Violation> found;
  for (uint64_t at = 0; at < capture.size();) {
    std::optional<uint64_t> length = rules.framed_length(capture.subspan(at));
    if (length && *length > capture.size() - at && *length <= rules.max_command_bytes()) {
      s.truncated = 1, s.truncated_offset = at, s.truncated_length = *length;
      break;
    }
    if (!length || *length > capture.size() - at || *length > rules.max_command_bytes()) {
      ++s.unframed; // cannot be framed: resume at the next granule
      at = align_up(at + 1, kGranule);
      continue;
    }
    WireRules::Checked c =
        rules.check(capture.subspan(at, *length), channel, found, keep_findings - s.first.size());
    ++s.messages;
    s.accepted += c.accepted();
    for (int d = 0; d < 4; ++d)
      s.by_disposition[d] += c.seen[size_t(d)];
    for (Violation &x : found)
      s.first.push_back({at, std::move(x)});
    found.clear();
    at += *length;
  }
  return s;
}

} // namespace anec::fw
