// Extraction of target tables from the fixture binaries, table-read attribution, and the errors
// of the binary loader and the emulator.
#include "anec/decode/binary.hpp"
#include "anec/decode/disasm.hpp"
#include "anec/decode/emulator.hpp"
#include "anec/hal/codec.hpp"
#include "anec/hal/extract.hpp"
#include "anec/hal/target_io.hpp"
#include "anec/hal/xref.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"
#include "fixture.hpp"

#include "../errors.hpp"
#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace anec;
using anec::test::code_of;
using namespace anec::hal;
using decode::Binary;
using test::Tables;

namespace {

std::string definition_without_extraction(const Target &t) {
  Target copy = t;
  copy.extraction.clear();
  return to_toml(Tables::get().schema, copy);
}

struct Variant {
  const char *file;
  const char *method; // the method every table, or at least one table, reports
};

} // namespace

class ExtractVariant : public ::testing::TestWithParam<Variant> {};

// Every fixture variant reproduces all 28 reference blobs byte for byte, and the definitions equal
// the committed tables (so the committed tables can be regenerated this way).
TEST_P(ExtractVariant, ReproducesAll28Tables) {
  const auto &T = Tables::get();
  Binary bin = Binary::load(test::fixture(GetParam().file));
  auto tables = extract(T.schema, T.registry, bin, {});
  ASSERT_EQ(tables.size(), 28u);
  std::set<std::string> methods;
  for (const auto &x : tables) {
    SCOPED_TRACE(x.target);
    const Target &ref = T.registry.get(x.target);
    EXPECT_EQ(x.blob, encode(T.schema, ref));
    EXPECT_EQ(x.interchange_formats, ref.list("interchange_formats"));
    Target got = to_target(T.schema, T.registry, bin, x);
    EXPECT_EQ(definition_without_extraction(got),
              read_text_file(test::tables() / "targets" / (x.target + ".toml")));
    methods.insert(x.method);
  }
  EXPECT_TRUE(methods.count(GetParam().method)) << GetParam().method;
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ExtractVariant,
    ::testing::Values(
        Variant{"libhal_O0.dylib", "sret (x8)"}, Variant{"libhal_O2.dylib", "this (x0)"},
        Variant{"libhal_O2.dylib", "sret (x8)"}, Variant{"libhal_Os.dylib", "sret (x8)"},
        Variant{"libhal_stripped.dylib", "dispatcher"}, Variant{"libhal_param.dylib", "table argument"},
        Variant{"libhal_heldout.dylib", "table argument"}, Variant{"libhal_heldout.dylib", "sret (x8)"},
        Variant{"libhal_data.dylib", "data symbol"}, Variant{"libhal_code_x86.so", "first argument (rdi)"},
        Variant{"libhal_x86.dylib", "first argument (rdi)"}, Variant{"libhal_fat.dylib", "sret (x8)"},
        Variant{"libhal_data_x86.so", "data symbol"}),
    [](const auto &info) {
      std::string n = std::string(info.param.file) + "_" + info.param.method;
      for (char &c : n)
        if (!std::isalnum(static_cast<unsigned char>(c)))
          c = '_';
      return n;
    });

TEST(Extract, StrippedVariantHasOnlyTheDispatcher) {
  Binary bin = Binary::load(test::fixture("libhal_stripped.dylib"));
  for (const auto &s : bin.symbols())
    EXPECT_EQ(s.demangled.find("ZinIrHal<"), std::string::npos) << s.demangled;
}

TEST(Extract, RecordsProvenance) {
  const auto &T = Tables::get();
  Binary bin = Binary::load(test::fixture("libhal_O2.dylib"));
  ExtractOptions opt;
  opt.targets = {"M5 Pro"};
  auto tables = extract(T.schema, T.registry, bin, opt);
  ASSERT_EQ(tables.size(), 1u);
  Target t = to_target(T.schema, T.registry, bin, tables[0]);
  std::map<std::string, std::string> ex(t.extraction.begin(), t.extraction.end());
  EXPECT_EQ(ex["sha256"], bin.sha256());
  EXPECT_EQ(ex["uuid"].size(), 32u);
  EXPECT_EQ(ex["symbol"], "ZinIrHal<H17s>::GetParams()");
  EXPECT_EQ(ex["method"], "this (x0)");
  EXPECT_GT(std::stoull(ex["instructions"]), 100u);
  // The [extraction] record survives a write and a strict read.
  Target back = from_doc(T.schema, toml::parse(to_toml(T.schema, t), "x"), "x");
  EXPECT_EQ(back.extraction, t.extraction);
}

