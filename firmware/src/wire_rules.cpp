#include "anec/firmware/wire_rules.hpp"

#include "anec/support/bytes.hpp"
#include "anec/support/crc32.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>

namespace anec::fw {

namespace {
constexpr uint32_t kBadArgument = 0xe00002c2; // the IOKit status of a reject (appendix C.3)

// Each check's name, reason code and the firmware's disposition (seed ch.19 table 19.3).
enum class Check : uint8_t {
  Length,
  Magic,
  Checksum,
  Padding,
  ExeloopChannel,
  KnownId,
  Direction,
  Priority,
  ProgramId,
  ProcessId,
  ProcedureId,
  BodySize,
  FieldLimit,
  EventsNonempty,
  InterfaceMajor,
  InterfaceMinor,
  ChainedBuffer,
};
struct CheckInfo {
  const char *name, *code;
  Disposition disposition;
};
constexpr CheckInfo kChecks[] = {
    {"length", "ANEC-FW-001", Disposition::Reject},
    {"magic", "ANEC-FW-002", Disposition::Reject},
    {"checksum", "ANEC-FW-003", Disposition::Reject},
    {"padding", "ANEC-FW-004", Disposition::Reject},
    {"exeloop_channel", "ANEC-FW-013", Disposition::Fault},
    {"known_id", "ANEC-FW-005", Disposition::Reject},
    {"direction", "ANEC-FW-006", Disposition::Reject},
    {"priority", "ANEC-FW-007", Disposition::Reject},
    {"program_id", "ANEC-FW-008", Disposition::Reject},
    {"process_id", "ANEC-FW-008", Disposition::Reject},
    {"procedure_id", "ANEC-FW-008", Disposition::Reject},
    {"body_size", "ANEC-FW-009", Disposition::Reject},
    {"field_limit", "ANEC-FW-010", Disposition::Reject},
    {"events_nonempty", "ANEC-FW-011", Disposition::Reject},
    {"interface_version", "ANEC-FW-014", Disposition::Reject},
    {"interface_version", "ANEC-FW-014", Disposition::Warn}, // a minor mismatch: warn and continue (ch.29)
    {"chained_buffer", "ANEC-FW-012", Disposition::Reject},
};

// The names the named rules read (guide ch.30; the body layouts of commands.toml).
constexpr const char *kWaitEvents = "nbrOfWaitEvents", *kSignalEvents = "nbrOfSignalEvents",
                     *kOutputBufferSets = "nbrOfOutputBufferSets", *kChainedBuffers = "chainedBuffers";

Slot slot_of(const layout::Field &f) {
  return {f.offset, f.width};
}

Slot record_field(const RecordSpec &r, const std::string &name) {
  uint32_t offset = 0;
  for (const FieldSpec &f : r.fields) {
    if (f.name == name)
      return {offset, uint32_t(f.bytes())};
    offset += uint32_t(f.bytes());
  }
  throw Error("ANEC-FWT-001", "chained_buffers reads " + name + ", which a " + r.name + " record lacks");
}

} // namespace

// A message's findings: each marks its disposition seen; its Violation (and message) is built only
// while the caller keeps findings.
struct WireRules::Findings {
  Checked &checked;
  std::vector<Violation> &out;
  size_t keep;

