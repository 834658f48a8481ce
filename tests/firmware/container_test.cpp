// Firmware program containers built from the real hwx programs: layout, round trip, and the
// load-time audit with one damaged package per check.
#include "anec/firmware/container.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"
#include "../gen7.hpp"
#include <filesystem>
#include <gtest/gtest.h>
#include <set>

using namespace anec;
using namespace anec::fw;
using anec::test::code_of;
using anec::test::gen7;
namespace fs = std::filesystem;

namespace {
fs::path tinygrad(const char *f) { return fs::path(ANEC_TEST_SHARED_DIR) / "testdata" / "external" / "tinygrad" / f; }

std::set<std::string> codes(const std::vector<uint8_t> &b) {
  std::set<std::string> out;
  for (const PackageFinding &f : audit_package(b, gen7())) out.insert(f.code);
  return out;
}
// Section descriptor k of the first program.
uint64_t section(uint64_t k) { return kPackageHeaderBytes + kProgramHeaderBytes + kSectionBytes * k; }
} // namespace

TEST(Package, BuiltFromEveryRealHwxAuditsCleanAndRoundTrips) {
  for (const char *f : {"conv.hwx", "concat.hwx", "gemm.hwx", "relu.hwx", "sigmoid.hwx", "sum.hwx", "model.hwx.golden"}) {
    SCOPED_TRACE(f);
    auto hwx = read_file(tinygrad(f));
    auto bytes = write_package(package_from_hwx(hwx, gen7()));
    EXPECT_EQ(le32(bytes, 0), kPackageMagic);
    EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "HENA"); // the FourCC stored little-endian
    EXPECT_TRUE(codes(bytes).empty());
    Package p = read_package(bytes);
    ASSERT_EQ(p.programs.size(), 1u);
    const Program &g = p.programs[0];
    ASSERT_GE(g.sections.size(), 2u);
    EXPECT_EQ(g.sections[0].kind, uint32_t(SectionKind::Text));
    EXPECT_EQ(g.sections[0].bar, 0u);
    EXPECT_EQ(g.sections[0].device_address, 0x30000000u);
    EXPECT_EQ(g.sections[1].kind, uint32_t(SectionKind::Kernel));
    EXPECT_EQ(g.sections[1].bar, 1u);
    EXPECT_EQ(write_package(p), bytes);
  }
}

TEST(Package, DescriptionBuildsTheSameBytes) {
  auto hwx = read_file(tinygrad("relu.hwx"));
  Package from_hwx = package_from_hwx(hwx, gen7());
  ASSERT_FALSE(from_hwx.programs.empty());
  ASSERT_FALSE(from_hwx.programs[0].sections.empty());
  std::string hex_text;
  for (uint8_t b : from_hwx.programs[0].sections[0].payload) hex_text += "0123456789abcdef"[b >> 4], hex_text += "0123456789abcdef"[b & 15];
  Doc d = toml::parse("[[program]]\nbuffers = 4\n[[program.section]]\nkind = \"text\"\nbar = 0\ndevice_address = 0x30000000\nhex = \"" + hex_text + "\"\n", "p.toml");
  Package p = package_from_doc(d, ".", "p.toml");
  EXPECT_TRUE(codes(write_package(p)).empty());
  EXPECT_EQ(code_of([&] { package_from_doc(toml::parse("[[program]]\n[[program.section]]\nkind = \"weights\"\nhex = \"00\"\n", "k"), ".", "k"); }),
            "ANEC-PKG-003");
  EXPECT_EQ(code_of([&] { package_from_doc(toml::parse("[[program]]\n[[program.section]]\nkind = \"text\"\n", "n"), ".", "n"); }), "ANEC-PKG-003");
  Package bad = p;
  ASSERT_FALSE(bad.programs.empty());
  ASSERT_FALSE(bad.programs[0].sections.empty());
  bad.programs[0].sections[0].alignment = 48;
  EXPECT_EQ(code_of([&] { write_package(bad); }), "ANEC-PKG-001");
}

