// hwx program states and window bindings, anec containers (converted from the real hwx files), and
// the register databases of the generations without a stream layout.
#include "anec/descriptors/anec_container.hpp"
#include "anec/descriptors/audit.hpp"
#include "anec/descriptors/encode.hpp"
#include "anec/descriptors/hwx.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"
#include "../gen7.hpp"
#include "../run_tool.hpp"
#include <algorithm>
#include <filesystem>
#include <map>
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <unistd.h>

using namespace anec;
using namespace anec::desc;
using anec::test::code_of;
using anec::test::gen7;
namespace fs = std::filesystem;

namespace {
fs::path tinygrad(const std::string &f) { return fs::path(ANEC_TEST_SHARED_DIR) / "testdata" / "external" / "tinygrad" / f; }
const char *kHwx[] = {"conv.hwx", "concat.hwx", "gemm.hwx", "relu.hwx", "sigmoid.hwx", "sum.hwx", "model.hwx.golden"};

std::set<std::string> codes(const std::vector<Finding> &fs) {
  std::set<std::string> out;
  for (auto &f : fs) out.insert(f.code);
  return out;
}

int run(const std::string &args, std::string *err = nullptr, std::string *out = nullptr) {
  anec::test::ToolRun r = anec::test::run_tool(ANEC_TEST_DESC_TOOL, ANEC_TEST_TABLES_DIR, args);
  if (err) *err = r.err;
  if (out) *out = r.out;
  return r.status;
}
} // namespace

// The program thread state of every real hwx: chain base = __text, descriptor count and size as
// decoded, slot 0 the chain, slot 1 the kernel section, slot 4 the output, then the inputs.
TEST(Hwx, ProgramStateNamesTheBufferSlots) {
  for (const char *f : kHwx) {
    SCOPED_TRACE(f);
    Hwx h = read_hwx(read_file(tinygrad(f)), gen7());
    ASSERT_TRUE(h.program);
    const HwxProgramState &p = *h.program;
    EXPECT_EQ(p.name, "net");
    EXPECT_EQ(p.td_base, h.text.addr);
    EXPECT_EQ(p.td_count, h.chain.tds.size());
    EXPECT_EQ(p.td_bytes, 0x274u);
    EXPECT_EQ(hwx_what_is(h, p.bars[0]), "__TEXT.__text");
    EXPECT_EQ(hwx_what_is(h, p.bars[1]), "__TEXT.__const");
    EXPECT_EQ(p.bars[2], 0u);
    EXPECT_EQ(p.bars[3], 0u);
    std::string out = hwx_what_is(h, p.bars[4]);
    EXPECT_NE(out.find("@output"), std::string::npos) << out;
    size_t inputs = 0;
    for (size_t k = 5; k < HwxProgramState::kBars && p.bars[k]; ++k, ++inputs) EXPECT_EQ(hwx_what_is(h, p.bars[k]).find("@output"), std::string::npos);
    EXPECT_EQ(inputs + 1, h.states.size());
    // The first descriptor reads an input slot, the last writes the output slot.
    ASSERT_FALSE(h.chain.tds.empty());
    uint32_t read = header_field(h.chain.tds[0], "RBase0").value_or(0);
    EXPECT_TRUE(read >= 5 && read < 5 + inputs) << read;
    EXPECT_EQ(header_field(h.chain.tds.back(), "WBase"), 4u);
  }
  Hwx concat = read_hwx(read_file(tinygrad("concat.hwx")), gen7());
  ASSERT_TRUE(concat.program);
  EXPECT_EQ(hwx_what_is(concat, concat.program->bars[5]), "input_1");
  EXPECT_EQ(hwx_what_is(concat, concat.program->bars[6]), "input_0");
}

// A program from compiler v7.5.8 (AlexAltea/ane's matmul for H13, ../shared/testdata/newer): tensor
// names in command 0x40, whose first word is the name's offset (0x18), not the tensor's size as
// guide ch.23 reads it (every tensor came out as 24 bytes); the sizes are those of the tensors'
// __FVMLIB sections. Its 842-word tensor states (30 words before) carry the names by offset.
TEST(Hwx, NewerCompilerContainer) {
  auto b = read_file(fs::path(ANEC_TEST_SHARED_DIR) / "testdata/newer/alexaltea-ane/matmul_h13.hwx");
  Hwx h = read_hwx(b, gen7());
  ASSERT_EQ(h.tensors.size(), 3u);
  const std::pair<const char *, uint64_t> sizes[] = {{"A", 0x80}, {"B", 0xc0}, {"matmul_0", 0x80}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(h.tensors[i].cmd, 0x40u);
    EXPECT_EQ(h.tensors[i].name, sizes[i].first);
    EXPECT_EQ(h.tensors[i].bytes, sizes[i].second) << sizes[i].first;
  }
  EXPECT_EQ(h.tensors[0].vmaddr, 0x30008000u);
  ASSERT_EQ(h.states.size(), 3u);
  EXPECT_EQ(h.states[1].name, "B");
  EXPECT_EQ(h.states[1].direction, 1u);
  EXPECT_EQ(h.states[2].name, "matmul_0");
  EXPECT_EQ(h.states[2].direction, 2u);
  EXPECT_EQ(h.states[1].extents[2], 3u); // B is [1 1 3 2]
  EXPECT_TRUE(audit_hwx(h).empty());
  EXPECT_NE(printed_text([&](Printer &p) {
              print(p, h, gen7(), b);
            }).find("tensor B at 0x3000c000, 192 bytes (command 0x40)"),
            std::string::npos);
  auto bad_name = b;
  ASSERT_EQ(le32(bad_name, 0x318), 0x40u);
  store_le(bad_name, 0x320, 0x400, 4); // the name offset past the command
  EXPECT_EQ(code_of([&] { read_hwx(bad_name, gen7()); }), "ANEC-HWX-002");
}

