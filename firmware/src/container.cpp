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
bool pow2(uint64_t a) { return a && !(a & (a - 1)); }
} // namespace

const char *section_kind_name(uint32_t k) {
  static const char *names[] = {"generic", "kernel", "text", "operation", "procedure"};
  return k < 5 ? names[k] : "unknown";
}

std::vector<uint8_t> write_package(Package p) {
  std::vector<uint8_t> out(kPackageHeaderBytes, 0);
  for (Program &g : p.programs) {
    uint64_t start = out.size();
    uint64_t at = kProgramHeaderBytes + uint64_t(kSectionBytes) * g.sections.size();
    for (Section &s : g.sections) {
      if (!pow2(s.alignment)) throw Error("ANEC-PKG-001", "section alignment " + std::to_string(s.alignment) + " is not a power of two");
      at = align_up(at, s.alignment);
      s.offset = at;
      s.size = s.payload.size();
      at += s.size;
    }
    g.bytes = align_up(at, 16);
    out.resize(start + g.bytes, 0);
    store_le(out, start, kProgramMagic, 4);
    store_le(out, start + 4, kProgramHeaderBytes, 4);
    store_le(out, start + 8, g.id, 4);
    store_le(out, start + 12, g.sections.size(), 4);
    store_le(out, start + 16, g.buffers, 4);
    store_le(out, start + 20, g.operations, 4);
    store_le(out, start + 24, g.procedures, 4);
    store_le(out, start + 32, g.bytes, 8);
    for (size_t i = 0; i < g.sections.size(); ++i) {
      const Section &s = g.sections[i];
      uint64_t d = start + kProgramHeaderBytes + kSectionBytes * i;
      store_le(out, d, kSectionMagic, 4);
      store_le(out, d + 4, s.kind, 4);
      store_le(out, d + 8, s.alignment, 4);
      store_le(out, d + 12, s.bar, 4);
      store_le(out, d + 16, s.offset, 8);
      store_le(out, d + 24, s.size, 8);
      store_le(out, d + 32, s.device_address, 8);
      std::copy(s.payload.begin(), s.payload.end(), out.begin() + long(start + s.offset));
    }
  }
  store_le(out, 0, kPackageMagic, 4);
  store_le(out, 4, p.version, 4);
  store_le(out, 8, kPackageHeaderBytes, 4);
  store_le(out, 12, p.programs.size(), 4);
  store_le(out, 16, out.size(), 8);
  return out;
}

Package read_package(std::span<const uint8_t> b) {
  auto fail = [&](const std::string &m) { return Error("ANEC-PKG-002", m); };
  if (b.size() < kPackageHeaderBytes || le32(b, 0) != kPackageMagic)
    throw fail("not a program package: " + (b.size() < 4 ? std::string("too short") : "magic " + hex(le32(b, 0)) + ", expected " + hex(kPackageMagic) + " (ANEH)"));
  Package p;
  p.version = le32(b, 4);
  uint32_t header = le32(b, 8), count = le32(b, 12);
  p.bytes = le64(b, 16);
  if (header < kPackageHeaderBytes || header > b.size()) throw fail("package header of " + std::to_string(header) + " bytes");
  if (count > b.size() / kProgramHeaderBytes) throw fail(std::to_string(count) + " programs cannot fit " + std::to_string(b.size()) + " bytes");
  uint64_t at = header;
  for (uint32_t i = 0; i < count; ++i) {
    if (at + kProgramHeaderBytes > b.size()) throw fail("program " + std::to_string(i) + " header at " + hex(at) + " runs past the end");
    if (le32(b, at) != kProgramMagic) throw fail("program " + std::to_string(i) + " at " + hex(at) + ": magic " + hex(le32(b, at)) + ", expected " + hex(kProgramMagic) + " (ANEP)");
    Program g;
    g.offset = at;
    uint32_t pheader = le32(b, at + 4), nsections = le32(b, at + 12);
    g.id = le32(b, at + 8);
    g.buffers = le32(b, at + 16);
    g.operations = le32(b, at + 20);
    g.procedures = le32(b, at + 24);
    g.bytes = le64(b, at + 32);
    if (pheader < kProgramHeaderBytes || uint64_t(nsections) * kSectionBytes > b.size())
      throw fail("program " + std::to_string(i) + ": header " + std::to_string(pheader) + " bytes, " + std::to_string(nsections) + " sections");
    if (at + pheader + uint64_t(nsections) * kSectionBytes > b.size()) throw fail("program " + std::to_string(i) + ": section table runs past the end");
    for (uint32_t k = 0; k < nsections; ++k) {
      uint64_t d = at + pheader + uint64_t(kSectionBytes) * k;
      Section s;
      s.kind = le32(b, d + 4);
      s.alignment = le32(b, d + 8);
      s.bar = le32(b, d + 12);
      s.offset = le64(b, d + 16);
      s.size = le64(b, d + 24);
      s.device_address = le64(b, d + 32);
      if (s.offset <= b.size() - at && s.size <= b.size() - at - s.offset) s.payload.assign(b.begin() + long(at + s.offset), b.begin() + long(at + s.offset + s.size));
      g.sections.push_back(std::move(s));
    }
    if (g.bytes == 0 || g.bytes > b.size() - at) throw fail("program " + std::to_string(i) + " claims " + hex(g.bytes) + " bytes at " + hex(at));
    at += g.bytes;
    p.programs.push_back(std::move(g));
  }
  return p;
}