// Seed ch.19 table 19.3: the firmware refuses a package whose sections fail the load audit.
TEST(Package, EachAuditCheckFires) {
  const auto good = write_package(package_from_hwx(read_file(tinygrad("conv.hwx")), gen7()));
  ASSERT_TRUE(codes(good).empty());
  auto magic = good;
  store_le(magic, section(1), 0x12345678, 4);
  EXPECT_EQ(codes(magic), std::set<std::string>{"ANEC-PKG-101"});
  auto bounds = good;
  store_le(bounds, section(1) + 24, 0x100000, 8); // size past the program
  EXPECT_TRUE(codes(bounds).count("ANEC-PKG-102"));
  auto overlap = good;
  store_le(overlap, section(1) + 16, le64(good, section(0) + 16), 8); // kernel payload over the text payload
  store_le(overlap, section(1) + 32, 0x30000040, 8);                  // and over its device range
  EXPECT_TRUE(codes(overlap).count("ANEC-PKG-103"));
  auto misaligned = good;
  store_le(misaligned, section(1) + 32, 0x30000284, 8);
  EXPECT_EQ(codes(misaligned), std::set<std::string>{"ANEC-PKG-104"});
  auto not_pow2 = good;
  store_le(not_pow2, section(1) + 8, 48, 4);
  EXPECT_EQ(codes(not_pow2), std::set<std::string>{"ANEC-PKG-104"});
  auto window = good;
  store_le(window, section(1) + 32, 0xE0000000 - 0x40, 8); // 0xc0 bytes from 0xdfffffc0 end past the window
  EXPECT_EQ(codes(window), std::set<std::string>{"ANEC-PKG-105"});
  auto at_window = good;
  store_le(at_window, section(1) + 32, 0xE0000000 - 0xc0, 8); // ends exactly at the window
  EXPECT_TRUE(codes(at_window).empty());
  auto buffers = good;
  store_le(buffers, kPackageHeaderBytes + 16, 33, 4);
  EXPECT_EQ(codes(buffers), std::set<std::string>{"ANEC-PKG-106"});
  store_le(buffers, kPackageHeaderBytes + 16, 0, 4);
  EXPECT_EQ(codes(buffers), std::set<std::string>{"ANEC-PKG-106"});
  auto ops = good;
  store_le(ops, kPackageHeaderBytes + 20, 2, 4);
  EXPECT_EQ(codes(ops), std::set<std::string>{"ANEC-PKG-107"});
  auto bar = good;
  store_le(bar, section(1) + 12, 32, 4);
  EXPECT_EQ(codes(bar), std::set<std::string>{"ANEC-PKG-108"});
  auto chain = good; // the text section's only descriptor loses EON
  uint64_t text = kPackageHeaderBytes + le64(good, section(0) + 16);
  ASSERT_LT(text + 3, chain.size());
  chain[text + 3] &= uint8_t(~0x02);
  EXPECT_EQ(codes(chain), std::set<std::string>{"ANEC-PKG-109"});
  auto kind = good;
  store_le(kind, section(1) + 4, 9, 4);
  EXPECT_EQ(codes(kind), std::set<std::string>{"ANEC-PKG-110"});
  auto header = good;
  store_le(header, 0, 0x50454e41, 4);
  EXPECT_EQ(code_of([&] { audit_package(header, gen7()); }), "ANEC-PKG-002");
  EXPECT_EQ(code_of([&] { read_package(std::vector<uint8_t>(good.begin(), good.begin() + 60)); }), "ANEC-PKG-002");
  std::string msg; // the right magic in a file shorter than the header: the length is the reason
  EXPECT_EQ(code_of([&] { read_package(std::vector<uint8_t>(good.begin(), good.begin() + 8)); }, &msg), "ANEC-PKG-002");
  EXPECT_NE(msg.find("the file is 8 bytes, shorter than the 32-byte header"), std::string::npos) << msg;
}

