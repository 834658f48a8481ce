// Programs of generations no real file here covers, built as fixtures from published facts, and
// containers with parts no layout describes. The H14 (generation 11) and H16 (generation 17)
// programs are the real H15 matmul (../shared/testdata/newer, compiler v7.5.8) rewritten the way the
// sources say those generations differ from H15:
//   H16: a ninth header word, the dependent task id (freedomtan/coreml_to_ane_hwx, BSD-3,
//        docs/GUIDE_ANE_HWX_FORMAT.md section 3), the same block bases (section 5);
//   H14: the same 8-word header, every block 0x3c00 bytes lower (joshuaswarren/mil-hwx-compiler,
//        MIT, docs/ane/task-descriptors.md: L2 0x500 ... KernelDMA 0x1900) and no CacheDMA block.
// Each is then read through the database its cpusubtype selects, as a user's file would be.
#include "../errors.hpp"
#include "../run_tool.hpp"
#include "anec/descriptors/hwx.hpp"
#include "anec/layout/layout.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace anec;
using namespace anec::desc;
namespace fs = std::filesystem;

namespace {

const layout::Database &db() {
  return layout::Database::builtin();
}

fs::path newer(const char *name) {
  return fs::path(ANEC_TEST_SHARED_DIR) / "testdata/newer/alexaltea-ane" / name;
}

anec::test::ToolRun desc_cli(const std::string &args) {
  return anec::test::run_tool(ANEC_TEST_DESC_TOOL, ANEC_TEST_TABLES_DIR, args);
}

// File offset of the section_64 record of __TEXT.__text.
uint64_t text_record(const std::vector<uint8_t> &b) {
  layout::View header(db().get("hwx.header"), b, 0, "T");
  uint64_t off = header.end();
  for (uint64_t i = 0; i < header.get("ncmds"); ++i) {
    layout::View c(db().get("macho.load_command"), b, off, "T");
    if (c.get("cmd") == 0x19) {
      layout::View seg(db().get("macho.segment_64"), b, off, "T");
      const layout::Struct &sect = db().get("macho.section_64");
      for (uint32_t k = 0; k < seg.get("nsects"); ++k) {
        layout::View s(sect, b, seg.end() + sect.bytes * k, "T");
        if (s.chars("sectname") == "__text")
          return s.at();
      }
    }
    off += c.get("cmdsize");
  }
  ADD_FAILURE() << "no __text";
  return 0;
}

struct Rewrite {
  uint32_t cpusubtype;
  bool dtid;                  // insert a ninth header word
  int64_t shift;              // added to register byte addresses of 0x4100 and up
  std::vector<uint32_t> drop; // records starting at these byte addresses have no counterpart
};

// The H15 program with its descriptor rewritten record by record; the container around it (the
// section size, the program state's segment words, the cpusubtype) follows.
std::vector<uint8_t> rewrite_h15(const Rewrite &r) {
  std::vector<uint8_t> b = read_file(newer("matmul_h15.hwx"));
  TdSchema gen8 = TdSchema::load(fs::path(ANEC_TEST_TABLES_DIR) / "schema/td/gen8.toml");
  Hwx h = read_hwx(b, gen8);
  EXPECT_EQ(h.chain.tds.size(), 1u);
  const Td &td = h.chain.tds.at(0);
  std::vector<uint32_t> words;
  for (uint64_t o = h.text.offset; o < td.offset; o += 4)
    words.push_back(le32(b, o)); // the frame
  // Header bits the H15 file sets where no source names a field (word 2 bits 31:24, word 7 bit 3)
  // are cleared: the fixture tests the layout, and other generations' databases do not know them.
  for (const Word &w : td.header)
    words.push_back(w.address == 0x8 ? w.raw & 0xffffff : w.address == 0x1c ? w.raw & ~0x8u : w.raw);
  if (r.dtid)
    words.push_back(0);
  for (const Stream &st : td.streams) {
    if (std::count(r.drop.begin(), r.drop.end(), st.address))
      continue;
    uint32_t header = st.header;
    if (st.address >= 0x4100)
      header = (header & ~0x7fffu) | uint32_t(((st.address + r.shift) / 4) & 0x7fff);
    words.push_back(header);
    for (const Word &w : st.words)
      words.push_back(w.raw);
  }
  uint32_t task_words = uint32_t(words.size() - (td.offset - h.text.offset) / 4);
  size_t header_at = (td.offset - h.text.offset) / 4;
  uint64_t room = 0x140; // __const starts 0x140 after __text in the file
  if (header_at >= words.size() || h.text.offset + room > b.size() || !h.program) {
    ADD_FAILURE() << "matmul_h15.hwx: no descriptor header, no room after __text or no program state";
    return {};
  }
  words[header_at] = (words[header_at] & ~(0x7ffu << 16)) | task_words << 16;
  EXPECT_LE(words.size() * 4, room);
  std::fill(b.begin() + long(h.text.offset), b.begin() + long(h.text.offset + room), uint8_t(0));
  for (size_t i = 0; i < words.size(); ++i)
    store_le(b, h.text.offset + 4 * i, words[i], 4);
  layout::View sect(db().get("macho.section_64"), b, text_record(b), "T");
  store_le(b, sect.offset_of("size"), 4 * words.size(), 8);
  layout::View state(db().get("hwx.segment_state"), b, h.program->offset, "T");
  store_le(b, state.offset_of("segment_words"), words.size(), 4);
  layout::View header(db().get("hwx.header"), b, 0, "T");
  store_le(b, header.offset_of("cpusubtype"), r.cpusubtype, 4);
  return b;
}

fs::path scratch(const std::string &name) {
  return fs::temp_directory_path() / ("anec-gen-" + std::to_string(::getpid()) + "-" + name);
}

// The fixture dumps without a warning, audits clean, and its JSON dump encodes back byte for byte.
void expect_clean_round_trip(const std::vector<uint8_t> &bytes, const std::string &name,
                             const std::string &expect_in_dump) {
  fs::path file = scratch(name + ".hwx"), json = scratch(name + ".json"), back = scratch(name + ".back");
  write_output(file, std::string(bytes.begin(), bytes.end()));
  auto dump = desc_cli("dump " + file.string());
  EXPECT_EQ(dump.status, 0) << dump.err;
  EXPECT_EQ(dump.err, "");
  EXPECT_NE(dump.out.find(expect_in_dump), std::string::npos) << dump.out;
  EXPECT_EQ(dump.out.find("ANEC-TD-1"), std::string::npos) << dump.out; // every record in a known block
  auto audit = desc_cli("audit " + file.string());
  EXPECT_EQ(audit.status, 0) << audit.out << audit.err;
  auto js = desc_cli("dump " + file.string() + " --format json");
  write_output(json, js.out);
  auto enc = desc_cli("encode " + json.string() + " -o " + back.string());
  EXPECT_EQ(enc.status, 0) << enc.err;
  EXPECT_EQ(read_file(back), bytes);
  for (const fs::path &p : {file, json, back})
    fs::remove(p);
}

} // namespace