std::vector<PackageFinding> audit_package(std::span<const uint8_t> b, const desc::TdSchema &schema) {
  Package p = read_package(b);
  std::vector<PackageFinding> out;
  auto add = [&](const char *code, uint64_t at, const std::string &m) { out.push_back({code, m, at}); };
  if (p.bytes != b.size()) add("ANEC-PKG-102", 16, "package claims " + hex(p.bytes) + " bytes, the file has " + hex(b.size()));
  for (size_t i = 0; i < p.programs.size(); ++i) {
    const Program &g = p.programs[i];
    std::string who = "program " + std::to_string(i) + " (id " + std::to_string(g.id) + ")";
    if (g.buffers < 1 || g.buffers > kBars) add("ANEC-PKG-106", g.offset + 16, who + ": " + std::to_string(g.buffers) + " buffers, outside 1..32");
    if (g.operations != 1) add("ANEC-PKG-107", g.offset + 20, who + ": " + std::to_string(g.operations) + " operations; the single dispatch path takes exactly one");
    uint64_t table_end = kProgramHeaderBytes + uint64_t(kSectionBytes) * g.sections.size();
    for (size_t k = 0; k < g.sections.size(); ++k) {
      const Section &s = g.sections[k];
      uint64_t d = g.offset + kProgramHeaderBytes + kSectionBytes * k;
      std::string sec = who + " section " + std::to_string(k) + " (" + section_kind_name(s.kind) + ")";
      if (le32(b, d) != kSectionMagic) add("ANEC-PKG-101", d, sec + ": magic " + hex(le32(b, d)) + ", expected " + hex(kSectionMagic) + " (ANES)");
      if (s.kind > 4) add("ANEC-PKG-110", d + 4, sec + ": kind " + std::to_string(s.kind));
      if (s.offset < table_end || s.offset > g.bytes || s.size > g.bytes - s.offset)
        add("ANEC-PKG-102", d + 16, sec + ": " + hex(s.offset) + "+" + hex(s.size) + " is outside the program's payload " + hex(table_end) + ".." + hex(g.bytes));
      if (!pow2(s.alignment)) add("ANEC-PKG-104", d + 8, sec + ": alignment " + std::to_string(s.alignment) + " is not a power of two");
      else if (s.offset % s.alignment || s.device_address % s.alignment)
        add("ANEC-PKG-104", d + 16, sec + ": offset " + hex(s.offset) + " or device address " + hex(s.device_address) + " is not " + std::to_string(s.alignment) + "-aligned");
      if (s.device_address > kDeviceWindowEnd || s.size > kDeviceWindowEnd - s.device_address)
        add("ANEC-PKG-105", d + 32, sec + ": device range ends at " + hex(s.device_address + s.size) + ", past the " + hex(kDeviceWindowEnd) + " window");
      if (s.bar != kNoBar && s.bar >= kBars) add("ANEC-PKG-108", d + 12, sec + ": BAR index " + std::to_string(s.bar) + " is not below 32");
      for (size_t j = 0; j < k; ++j) {
        const Section &o = g.sections[j];
        if (s.size && o.size && s.offset < o.offset + o.size && o.offset < s.offset + s.size)
          add("ANEC-PKG-103", d + 16, sec + " overlaps section " + std::to_string(j) + " in the package");
        if (s.size && o.size && s.device_address < o.device_address + o.size && o.device_address < s.device_address + s.size)
          add("ANEC-PKG-103", d + 32, sec + " overlaps section " + std::to_string(j) + " in device memory");
      }
      if (s.kind == uint32_t(SectionKind::Text) && s.payload.size() == s.size) {
        try {
          for (const desc::Finding &f : desc::audit_chain(desc::decode_raw_chain(s.payload, schema)))
            add("ANEC-PKG-109", g.offset + s.offset + f.offset, sec + ": " + f.code + " " + f.message);
        } catch (const Error &e) {
          add("ANEC-PKG-109", g.offset + s.offset, sec + ": " + e.code() + " " + e.what());
        }
      }
    }
  }
  return out;
}