// The layouts of tables/schema/layout/firmware.toml drive both directions: every package the writer
// makes reads back field by field through layout::View, and the same bytes come out of
// layout::Writer filled from what read_package returned.
namespace {
const layout::Struct &pkg_l() {
  return package_header_layout();
}
const layout::Struct &prog_l() {
  return program_header_layout();
}
const layout::Struct &sec_l() {
  return section_layout();
}

// The package rebuilt from `p` by the layouts' writers alone (offsets and sizes as read).
std::vector<uint8_t> rewritten(const Package &p, uint64_t size) {
  std::vector<uint8_t> out(size, 0);
  layout::Writer h(pkg_l());
  h.set("version", p.version).set("header_bytes", pkg_l().bytes).set("program_count", p.programs.size());
  h.set("package_bytes", size).write_to(out, 0);
  for (const Program &g : p.programs) {
    layout::Writer w(prog_l());
    w.set("header_bytes", prog_l().bytes).set("program_id", g.id).set("section_count", g.sections.size());
    w.set("buffer_count", g.buffers)
        .set("operation_count", g.operations)
        .set("procedure_count", g.procedures);
    w.set("program_bytes", g.bytes).write_to(out, g.offset);
    for (uint32_t k = 0; k < g.sections.size(); ++k) {
      const Section &s = g.sections[k];
      layout::Writer r(sec_l());
      r.set("kind", s.kind).set("alignment", s.alignment).set("bar", s.bar).set("offset", s.offset);
      r.set("size", s.size).set("device_address", s.device_address);
      r.write_to(out, g.offset + prog_l().bytes + uint64_t(sec_l().bytes) * k);
      if (g.offset + s.offset + s.payload.size() > size) {
        ADD_FAILURE() << "program " << g.id << " section " << k << " lies past the package's " << size;
        return {};
      }
      std::copy(s.payload.begin(), s.payload.end(), out.begin() + long(g.offset + s.offset));
    }
  }
  return out;
}

void expect_fields(const std::vector<uint8_t> &bytes, const Package &p) {
  ASSERT_TRUE(pkg_l().at("magic").value && prog_l().at("magic").value && sec_l().at("magic").value);
  layout::View h(pkg_l(), bytes, 0, "T");
  EXPECT_EQ(h.get("magic"), *pkg_l().at("magic").value);
  EXPECT_EQ(h.get("version"), p.version);
  EXPECT_EQ(h.get("header_bytes"), pkg_l().bytes);
  EXPECT_EQ(h.get("program_count"), p.programs.size());
  EXPECT_EQ(h.get("package_bytes"), bytes.size());
  for (const Program &g : p.programs) {
    layout::View v(prog_l(), bytes, g.offset, "T");
    EXPECT_EQ(v.get("magic"), *prog_l().at("magic").value);
    EXPECT_EQ(v.get("program_id"), g.id);
    EXPECT_EQ(v.get("section_count"), g.sections.size());
    EXPECT_EQ(v.get("buffer_count"), g.buffers);
    EXPECT_EQ(v.get("program_bytes"), g.bytes);
    for (uint32_t k = 0; k < g.sections.size(); ++k) {
      layout::View s(sec_l(), bytes, v.end() + uint64_t(sec_l().bytes) * k, "T");
      EXPECT_EQ(s.get("magic"), *sec_l().at("magic").value);
      EXPECT_EQ(s.get("kind"), g.sections[k].kind);
      EXPECT_EQ(s.get("bar"), g.sections[k].bar);
      EXPECT_EQ(s.get("offset"), g.sections[k].offset);
      EXPECT_EQ(s.get("size"), g.sections[k].payload.size());
      EXPECT_EQ(s.get("device_address"), g.sections[k].device_address);
    }
  }
}
} // namespace