// H15's program state is flavor 4 (layout hwx.segment_state): a base table at a 16-byte stride, the
// text segment's words with the zero-size frame before the descriptor, no descriptor size. The
// tensors' buffers sit in slots 6, 7 and 8 (values read off matmul_h15.hwx at 0x380).
TEST(Hwx, SegmentStateOfH15) {
  auto b = read_file(fs::path(ANEC_TEST_SHARED_DIR) / "testdata/newer/alexaltea-ane/matmul_h15.hwx");
  TdSchema raw; // no stream layout: the container is still read
  Hwx h = read_hwx(b, raw);
  ASSERT_TRUE(h.program);
  const HwxProgramState &p = *h.program;
  EXPECT_EQ(p.flavor, 4u);
  EXPECT_EQ(p.offset, 0x380u);
  EXPECT_EQ(p.segment_words * 4, h.text.size); // 75 words, the frame included
  EXPECT_EQ(p.prefix_words, 4u);
  EXPECT_EQ(p.td_bytes, 0u);
  EXPECT_EQ(p.td_count, 1u);
  EXPECT_EQ(p.name, "net");
  const char *slots[] = {"__TEXT.__text", "__TEXT.__const", "", "", "", "", "A", "B", "matmul_0"};
  for (uint32_t k = 0; k < 9; ++k) EXPECT_EQ(hwx_what_is(h, p.bars[k]), slots[k]) << "slot " << k;
  // Without a descriptor size the driver format cannot be written.
  EXPECT_EQ(code_of([&] { hwx_to_anec(h, b, 0x1000); }), "ANEC-CONV-001");
}

// Every per-tensor state's buffer size equals the size of the window section at its address, in
// every real file of both compiler generations: the field at state offset 0x60 is the size.
TEST(Hwx, TensorStateSizesMatchTheirWindows) {
  std::vector<fs::path> files;
  for (const char *n : {"concat.hwx", "conv.hwx", "gemm.hwx", "relu.hwx", "sigmoid.hwx", "sum.hwx"}) files.push_back(tinygrad(n));
  for (const char *n : {"matmul_h11.hwx", "matmul_h13.hwx", "matmul_h15.hwx"})
    files.push_back(fs::path(ANEC_TEST_SHARED_DIR) / "testdata/newer/alexaltea-ane" / n);
  for (const fs::path &f : files) {
    auto b = read_file(f);
    TdSchema raw;
    Hwx h = read_hwx(b, raw);
    ASSERT_FALSE(h.states.empty()) << f;
    for (const HwxTensorState &t : h.states) {
      uint64_t window = 0;
      for (const HwxTensorName &n : h.tensors)
        if (n.name == t.name || n.name == t.name.substr(0, t.name.find('@'))) window = n.vmaddr;
      for (const HwxTensor &l : h.layouts)
        if (l.name == t.name) window = window ? window : l.vmaddr;
      uint64_t section = 0;
      for (const HwxSegment &g : h.segments)
        for (const HwxSection &x : g.sections)
          if (x.addr == window && g.name == "__FVMLIB") section = x.size;
      EXPECT_NE(section, 0u) << f << " " << t.name;
      EXPECT_EQ(t.bytes, section) << f << " " << t.name;
    }
  }
}

// A shape string whose extent does not fit 64 bits is a finding, not a crash (found by the fuzzer).
TEST(Hwx, OversizedShapeNumberIsAFinding) {
  auto b = read_file(tinygrad("relu.hwx"));
  std::string all(b.begin(), b.end()), from = "ar1;0;1;12=s192n:ar1;0;1;13=s192c:", to = "ar1;0;999999999999999999999;1=s1n:";
  ASSERT_EQ(from.size(), to.size());
  size_t at = all.find(from);
  ASSERT_NE(at, std::string::npos);
  std::copy(to.begin(), to.end(), b.begin() + at);
  Hwx h = read_hwx(b, gen7());
  EXPECT_TRUE(codes(h.chain.findings).count("ANEC-HWX-101"));
  EXPECT_EQ(h.layouts.size(), 1u);
}

// conv.hwx with its __TEXT.__text section renamed __txet: nothing holds the descriptor chain.
TEST(Hwx, MissingTextSectionIsAnError) {
  auto b = read_file(tinygrad("conv.hwx"));
  std::string cmds(b.begin(), b.begin() + 32 + le32(b, 20));
  size_t at = cmds.find(std::string("__text\0\0\0\0\0\0\0\0\0\0__TEXT", 22)); // sectname, segname
  ASSERT_NE(at, std::string::npos);
  std::swap(b[at + 3], b[at + 4]);
  std::string msg;
  EXPECT_EQ(code_of([&] { read_hwx(b, gen7()); }, &msg), "ANEC-HWX-003");
  EXPECT_NE(msg.find("the container has no __TEXT.__text section"), std::string::npos) << msg;
}