Package package_from_doc(const Doc &doc, const std::filesystem::path &base, const std::string &source) {
  using anec::detail::Strict;
  Strict top(doc, source, "ANEC-PKG-003", "package description");
  Package p;
  for (const Doc &gd : top.req("program", Doc::Kind::Array).items()) {
    Strict r(gd, source, "ANEC-PKG-003", "program");
    Program g;
    auto u32 = [&](Strict &x, const char *key, uint32_t fallback) {
      const Doc *d = x.opt(key, Doc::Kind::Int);
      if (d && (d->as_int() < 0 || d->as_int() > 0xffffffffll)) x.fail(*d, std::string(key) + " must be a 32-bit unsigned integer");
      return d ? uint32_t(d->as_int()) : fallback;
    };
    g.id = u32(r, "id", 0);
    g.buffers = u32(r, "buffers", 1);
    g.operations = u32(r, "operations", 1);
    g.procedures = u32(r, "procedures", 1);
    for (const Doc &sd : r.req("section", Doc::Kind::Array).items()) {
      Strict x(sd, source, "ANEC-PKG-003", "section");
      Section s;
      const std::string &kind = x.req("kind", Doc::Kind::String).as_string();
      s.kind = 99;
      for (uint32_t k = 0; k < 5; ++k)
        if (kind == section_kind_name(k)) s.kind = k;
      if (s.kind == 99) x.fail(sd, "kind '" + kind + "' is not one of generic, kernel, text, operation, procedure");
      s.alignment = u32(x, "alignment", 64);
      s.bar = u32(x, "bar", kNoBar);
      if (const Doc *a = x.opt("device_address", Doc::Kind::Int)) s.device_address = uint64_t(a->as_int());
      const Doc *file = x.opt("file", Doc::Kind::String);
      const Doc *hex_text = x.opt("hex", Doc::Kind::String);
      if (bool(file) == bool(hex_text)) x.fail(sd, "a section takes its payload from exactly one of file and hex");
      if (file) s.payload = read_file(base / file->as_string());
      else {
        auto bytes = bytes_from_hex(hex_text->as_string());
        if (!bytes) x.fail(*hex_text, "hex must be pairs of hex digits");
        s.payload = std::move(*bytes);
      }
      x.finish();
      g.sections.push_back(std::move(s));
    }
    r.finish();
    p.programs.push_back(std::move(g));
  }
  top.finish();
  return p;
}

Package package_from_hwx(std::span<const uint8_t> file, const desc::TdSchema &schema) {
  desc::Hwx h = desc::read_hwx(file, schema);
  Program g;
  g.id = 0;
  for (const desc::HwxSegment &seg : h.segments)
    for (const desc::HwxSection &x : seg.sections) {
      if (x.segment != "__TEXT" || !x.offset) continue; // the tensor windows carry no bytes
      Section s;
      s.kind = uint32_t(x.name == "__text" ? SectionKind::Text : SectionKind::Kernel);
      s.alignment = 64;
      s.device_address = x.addr;
      s.payload.assign(file.begin() + long(x.offset), file.begin() + long(x.offset + x.size));
      if (h.program)
        for (uint32_t k = 0; k < kBars; ++k)
          if (h.program->bars[k] == x.addr) s.bar = k;
      g.sections.push_back(std::move(s));
    }
  if (h.program) {
    g.buffers = 0;
    for (uint64_t bar : h.program->bars) g.buffers += bar != 0;
  }
  Package p;
  p.programs.push_back(std::move(g));
  return p;
}

} // namespace anec::fw