TEST(Package, LayoutDrivesBothDirections) {
  EXPECT_EQ(kPackageHeaderBytes, 0x20u); // docs/firmware-container.md
  EXPECT_EQ(kProgramHeaderBytes, 0x30u);
  EXPECT_EQ(kSectionBytes, 0x30u);
  for (const char *f :
       {"conv.hwx", "concat.hwx", "gemm.hwx", "relu.hwx", "sigmoid.hwx", "sum.hwx", "model.hwx.golden"}) {
    SCOPED_TRACE(f);
    Package built = package_from_hwx(read_file(tinygrad(f)), gen7());
    ASSERT_FALSE(built.programs.empty());
    ASSERT_FALSE(built.programs[0].sections.empty());
    built.programs.push_back(built.programs[0]); // and a second program behind the first
    built.programs[1].id = 9;
    built.programs[1].sections[0].alignment = 256;
    auto bytes = write_package(built);
    Package p = read_package(bytes);
    ASSERT_EQ(p.programs.size(), 2u);
    expect_fields(bytes, p);
    EXPECT_EQ(rewritten(p, bytes.size()), bytes);
  }
}

// Struct::field_at names the fields under the offsets the audit reports.
TEST(Package, FieldAtNamesTheRecordsAndTheAuditOffsets) {
  EXPECT_EQ(pkg_l().field_at(0x0), "magic");
  EXPECT_EQ(pkg_l().field_at(0x13), "package_bytes");
  EXPECT_EQ(pkg_l().field_at(0x1f), "reserved");
  EXPECT_EQ(prog_l().field_at(0x14), "operation_count");
  EXPECT_EQ(prog_l().field_at(0x20), "program_bytes");
  EXPECT_EQ(sec_l().field_at(0xc), "bar");
  EXPECT_EQ(sec_l().field_at(0x27), "device_address");
  EXPECT_EQ(sec_l().field_at(0x30), "");
  const layout::Enum *kinds = layout::Database::builtin().enumeration("fw_section_kind");
  ASSERT_NE(kinds, nullptr);
  EXPECT_EQ(kinds->values.size(), 5u);
  for (const auto &[name, value] : kinds->values)
    EXPECT_EQ(section_kind_name(uint32_t(value)), name);
  EXPECT_STREQ(section_kind_name(uint32_t(SectionKind::Text)), "text");
  EXPECT_STREQ(section_kind_name(5), "unknown");

  const auto good = write_package(package_from_hwx(read_file(tinygrad("conv.hwx")), gen7()));
  auto named = [&](std::vector<uint8_t> bad, const std::string &code) {
    std::string out;
    for (const PackageFinding &f : audit_package(bad, gen7()))
      if (f.code == code) {
        if (f.offset >= section(1) && f.offset < section(2))
          out = sec_l().field_at(f.offset - section(1));
        else if (f.offset >= kPackageHeaderBytes)
          out = prog_l().field_at(f.offset - kPackageHeaderBytes);
        else
          out = pkg_l().field_at(f.offset);
      }
    return out;
  };
  auto with = [&](uint64_t at, uint64_t v, uint32_t width) {
    auto b = good;
    store_le(b, at, v, width);
    return b;
  };
  EXPECT_EQ(named(with(section(1), 0x12345678, 4), "ANEC-PKG-101"), "magic");
  EXPECT_EQ(named(with(section(1) + sec_l().at("kind").offset, 9, 4), "ANEC-PKG-110"), "kind");
  EXPECT_EQ(named(with(section(1) + sec_l().at("alignment").offset, 48, 4), "ANEC-PKG-104"), "alignment");
  EXPECT_EQ(named(with(section(1) + sec_l().at("bar").offset, 32, 4), "ANEC-PKG-108"), "bar");
  EXPECT_EQ(named(with(section(1) + sec_l().at("device_address").offset, 0xE0000000, 8), "ANEC-PKG-105"),
            "device_address");
  EXPECT_EQ(named(with(kPackageHeaderBytes + prog_l().at("buffer_count").offset, 0, 4), "ANEC-PKG-106"),
            "buffer_count");
  EXPECT_EQ(named(with(kPackageHeaderBytes + prog_l().at("operation_count").offset, 2, 4), "ANEC-PKG-107"),
            "operation_count");
  auto longer = good;
  longer.resize(good.size() + 16, 0);
  EXPECT_EQ(named(longer, "ANEC-PKG-102"), "package_bytes");
}
