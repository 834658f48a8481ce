#include "anec/firmware/container.hpp"

#include "anec/descriptors/audit.hpp"
#include "anec/descriptors/hwx.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/strict.hpp"

#include <algorithm>

namespace anec::fw {

namespace {
constexpr const char *kNotPackage = "ANEC-PKG-002";
constexpr uint64_t kProgramGranule = 16; // a program's size is rounded up to it

// tables/schema/layout/firmware.toml
const layout::Database &db() {
  return layout::Database::builtin();
}
const layout::Enum &kinds() {
  return *db().enumeration("fw_section_kind");
}

bool pow2(uint64_t a) {
  return a && !(a & (a - 1));
}

uint64_t magic_of(const layout::Struct &s) {
  return *s.at("magic").value;
}

// "0x414e4548, expected ... (ANEH)": a found magic against the layout's, its FourCC spelled out.
std::string magic_text(uint64_t found, const layout::Struct &s) {
  std::string cc;
  for (int k = 24; k >= 0; k -= 8)
    cc += char(magic_of(s) >> k & 0xff);
  return "magic " + hex(found) + ", expected " + hex(magic_of(s)) + " (" + cc + ")";
}

// The magic field of a record at `at`, when that field lies in the bytes (the record may not).
std::optional<uint64_t> peek_magic(const layout::Struct &s, std::span<const uint8_t> b, uint64_t at) {
  const layout::Field &f = s.at("magic");
  if (at > b.size() || b.size() - at < uint64_t(f.offset) + f.width)
    return std::nullopt;
  return load_le(b, at + f.offset, f.width);
}

Error not_package(const std::string &m) {
  return Error(kNotPackage, m);
}
} // namespace

const layout::Struct &package_header_layout() {
  return db().get("fw.package_header");
}
const layout::Struct &program_header_layout() {
  return db().get("fw.program_header");
}
const layout::Struct &section_layout() {
  return db().get("fw.section");
}

const char *section_kind_name(uint32_t k) {
  for (const auto &[name, value] : kinds().values)
    if (value == k)
      return name.c_str();
  return "unknown";
}

namespace {
bool known_kind(uint32_t k) {
  return std::string_view(section_kind_name(k)) != "unknown";
}

// Places the payloads after the section records, each at its alignment, in order; returns the
// program's size. ANEC-PKG-001 for an alignment that is not a power of two.
uint64_t lay_out(Program &g) {
  uint64_t at = program_header_layout().bytes + uint64_t(section_layout().bytes) * g.sections.size();
  for (Section &s : g.sections) {
    if (!pow2(s.alignment))
      throw Error("ANEC-PKG-001",
                  "section alignment " + std::to_string(s.alignment) + " is not a power of two");
    at = align_up(at, s.alignment);
    s.offset = at;
    s.size = s.payload.size();
    at += s.size;
  }
  return align_up(at, kProgramGranule);
}

void write_section(std::span<uint8_t> out, uint64_t at, const Section &s) {
  layout::Writer w(section_layout());
  w.set("kind", s.kind).set("alignment", s.alignment).set("bar", s.bar);
  w.set("offset", s.offset).set("size", s.size).set("device_address", s.device_address);
  w.write_to(out, at);
}

// The program's header, section records and payloads into `out` from `start`.
void write_program(std::span<uint8_t> out, uint64_t start, const Program &g) {
  const layout::Struct &h = program_header_layout();
  layout::Writer w(h);
  w.set("header_bytes", h.bytes).set("program_id", g.id).set("section_count", g.sections.size());
  w.set("buffer_count", g.buffers).set("operation_count", g.operations).set("procedure_count", g.procedures);
  w.set("program_bytes", g.bytes).write_to(out, start);
  for (size_t i = 0; i < g.sections.size(); ++i) {
    const Section &s = g.sections[i];
    write_section(out, start + h.bytes + uint64_t(section_layout().bytes) * i, s);
    std::copy(s.payload.begin(), s.payload.end(), out.begin() + long(start + s.offset));
  }
}
} // namespace

std::vector<uint8_t> write_package(Package p) {
  const layout::Struct &h = package_header_layout();
  std::vector<uint8_t> out(h.bytes, 0);
  for (Program &g : p.programs) {
    uint64_t start = out.size();
    g.bytes = lay_out(g);
    out.resize(start + g.bytes, 0);
    write_program(out, start, g);
  }
  layout::Writer w(h);
  w.set("version", p.version).set("header_bytes", h.bytes).set("program_count", p.programs.size());
  w.set("package_bytes", out.size()).write_to(out, 0);
  return out;
}

namespace {
// A section record; its payload when it lies inside the bytes from the program's start.
Section read_section(const layout::View &v, uint64_t program) {
  Section s;
  s.kind = uint32_t(v.get("kind"));
  s.alignment = uint32_t(v.get("alignment"));
  s.bar = uint32_t(v.get("bar"));
  s.offset = v.get("offset");
  s.size = v.get("size");
  s.device_address = v.get("device_address");
  std::span<const uint8_t> b = v.bytes();
  if (s.offset <= b.size() - program && s.size <= b.size() - program - s.offset)
    s.payload.assign(b.begin() + long(program + s.offset), b.begin() + long(program + s.offset + s.size));
  return s;
}

Program read_program(std::span<const uint8_t> b, uint64_t at, uint32_t i) {
  const layout::Struct &h = program_header_layout(), &sec = section_layout();
  std::string who = "program " + std::to_string(i);
  if (at + h.bytes > b.size())
    throw not_package(who + " header at " + hex(at) + " runs past the end");
  layout::View v(h, b, at, kNotPackage);
  if (v.get("magic") != magic_of(h))
    throw not_package(who + " at " + hex(at) + ": " + magic_text(v.get("magic"), h));
  Program g;
  g.offset = at;
  g.id = uint32_t(v.get("program_id"));
  g.buffers = uint32_t(v.get("buffer_count"));
  g.operations = uint32_t(v.get("operation_count"));
  g.procedures = uint32_t(v.get("procedure_count"));
  g.bytes = v.get("program_bytes");
  uint64_t header = v.get("header_bytes"), count = v.get("section_count");
  if (header < h.bytes || count * sec.bytes > b.size())
    throw not_package(who + ": header " + std::to_string(header) + " bytes, " + std::to_string(count) +
                      " sections");
  if (at + header + count * sec.bytes > b.size())
    throw not_package(who + ": section table runs past the end");
  for (uint64_t k = 0; k < count; ++k)
    g.sections.push_back(read_section(layout::View(sec, b, at + header + sec.bytes * k, kNotPackage), at));
  if (g.bytes == 0 || g.bytes > b.size() - at)
    throw not_package(who + " claims " + hex(g.bytes) + " bytes at " + hex(at));
  return g;
}
} // namespace

Package read_package(std::span<const uint8_t> b) {
  const layout::Struct &h = package_header_layout();
  std::optional<uint64_t> magic = peek_magic(h, b, 0);
  if (b.size() < h.bytes || magic != magic_of(h))
    throw not_package("not a program package: " +
                      (magic && *magic != magic_of(h)
                           ? magic_text(*magic, h)
                           : "the file is " + std::to_string(b.size()) + " bytes, shorter than the " +
                                 std::to_string(h.bytes) + "-byte header"));
  layout::View v(h, b, 0, kNotPackage);
  Package p;
  p.version = uint32_t(v.get("version"));
  p.bytes = v.get("package_bytes");
  uint64_t header = v.get("header_bytes"), count = v.get("program_count");
  if (header < h.bytes || header > b.size())
    throw not_package("package header of " + std::to_string(header) + " bytes");
  if (count > b.size() / program_header_layout().bytes)
    throw not_package(std::to_string(count) + " programs cannot fit " + std::to_string(b.size()) + " bytes");
  uint64_t at = header;
  for (uint32_t i = 0; i < count; ++i) {
    p.programs.push_back(read_program(b, at, i));
    at += p.programs.back().bytes;
  }
  return p;
}

namespace {
struct Findings {
  std::vector<PackageFinding> list;
  void add(const char *code, uint64_t at, const std::string &m) { list.push_back(finding_at(code, at, m)); }
};

// Where the audit finds section k's record: after the layout's program header (not the header's own
// header_bytes, which read_package follows).
uint64_t section_record(const Program &g, size_t k) {
  return g.offset + program_header_layout().bytes + uint64_t(section_layout().bytes) * k;
}

// ANEC-PKG-101, 110, 102, 104, 105 and 108 on section k's own fields.
void audit_fields(Findings &out, std::span<const uint8_t> b, const Program &g, size_t k,
                  const std::string &sec) {
  const layout::Struct &l = section_layout();
  const Section &s = g.sections[k];
  layout::View r(l, b, section_record(g, k), kNotPackage);
  uint64_t table_end = program_header_layout().bytes + uint64_t(l.bytes) * g.sections.size();
  uint64_t magic = r.get("magic");
  if (magic != magic_of(l))
    out.add("ANEC-PKG-101", r.offset_of("magic"), sec + ": " + magic_text(magic, l));
  if (!known_kind(s.kind))
    out.add("ANEC-PKG-110", r.offset_of("kind"), sec + ": kind " + std::to_string(s.kind));
  if (s.offset < table_end || s.offset > g.bytes || s.size > g.bytes - s.offset)
    out.add("ANEC-PKG-102", r.offset_of("offset"),
            sec + ": " + hex(s.offset) + "+" + hex(s.size) + " is outside the program's payload " +
                hex(table_end) + ".." + hex(g.bytes));
  if (!pow2(s.alignment))
    out.add("ANEC-PKG-104", r.offset_of("alignment"),
            sec + ": alignment " + std::to_string(s.alignment) + " is not a power of two");
  else if (s.offset % s.alignment || s.device_address % s.alignment)
    out.add("ANEC-PKG-104", r.offset_of("offset"),
            sec + ": offset " + hex(s.offset) + " or device address " + hex(s.device_address) + " is not " +
                std::to_string(s.alignment) + "-aligned");
  if (s.device_address > kDeviceWindowEnd || s.size > kDeviceWindowEnd - s.device_address)
    out.add("ANEC-PKG-105", r.offset_of("device_address"),
            sec + ": device range ends at " + hex(s.device_address + s.size) + ", past the " +
                hex(kDeviceWindowEnd) + " window");
  if (s.bar != kNoBar && s.bar >= kBars)
    out.add("ANEC-PKG-108", r.offset_of("bar"),
            sec + ": BAR index " + std::to_string(s.bar) + " is not below 32");
}

// ANEC-PKG-103: section k against the sections before it, in the package and in device memory.
void audit_overlaps(Findings &out, std::span<const uint8_t> b, const Program &g, size_t k,
                    const std::string &sec) {
  layout::View r(section_layout(), b, section_record(g, k), kNotPackage);
  const Section &s = g.sections[k];
  for (size_t j = 0; j < k; ++j) {
    const Section &o = g.sections[j];
    if (s.size && o.size && s.offset < o.offset + o.size && o.offset < s.offset + s.size)
      out.add("ANEC-PKG-103", r.offset_of("offset"),
              sec + " overlaps section " + std::to_string(j) + " in the package");
    if (s.size && o.size && s.device_address < o.device_address + o.size &&
        o.device_address < s.device_address + s.size)
      out.add("ANEC-PKG-103", r.offset_of("device_address"),
              sec + " overlaps section " + std::to_string(j) + " in device memory");
  }
}

// ANEC-PKG-109: a text section's descriptor chain against the descriptor audit.
void audit_text(Findings &out, const Program &g, const Section &s, const std::string &sec,
                const desc::TdSchema &schema) {
  if (s.kind != uint32_t(SectionKind::Text) || s.payload.size() != s.size)
    return;
  try {
    for (const desc::Finding &f : desc::audit_chain(desc::decode_raw_chain(s.payload, schema)))
      out.add("ANEC-PKG-109", g.offset + s.offset + f.offset, sec + ": " + f.code + " " + f.message);
  } catch (const Error &e) {
    out.add("ANEC-PKG-109", g.offset + s.offset, sec + ": " + e.code() + " " + e.what());
  }
}

void audit_program(Findings &out, std::span<const uint8_t> b, const Program &g, size_t i,
                   const desc::TdSchema &schema) {
  layout::View h(program_header_layout(), b, g.offset, kNotPackage);
  std::string who = "program " + std::to_string(i) + " (id " + std::to_string(g.id) + ")";
  if (g.buffers < 1 || g.buffers > kBars)
    out.add("ANEC-PKG-106", h.offset_of("buffer_count"),
            who + ": " + std::to_string(g.buffers) + " buffers, outside 1..32");
  if (g.operations != 1)
    out.add("ANEC-PKG-107", h.offset_of("operation_count"),
            who + ": " + std::to_string(g.operations) +
                " operations; the single dispatch path takes exactly one");
  for (size_t k = 0; k < g.sections.size(); ++k) {
    const Section &s = g.sections[k];
    std::string sec = who + " section " + std::to_string(k) + " (" + section_kind_name(s.kind) + ")";
    audit_fields(out, b, g, k, sec);
    audit_overlaps(out, b, g, k, sec);
    audit_text(out, g, s, sec, schema);
  }
}
} // namespace

std::vector<PackageFinding> audit_package(std::span<const uint8_t> b, const desc::TdSchema &schema) {
  Package p = read_package(b);
  Findings out;
  if (p.bytes != b.size())
    out.add("ANEC-PKG-102",
            layout::View(package_header_layout(), b, 0, kNotPackage).offset_of("package_bytes"),
            "package claims " + hex(p.bytes) + " bytes, the file has " + hex(b.size()));
  for (size_t i = 0; i < p.programs.size(); ++i)
    audit_program(out, b, p.programs[i], i, schema);
  return out.list;
}

namespace {
using anec::detail::Strict;

uint32_t u32(Strict &x, const char *key, uint32_t fallback) {
  const Doc *d = x.opt(key, Doc::Kind::Int);
  if (d && (d->as_int() < 0 || d->as_int() > 0xffffffffll))
    x.fail(*d, std::string(key) + " must be a 32-bit unsigned integer");
  return d ? uint32_t(d->as_int()) : fallback;
}

// The value of a kind named in fw_section_kind; ANEC-PKG-003 listing the names otherwise.
uint32_t kind_named(Strict &x, const Doc &sd) {
  const std::string &kind = x.req("kind", Doc::Kind::String).as_string();
  std::string names;
  for (const auto &[name, value] : kinds().values) {
    if (name == kind)
      return uint32_t(value);
    names += (names.empty() ? "" : ", ") + name;
  }
  x.fail(sd, "kind '" + kind + "' is not one of " + names);
}

Section section_from_doc(const Doc &sd, const std::filesystem::path &base, const std::string &source) {
  Strict x(sd, source, "ANEC-PKG-003", "section");
  Section s;
  s.kind = kind_named(x, sd);
  s.alignment = u32(x, "alignment", 64);
  s.bar = u32(x, "bar", kNoBar);
  if (const Doc *a = x.opt("device_address", Doc::Kind::Int))
    s.device_address = uint64_t(a->as_int());
  const Doc *file = x.opt("file", Doc::Kind::String);
  const Doc *hex_text = x.opt("hex", Doc::Kind::String);
  if (bool(file) == bool(hex_text))
    x.fail(sd, "a section takes its payload from exactly one of file and hex");
  if (file) {
    s.payload = read_file(base / file->as_string());
  } else {
    auto bytes = bytes_from_hex(hex_text->as_string());
    if (!bytes)
      x.fail(*hex_text, "hex must be pairs of hex digits");
    s.payload = std::move(*bytes);
  }
  x.finish();
  return s;
}

Program program_from_doc(const Doc &gd, const std::filesystem::path &base, const std::string &source) {
  Strict r(gd, source, "ANEC-PKG-003", "program");
  Program g;
  g.id = u32(r, "id", 0);
  g.buffers = u32(r, "buffers", 1);
  g.operations = u32(r, "operations", 1);
  g.procedures = u32(r, "procedures", 1);
  for (const Doc &sd : r.req("section", Doc::Kind::Array).items())
    g.sections.push_back(section_from_doc(sd, base, source));
  r.finish();
  return g;
}
} // namespace

Package package_from_doc(const Doc &doc, const std::filesystem::path &base, const std::string &source) {
  Strict top(doc, source, "ANEC-PKG-003", "package description");
  Package p;
  for (const Doc &gd : top.req("program", Doc::Kind::Array).items())
    p.programs.push_back(program_from_doc(gd, base, source));
  top.finish();
  return p;
}

namespace {
// A __TEXT section with file bytes as a section: __text the text, the others kernel data, each with
// the buffer slot the program state gives its address.
Section section_from_hwx(const desc::Hwx &h, const desc::HwxSection &x, std::span<const uint8_t> file) {
  Section s;
  s.kind = uint32_t(x.name == "__text" ? SectionKind::Text : SectionKind::Kernel);
  s.alignment = 64;
  s.device_address = x.addr;
  s.payload.assign(file.begin() + long(x.offset), file.begin() + long(x.offset + x.size));
  if (h.program)
    for (uint32_t k = 0; k < kBars; ++k)
      if (h.program->bars[k] == x.addr)
        s.bar = k;
  return s;
}
} // namespace

Package package_from_hwx(std::span<const uint8_t> file, const desc::TdSchema &schema) {
  desc::Hwx h = desc::read_hwx(file, schema);
  Program g;
  g.id = 0;
  for (const desc::HwxSegment &seg : h.segments)
    for (const desc::HwxSection &x : seg.sections)
      if (x.segment == "__TEXT" && x.offset) // the tensor windows carry no bytes
        g.sections.push_back(section_from_hwx(h, x, file));
  if (h.program) {
    g.buffers = 0;
    for (uint64_t bar : h.program->bars)
      g.buffers += bar != 0;
  }
  Package p;
  p.programs.push_back(std::move(g));
  return p;
}

} // namespace anec::fw