TEST(Extract, ChangedValuesAreMarkedAsDecodedFromTheBinary) {
  const auto &T = Tables::get();
  Binary bin = Binary::load(test::fixture("libhal_O2.dylib"));
  ExtractOptions opt;
  opt.targets = {"h13"};
  auto x = extract(T.schema, T.registry, bin, opt).at(0);
  const auto *num_nes = T.schema.find("num_nes");
  ASSERT_TRUE(num_nes && num_nes->offset);
  ASSERT_LT(*num_nes->offset, x.blob.size());
  x.blob[*num_nes->offset] = 2;
  Target t = to_target(T.schema, T.registry, bin, x);
  EXPECT_EQ(t.uint("num_nes"), 2u);
  ASSERT_NE(t.find("num_nes"), nullptr);
  EXPECT_NE(t.find("num_nes")->provenance.source.find("decoded from"), std::string::npos);
  EXPECT_EQ(t.find("num_nes")->provenance.confidence, Confidence::Decoded);
}

TEST(Extract, ErrorsHaveReasonCodes) {
  const auto &T = Tables::get();
  ExtractOptions fast;
  fast.limits.max_instructions = 200000;
  std::string msg;
  EXPECT_EQ(
      code_of([&] { extract(T.schema, T.registry, Binary::load(test::fixture("libhal_loop.dylib")), fast); },
              &msg),
      "ANEC-EMU-002");
  EXPECT_NE(msg.find("ZinIrHal<H13>::GetParams()"), std::string::npos) << msg;
  EXPECT_EQ(
      code_of(
          [&] { extract(T.schema, T.registry, Binary::load(test::fixture("libhal_import.dylib")), fast); },
          &msg),
      "ANEC-EMU-003");
  EXPECT_NE(msg.find("printf"), std::string::npos) << msg;
  EXPECT_EQ(
      code_of(
          [&] { extract(T.schema, T.registry, Binary::load(test::fixture("libhal_nothing.dylib")), fast); },
          &msg),
      "ANEC-EXT-001");
  EXPECT_NE(msg.find("tried"), std::string::npos) << msg;
  ExtractOptions only;
  only.targets = {"h14"};
  EXPECT_EQ(
      code_of([&] { extract(T.schema, T.registry, Binary::load(test::fixture("libhal_loop.dylib")), only); }),
      "ANEC-EXT-002");
}

// The held-out fixture's members that fill nothing are tried and rejected with their reasons: a
// getter run and found to leave the table zero, a reader refused unrun. With the constructors'
// mangled argument lists changed to ones no constructor has (same length, so the file stays valid),
// nothing is recovered and the message says why for each kind.
TEST(Extract, RejectedCandidatesSayWhy) {
  const auto &T = Tables::get();
  auto bytes = read_file(test::fixture("libhal_heldout.dylib"));
  for (auto [from, to] : {std::pair<std::string, std::string>{"10InitializeEP18ZinIrHalParameters",
                                                              "10InitializeEP18ZinIrHalParametert"},
                          {"5BuildEv", "5BuildEb"}}) {
    size_t n = 0;
    for (auto it = std::search(bytes.begin(), bytes.end(), from.begin(), from.end()); it != bytes.end();
         it = std::search(it + 1, bytes.end(), from.begin(), from.end()), ++n)
      std::copy(to.begin(), to.end(), it);
    ASSERT_GT(n, 0u) << from;
  }
  Binary bin = Binary::parse(bytes, "renamed.dylib");
  std::string msg;
  EXPECT_EQ(code_of([&] { extract(T.schema, T.registry, bin, {}); }, &msg), "ANEC-EXT-001");
  for (const char *why :
       {"28 x takes the table read-only (e.g. ZinIrHal<", "28 x left the table all zero (e.g. ZinIrHal<",
        "x takes arguments other than the table (ZinIrHalParametert*)",
        "x takes arguments other than the table (bool)"})
    EXPECT_NE(msg.find(why), std::string::npos) << why << "\n" << msg;
}