// conv.hwx with a copy of its program state (LC_THREAD flavor 1) appended to the load commands; the
// symbol table, strings and relocations after the commands move up into the zeros before __text,
// their offsets with them. The first state is kept, the second is a finding at its offset.
TEST(Hwx, SecondProgramStateIsAFinding) {
  auto b = read_file(tinygrad("conv.hwx"));
  Hwx h = read_hwx(b, gen7());
  ASSERT_TRUE(h.program);
  uint64_t state = h.program->offset;
  ASSERT_LE(state + 8, b.size());
  uint32_t size = le32(b, state + 4), ncmds = le32(b, 16), end = 32 + le32(b, 20), text = h.text.offset;
  ASSERT_TRUE(size <= text && text <= b.size() && state + size <= b.size()) << size << " " << text;
  ASSERT_TRUE(std::all_of(b.begin() + text - size, b.begin() + text, [](uint8_t x) { return x == 0; }));
  std::vector<uint8_t> copy(b.begin() + long(state), b.begin() + long(state + size));
  b.erase(b.begin() + text - size, b.begin() + text);
  b.insert(b.begin() + end, copy.begin(), copy.end());
  store_le(b, 16, ncmds + 1, 4);
  store_le(b, 20, end + size - 32, 4);
  auto shift = [&](uint64_t field) { // a file offset into the moved bytes
    if (uint32_t v = le32(b, field); v >= end && v < text) store_le(b, field, v + size, 4);
  };
  for (uint64_t off = 32, i = 0; i < ncmds; off += le32(b, off + 4), ++i) {
    if (le32(b, off) == 0x2) { // LC_SYMTAB: symoff, stroff
      shift(off + 8);
      shift(off + 16);
    }
    if (le32(b, off) == 0x19) // LC_SEGMENT_64: each section's reloff
      for (uint32_t k = 0; k < le32(b, off + 64); ++k) shift(off + 72 + 80 * k + 56);
  }
  Hwx two = read_hwx(b, gen7());
  ASSERT_TRUE(two.program);
  EXPECT_EQ(two.program->offset, state);
  EXPECT_EQ(two.relocations.size(), h.relocations.size());
  EXPECT_EQ(two.layouts.size(), h.layouts.size());
  size_t found = 0;
  for (const Finding &f : two.chain.findings)
    if (f.code == "ANEC-HWX-102") {
      ++found;
      EXPECT_EQ(f.offset, end);
      EXPECT_EQ(f.message, "a second program state; the first is kept");
    }
  EXPECT_EQ(found, 1u);
  EXPECT_FALSE(codes(h.chain.findings).count("ANEC-HWX-102"));
}

TEST(Audit, ProgramStateSlotsAndStrides) {
  auto good = read_file(tinygrad("relu.hwx"));
  uint64_t state = 0x2c8 + 16; // relu's program thread state
  auto count = good;
  store_le(count, state + 0x80c, 3, 4);
  EXPECT_TRUE(codes(audit_hwx(read_hwx(count, gen7()))).count("ANEC-AUD-007"));
  auto base = good;
  store_le(base, state + 0x800, 0x30004000, 4);
  EXPECT_TRUE(codes(audit_hwx(read_hwx(base, gen7()))).count("ANEC-AUD-007"));
  auto slot = good;
  store_le(slot, state + 8 * 5, 0, 4); // the input slot the header reads
  EXPECT_EQ(codes(audit_hwx(read_hwx(slot, gen7()))), std::set<std::string>{"ANEC-AUD-008"});
  Hwx h = read_hwx(good, gen7());
  ASSERT_FALSE(h.layouts.empty());
  ASSERT_GE(h.layouts[0].strides.size(), 3u);
  h.layouts[0].strides[2] = 100; // a row of 77 fp16 elements in 100 bytes, not a tile multiple
  size_t strides = 0;
  for (auto &f : audit_hwx(h)) strides += f.code == "ANEC-AUD-009";
  EXPECT_EQ(strides, 2u); // not a 64 multiple, and too small for the row
  h = read_hwx(good, gen7());
  ASSERT_GE(h.layouts.size(), 2u);
  ASSERT_GE(h.layouts[1].strides.size(), 4u);
  h.layouts[1].strides[3] = 4;
  EXPECT_TRUE(codes(audit_hwx(h)).count("ANEC-AUD-009"));
}

