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
  std::string hex_text;
  for (uint8_t b : from_hwx.programs[0].sections[0].payload) hex_text += "0123456789abcdef"[b >> 4], hex_text += "0123456789abcdef"[b & 15];
  Doc d = toml::parse("[[program]]\nbuffers = 4\n[[program.section]]\nkind = \"text\"\nbar = 0\ndevice_address = 0x30000000\nhex = \"" + hex_text + "\"\n", "p.toml");
  Package p = package_from_doc(d, ".", "p.toml");
  EXPECT_TRUE(codes(write_package(p)).empty());
  EXPECT_EQ(code_of([&] { package_from_doc(toml::parse("[[program]]\n[[program.section]]\nkind = \"weights\"\nhex = \"00\"\n", "k"), ".", "k"); }),
            "ANEC-PKG-003");
  EXPECT_EQ(code_of([&] { package_from_doc(toml::parse("[[program]]\n[[program.section]]\nkind = \"text\"\n", "n"), ".", "n"); }), "ANEC-PKG-003");
  Package bad = p;
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
  chain[text + 3] &= uint8_t(~0x02);
  EXPECT_EQ(codes(chain), std::set<std::string>{"ANEC-PKG-109"});
  auto kind = good;
  store_le(kind, section(1) + 4, 9, 4);
  EXPECT_EQ(codes(kind), std::set<std::string>{"ANEC-PKG-110"});
  auto header = good;
  store_le(header, 0, 0x50454e41, 4);
  EXPECT_EQ(code_of([&] { audit_package(header, gen7()); }), "ANEC-PKG-002");
  EXPECT_EQ(code_of([&] { read_package(std::vector<uint8_t>(good.begin(), good.begin() + 60)); }), "ANEC-PKG-002");
}