  template <typename Message> void add(Check c, uint64_t offset, Message &&message) {
    checked.seen[int(kChecks[int(c)].disposition)] = true;
    if (out.size() < keep)
      keep_finding(c, offset, message());
  }
  [[gnu::cold, gnu::noinline]] void keep_finding(Check c, uint64_t offset, std::string message) {
    const CheckInfo &info = kChecks[int(c)];
    Violation v;
    Severity severity = info.disposition == Disposition::Warn ? Severity::Warning : Severity::Error;
    static_cast<Diagnostic &>(v) = finding_at(info.code, offset, std::move(message), severity);
    v.check = info.name;
    v.disposition = info.disposition;
    v.status = info.disposition == Disposition::Reject ? kBadArgument : 0;
    out.push_back(std::move(v));
  }
};

WireRules::WireRules(const CommandTable &t) : limits_(t.limits()) {
  const layout::Struct &h = command_header_layout(), &e = envelope_layout();
  header_ = {slot_of(h.at("id")),        slot_of(h.at("size")),      slot_of(h.at("priority")),
             slot_of(h.at("programId")), slot_of(h.at("processId")), slot_of(h.at("procedureId"))};
  header_bytes_ = h.bytes;
  envelope_bytes_ = e.bytes;
  magic_ = slot_of(e.at("magic"));
  checksum_ = slot_of(e.at("checksum"));
  magic_value_ = kEnvelopeMagic;
  for (const auto &[id, meaning] : t.exeloop())
    exeloop_.push_back(id);
  for (const CommandSpec &c : t.commands()) {
    if (c.id >= ids_.size()) {
      ids_.resize(c.id + 1);
      names_.resize(c.id + 1);
    }
    ids_[c.id] = {true, c.direction == "firmware-to-host", kAbsent};
    names_[c.id] = c.name;
    if (const BodySpec *b = t.body_by_id(c.id)) {
      ids_[c.id].body = int(bodies_.size());
      bodies_.push_back(body_rule(*b));
    }
  }
}

WireRules::BodyRule WireRules::body_rule(const BodySpec &spec) {
  auto position = [&](const std::string &name) {
    auto it = std::find_if(spec.scalars.begin(), spec.scalars.end(),
                           [&](const FieldSpec &f) { return f.name == name; });
    return it == spec.scalars.end() ? kAbsent : int(it - spec.scalars.begin());
  };
  auto named = [](const std::string &rule) { // the table's loader admits these three only
    return rule == "events_nonempty"     ? Named::EventsNonempty
           : rule == "interface_version" ? Named::InterfaceVersion
                                         : Named::ChainedBuffers;
  };
  BodyRule b;
  b.command = spec.command;
  for (const FieldSpec &f : spec.scalars) {
    ScalarRule s{{b.fixed_bytes, uint32_t(f.bytes())}, f.nonzero ? 1u : 0u, UINT64_MAX};
    for (std::optional<uint64_t> low : {f.equals, f.min})
      s.lo = std::max(s.lo, low.value_or(0));
    for (std::optional<uint64_t> high : {f.equals, f.max})
      s.hi = std::min(s.hi, high.value_or(UINT64_MAX));
    b.scalars.push_back(s);
    b.fields.push_back(f);
    b.fixed_bytes += s.at.width;
  }
  for (const ArraySpec &a : spec.arrays) {
    if (a.name == kChainedBuffers) {
      b.chained = int(b.arrays.size());
      b.chained_set_id = record_field(*record_spec(a.record), "outputBufferSetId");
      b.chained_address = record_field(*record_spec(a.record), "address");
    }
    b.arrays.push_back({position(a.count), uint32_t(record_spec(a.record)->bytes())});
  }
  for (const std::string &r : spec.rules)
    b.rules.push_back(named(r));
  b.wait_events = position(kWaitEvents);
  b.signal_events = position(kSignalEvents);
  b.output_buffer_sets = position(kOutputBufferSets);
  b.major = position("major");
  b.minor = position("minor");
  return b;
}

// Saturating: counts the body cannot hold make a size no body has, never a wrapped one.
uint64_t WireRules::BodyRule::bytes_before(std::span<const uint8_t> body, size_t array) const {
  uint64_t at = fixed_bytes;
  for (size_t k = 0; k < array; ++k) {
    uint64_t n = 0;
    if (__builtin_mul_overflow(scalar(body, arrays[k].count), arrays[k].record_bytes, &n) ||
        __builtin_add_overflow(at, n, &at))
      return UINT64_MAX;
  }
  return at;
}

WireRules::Checked WireRules::check(std::span<const uint8_t> m, Channel channel,
                                    std::vector<Violation> &findings, size_t keep) const {
  Checked c;
  Findings f{c, findings, keep};
  uint64_t least = uint64_t(header_bytes_) + envelope_bytes_;
  if (m.size() < least) {
    f.add(Check::Length, 0, [&] {
      return "message of " + std::to_string(m.size()) + " bytes is shorter than the header and envelope (" +
             std::to_string(least) + ")";
    });
    return c;
  }
  uint64_t size = header_.size.read(m);
  if (!check_envelope(m, size, f))
    return c;
  c.framed = true;
  uint32_t id = uint32_t(header_.id.read(m));
  if (channel ==
      Channel::ExeLoop) { // the ExeLoop channel speaks the wire enum; the body layouts are the ring's
    if (std::find(exeloop_.begin(), exeloop_.end(), id) == exeloop_.end())
      f.add(Check::ExeloopChannel, header_.id.offset, [&] {
        return "id " + hex(id) +
               " is not supported through the ExeLoop command channel: the firmware asserts";
      });
    c.decoded = true;
    return c;
  }
  if (id >= ids_.size() || !ids_[id].known) {
    f.add(Check::KnownId, header_.id.offset, [&] { return "id " + hex(id) + " is no command"; });
    return c;
  }
  check_header(m, id, f);
  if (ids_[id].body == kAbsent) {
    c.decoded = true;
    return c;
  }
  const BodyRule &b = bodies_[size_t(ids_[id].body)];
  std::span<const uint8_t> body = m.subspan(header_bytes_, size);
  if (!check_body_size(b, body, f))
    return c;
  c.decoded = true;
  check_fields(b, body, f);
  check_rules(b, body, f);
  return c;
}

// The envelope's checks in the firmware's order: length, granule, magic, checksum, padding. False
// when the size puts the envelope outside the message or the slot.
bool WireRules::check_envelope(std::span<const uint8_t> m, uint64_t size, Findings &f) const {
  uint64_t at = header_bytes_ + size, end = at + envelope_bytes_;
  f.checked.total_bytes = uint32_t(std::min<uint64_t>(align_up(end, kGranule), UINT32_MAX));
  if (end > m.size() || f.checked.total_bytes > limits_.max_command_bytes) {
    f.add(Check::Length, header_.size.offset, [&] {
      return "size " + std::to_string(size) + " puts the envelope end at " + std::to_string(end) +
             "; the buffer holds " + std::to_string(m.size()) + " and a slot " +
             std::to_string(limits_.max_command_bytes);
    });
    return false;
  }
  if (m.size() % kGranule)
    f.add(Check::Length, m.size(), [&] {
      return "message length " + std::to_string(m.size()) + " is not a multiple of the 16-byte granule";
    });
  uint64_t magic = magic_.read(m, at), sum = checksum_.read(m, at);
  if (magic != magic_value_)
    f.add(Check::Magic, at + magic_.offset,
          [&] { return "magic word " + hex(magic) + ", expected " + hex(magic_value_); });
  uint32_t want = anec::crc32(m.first(at + checksum_.offset));
  if (sum != want)
    f.add(Check::Checksum, at + checksum_.offset,
          [&] { return "checksum " + hex(sum) + ", the message sums to " + hex(want); });
  auto nonzero = std::find_if(m.begin() + ptrdiff_t(end), m.end(), [](uint8_t b) { return b != 0; });
  if (nonzero != m.end()) {
    uint64_t i = uint64_t(nonzero - m.begin());
    f.add(Check::Padding, i, [&] { return "padding byte at " + hex(i) + " is " + hex(m[i]) + ", not zero"; });
  }
  return true;
}

// The header fields against the table's limits (ch.30).
void WireRules::check_header(std::span<const uint8_t> m, uint32_t id, Findings &f) const {
  if (ids_[id].notification)
    f.add(Check::Direction, header_.id.offset,
          [&] { return names_[id] + " is a firmware-to-host notification, not a request"; });
  uint64_t priority = header_.priority.read(m);
  if (priority > limits_.priority_max)
    f.add(Check::Priority, header_.priority.offset, [&] {
      return "priority " + std::to_string(priority) + " is outside 0..7 (0..1 realtime, 2..7 normal)";
    });
  int32_t program = int32_t(header_.program_id.read(m)), process = int32_t(header_.process_id.read(m));
  if (program < -1 || program > int32_t(limits_.program_id_max))
    f.add(Check::ProgramId, header_.program_id.offset, [&] {
      return "programId " + std::to_string(program) + " is neither -1 nor 0.." +
             std::to_string(limits_.program_id_max);
    });
  if (process < -1)
    f.add(Check::ProcessId, header_.process_id.offset,
          [&] { return "processId " + std::to_string(process) + " is below -1"; });
  uint64_t procedure = header_.procedure_id.read(m);
  if (procedure > limits_.procedure_id_max)
    f.add(Check::ProcedureId, header_.procedure_id.offset, [&] {
      return "procedureId " + std::to_string(procedure) + " is past " +
             std::to_string(limits_.procedure_id_max);
    });
}

// The body holds every scalar, and the records its counts announce fill it exactly (ANEC-FW-009).
bool WireRules::check_body_size(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const {
  if (body.size() < b.fixed_bytes) {
    size_t cut =
        size_t(std::find_if(b.scalars.begin(), b.scalars.end(),
                            [&](const ScalarRule &s) { return s.at.offset + s.at.width > body.size(); }) -
               b.scalars.begin());
    f.add(Check::BodySize, header_bytes_ + b.scalars[cut].at.offset, [&] {
      return b.command + " body of " + std::to_string(body.size()) + " bytes ends inside " +
             b.fields[cut].name;
    });
    return false;
  }
  uint64_t need = b.bytes_before(body, b.arrays.size());
  if (need != body.size()) {
    f.add(Check::BodySize, header_.size.offset, [&] {
      return b.command + " with these counts is " + std::to_string(need) + " bytes, size says " +
             std::to_string(body.size());
    });
    return false;
  }
  return true;
}

// Each scalar's equals, min, max and nonzero limits (ANEC-FW-010): one range compare while they hold.
void WireRules::check_fields(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const {
  for (size_t i = 0; i < b.scalars.size(); ++i) {
    const ScalarRule &s = b.scalars[i];
    uint64_t x = s.at.read(body);
    if (x < s.lo || x > s.hi)
      report_field(b.fields[i], x, header_bytes_ + s.at.offset, f);
  }
}

void WireRules::report_field(const FieldSpec &field, uint64_t x, uint64_t offset, Findings &f) const {
  auto bad = [&](const char *what, std::optional<uint64_t> limit) {
    f.add(Check::FieldLimit, offset, [&] {
      return field.name + " = " + std::to_string(x) + " " + what +
             (limit ? " " + std::to_string(*limit) : "");
    });
  };
  if (field.equals && x != *field.equals)
    bad("must be", field.equals);
  if (field.min && x < *field.min)
    bad("is below", field.min);
  if (field.max && x > *field.max)
    bad("is above", field.max);
  if (field.nonzero && x == 0)
    bad("must be nonzero", std::nullopt);
}

// The body layout's named rules (ANEC-FW-011, 014, 012), each reported at the body's offset.
void WireRules::check_rules(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const {
  for (Named rule : b.rules) {
    if (rule == Named::EventsNonempty && b.scalar(body, b.wait_events) + b.scalar(body, b.signal_events) == 0)
      f.add(Check::EventsNonempty, header_bytes_,
            [] { return std::string("nbrOfWaitEvents + nbrOfSignalEvents must be above 0"); });
    if (rule == Named::InterfaceVersion)
      check_interface_version(b, body, f);
    if (rule == Named::ChainedBuffers)
      check_chained_buffers(b, body, f);
  }
}

void WireRules::check_interface_version(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const {
  uint64_t major = b.scalar(body, b.major), minor = b.scalar(body, b.minor);
  if (major != limits_.interface_major)
    f.add(Check::InterfaceMajor, header_bytes_, [&] {
      return "program interface " + std::to_string(major) + "." + std::to_string(minor) +
             ", the firmware speaks " + std::to_string(limits_.interface_major) + ".x";
    });
  else if (minor != limits_.interface_minor)
    f.add(Check::InterfaceMinor, header_bytes_, [&] {
      return "program interface minor version " + std::to_string(minor) + ", the firmware's is " +
             std::to_string(limits_.interface_minor) + ": warn and continue";
    });
}

// Chained output buffers: each address below 4 GiB, each naming an existing output buffer set.
void WireRules::check_chained_buffers(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const {
  if (b.chained == kAbsent)
    return;
  uint64_t at = b.bytes_before(body, size_t(b.chained));
  const ArrayRule &a = b.arrays[size_t(b.chained)];
  uint64_t records = b.scalar(body, a.count), sets = b.scalar(body, b.output_buffer_sets);
  for (uint64_t r = 0; r < records; ++r, at += a.record_bytes) {
    auto who = [&] { return std::string(kChainedBuffers) + "[" + std::to_string(r) + "]"; };
    uint64_t address = b.chained_address.read(body, at), set = b.chained_set_id.read(body, at);
    if (address >> 32)
      f.add(Check::ChainedBuffer, header_bytes_,
            [&] { return who() + " address " + hex(address) + " is not below 4 GiB"; });
    if (set >= sets)
      f.add(Check::ChainedBuffer, header_bytes_, [&] {
        return who() + " outputBufferSetId " + std::to_string(set) + " is not below " + kOutputBufferSets;
      });
  }
}

} // namespace anec::fw