// Every real hwx converts to an anec container with either header size; the container holds the
// same descriptors and kernel bytes, its header agrees with the hwx, it audits clean and round-trips.
TEST(Anec, ConvertedRealFilesDecodeAuditAndRoundTrip) {
  for (const char *f : kHwx)
    for (uint32_t header : {0x800u, 0x1000u}) {
      SCOPED_TRACE(std::string(f) + " " + std::to_string(header));
      auto hb = read_file(tinygrad(f));
      Hwx h = read_hwx(hb, gen7());
      auto bytes = hwx_to_anec(h, hb, header);
      ASSERT_TRUE(looks_like_anec(bytes));
      Anec a = read_anec(bytes, gen7());
      EXPECT_EQ(a.header_bytes, header);
      EXPECT_EQ(a.header.tsk_size, h.text.size);
      EXPECT_EQ(a.header.td_count, h.chain.tds.size());
      EXPECT_EQ(a.header.td_size, 0x274u);
      EXPECT_EQ(a.header.dst_count, 1u);
      EXPECT_EQ(a.header.src_count + 1, h.states.size());
      ASSERT_EQ(a.chain.tds.size(), h.chain.tds.size());
      for (size_t i = 0; i < a.chain.tds.size(); ++i) {
        ASSERT_EQ(a.chain.tds[i].streams.size(), h.chain.tds[i].streams.size());
        for (size_t s = 0; s < a.chain.tds[i].streams.size(); ++s) {
          ASSERT_EQ(a.chain.tds[i].streams[s].words.size(), h.chain.tds[i].streams[s].words.size());
          for (size_t w = 0; w < a.chain.tds[i].streams[s].words.size(); ++w)
            EXPECT_EQ(a.chain.tds[i].streams[s].words[w].raw, h.chain.tds[i].streams[s].words[w].raw);
        }
      }
      EXPECT_EQ(a.chain.kernel_offset, header + ((h.text.size + 15) / 16 * 16));
      EXPECT_EQ(a.chain.kernel_size, a.header.krn_size);
      EXPECT_TRUE(audit_anec(a).empty()) << audit_anec(a).front().code << " " << audit_anec(a).front().message;
      Doc doc =
          json::parse(json::write(printed_doc([&](Printer &p) { print(p, a, gen7(), bytes); })), "dump.json");
      EXPECT_EQ(encode_dump(doc, gen7(), "dump.json"), bytes);
    }
  // relu [1,1,1,77] fp16: 192-byte rows and planes, one tile each way; __const 0x4000 after 0x280.
  auto hb = read_file(tinygrad("relu.hwx"));
  Anec a = read_anec(hwx_to_anec(read_hwx(hb, gen7()), hb, 0x1000), gen7());
  EXPECT_EQ(a.header.size, 0x4280u);
  EXPECT_EQ(a.header.krn_size, 0x4000u);
  EXPECT_EQ(a.header.tiles[0], 2u);
  for (size_t k : {4u, 5u}) {
    EXPECT_EQ(a.header.tiles[k], 1u);
    std::vector<uint64_t> nchw(a.header.nchw[k], a.header.nchw[k] + 6);
    EXPECT_EQ(nchw, (std::vector<uint64_t>{1, 1, 1, 77, 192, 192}));
  }
  // concat's 16400-channel output needs 65 tiles (the hwx window is 0x104000 bytes).
  auto cb = read_file(tinygrad("concat.hwx"));
  Anec c = read_anec(hwx_to_anec(read_hwx(cb, gen7()), cb, 0x800), gen7());
  EXPECT_EQ(c.header.tiles[4], 65u);
  EXPECT_EQ(c.header.tiles[5], 1u);
  EXPECT_EQ(c.header.tiles[6], 64u);
  EXPECT_EQ(anec_header_field(c, 0x2c), "tiles[1]");
  EXPECT_EQ(anec_header_field(c, 0xa8 + 48 * 4 + 8), "nchw[4][1]");
  EXPECT_EQ(anec_header_field(c, 0x700), "pad");
  EXPECT_EQ(anec_header_field(c, 0x14), "tsk_size");
}

TEST(Anec, DamageHasReasonCodes) {
  auto hb = read_file(tinygrad("relu.hwx"));
  Hwx h = read_hwx(hb, gen7());
  const auto good = hwx_to_anec(h, hb, 0x1000);
  auto cut = good;
  cut.resize(cut.size() - 16); // size field no longer accounts for the file
  EXPECT_FALSE(looks_like_anec(cut));
  EXPECT_EQ(code_of([&] { read_anec(cut, gen7()); }), "ANEC-ANEC-001");
  auto pad = good;
  pad[0x900] = 1;
  EXPECT_FALSE(looks_like_anec(pad));
  EXPECT_EQ(code_of([&] { read_anec(pad, gen7()); }), "ANEC-ANEC-001");
  EXPECT_EQ(code_of([&] { read_anec(std::vector<uint8_t>(0x100, 0), gen7()); }), "ANEC-ANEC-001");
  auto tsk = good;
  store_le(tsk, 0x10, 0x5000, 4); // chain larger than the payload
  EXPECT_EQ(code_of([&] { read_anec(tsk, gen7()); }), "ANEC-ANEC-002");
  auto tds = good;
  store_le(tds, 0xc, 2, 4);
  EXPECT_EQ(codes(audit_anec(read_anec(tds, gen7()))), std::set<std::string>{"ANEC-AUD-010"});
  auto tiles = good;
  store_le(tiles, 0x28 + 4 * 4, 0, 4); // the output slot loses its tiles, which the descriptor writes
  EXPECT_EQ(codes(audit_anec(read_anec(tiles, gen7()))),
            (std::set<std::string>{"ANEC-AUD-008", "ANEC-AUD-011"}));
  auto row = good;
  store_le(row, 0xa8 + 48 * 5 + 40, 100, 4); // input row stride 100: not a 64 multiple, < 77 fp16
  EXPECT_EQ(codes(audit_anec(read_anec(row, gen7()))), std::set<std::string>{"ANEC-AUD-012"});
  auto eon = good; // the chain's only descriptor loses EON: no end before the bytes run out
  eon[0x1000 + 3] &= uint8_t(~0x02);
  EXPECT_EQ(code_of([&] { read_anec(eon, gen7()); }), "ANEC-TD-003");
  EXPECT_EQ(code_of([&] { hwx_to_anec(h, hb, 0x400); }), "ANEC-CONV-001");
  Hwx no_state = h;
  no_state.program.reset();
  EXPECT_EQ(code_of([&] { hwx_to_anec(no_state, hb, 0x1000); }), "ANEC-CONV-001");
}