namespace {

// A fixture whose classes the registry does not list, and the target of the reference whose table
// the n-th constructor (in line-up order) holds: how the fixture names it, and whether it is known.
struct Renamed {
  const char *file;
  std::string (*name)(size_t index, const std::string &target);
  bool known;
  const char *method; // the method of every table; "" where constructors alternate between two
};
std::string as_target(size_t, const std::string &t) {
  return t;
}
std::string as_index(size_t i, const std::string &) {
  return std::to_string(i);
}
std::string as_enum(size_t i, const std::string &) {
  return "zintarget_" + std::to_string(i);
}

// The tables the prefix fixture compiles in where they are not the reference's (see
// gen_hal_fixture): h14 with max_tensor_width 32768, and h19, h18's table with num_nes 8.
Target with(const Target &t, const char *field, uint64_t v, const char *name = nullptr) {
  Target out = t;
  out.values[field].value = v;
  if (name)
    out.name = name;
  return out;
}

} // namespace

class ExtractRenamed : public ::testing::TestWithParam<Renamed> {};

// Classes with a prefix, in a namespace, a number or an enum value for T, a constructor reached only
// through a pointer table, a table stored from a literal image in a loop: every table is recovered
// byte for byte, under the name its class gives it, and a name no target has is a new target whose
// nearest known target holds the same table.
TEST_P(ExtractRenamed, RecoversEveryTableByteForByte) {
  const auto &T = Tables::get();
  const Renamed &r = GetParam();
  Binary bin = Binary::load(test::fixture(r.file));
  auto tables = extract(T.schema, T.registry, bin, {});
  std::map<std::string, Target> expected;
  const auto &line = T.registry.targets();
  for (size_t i = 0; i < line.size(); ++i)
    expected[r.name(i, line[i].name)] = line[i];
  ASSERT_EQ(tables.size(), expected.size());
  for (const auto &x : tables) {
    SCOPED_TRACE(x.target + " (" + x.symbol + ")");
    ASSERT_TRUE(expected.count(x.target));
    const Target &ref = expected.at(x.target);
    EXPECT_EQ(x.blob, encode(T.schema, ref));
    EXPECT_EQ(x.interchange_formats, ref.list("interchange_formats"));
    EXPECT_EQ(x.known, r.known);
    if (*r.method) {
      EXPECT_EQ(x.method, r.method);
    }
    EXPECT_TRUE(x.differing.empty()) << status_text(x);
    EXPECT_EQ(encode(T.schema, T.registry.get(x.nearest)), x.blob) << x.nearest;
    EXPECT_EQ(status_text(x), r.known
                                  ? "matches the table of " + x.target
                                  : "new target; nearest known target " + x.nearest + ", 0 fields differ");
    // A new target's definition holds what its table holds and reads back; a known one's is the
    // committed table.
    Target got = to_target(T.schema, T.registry, bin, x);
    EXPECT_EQ(encode(T.schema, got), x.blob);
    Target back = from_doc(T.schema, toml::parse(to_toml(T.schema, got), "x"), "x");
    EXPECT_EQ(back.name, x.target);
    EXPECT_EQ(back.extraction, got.extraction);
    if (r.known) {
      EXPECT_EQ(definition_without_extraction(got),
                read_text_file(test::tables() / "targets" / (x.target + ".toml")));
    } else {
      EXPECT_EQ(got.find("family"), nullptr); // no identity is invented for a new target
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ExtractRenamed,
                         ::testing::Values(Renamed{"libhal_namespace.dylib", as_target, true, ""},
                                           Renamed{"libhal_number.dylib", as_index, false, ""},
                                           Renamed{"libhal_enum.dylib", as_enum, false, ""},
                                           Renamed{"libhal_pointers.dylib", as_target, true,
                                                   "through a data pointer, this (x0)"},
                                           Renamed{"libhal_image.dylib", as_target, true, "this (x0)"}),
                         [](const auto &info) {
                           std::string n = info.param.file;
                           for (char &c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

// The pointer-table fixture has neither constructor symbols nor a dispatcher: its tables are reached
// only through kZinHalFactories.
TEST(Extract, PointerVariantHasOnlyTheFactoryTable) {
  Binary bin = Binary::load(test::fixture("libhal_pointers.dylib"));
  bool table = false;
  for (const auto &s : bin.symbols()) {
    EXPECT_EQ(s.demangled.find("ZinIrHal<"), std::string::npos) << s.demangled;
    EXPECT_EQ(s.demangled.find("Fill_"), std::string::npos) << s.demangled;
    EXPECT_EQ(s.demangled.find("CreateHalFromString"), std::string::npos) << s.demangled;
    table |= s.demangled == "kZinHalFactories";
  }
  EXPECT_TRUE(table);
}

// ZinIrHal<ZinIrTargetH13> is h13; ZinIrTargetH19 names no target: a new target h19 whose nearest is
// h18 (one field differs); the fixture's h14 differs from the reference in the field it changed.
TEST(Extract, PrefixedClassesNewTargetsAndChangedTables) {
  const auto &T = Tables::get();
  Binary bin = Binary::load(test::fixture("libhal_prefix.dylib"));
  auto tables = extract(T.schema, T.registry, bin, {});
  ASSERT_EQ(tables.size(), 29u);
  std::map<std::string, const ExtractedTable *> by;
  for (const auto &x : tables)
    by[x.target] = &x;
  for (const Target &ref : T.registry.targets()) {
    SCOPED_TRACE(ref.name);
    ASSERT_TRUE(by.count(ref.name));
    const ExtractedTable &x = *by[ref.name];
    EXPECT_TRUE(x.known);
    EXPECT_EQ(x.class_name,
              "ZinIrTarget" + std::string(1, char(std::toupper(ref.name[0]))) + ref.name.substr(1));
    if (ref.name == "h14")
      continue;
    EXPECT_EQ(x.blob, encode(T.schema, ref));
    EXPECT_TRUE(x.differing.empty());
  }
  const ExtractedTable &h14 = *by["h14"];
  EXPECT_EQ(h14.blob, encode(T.schema, with(T.registry.get("h14"), "max_tensor_width", 32768)));
  EXPECT_EQ(h14.differing, std::vector<std::string>{"max_tensor_width"});
  EXPECT_EQ(status_text(h14), "differs from the table of h14 in 1 field");
  ASSERT_TRUE(by.count("h19"));
  const ExtractedTable &h19 = *by["h19"];
  EXPECT_FALSE(h19.known);
  EXPECT_EQ(h19.blob, encode(T.schema, with(T.registry.get("h18"), "num_nes", 8, "h19")));
  EXPECT_EQ(h19.nearest, "h18");
  EXPECT_EQ(h19.differing, std::vector<std::string>{"num_nes"});
  EXPECT_EQ(status_text(h19), "new target; nearest known target h18, 1 field differs");
  ExtractOptions only;
  only.targets = {"H19"};
  auto one = extract(T.schema, T.registry, bin, only);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].target, "h19");
}

// Members of an unknown class that fill no table: each is tried and the message says why for each.
TEST(Extract, DecoysAreRejectedEachForItsReason) {
  const auto &T = Tables::get();
  std::string msg;
  EXPECT_EQ(
      code_of([&] { extract(T.schema, T.registry, Binary::load(test::fixture("libhal_decoys.dylib")), {}); },
              &msg),
      "ANEC-EXT-001");
  for (const char *why :
       {"1 x takes the table read-only (e.g. ZinIrHal<ZinIrTargetH19>::Validate(ZinIrHalParameters const&) "
        "const)",
        "1 x takes arguments other than the table (ZinIrHalParameters*, unsigned long long) (e.g. "
        "ZinIrHal<ZinIrTargetH19>::Resize(",
        "1 x left the table all zero (e.g. ZinIrHal<ZinIrTargetH19>::Revision())",
        "1 x ANEC-EXT-004: h19 (ZinIrHal<ZinIrTargetH19>::GetParams()): filled a table that does not decode: "
        "ANEC-HAL-002: field 'cost_policy_name' at 0x580 holds a long-form string"})
    EXPECT_NE(msg.find(why), std::string::npos) << why << "\n" << msg;
}

// A table whose map size disagrees with its nodes: the data-symbol fixture with h13's count patched.
TEST(Extract, MapThatCannotBeWalkedIsAnError) {
  const auto &T = Tables::get();
  auto bytes = read_file(test::fixture("libhal_data.dylib"));
  Bytes h13 = encode(T.schema, T.registry.get("h13"));
  const auto *count = T.schema.find("interchange_format_count");
  ASSERT_TRUE(count && count->offset);
  uint32_t count_at = *count->offset;
  ASSERT_TRUE(count_at >= 16 && count_at <= h13.size()) << count_at;
  auto it = std::search(bytes.begin(), bytes.end(), h13.begin(), h13.begin() + count_at - 16);
  ASSERT_NE(it, bytes.end());
  ASSERT_LT(count_at, size_t(bytes.end() - it));
  ASSERT_EQ(std::search(it + 1, bytes.end(), h13.begin(), h13.begin() + count_at - 16), bytes.end())
      << "not unique";
  *(it + count_at) = 5; // three nodes, size 5
  Binary bin = Binary::parse(bytes, "patched.dylib");
  ExtractOptions opt;
  opt.targets = {"h13"};
  std::string msg;
  EXPECT_EQ(code_of([&] { extract(T.schema, T.registry, bin, opt); }, &msg), "ANEC-EXT-003");
  EXPECT_NE(msg.find("walked 3 map nodes, the table says 5"), std::string::npos) << msg;
}

TEST(BinaryLoader, ReadsMachOAndElf) {
  Binary m = Binary::load(test::fixture("libhal_O2.dylib"));
  EXPECT_EQ(m.format(), decode::Format::MachO);
  EXPECT_EQ(m.arch(), decode::Arch::Arm64);
  EXPECT_EQ(m.uuid().size(), 32u);
  std::set<std::string> imports;
  for (auto &i : m.imports())
    imports.insert(i.demangled);
  EXPECT_TRUE(imports.count("memcpy"));
  EXPECT_TRUE(imports.count("operator new(unsigned long)"));
  Binary e = Binary::load(test::fixture("libhal_code_x86.so"));
  EXPECT_EQ(e.format(), decode::Format::Elf);
  EXPECT_EQ(e.arch(), decode::Arch::X86_64);
  EXPECT_TRUE(e.uuid().empty());
}

TEST(BinaryLoader, RejectsBadFiles) {
  auto bytes = read_file(test::fixture("libhal_O2.dylib"));
  std::vector<uint8_t> half(bytes.begin(), bytes.begin() + long(bytes.size() / 2));
  std::string msg;
  EXPECT_EQ(code_of([&] { Binary::parse(half, "half.dylib"); }, &msg), "ANEC-BIN-001");
  EXPECT_NE(msg.find("past the file end"), std::string::npos) << msg;
  std::vector<uint8_t> header(bytes.begin(), bytes.begin() + 20);
  EXPECT_EQ(code_of([&] { Binary::parse(header, "h"); }), "ANEC-BIN-001");
  std::string text = "schema = \"anec-hal\"\n";
  EXPECT_EQ(code_of([&] {
              Binary::parse({reinterpret_cast<const uint8_t *>(text.data()), text.size()}, "t");
            }),
            "ANEC-BIN-002");
  std::vector<uint8_t> hwx = {0xce, 0xfa, 0xef, 0xbe, 0, 0, 0, 0};
  EXPECT_EQ(code_of([&] { Binary::parse(hwx, "x.hwx"); }, &msg), "ANEC-BIN-002");
  EXPECT_NE(msg.find("hwx"), std::string::npos);
  EXPECT_EQ(code_of([&] { Binary::load(test::fixture("riscv.o")); }, &msg), "ANEC-BIN-003");
  EXPECT_EQ(code_of([&] { Binary::load(test::fixture("no-such-file")); }), "ANEC-IO-001");
}

// A Mach-O linked with chained fixups (LC_DYLD_CHAINED_FIXUPS, whose linkedit_data_command has the
// shape of LC_FUNCTION_STARTS): the fixture's function-starts command relabelled as one.
TEST(BinaryLoader, ChainedFixupsAreRefused) {
  auto bytes = read_file(test::fixture("libhal_O2.dylib"));
  size_t off = 32, relabelled = 0;
  for (uint32_t i = 0, n = le32(bytes, 16); i < n; off += le32(bytes, off + 4), ++i)
    if (le32(bytes, off) == 0x26)
      relabelled = off;
  ASSERT_NE(relabelled, 0u);
  store_le(bytes, relabelled, 0x80000034, 4);
  std::string msg;
  EXPECT_EQ(code_of([&] { Binary::parse(bytes, "chained.dylib"); }, &msg), "ANEC-BIN-004");
  EXPECT_NE(msg.find("'chained.dylib' uses chained fixups"), std::string::npos) << msg;
}

namespace {
uint32_t le32at(const std::vector<uint8_t> &b, size_t off) {
  return uint32_t(b[off]) | uint32_t(b[off + 1]) << 8 | uint32_t(b[off + 2]) << 16 |
         uint32_t(b[off + 3]) << 24;
}
} // namespace

// Regressions from fuzzing: damaged dyld bind opcodes (LIEF 0.9 spun on such a stream) and an ELF
// segment whose file size runs past the file (LIEF allocated it).
TEST(BinaryLoader, RejectsDamagedLinkeditAndSegments) {
  auto macho = read_file(test::fixture("libhal_O2.dylib"));
  uint32_t ncmds = le32at(macho, 16);
  size_t off = 32, bind = 0;
  for (uint32_t i = 0; i < ncmds; ++i) {
    if (le32at(macho, off) == 0x80000022)
      bind = le32at(macho, off + 16);
    off += le32at(macho, off + 4);
  }
  ASSERT_NE(bind, 0u);
  std::string msg;
  auto patched = macho;
  patched[bind] = 0x90; // DO_BIND before any segment is set
  EXPECT_EQ(code_of([&] { Binary::parse(patched, "p"); }, &msg), "ANEC-BIN-001");
  EXPECT_NE(msg.find("bind opcodes"), std::string::npos) << msg;
  patched = macho;
  const uint8_t repeat[] = {0x71, 0x00, 0xc0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}; // bind 2^32 times
  std::copy(std::begin(repeat), std::end(repeat), patched.begin() + long(bind));
  EXPECT_EQ(code_of([&] { Binary::parse(patched, "p"); }, &msg), "ANEC-BIN-001");

  auto elf = read_file(test::fixture("libhal_code_x86.so"));
  uint64_t phoff = 0;
  for (int k = 0; k < 8; ++k)
    phoff |= uint64_t(elf[0x20 + k]) << (8 * k);
  for (int k = 0; k < 8; ++k)
    elf[phoff + 32 + k] = k == 6 ? 0x36 : 0; // p_filesz of the first header
  EXPECT_EQ(code_of([&] { Binary::parse(elf, "e"); }, &msg), "ANEC-BIN-001");
  EXPECT_NE(msg.find("past the file end"), std::string::npos) << msg;

  // Program headers 64 bytes apart: LIEF reads them 56 apart, so its second header (whose file
  // size here is the first's physical address, 40 GiB) is not one the checks saw.
  elf = read_file(test::fixture("libhal_code_x86.so"));
  uint16_t phnum = uint16_t(elf[0x38] | elf[0x39] << 8);
  std::vector<uint8_t> spaced;
  for (uint16_t i = 0; i < phnum; ++i) {
    auto at = elf.begin() + long(phoff + i * 56u);
    spaced.insert(spaced.end(), at, at + 56);
    spaced.resize(spaced.size() + 8);
  }
  store_le(spaced, 64 + 24, 0xa00000218ull, 8); // the second header's p_paddr
  store_le(elf, 0x20, elf.size(), 8);
  store_le(elf, 0x36, 64, 2);
  elf.insert(elf.end(), spaced.begin(), spaced.end());
  EXPECT_EQ(code_of([&] { Binary::parse(elf, "e"); }, &msg), "ANEC-BIN-001");
  EXPECT_NE(msg.find("program header entry size 64"), std::string::npos) << msg;
}

// The dispatcher refers to the target-name strings it compares against.
TEST(Disassembler, FindsReferencesToStrings) {
  for (const char *file : {"libhal_O2.dylib", "libhal_code_x86.so"}) {
    SCOPED_TRACE(file);
    Binary b = Binary::load(test::fixture(file));
    const decode::Symbol *fn = nullptr;
    for (auto &s : b.symbols())
      if (s.demangled.rfind("CreateHalFromString", 0) == 0)
        fn = &s;
    ASSERT_NE(fn, nullptr);
    decode::Disassembler d(b.arch());
    auto code = d.disassemble(b, fn->addr, b.function_end(fn->addr));
    ASSERT_GT(code.size(), 50u);
    std::set<std::string> strings;
    size_t calls = 0;
    for (auto &r : d.references(code)) {
      if (auto s = b.read_cstring(r.to, 8))
        strings.insert(*s);
      calls += r.kind == "call";
    }
    EXPECT_TRUE(strings.count("h13"));
    EXPECT_TRUE(strings.count("h17s"));
    EXPECT_GE(calls, 28u);
  }
}

namespace {
struct Buffer : decode::MemoryReader {
  Buffer(uint64_t b, std::vector<uint8_t> v) : base(b), bytes(std::move(v)) {}
  uint64_t base;
  std::vector<uint8_t> bytes;
  bool read(uint64_t addr, std::span<uint8_t> out) const override {
    if (addr < base || addr - base + out.size() > bytes.size())
      return false;
    std::copy_n(bytes.begin() + long(addr - base), out.size(), out.begin());
    return true;
  }
};
std::vector<uint8_t> words(std::initializer_list<uint32_t> ws) {
  std::vector<uint8_t> b;
  for (uint32_t w : ws)
    for (int k = 0; k < 4; ++k)
      b.push_back(uint8_t(w >> (8 * k)));
  return b;
}
} // namespace

// Each reference form on hand-encoded instructions: adr, ldr literal, adrp+add, adrp+ldr,
// rip-relative.
TEST(Disassembler, ResolvesEachReferenceForm) {
  decode::Disassembler a(decode::Arch::Arm64);
  // adr x0, #+0x10; ldr x1, #+0x20; adrp x2, #+1 page; add x2, x2, #0x34; adrp x3, 0; ldr x4, [x3, #0x18]
  Buffer code(0x1000, words({0x10000080, 0x58000101, 0xb0000002, 0x9100d042, 0x90000003, 0xf9400c64}));
  auto refs = a.references(a.disassemble(code, 0x1000, 0x1018));
  std::vector<std::pair<std::string, uint64_t>> got;
  for (auto &r : refs)
    got.push_back({r.kind, r.to});
  std::vector<std::pair<std::string, uint64_t>> want = {
      {"adr", 0x1010}, {"ldr-literal", 0x1024}, {"adrp+add", 0x2034}, {"adrp+ldr", 0x1018}};
  EXPECT_EQ(got, want);
  decode::Disassembler x(decode::Arch::X86_64);
  Buffer x86(0x4000, {0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00, 0xe8, 0x00, 0x01, 0x00,
                      0x00}); // lea rax,[rip+0x10]; call
  auto xr = x.references(x.disassemble(x86, 0x4000, 0x400c));
  ASSERT_EQ(xr.size(), 2u);
  EXPECT_EQ(xr[0].kind, "rip-relative");
  EXPECT_EQ(xr[0].to, 0x4017u);
  EXPECT_EQ(xr[1].kind, "call");
  EXPECT_EQ(xr[1].to, 0x410cu);
}

class Xref : public ::testing::TestWithParam<const char *> {};

// Each reader is attributed the offsets it reads through its table argument, and nothing it reads
// off another structure (ComputeMaxPatchWidth also reads 0x1c0 from ZinTensorDims).
TEST_P(Xref, AttributesReadsToReaders) {
  const auto &T = Tables::get();
  auto readers = find_readers(T.schema, Binary::load(test::fixture(GetParam())));
  // Sets: the order of two loads is the compiler's (GCC and clang schedule them differently).
  std::map<std::string, std::set<std::string>> got;
  for (auto &r : readers)
    for (auto &t : r.reads)
      got[r.function.substr(0, r.function.find('('))].insert(t.named ? t.field : "unnamed:" + t.proposal);
  std::map<std::string, std::set<std::string>> want = {
      {"ZinResizeLayerUtils::HasTextureEngine", {"texture_engine"}},
      {"ZinMirL2Config::ComputeMaxPatchWidth", {"pe_min_patch_width_log2", "patch_width_cap_log2"}},
      {"ZinIrTdValidationUtil::GetSecureCacheHintMode", {"unnamed:secure_cache_hint_mode"}},
      {"ZinEngineQuery::GetCoreCount", {"num_nes"}}};
  EXPECT_EQ(got, want);
  for (auto &r : readers)
    if (r.function.find("GetCoreCount") != std::string::npos) {
      EXPECT_EQ(r.argument, 1); // `this` first
    }
}
INSTANTIATE_TEST_SUITE_P(Fixtures, Xref,
                         ::testing::Values("libhal_O0.dylib", "libhal_O2.dylib", "libhal_Os.dylib",
                                           "libhal_code_x86.so"),
                         [](const auto &info) {
                           std::string n = info.param;
                           for (char &c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

TEST(Xref, ProposesSnakeCaseNames) {
  EXPECT_EQ(propose_name("ZinIrKernel::GetPreferredKernelLayoutFormat(ZinIrHalParameters const&)"),
            "preferred_kernel_layout_format");
  EXPECT_EQ(propose_name("NERasterization::CanUseNonPowerOf2WUs(ZinIrHalParameters const&)"),
            "use_non_power_of2_w_us");
  EXPECT_EQ(propose_name("IsChainable(ZinIrHalParameters const&)"), "chainable");
}

// An emulator whose constructor throws (here: a segment above its fixed regions) used to leave its
// Unicorn engine open; LeakSanitizer, in the sanitizer build CI runs, reports such an engine.
TEST(Emulator, ConstructorThatThrowsClosesItsEngine) {
  auto bytes = read_file(test::fixture("libhal_code_x86.so"));
  uint64_t phoff = le64(bytes, 0x20);
  uint16_t phentsize = le16(bytes, 0x36), phnum = le16(bytes, 0x38);
  bool moved = false;
  for (uint16_t i = 0; i < phnum && !moved; ++i) {
    size_t ph = size_t(phoff + uint64_t(i) * phentsize);
    if (le32(bytes, ph) != 1)
      continue;                                                           // PT_LOAD
    store_le(bytes, ph + 0x10, le64(bytes, ph + 0x10) + (1ull << 41), 8); // p_vaddr past the trampolines
    moved = true;
  }
  ASSERT_TRUE(moved);
  Binary high = Binary::parse(bytes, "high.so");
  EXPECT_EQ(code_of([&] { decode::Emulator e(high); }), "ANEC-EMU-004");
}

// Memory emulated code cannot use (1 GiB, above the fixture, is unmapped): a write there, a heap
// past its limit, the dispatcher's strcmp on a name there, h13's constructor copying its table
// there (memcpy), and a call there.
TEST(Emulator, MemoryFaultsAreReported) {
  Binary bin = Binary::load(test::fixture("libhal_O2.dylib"));
  decode::EmuLimits small;
  small.heap_bytes = 1 << 16;
  decode::Emulator emu(bin, small);
  const uint64_t unmapped = 1ull << 30;
  const uint8_t one = 1;
  std::string msg;
  EXPECT_EQ(code_of([&] { emu.write(unmapped, {&one, 1}); }, &msg), "ANEC-EMU-001");
  EXPECT_NE(msg.find("cannot write at 0x40000000"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { emu.alloc(1 << 17); }, &msg), "ANEC-EMU-001");
  EXPECT_NE(msg.find("emulator heap exhausted (65536 bytes)"), std::string::npos) << msg;
  auto function = [&](const std::string &prefix) {
    for (auto &s : bin.symbols())
      if (s.demangled.rfind(prefix, 0) == 0)
        return s.addr;
    ADD_FAILURE() << prefix;
    return uint64_t{0};
  };
  uint64_t dispatch[] = {unmapped, emu.alloc(Tables::get().schema.blob_size())};
  EXPECT_EQ(code_of([&] { emu.call(function("CreateHalFromString"), dispatch); }, &msg), "ANEC-EMU-001");
  EXPECT_NE(msg.find("import strcmp: unterminated string"), std::string::npos) << msg;
  // h13's constructor given a table in unmapped memory: it copies the table there
  uint64_t table[] = {unmapped};
  EXPECT_EQ(code_of([&] { emu.call(function("ZinIrHal<H13>::GetParams"), table, unmapped); }, &msg),
            "ANEC-EMU-001");
  std::string copy = "import memcpy: cannot copy " + std::to_string(Tables::get().schema.blob_size());
  EXPECT_NE(msg.find(copy), std::string::npos) << msg;
  // a call into unmapped memory faults on the fetch
  EXPECT_EQ(code_of([&] { emu.call(unmapped, {}); }, &msg), "ANEC-EMU-001");
  EXPECT_NE(msg.find("(UC_ERR_FETCH_UNMAPPED) at 0x40000000"), std::string::npos) << msg;
}