TEST(Generations, H16FixtureWalksWithItsNineWordHeader) {
  // H17 and H18 (cpusubtypes 9 and 10, generations 19 and 20) share H16's published layout.
  for (uint32_t subtype : {9u, 10u})
    expect_clean_round_trip(rewrite_h15({subtype, true, 0, {}}), "h1x-" + std::to_string(subtype), "Header[8].DTID = 0");
  auto b = rewrite_h15({7, true, 0, {}});
  expect_clean_round_trip(b, "h16", "Header[8].DTID = 0");
  // Read as generation 8 instead, the ninth header word is taken for a record and the walk fails:
  // the chain is shown raw and audit says why.
  fs::path file = scratch("h16-as-gen8.hwx");
  write_output(file, std::string(b.begin(), b.end()));
  auto wrong = desc_cli("audit " + file.string() + " --generation 8");
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.out.find("ANEC-HWX-103"), std::string::npos) << wrong.out << wrong.err;
  fs::remove(file);
}

TEST(Generations, H14FixtureLandsInItsOwnBlocks) {
  // H14 has no CacheDMA block, and its TileDMADst block is 10 words (mil-hwx-compiler), so the H15
  // records writing CacheDMA and TileDMADst word 14 have no counterpart.
  auto b = rewrite_h15({5, false, -0x3c00, {0x5900, 0x5110}});
  expect_clean_round_trip(b, "h14", "stream KernelDMASrc at 0x4030: header 0x00000640, 1 words from 0x1900");
}

// A thread state of a flavor no layout describes, and one of a known flavor but too few words for
// its layout, are listed raw and survive dump -> encode byte for byte.
TEST(Generations, UnknownThreadStatesSurviveARoundTrip) {
  for (auto [flavor, count] : {std::pair<uint32_t, uint32_t>{9, 0}, {1, 10}}) {
    std::vector<uint8_t> b = read_file(newer("matmul_h13.hwx"));
    TdSchema gen7 = TdSchema::load(fs::path(ANEC_TEST_TABLES_DIR) / "schema/td/gen7.toml");
    Hwx h = read_hwx(b, gen7);
    ASSERT_TRUE(h.program);
    layout::View t(db().get("hwx.thread"), b, h.program->offset, "T");
    store_le(b, t.offset_of("flavor"), flavor, 4);
    if (count)
      store_le(b, t.offset_of("count"), count, 4);
    std::string name = "state-" + std::to_string(flavor);
    fs::path file = scratch(name + ".hwx");
    write_output(file, std::string(b.begin(), b.end()));
    auto dump = desc_cli("dump " + file.string());
    EXPECT_EQ(dump.status, 0) << dump.err;
    EXPECT_NE(dump.out.find("load command 0x4 at " + hex(h.program->offset) + ", 0x880 bytes, kept raw"),
              std::string::npos)
        << dump.out;
    fs::remove(file);
    expect_clean_round_trip(b, name, "kept raw");
  }
}