// Generations 5 (H11) and 8 (H15) walk descriptors as generation 7 does, from the real files of
// ../shared/testdata/newer, 4 (T0) and 6 (H12) as generation 5 does (more-generations), and 11 (H14), 17, 19
// and 20 (H16 to H18) from published facts (generations_test.cpp); generation 10 holds what the guide gives
// (object-field offsets), no stream layout, and anec-desc shows their chains raw. The database is picked from
// an hwx's cpusubtype.
TEST(TdSchema, OtherGenerationsAndSelection) {
  fs::path dir = fs::path(ANEC_TEST_TABLES_DIR) / "schema" / "td";
  std::map<int, uint32_t> patch_width = {{7, 0x200}, {8, 0x224}, {10, 0x12c}, {11, 0x21c}, {17, 0x23c}, {19, 0x248}, {20, 0x26c}};
  for (int g : {4, 5, 6, 7, 8, 10, 11, 17, 19, 20}) {
    SCOPED_TRACE(g);
    TdSchema s = TdSchema::load(dir / ("gen" + std::to_string(g) + ".toml"));
    EXPECT_EQ(s.generation, g);
    EXPECT_FALSE(s.complete);
    EXPECT_EQ(s.walkable(), g != 10);
    EXPECT_EQ(s.chain == "sized", g >= 8 && g != 10);
    for (auto &f : s.object_fields)
      if (f.name == "PatchWidth") {
        EXPECT_EQ(f.offset, patch_width.at(g));
      }
  }
  TdSchema g20 = TdSchema::load(dir / "gen20.toml");
  EXPECT_EQ(g20.object_fields.size(), 6u);
  Doc bad = toml::parse("schema = \"anec-td\"\nversion = \"1\"\ngeneration = 9\ncomplete = true\nsource = \"x\"\n", "bad.toml");
  EXPECT_EQ(code_of([&] { TdSchema::from_doc(bad, "bad.toml"); }), "ANEC-TDS-001");

  // An hwx whose generation no database walks is read, its chain walked raw with a warning (these
  // used to fail dump and audit; UnknownGenerationsWalkRaw below); a raw chain has nothing else to
  // show and is refused.
  std::string err, out;
  EXPECT_EQ(run("dump " + tinygrad("relu.hwx").string() + " --generation 10", &err, &out), 0) << err;
  EXPECT_NE(err.find("warning: ANEC-DESC-002"), std::string::npos) << err;
  EXPECT_NE(out.find("generation 10 (no register map: walked raw with the stream layout of generation 7)"),
            std::string::npos)
      << out;
  fs::path relu6 = fs::path(ANEC_TEST_SHARED_DIR) / "testdata/external/eiln-ane/kernels/activation/relu6.bin";
  EXPECT_EQ(run("dump " + relu6.string() + " --generation 10", &err), 2);
  EXPECT_NE(err.find("ANEC-DESC-002"), std::string::npos) << err;
  // An H13 program read with a database of another layout (generation 11: records, sized
  // descriptors) does not walk: shown raw with a warning, and audit reports it.
  EXPECT_EQ(run("dump " + tinygrad("relu.hwx").string() + " --generation 11", &err, &out), 0) << err;
  EXPECT_NE(err.find("warning: ANEC-HWX-103: the generation-11 database does not walk it: ANEC-TD-002"), std::string::npos) << err;
  EXPECT_NE(out.find("0x00004000: "), std::string::npos) << "the raw bytes of __text";
  EXPECT_EQ(run("audit " + tinygrad("relu.hwx").string() + " --generation 11", &err, &out), 1) << err;
  EXPECT_NE(out.find("ANEC-HWX-103 warn at 0x4000: the generation-11 database"), std::string::npos) << out;
  // The same finding through the shared printer's document and CSV forms.
  EXPECT_EQ(run("audit " + tinygrad("relu.hwx").string() + " --generation 11 --format json", &err, &out), 1) << err;
  EXPECT_NE(out.find("\"code\": \"ANEC-HWX-103\""), std::string::npos) << out;
  EXPECT_EQ(run("audit " + tinygrad("relu.hwx").string() + " --generation 11 --format csv", &err, &out), 1) << err;
  EXPECT_EQ(out.substr(0, out.find('\n')), "code,severity,object,field,offset,message,value,limit,limit_field,limit_confidence,fix");
  EXPECT_NE(out.find("\nANEC-HWX-103,warn,,,0x4000,the generation-11 database"), std::string::npos) << out;
  fs::path tmp = fs::temp_directory_path() / ("anec-sub-" + std::to_string(::getpid()) + ".hwx");
  auto b = read_file(tinygrad("relu.hwx"));
  EXPECT_EQ(run("audit " + tinygrad("relu.hwx").string() + " --generation 9", &err), 0) << err;
  EXPECT_NE(err.find("warning: ANEC-DESC-001"), std::string::npos) << err;
  b[8] = 0x77; // no target's
  write_output(tmp, b);
  EXPECT_EQ(run("dump " + tmp.string(), &err), 0) << err;
  EXPECT_NE(err.find("warning: ANEC-DESC-003"), std::string::npos) << err;
  fs::remove(tmp);
}

TEST(DescCli, ConvertAndDumpAnec) {
  fs::path out = fs::temp_directory_path() / ("anec-conv-" + std::to_string(::getpid()) + ".anec");
  for (const char *f : {"relu.hwx", "concat.hwx"}) {
    SCOPED_TRACE(f);
    ASSERT_EQ(run("convert " + tinygrad(f).string() + " -o " + out.string()), 0);
    fs::path golden = fs::path(ANEC_TEST_GOLDEN_DIR) / "desc" / ("converted_" + fs::path(f).stem().string() + ".anec.txt");
    fs::path dumped = out.string() + ".txt";
    ASSERT_EQ(std::system((std::string(ANEC_TEST_DESC_TOOL) + " --tables " + ANEC_TEST_TABLES_DIR + " dump " + out.string() + " > " + dumped.string()).c_str()), 0);
    EXPECT_EQ(read_text_file(dumped), read_text_file(golden));
    EXPECT_EQ(run("audit " + out.string()), 0);
    fs::remove(dumped);
  }
  std::string err;
  EXPECT_EQ(run("convert " + tinygrad("relu.hwx").string() + " -o " + out.string() + " --header-bytes 0x400", &err), 2);
  EXPECT_NE(err.find("ANEC-CLI-002"), std::string::npos) << err;
  EXPECT_EQ(run("convert " + (fs::path(ANEC_TEST_SHARED_DIR) / "testdata/external/eiln-ane/kernels/activation/relu6.bin").string() + " -o " + out.string(), &err), 2);
  EXPECT_NE(err.find("ANEC-CONV-001"), std::string::npos) << err;
  fs::remove(out);
}

// explain OFFSET: a number that does not parse, or an offset at or past the end of the file, is
// ANEC-CLI-002 with the offset and the file size, never a silent exit 0.
TEST(DescCli, ExplainOffsetsAreStrict) {
  fs::path file = tinygrad("relu.hwx");
  uint64_t size = fs::file_size(file);
  std::string err;
  EXPECT_EQ(run("explain " + file.string() + " " + std::to_string(size - 1), &err), 0) << err;
  EXPECT_EQ(run("explain " + file.string() + " " + std::to_string(size), &err), 2);
  EXPECT_NE(err.find("ANEC-CLI-002: OFFSET '" + std::to_string(size) + "'"), std::string::npos) << err;
  EXPECT_NE(err.find("(" + std::to_string(size) + " bytes)"), std::string::npos) << err;
  EXPECT_EQ(run("explain " + file.string() + " 0xffffffffffffffff", &err), 2);
  std::string past = "OFFSET '0xffffffffffffffff' (0xffffffffffffffff) lies at or past the end";
  EXPECT_NE(err.find(past), std::string::npos) << err;
  EXPECT_EQ(run("explain " + file.string() + " 0x10000000000000000", &err), 2);
  EXPECT_NE(err.find("ANEC-CLI-002: OFFSET '0x10000000000000000' is out of range"), std::string::npos) << err;
  EXPECT_EQ(run("explain " + file.string() + " -1", &err), 2); // program_options: an unknown option '-1'
  EXPECT_NE(err.find("ANEC-CLI-00"), std::string::npos) << err;
  EXPECT_EQ(run("explain " + file.string() + " 12junk", &err), 2);
  EXPECT_NE(err.find("ANEC-CLI-002: OFFSET '12junk' has text after the number"), std::string::npos) << err;
}

// A negative --td used to mean "every descriptor" and a negative --generation "pick for me".
TEST(DescCli, DescriptorAndGenerationNumbersAreStrict) {
  std::string file = tinygrad("relu.hwx").string(), err;
  EXPECT_EQ(run("dump " + file + " --td 0", &err), 0) << err;
  for (const char *bad : {" --td=-1", " --td=x", " --generation=-7", " --generation=99999999999"}) {
    EXPECT_EQ(run("dump " + file + bad, &err), 2) << bad;
    EXPECT_NE(err.find("ANEC-CLI-002"), std::string::npos) << bad << ": " << err;
  }
}

namespace {
// Of a dump document: its descriptors, and the header and register words with and without a field.
struct Counted {
  size_t tds = 0, bytes = 0, named = 0, unnamed = 0;
};
Counted count_words(const Doc &dump) {
  Counted c;
  auto word = [&](const Doc &w) { ++(w.find("fields")->members().empty() ? c.unnamed : c.named); };
  for (const Doc &td : dump.find("tds")->items()) {
    ++c.tds;
    c.bytes += size_t(td.find("bytes")->as_int());
    for (const Doc &w : td.find("header")->items())
      word(w);
    for (const Doc &st : td.find("streams")->items())
      for (const Doc &w : st.find("registers")->items())
        word(w);
  }
  return c;
}
} // namespace

// The seven builds of AlexAltea/ane's matmul by compiler v7.5.8 (../shared/testdata/newer and
// more-generations; the generations their SOURCES.md give) dump without a warning, their one
// descriptor of the size the program state gives walked to the end of __text (H14, H15: after the
// 16-byte frame), audit clean and encode back byte for byte from their JSON dumps. Generations 4 to 6
// (gen4/gen6.toml aligned on gen5.toml) leave only generation 5's four unnamed words unnamed.
TEST(DescCli, V758ProgramsOfEveryGenerationDumpAuditAndRoundTrip) {
  fs::path data = fs::path(ANEC_TEST_SHARED_DIR) / "testdata";
  fs::path json = fs::temp_directory_path() / ("anec-newer-" + std::to_string(::getpid()) + ".json");
  fs::path back = fs::temp_directory_path() / ("anec-newer-" + std::to_string(::getpid()) + ".hwx");
  struct Want {
    const char *folder, *file;
    int generation;
    size_t bytes, unnamed; // unnamed: SIZE_MAX where the database names few words (7, 8, 11)
    const char *convert;
  } want[] = {
      {"more-generations", "matmul_m10.hwx", 5, 0xec, 4, "bound by position, the buffers would swap places"},
      {"newer", "matmul_h11.hwx", 5, 0x14c, 4, "bound by position, the buffers would swap places"},
      {"more-generations", "matmul_t0.hwx", 4, 0x1cc, 4, "bound by position, the buffers would swap places"},
      {"more-generations", "matmul_h12.hwx", 6, 0x14c, 4, "bound by position, the buffers would swap places"},
      {"newer", "matmul_h13.hwx", 7, 0x274, SIZE_MAX, "bound by position, the buffers would swap places"},
      {"more-generations", "matmul_h14.hwx", 11, 0xf0, SIZE_MAX, "gives no descriptor size"},
      {"newer", "matmul_h15.hwx", 8, 0x11c, SIZE_MAX, "gives no descriptor size"}};
  for (const Want &w : want) {
    SCOPED_TRACE(w.file);
    fs::path f = data / w.folder / "alexaltea-ane" / w.file;
    std::string err, out;
    EXPECT_EQ(run("audit " + f.string(), &err, &out), 0) << err << out;
    EXPECT_NE(out.find("1 descriptor(s) audited, 0 finding(s)"), std::string::npos) << out;
    ASSERT_EQ(run("dump " + f.string() + " --format json", &err, &out), 0) << err;
    EXPECT_EQ(err.find("warning"), std::string::npos) << err;
    Doc dump = json::parse(out, w.file);
    EXPECT_EQ(dump.find("generation")->as_int(), w.generation);
    EXPECT_EQ(dump.find("raw_layout"), nullptr);
    Counted c = count_words(dump);
    EXPECT_EQ(c.tds, 1u);
    EXPECT_EQ(c.bytes, w.bytes);
    EXPECT_EQ(4 * (c.named + c.unnamed) + 4 * dump.find("tds")->items()[0].find("streams")->items().size(),
              w.bytes);
    if (w.unnamed != SIZE_MAX) {
      EXPECT_EQ(c.unnamed, w.unnamed);
    }
    std::vector<std::string> tensors;
    for (const Doc &t : dump.find("tensors")->items())
      tensors.push_back(t.find("name")->as_string());
    EXPECT_EQ(tensors, (std::vector<std::string>{"A", "B", "matmul_0"}));
    write_output(json, out);
    ASSERT_EQ(run("encode " + json.string() + " -o " + back.string(), &err), 0) << err;
    EXPECT_EQ(read_file(back), read_file(f));
    EXPECT_EQ(err.find("warning"), std::string::npos) << "encode needs no warning";
    // The driver format binds outputs from slot 4 by position: these programs put their inputs
    // there (and a segment state gives no descriptor size), so conversion is refused, with the reason.
    EXPECT_EQ(run("convert " + f.string() + " -o " + back.string(), &err), 2);
    EXPECT_NE(err.find("ANEC-CONV-001"), std::string::npos) << err;
    EXPECT_NE(err.find(w.convert), std::string::npos) << err;
  }
  fs::remove(json);
  fs::remove(back);
}

namespace {
// A copy of a real program with its cpusubtype (hwx header +8) set to `subtype`.
fs::path patched_copy(const fs::path &from, uint32_t subtype, const std::string &name) {
  std::vector<uint8_t> b = read_file(from);
  store_le(b, 8, subtype, 4);
  fs::path to = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".hwx");
  write_output(to, b);
  return to;
}
} // namespace

// A program of a generation no database covers still shows its descriptors: walked raw with the
// nearest layout that walks its __text into the program state's count, every stream and word kept
// (no register named but the header fields that chain descriptors), and encoded back byte for byte.
// The T0 matmul with a cpusubtype no target has (0x7f: generation unknown, taken as 0) walks with
// generation 4's layout; the H13 matmul read as generation 10 (a database without a stream layout)
// with generation 7's (11 and 8, nearer, do not walk it); the H15 matmul read as generation 9 (no database)
// with generation 8's.
TEST(DescCli, UnknownGenerationsWalkRaw) {
  fs::path data = fs::path(ANEC_TEST_SHARED_DIR) / "testdata";
  fs::path t0 = patched_copy(data / "more-generations/alexaltea-ane/matmul_t0.hwx", 0x7f, "anec-unknown-t0");
  fs::path json = fs::temp_directory_path() / ("anec-unknown-" + std::to_string(::getpid()) + ".json");
  fs::path back = fs::temp_directory_path() / ("anec-unknown-" + std::to_string(::getpid()) + ".hwx");
  struct Want {
    fs::path file;
    std::string args, first_warning;
    int generation, like;
    size_t bytes, streams;
  } want[] = {
      {t0, "", "ANEC-DESC-003", 0, 4, 0x1cc, 21},
      {data / "newer/alexaltea-ane/matmul_h13.hwx", " --generation 10", "ANEC-DESC-002", 10, 7, 0x274, 7},
      {data / "newer/alexaltea-ane/matmul_h15.hwx", " --generation 9", "ANEC-DESC-001", 9, 8, 0x11c, 16}};
  for (const Want &w : want) {
    SCOPED_TRACE(w.file.string() + w.args);
    std::string err, out;
    ASSERT_EQ(run("dump " + w.file.string() + w.args, &err, &out), 0) << err;
    EXPECT_NE(err.find("warning: " + w.first_warning), std::string::npos) << err;
    EXPECT_NE(err.find("ANEC-DESC-004: the descriptors are walked raw with the stream layout of generation " +
                       std::to_string(w.like)),
              std::string::npos)
        << err;
    EXPECT_NE(out.find("walked raw with the stream layout of generation " + std::to_string(w.like) +
                       "): 1 descriptor(s)"),
              std::string::npos)
        << out;
    EXPECT_EQ(out.find("not decoded"), std::string::npos) << out;
    ASSERT_EQ(run("dump " + w.file.string() + w.args + " --format json", &err, &out), 0) << err;
    Doc dump = json::parse(out, "dump");
    EXPECT_EQ(dump.find("generation")->as_int(), w.generation);
    ASSERT_NE(dump.find("raw_layout"), nullptr);
    EXPECT_EQ(dump.find("raw_layout")->as_int(), w.like);
    Counted c = count_words(dump);
    EXPECT_EQ(c.tds, 1u);
    EXPECT_EQ(c.bytes, w.bytes);
    const Doc &td = dump.find("tds")->items()[0];
    EXPECT_EQ(td.find("streams")->items().size(), w.streams);
    for (const Doc &st : td.find("streams")->items())
      for (const Doc &r : st.find("registers")->items()) {
        EXPECT_TRUE(r.find("fields")->members().empty());
        EXPECT_EQ(r.find("block")->as_string(), "");
      }
    EXPECT_EQ(c.named, w.like == 8 ? 1u : 2u); // TaskWords; EON and NextPointer
    write_output(json, out);
    ASSERT_EQ(run("encode " + json.string() + " -o " + back.string(), &err), 0) << err;
    EXPECT_EQ(read_file(back), read_file(w.file));
    std::string audit_out;
    EXPECT_EQ(run("audit " + w.file.string() + w.args, &err, &audit_out), 0) << err << audit_out;
    EXPECT_NE(audit_out.find("1 descriptor(s) audited"), std::string::npos) << audit_out;
  }
  // With no layout that walks it (the T0 chain cut inside its last stream, the program state still
  // counting one descriptor), the chain is shown as bytes, as before.
  std::vector<uint8_t> cut = read_file(t0);
  store_le(cut, 0x411c, 0xfc000000, 4); // Common's stream header: 64 words from 0, past __text
  write_output(t0, cut);
  std::string err, out;
  ASSERT_EQ(run("dump " + t0.string(), &err, &out), 0) << err;
  EXPECT_NE(err.find("ANEC-DESC-003"), std::string::npos) << err;
  EXPECT_EQ(err.find("ANEC-DESC-004"), std::string::npos) << err;
  EXPECT_NE(out.find("not decoded"), std::string::npos) << out;
  fs::remove(t0);
  fs::remove(json);
  fs::remove(back);
}

// A dump names its schema and version; encode reads it back only as that schema, at a version it
// writes, and says which it found otherwise.
TEST(DescCli, EncodeChecksTheDumpsSchema) {
  fs::path hwx = fs::path(ANEC_TEST_SHARED_DIR) / "testdata/newer/alexaltea-ane/matmul_h13.hwx";
  fs::path json = fs::temp_directory_path() / ("anec-schema-" + std::to_string(::getpid()) + ".json");
  fs::path back = fs::temp_directory_path() / ("anec-schema-" + std::to_string(::getpid()) + ".hwx");
  std::string err, out;
  ASSERT_EQ(run("dump " + hwx.string() + " --format json", &err, &out), 0) << err;
  const std::string stamp = "{\n  \"schema\": \"anec-desc.dump\",\n  \"schema_version\": 2,\n";
  ASSERT_EQ(out.substr(0, stamp.size()), stamp);
  for (const auto &[changed, why] :
       {std::pair<std::string, std::string>{"\"schema_version\": 3,", "schema_version 3"},
        {"\"schema\": \"anec-fw.command\",", "'anec-fw.command'"}}) {
    std::string edited = out;
    size_t at =
        changed.starts_with("\"schema\"") ? edited.find("\"schema\"") : edited.find("\"schema_version\"");
    edited.replace(at, edited.find('\n', at) - at, changed);
    write_output(json, edited);
    EXPECT_EQ(run("encode " + json.string() + " -o " + back.string(), &err), 2) << changed;
    EXPECT_NE(err.find("ANEC-DOC-001"), std::string::npos) << err;
    EXPECT_NE(err.find(why), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(back));
  }
  write_output(json, out.substr(0, 2) + out.substr(stamp.size())); // without the stamp: read as is
  ASSERT_EQ(run("encode " + json.string() + " -o " + back.string(), &err), 0) << err;
  EXPECT_EQ(read_file(back), read_file(hwx));
  fs::remove(json);
  fs::remove(back);
}

// An hwx cut inside its header is said to be cut short, not to have the wrong magic.
TEST(DescCli, TruncatedHwxHeaderIsCutShort) {
  fs::path f = fs::temp_directory_path() / ("anec-cut-" + std::to_string(::getpid()) + ".hwx");
  write_output(f, std::vector<uint8_t>{0xce, 0xfa, 0xef, 0xbe, 0, 0, 0, 0, 0, 0, 0, 0});
  std::string err;
  EXPECT_EQ(run("dump " + f.string(), &err), 2);
  EXPECT_NE(err.find("ANEC-HWX-001: hwx header cut short: 12 bytes"), std::string::npos) << err;
  fs::remove(f);
}

// The driver binds buffer slot k to slot k's buffer, so a descriptor that writes a slot the header
// binds as an input, or enables a slot the header gives no tiles, is a finding: the container eiln/anecc
// writes for the v7.5.8 matmul_h13.hwx (outputs moved to slot 4 by position) is the first kind.
TEST(Anec, DescriptorsMustWriteOutputSlotsTheHeaderBinds) {
  auto hb = read_file(tinygrad("relu.hwx"));
  auto good = hwx_to_anec(read_hwx(hb, gen7()), hb, 0x1000);
  ASSERT_TRUE(audit_anec(read_anec(good, gen7())).empty());
  // WBase: Header[8] bits 16:12 (tables/schema/td/gen7.toml); relu writes slot 4 and reads slot 5
  auto with_wbase = [&](uint32_t slot) {
    auto b = good;
    uint32_t w = 0;
    std::memcpy(&w, &b[0x1000 + 0x20], 4);
    w = (w & ~(0x1fu << 12)) | (slot << 12);
    std::memcpy(&b[0x1000 + 0x20], &w, 4);
    std::vector<std::string> codes;
    for (const Finding &f : audit_anec(read_anec(b, gen7())))
      codes.push_back(f.code + ": " + f.message);
    return codes;
  };
  EXPECT_EQ(with_wbase(5),
            (std::vector<std::string>{
                "ANEC-AUD-013: the descriptor writes slot 5 (WBase = 5), which the header binds as "
                "input 0"}));
  EXPECT_EQ(with_wbase(9), (std::vector<std::string>{
                               "ANEC-AUD-008: WBase = 9 is enabled but the header gives slot 9 no tiles"}));
}
