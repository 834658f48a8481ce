// Raw H13 task-descriptor chains (the 36 eiln kernels) through the generation-7 register database.
#include "anec/descriptors/audit.hpp"
#include "anec/descriptors/dump.hpp"
#include "anec/descriptors/encode.hpp"
#include "anec/descriptors/hwx.hpp"
#include "anec/descriptors/td.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/sha256.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include "../errors.hpp"
#include "../gen7.hpp"
#include "../run_tool.hpp"
#include <map>
#include <set>
#include <unistd.h>

using namespace anec;
using anec::test::code_of;
using anec::test::gen7;
using namespace anec::desc;
namespace fs = std::filesystem;

namespace {
fs::path kernels() { return fs::path(ANEC_TEST_SHARED_DIR) / "testdata" / "external" / "eiln-ane" / "kernels"; }

std::map<std::string, uint32_t> fields_of(const Td &td, const std::string &block) {
  std::map<std::string, uint32_t> out;
  for (const Stream &s : td.streams)
    for (const Word &w : s.words)
      for (const FieldValue &f : w.fields)
        if (f.field->block == block) out[f.field->reg + "." + f.field->name] = f.value;
  return out;
}
uint32_t word_at(const Td &td, const std::string &block, uint32_t address) {
  for (const Stream &s : td.streams)
    for (const Word &w : s.words)
      if (w.block == block && w.address == address) return w.raw;
  ADD_FAILURE() << block << " " << address;
  return 0;
}
// The dump document of a raw chain.
Doc chain_doc(const std::vector<uint8_t> &bytes, std::optional<size_t> only = std::nullopt) {
  return printed_doc([&](Printer &p) { print(p, decode_raw_chain(bytes, gen7()), gen7(), bytes, only); });
}
} // namespace

TEST(TdSchema, Gen7LoadsAndCoversTheSevenBlocks) {
  const TdSchema &s = gen7();
  EXPECT_EQ(s.generation, 7);
  EXPECT_FALSE(s.complete);
  EXPECT_EQ(s.header_bytes, 0x28u);
  std::vector<std::string> names;
  for (auto &b : s.blocks) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"KernelDMASrc", "Common", "TileDMASrc", "L2", "PE", "NE", "TileDMADst"}));
  EXPECT_EQ(s.fields.size(), 258u);
}

TEST(TdSchema, RejectsBrokenDatabases) {
  std::string head = "schema = \"anec-td\"\nversion = \"1\"\ngeneration = 7\ncomplete = false\nheader_bytes = 8\nsource = \"s\"\n"
                     "[[block]]\nname = \"A\"\naddress = 0x100\nwords = 2\nsource = \"s\"\nconfidence = \"decoded\"\n";
  auto field = [](std::string block, std::string addr, std::string bits, std::string name = "F") {
    return "[[field]]\nblock = \"" + block + "\"\nregister = \"R\"\nname = \"" + name + "\"\naddress = " + addr + "\nbits = \"" + bits +
           "\"\nsource = \"s\"\nconfidence = \"decoded\"\n";
  };
  auto code = [&](const std::string &t) {
    return code_of([&] { TdSchema::from_doc(toml::parse(t, "t"), "t"); });
  };
  EXPECT_EQ(code(head + field("A", "0x100", "3:0")), "none");
  EXPECT_EQ(code(head + field("A", "0x100", "3:0") + field("A", "0x100", "4:2", "G")), "ANEC-TDS-001"); // overlap
  EXPECT_EQ(code(head + field("A", "0x200", "3:0")), "ANEC-TDS-001");                                     // no block
  EXPECT_EQ(code(head + field("A", "0x100", "32:0")), "ANEC-TDS-001");                                    // past bit 31
  EXPECT_EQ(code(head + field("Header", "0x8", "3:0")), "ANEC-TDS-001");                                  // past header
  EXPECT_EQ(code(head + field("A", "0x100", "3:0") + field("A", "0x104", "3:0")), "ANEC-TDS-001");        // duplicate path
  // Roles, pairs and generation ranges are checked values.
  auto with = [&](const std::string &extra) {
    std::string f = field("A", "0x100", "3:0");
    return head + f.insert(f.find("source"), extra);
  };
  EXPECT_EQ(code(with("role = \"size\"\n")), "none");
  EXPECT_EQ(code(with("role = \"base\"\n")), "ANEC-TDS-001");                          // unknown role
  EXPECT_EQ(code(with("role = \"address\"\npair = \"Nowhere\"\n")), "ANEC-TDS-001"); // pair names no size register
  EXPECT_EQ(code(with("pair = \"R\"\n")), "ANEC-TDS-001");                             // a plain value has no pair
  EXPECT_EQ(code(with("generations = \"5-\"\n")), "none");
  EXPECT_EQ(code(with("generations = \"8-11\"\n")), "ANEC-TDS-001"); // not on generation 7
  EXPECT_EQ(code(with("generations = \"x\"\n")), "ANEC-TDS-001");
  std::string guessed = field("A", "0x100", "3:0");
  EXPECT_EQ(code(head + guessed.replace(guessed.find("\"decoded\""), 9, "\"guessed\"")), "ANEC-TDS-001"); // confidence
}

// Every raw chain: descriptors of 0x274 bytes at a 0x300 stride, the seven streams in order, EON
// on the last only, the kernel data from the last end rounded to 16; elementwise ops keep their
// shape (InDim = OutDim, Cin = Cout) and carry the generation-7 opcode and kernel-common words the
// guide quotes (ch.23: 0x5000a021, 0x2041).
TEST(RawChain, EveryEilnKernelDecodes) {
  size_t files = 0, tds = 0;
  for (auto &e : fs::recursive_directory_iterator(kernels())) {
    if (e.path().extension() != ".bin") continue;
    SCOPED_TRACE(e.path().filename().string());
    ++files;
    auto bytes = read_file(e.path());
    Chain c = decode_raw_chain(bytes, gen7());
    EXPECT_TRUE(c.findings.empty());
    ASSERT_GE(c.tds.size(), 1u);
    ASSERT_LE(c.tds.size(), 8u);
    for (size_t i = 0; i < c.tds.size(); ++i) {
      const Td &td = c.tds[i];
      ++tds;
      EXPECT_EQ(td.offset, i * 0x300);
      EXPECT_EQ(td.size, 0x274u);
      EXPECT_EQ(td.eon, i + 1 == c.tds.size());
      ASSERT_EQ(td.streams.size(), 7u);
      std::vector<uint32_t> addrs;
      for (auto &s : td.streams) addrs.push_back(s.address);
      EXPECT_EQ(addrs, (std::vector<uint32_t>{0x1f800, 0x0, 0x13800, 0x4800, 0x8800, 0xc800, 0x17800}));
      auto common = fields_of(td, "Common");
      EXPECT_EQ(common["InDim.Win"], common["OutDim.Wout"]);
      EXPECT_EQ(common["InDim.Hin"], common["OutDim.Hout"]);
      EXPECT_EQ(common["Cin.Cin"], common["Cout.Cout"]);
      EXPECT_EQ(word_at(td, "Common", 0x20), 0x2041u);
    }
    EXPECT_EQ(c.kernel_offset, (c.tds.back().offset + 0x274 + 15) / 16 * 16);
    EXPECT_EQ(c.kernel_offset + c.kernel_size, bytes.size());
  }
  EXPECT_EQ(files, 36u);
  EXPECT_EQ(tds, 72u);
}

TEST(RawChain, Relu6CarriesItsClampAndOpcode) {
  auto bytes = read_file(kernels() / "activation" / "relu6.bin");
  Chain c = decode_raw_chain(bytes, gen7());
  ASSERT_EQ(c.tds.size(), 1u);
  EXPECT_EQ(word_at(c.tds[0], "Common", 0x1c), 0x5000a021u); // ConvCfg: the generation-7 opcode word
  // The kernel data holds the clamp 6.0 as fp16 (0x4600).
  ASSERT_LT(c.kernel_offset + 3, bytes.size());
  EXPECT_EQ(bytes[c.kernel_offset + 2], 0x00);
  EXPECT_EQ(bytes[c.kernel_offset + 3], 0x46);
}

// The 0x1f8-byte form of the H13 descriptor: its KernelDMASrc stream carries 31 words instead of 62.
// Made from relu6's descriptor; the stream headers, not fixed offsets, find every block after it.
TEST(RawChain, ShortDescriptorLayoutIsWalkedByItsStreamHeaders) {
  auto full = read_file(kernels() / "activation" / "relu6.bin");
  std::vector<uint8_t> b(full.begin(), full.begin() + 0x2c + 31 * 4);
  b[0x28 + 3] = uint8_t((30 << 2) | (full[0x28 + 3] & 3)); // count-1 = 30 in bits 31:26
  b.insert(b.end(), full.begin() + 0x124, full.begin() + 0x274);
  ASSERT_EQ(b.size(), 0x1f8u);
  b.resize(0x200, 0);
  Chain c = decode_raw_chain(b, gen7());
  ASSERT_EQ(c.tds.size(), 1u);
  EXPECT_EQ(c.tds[0].size, 0x1f8u);
  ASSERT_EQ(c.tds[0].streams.size(), 7u);
  EXPECT_EQ(c.tds[0].streams[0].count, 31u);
  EXPECT_EQ(c.tds[0].streams[1].offset, 0xa8u);
  Chain whole = decode_raw_chain(full, gen7());
  ASSERT_FALSE(whole.tds.empty());
  EXPECT_EQ(fields_of(c.tds[0], "Common"), fields_of(whole.tds[0], "Common"));
  EXPECT_EQ(fields_of(c.tds[0], "NE"), fields_of(whole.tds[0], "NE"));
  EXPECT_EQ(c.kernel_offset, 0x200u);
}

TEST(RawChain, CorruptionsHaveReasonCodes) {
  auto good = read_file(kernels() / "activation" / "relu6.bin");
  auto cut = good;
  cut.resize(0x100); // inside the KernelDMASrc stream
  EXPECT_EQ(code_of([&] { decode_raw_chain(cut, gen7()); }), "ANEC-TD-002");
  auto tiny = good;
  tiny.resize(0x20);
  EXPECT_EQ(code_of([&] { decode_raw_chain(tiny, gen7()); }), "ANEC-TD-003");
  auto no_eon = good;
  no_eon[3] &= ~0x02; // clear EON: the chain runs into the kernel data and ends without one
  EXPECT_EQ(code_of([&] { decode_raw_chain(no_eon, gen7()); }), "ANEC-TD-003");
  auto pad = good;
  pad[0x278] = 1; // between the descriptor and the kernel data
  Chain c = decode_raw_chain(pad, gen7());
  ASSERT_EQ(c.findings.size(), 1u);
  EXPECT_EQ(c.findings[0].code, "ANEC-TD-104");
  EXPECT_EQ(c.findings[0].offset, 0x278u);
  auto unknown = good;
  unknown[0x13c] = 0xff; // a set bit no field names is reported, not dropped
  Chain u = decode_raw_chain(unknown, gen7());
  std::string text = printed_text([&](Printer &p) { print(p, u, gen7(), unknown); });
  EXPECT_NE(text.find("reserved bits"), std::string::npos);
  EXPECT_EQ(code_of([&] { printed_text([&](Printer &p) { print(p, c, gen7(), pad, 1); }); }), "ANEC-TD-005");
}

// A descriptor header past the data: a chain start beyond the end of relu6 (0x300 bytes), and one
// descriptor decoded 0x10 bytes before the end, where its 0x28-byte header does not fit.
TEST(RawChain, HeaderPastTheEndIsAnError) {
  auto b = read_file(kernels() / "activation" / "relu6.bin");
  ASSERT_EQ(b.size(), 0x300u);
  std::string msg;
  EXPECT_EQ(code_of([&] { decode_raw_chain(b, gen7(), {}, 0x310); }, &msg), "ANEC-TD-001");
  EXPECT_NE(msg.find("chain start 0x310 lies past the end 0x300"), std::string::npos) << msg;
  std::vector<Finding> findings;
  EXPECT_EQ(code_of([&] { decode_td(b, 0x2f0, 0x300, gen7(), findings); }, &msg), "ANEC-TD-001");
  EXPECT_NE(msg.find("descriptor at 0x2f0 needs a 0x28-byte header, 0x10 bytes remain"), std::string::npos)
      << msg;
}

// Header bit 31 of relu6's first word set: no field of the database covers bits 31:26 there.
TEST(RawChain, ReservedHeaderBitsAreAFinding) {
  auto b = read_file(kernels() / "activation" / "relu6.bin");
  b[3] |= 0x80;
  Chain c = decode_raw_chain(b, gen7());
  ASSERT_EQ(c.findings.size(), 1u);
  EXPECT_EQ(c.findings[0].code, "ANEC-TD-103");
  EXPECT_EQ(c.findings[0].offset, 0u);
  EXPECT_EQ(c.findings[0].message, "reserved header bits 0x80000000 set");
  ASSERT_FALSE(c.tds.empty());
  EXPECT_TRUE(c.tds[0].eon) << "EON (bit 25) is still read";
}

// softmax's first descriptor with NextPointer 0: the walk assumes the next one at its end (0x274)
// rounded up to 0x100, which is where it is, and says so.
TEST(RawChain, MissingNextPointerIsAFinding) {
  auto b = read_file(kernels() / "activation" / "softmax.bin");
  ASSERT_EQ(le32(b, 0x1c), 0x300u);
  store_le(b, 0x1c, 0, 4);
  Chain c = decode_raw_chain(b, gen7());
  EXPECT_EQ(c.tds.size(), 5u);
  ASSERT_EQ(c.findings.size(), 1u);
  EXPECT_EQ(c.findings[0].code, "ANEC-TD-106");
  EXPECT_EQ(c.findings[0].offset, 0u);
  EXPECT_NE(c.findings[0].message.find("next assumed at 0x300"), std::string::npos) << c.findings[0].message;
}

// relu6's PE stream moved to register address 0x28800, in no block. The chain walk ends the
// descriptor at that stream (so the tools never report it); decode_td, given the descriptor's
// end, decodes the stream and reports it.
TEST(RawChain, StreamInNoBlockIsAFindingOfDecodeTd) {
  auto b = read_file(kernels() / "activation" / "relu6.bin");
  ASSERT_EQ(le32(b, 0x228), 0x0c008800u); // 4 words at 0x8800 (PE)
  store_le(b, 0x228, 0x0c028800, 4);
  std::vector<Finding> findings;
  Td td = decode_td(b, 0, 0x274, gen7(), findings);
  EXPECT_EQ(td.streams.size(), 7u);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].code, "ANEC-TD-101");
  EXPECT_EQ(findings[0].offset, 0x228u);
  EXPECT_NE(findings[0].message.find("register address 0x28800 is in no known block"), std::string::npos);
  Chain c = decode_raw_chain(b, gen7());
  ASSERT_FALSE(c.tds.empty());
  EXPECT_EQ(c.tds[0].size, 0x228u);
  for (const Finding &f : c.findings) EXPECT_NE(f.code, "ANEC-TD-101");
}

namespace {
// n copies of the real relu6 descriptor (its first 0x274 bytes), 0x300 apart, EON (bit 25 of word 0)
// on the last only, and 0x80 bytes after it. tests/update-golden.sh builds the same for its pages.
std::vector<uint8_t> relu6_chain(size_t n) {
  auto one = read_file(kernels() / "activation" / "relu6.bin");
  const size_t stride = 0x300;
  std::vector<uint8_t> chain(n * stride + 0x80, 0);
  for (size_t i = 0; i < n; ++i) {
    std::copy(one.begin(), one.begin() + 0x274, chain.begin() + long(i * stride));
    if (i + 1 < n) chain[i * stride + 3] &= ~0x02;
  }
  return chain;
}
} // namespace

// Chains longer than 4096 descriptors used to be refused as "without EON"; real programs hold
// more than ten thousand. 5000 copies of relu6's descriptor, EON on the last only.
TEST(RawChain, LongChainsDecode) {
  const size_t n = 5000;
  Chain c = decode_raw_chain(relu6_chain(n), gen7());
  ASSERT_EQ(c.tds.size(), n);
  EXPECT_EQ(c.tds.back().offset, (n - 1) * 0x300);
}

namespace {
using CliResult = anec::test::ToolRun;
CliResult desc_cli(const std::string &args) { return anec::test::run_tool(ANEC_TEST_DESC_TOOL, ANEC_TEST_TABLES_DIR, args); }
} // namespace

TEST(DescCli, DumpsMatchGoldens) {
  struct G {
    std::string file, args, golden;
  } cases[] = {{"activation/relu6.bin", "", "anec-desc-relu6.txt"},
               {"unary/cube.bin", "--format json", "anec-desc-cube.json"},
               {"activation/softmax.bin", "--td 4", "anec-desc-softmax-td4.txt"},
               {"../../tinygrad/conv.hwx", "", "anec-desc-conv-hwx.txt"}};
  for (auto &c : cases) {
    CliResult r = desc_cli("dump " + (kernels() / c.file).string() + " " + c.args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / c.golden)) << c.golden;
  }
}

// Every real program's text and JSON dump, as reviewed (tests/update-golden.sh writes them).
TEST(DescCli, EveryRealFileMatchesItsGoldens) {
  fs::path testdata = fs::path(ANEC_TEST_SHARED_DIR) / "testdata";
  size_t n = 0;
  // external/ as tests/update-golden.sh names it; newer/ with a "newer_" prefix, more-generations/
  // with "more_".
  for (const auto &[folder, prefix] : {std::pair<const char *, std::string>{"external", ""},
                                       {"newer", "newer_"},
                                       {"more-generations", "more_"}})
    for (auto &e : fs::recursive_directory_iterator(testdata / folder)) {
      std::string rel = fs::relative(e.path(), testdata / folder).string();
      if (!(e.path().extension() == ".bin" || e.path().extension() == ".hwx" || rel == "tinygrad/model.hwx.golden")) continue;
      std::replace(rel.begin(), rel.end(), '/', '_');
      for (const char *fmt : {"txt", "json"}) {
        CliResult r = desc_cli("dump " + e.path().string() + (std::string(fmt) == "json" ? " --format json" : ""));
        ASSERT_EQ(r.status, 0) << rel << ": " << r.err;
        EXPECT_EQ(r.out, read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "desc" / (prefix + rel + "." + fmt))) << rel << "." << fmt;
        ++n;
      }
    }
  EXPECT_EQ(n, 100u);
}

namespace {
// The HTML page of `file`, its path (which the page's title and heading show) written as `name`:
// the page tests/update-golden.sh writes from the file's own folder.
std::string html_page(const fs::path &file, const std::string &name, const std::string &args = "") {
  CliResult r = desc_cli("dump " + file.string() + " --format html " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::string page = r.out;
  const std::string path = file.string();
  for (size_t at = page.find(path); at != std::string::npos; at = page.find(path, at + name.size()))
    page.replace(at, path.size(), name);
  return page;
}

// Where two pages part, with some text of each there (a page's tree is one line of 100 KB or more).
std::string first_difference(const std::string &got, const std::string &want) {
  size_t at = 0, common = std::min(got.size(), want.size());
  while (at < common && got[at] == want[at])
    ++at;
  if (at == got.size() && at == want.size())
    return "";
  size_t from = at < 80 ? 0 : at - 80;
  return "byte " + std::to_string(at) + " of " + std::to_string(got.size()) +
         " (golden: " + std::to_string(want.size()) + ")\n  got:    ..." + got.substr(from, 240) +
         "\n  golden: ..." + want.substr(from, 240);
}
fs::path html_golden(const std::string &name) {
  return fs::path(ANEC_TEST_GOLDEN_DIR) / "desc-html" / name;
}
} // namespace

// The HTML page (--format html) of each kind of program, as reviewed (tests/update-golden.sh
// writes them): a raw chain, one descriptor of it, a chain walked with another generation's layout,
// an hwx container and an anec container.
TEST(DescCli, HtmlPagesMatchGoldens) {
  fs::path dir = fs::temp_directory_path() / ("anec-html-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path hwx = fs::path(ANEC_TEST_SHARED_DIR) / "testdata" / "external" / "tinygrad" / "conv.hwx";
  ASSERT_EQ(desc_cli("convert " + hwx.string() + " -o " + (dir / "conv.anec").string()).status, 0);
  struct G {
    fs::path file;
    std::string args, golden;
  } cases[] = {{kernels() / "activation" / "relu6.bin", "", "relu6.bin.html"},
               {kernels() / "activation" / "softmax.bin", "--td 4", "softmax.bin-td4.html"},
               {kernels() / "activation" / "relu6.bin", "--generation 5", "relu6.bin-generation5.html"},
               {hwx, "", "conv.hwx.html"},
               {dir / "conv.anec", "", "conv.anec.html"}};
  for (const G &c : cases) {
    std::string page = html_page(c.file, c.file.filename().string(), c.args);
    std::string want = read_text_file(html_golden(c.golden));
    EXPECT_TRUE(page == want) << c.golden << ": " << first_difference(page, want);
  }
  fs::remove_all(dir);
}

// A chain past the tree's node budget (kTreeNodes: some 119 relu6 descriptors), its page of 11 MB
// kept as its header line and its digest (tests/update-golden.sh writes them from the same chain).
TEST(DescCli, HtmlPageOfALongChainMatchesItsDigest) {
  fs::path dir = fs::temp_directory_path() / ("anec-html-chain-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_output(dir / "chain160.bin", relu6_chain(160));
  std::string page = html_page(dir / "chain160.bin", "chain160.bin");
  size_t facts = page.find("<p>"), end = page.find("</p>", facts);
  ASSERT_NE(end, std::string::npos);
  std::string digest = sha256_hex({reinterpret_cast<const uint8_t *>(page.data()), page.size()});
  std::string got = page.substr(facts, end + 4 - facts) + "\nsha256 " + digest + ", " +
                    std::to_string(page.size()) + " bytes\n";
  EXPECT_EQ(got, read_text_file(html_golden("chain160.bin.digest")));
  fs::remove_all(dir);
}

TEST(DescCli, ErrorsExitTwo) {
  CliResult td = desc_cli("dump " + (kernels() / "activation/relu6.bin").string() + " --td 3");
  EXPECT_EQ(td.status, 2);
  EXPECT_NE(td.err.find("ANEC-TD-005"), std::string::npos) << td.err;
  CliResult gen = desc_cli("dump " + (kernels() / "activation/relu6.bin").string() + " --generation 99");
  EXPECT_EQ(gen.status, 2);
  EXPECT_NE(gen.err.find("ANEC-DESC-001"), std::string::npos) << gen.err;
}

namespace {
fs::path tinygrad(const char *f) { return fs::path(ANEC_TEST_SHARED_DIR) / "testdata" / "external" / "tinygrad" / f; }
} // namespace

// The seven real hwx containers: H13 (cpusubtype 4), descriptor and relocation counts as
// testdata/external/SOURCES.md lists them, relocations on the kernel-coefficient base registers.
TEST(Hwx, RealContainersDecode) {
  struct Want {
    const char *file;
    size_t tds, relocs;
    std::vector<std::string> tensors;
  } want[] = {{"conv.hwx", 1, 3, {"image", "probs@output"}},
              {"model.hwx.golden", 1, 3, {"image", "probs@output"}},
              {"concat.hwx", 2, 0, {"input_1", "input_0", "output@output"}},
              {"gemm.hwx", 1, 16, {"image", "probs@output"}},
              {"relu.hwx", 1, 0, {"image", "probs@output"}},
              {"sigmoid.hwx", 1, 1, {"image", "probs@output"}},
              {"sum.hwx", 1, 0, {"image2", "image", "probs@output"}}};
  for (auto &w : want) {
    SCOPED_TRACE(w.file);
    auto bytes = read_file(tinygrad(w.file));
    Hwx h = read_hwx(bytes, gen7());
    EXPECT_EQ(h.cputype, 0x80u);
    EXPECT_EQ(h.cpusubtype, 4u);
    ASSERT_EQ(h.chain.tds.size(), w.tds);
    EXPECT_TRUE(h.chain.tds.back().eon);
    EXPECT_EQ(h.relocations.size(), w.relocs);
    std::vector<std::string> names;
    for (auto &t : h.tensors) names.push_back(t.name);
    EXPECT_EQ(names, w.tensors);
    EXPECT_EQ(h.banner.rfind("ANEC v1\nzin_ane_compiler v4.2.1\n", 0), 0u) << h.banner.substr(0, 40);
  }
  // Tensor layouts as SOURCES.md describes each program (n, c, h, w; fp16).
  std::map<std::string, std::vector<std::vector<uint64_t>>> shapes = {
      {"conv.hwx", {{1, 3, 1, 1}, {1, 3, 1, 1}}},
      {"concat.hwx", {{1, 16, 1, 1}, {1, 16384, 1, 1}, {1, 16400, 1, 1}}},
      {"gemm.hwx", {{1, 512, 1, 1}, {1, 512, 1, 1}}},
      {"relu.hwx", {{1, 1, 1, 77}, {1, 1, 1, 77}}},
      {"sigmoid.hwx", {{1, 1, 1, 77}, {1, 1, 1, 77}}},
      {"sum.hwx", {{1, 64, 1, 1}, {1, 64, 1, 1}, {1, 64, 1, 1}}}};
  for (auto &[file, want] : shapes) {
    SCOPED_TRACE(file);
    Hwx h = read_hwx(read_file(tinygrad(file.c_str())), gen7());
    ASSERT_EQ(h.layouts.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      std::vector<uint64_t> got;
      std::string axes;
      for (auto &[a, e] : h.layouts[i].extents) {
        axes += a;
        got.push_back(e);
      }
      EXPECT_EQ(axes, "nchw");
      EXPECT_EQ(got, want[i]);
      EXPECT_EQ(h.layouts[i].dtype, "float16");
      ASSERT_FALSE(h.layouts[i].strides.empty());
      EXPECT_EQ(h.layouts[i].strides.back(), 2u); // one fp16 element
      EXPECT_NE(h.layouts[i].vmaddr, 0u);
    }
  }
  Hwx gemm = read_hwx(read_file(tinygrad("gemm.hwx")), gen7());
  size_t kernels = 0;
  for (auto &s : gemm.symbols)
    if (s.name.rfind("K", 0) == 0 && s.name.find("_ne_") != std::string::npos) ++kernels;
  EXPECT_EQ(kernels, 16u);
  for (size_t i = 0; i < gemm.relocations.size(); ++i) {
    EXPECT_EQ(gemm.relocations[i].target, "KernelDMASrc.CoeffBaseAddr[" + std::to_string(i) + "]");
    EXPECT_EQ(gemm.relocations[i].symbol, "__TEXT.__const");
  }
}

TEST(Hwx, DamageHasReasonCodes) {
  auto good = read_file(tinygrad("conv.hwx"));
  auto magic = good;
  magic[0] = 0xcf;
  EXPECT_EQ(code_of([&] { read_hwx(magic, gen7()); }), "ANEC-HWX-001");
  auto cut = good;
  cut.resize(0x400); // load commands intact, segments past the end
  EXPECT_EQ(code_of([&] { read_hwx(cut, gen7()); }), "ANEC-HWX-002");
  auto cmds = good;
  cmds[20] = 0xff; // sizeofcmds
  cmds[21] = 0xff;
  cmds[22] = 0xff;
  EXPECT_EQ(code_of([&] { read_hwx(cmds, gen7()); }), "ANEC-HWX-002");
  auto stream = good; // the KernelDMASrc stream header claims 64 words instead of 62
  stream[0x4000 + 0x28 + 3] = 0xfc;
  Hwx h = read_hwx(stream, gen7());
  std::set<std::string> codes;
  for (auto &f : h.chain.findings) codes.insert(f.code);
  EXPECT_TRUE(codes.count("ANEC-TD-102")) << "stream runs out of its block";
  EXPECT_TRUE(codes.count("ANEC-TD-105")) << "descriptors no longer fill __text";
  auto huge = good; // the last stream (TileDMADst, 7 words) claims 64: past the end of __text
  huge[0x4000 + 0x254 + 3] = 0xfc;
  Hwx raw = read_hwx(huge, gen7()); // the container is still read; the chain is shown raw
  ASSERT_EQ(raw.chain.findings.size(), 1u);
  EXPECT_EQ(raw.chain.findings[0].code, "ANEC-HWX-103");
  EXPECT_NE(raw.chain.findings[0].message.find("ANEC-TD-002"), std::string::npos) << raw.chain.findings[0].message;
  EXPECT_EQ(raw.chain_raw.size(), raw.text.size);
}

// dump --format json, then encode: every real file comes back byte for byte.
TEST(Encode, RoundTripsEveryRealFile) {
  std::vector<fs::path> files;
  for (auto &e : fs::recursive_directory_iterator(kernels()))
    if (e.path().extension() == ".bin") files.push_back(e.path());
  for (auto &e : fs::directory_iterator(tinygrad("")))
    if (e.path().extension() == ".hwx" || e.path().extension() == ".golden") files.push_back(e.path());
  ASSERT_EQ(files.size(), 43u);
  for (auto &f : files) {
    SCOPED_TRACE(f.filename().string());
    auto bytes = read_file(f);
    Doc doc = bytes[0] == 0xce
                  ? printed_doc([&](Printer &p) { print(p, read_hwx(bytes, gen7()), gen7(), bytes); })
                  : chain_doc(bytes);
    Doc reparsed = json::parse(json::write(doc), "dump.json");
    EXPECT_EQ(encode_dump(reparsed, gen7(), "dump.json"), bytes);
  }
}

// Editing a field in the dump patches exactly its word.
TEST(Encode, EditedFieldsTakeEffect) {
  auto bytes = read_file(kernels() / "activation" / "relu6.bin");
  Doc doc = json::parse(json::write(chain_doc(bytes)), "d");
  // Throws (a failure, not a crash) when the dump lacks a member it reads.
  auto find_word = [](Doc &d, uint32_t address) -> Doc & {
    const Doc *tds = d.find("tds"), *streams = nullptr;
    if (tds && !tds->items().empty())
      streams = tds->items()[0].find("streams");
    if (!streams)
      throw std::runtime_error("no tds[0].streams");
    for (Doc &st : const_cast<std::vector<Doc> &>(streams->items())) {
      if (!st.find("registers"))
        throw std::runtime_error("a stream without registers");
      for (Doc &w : const_cast<std::vector<Doc> &>(st.find("registers")->items())) {
        if (!w.find("block") || !w.find("address"))
          throw std::runtime_error("a register without an address");
        if (w.find("block")->as_string() == "Common" && w.find("address")->as_int() == address)
          return w;
      }
    }
    throw std::runtime_error("no word");
  };
  Doc &indim = find_word(doc, 0x0);
  ASSERT_NE(indim.find("fields"), nullptr);
  Doc fields = *indim.find("fields");
  fields.set("InDim.Win", Doc::integer(77));
  indim.set("fields", fields);
  auto patched = encode_dump(doc, gen7(), "d");
  ASSERT_EQ(patched.size(), bytes.size());
  size_t differ = 0;
  for (size_t i = 0; i < bytes.size(); ++i) differ += patched[i] != bytes[i];
  EXPECT_EQ(differ, 2u); // 1600 = 0x640 -> 77 = 0x4d: two bytes of one word
  auto c = decode_raw_chain(patched, gen7());
  ASSERT_FALSE(c.tds.empty());
  EXPECT_EQ(fields_of(c.tds[0], "Common")["InDim.Win"], 77u);

  fields.set("InDim.Win", Doc::integer(1 << 15)); // 15-bit field
  indim.set("fields", fields);
  EXPECT_EQ(code_of([&] { encode_dump(doc, gen7(), "d"); }), "ANEC-ENC-003");
  fields.set("InDim.Win", Doc::integer(77));
  fields.set("InDim.Width", Doc::integer(1));
  indim.set("fields", fields);
  EXPECT_EQ(code_of([&] { encode_dump(doc, gen7(), "d"); }), "ANEC-ENC-002");
  Doc partial = json::parse(json::write(chain_doc(bytes, 0)), "p");
  EXPECT_EQ(code_of([&] { encode_dump(partial, gen7(), "p"); }), "ANEC-ENC-001");
  Doc small = json::parse(json::write(chain_doc(bytes)), "s");
  small.set("file_bytes", Doc::integer(16));
  EXPECT_EQ(code_of([&] { encode_dump(small, gen7(), "s"); }), "ANEC-ENC-004");
  EXPECT_EQ(code_of([&] { json::parse("{\"tds\": [1, 2", "bad.json"); }), "ANEC-JSON-001");
}

namespace {
std::set<std::string> audit_codes(const std::vector<Finding> &fs) {
  std::set<std::string> out;
  for (auto &f : fs) out.insert(f.code);
  return out;
}
void put32(std::vector<uint8_t> &b, size_t off, uint32_t v) {
  for (int k = 0; k < 4; ++k) b[off + k] = uint8_t(v >> (8 * k));
}
} // namespace

TEST(Audit, RealFilesAreCleanAndEachCheckFires) {
  for (auto &e : fs::recursive_directory_iterator(kernels()))
    if (e.path().extension() == ".bin") {
      auto b = read_file(e.path());
      EXPECT_TRUE(audit_chain(decode_raw_chain(b, gen7())).empty()) << e.path();
    }
  for (auto &e : fs::directory_iterator(tinygrad("")))
    if (e.path().extension() == ".hwx") {
      auto b = read_file(e.path());
      EXPECT_TRUE(audit_hwx(read_hwx(b, gen7())).empty()) << e.path();
    }
  auto softmax = read_file(kernels() / "activation" / "softmax.bin"); // 5 descriptors, 0x300 apart
  auto tid = softmax;
  tid[0x600] = 7; // TD 2 claims TID 7
  EXPECT_TRUE(audit_codes(audit_chain(decode_raw_chain(tid, gen7()))).count("ANEC-AUD-002"));
  auto last = softmax;
  put32(last, 0xc00 + 0x1c, 0x300); // the EON descriptor still points somewhere
  EXPECT_TRUE(audit_codes(audit_chain(decode_raw_chain(last, gen7()))).count("ANEC-AUD-003"));
  auto eon = softmax;
  eon[0x303] |= 0x02; // TD 1 marked EON: the chain ends early, TD 1 is the last
  auto early = decode_raw_chain(eon, gen7());
  EXPECT_EQ(early.tds.size(), 2u);
  EXPECT_TRUE(audit_codes(audit_chain(early)).count("ANEC-AUD-003")); // its NextPointer still 0x600
  auto back = softmax;
  put32(back, 0x1c, 0x100); // NextPointer into the descriptor itself
  EXPECT_EQ(code_of([&] { decode_raw_chain(back, gen7()); }), "ANEC-TD-004");

  auto conv = read_file(tinygrad("conv.hwx")); // relocations at 0x1148, 8 bytes each
  auto retarget = conv;
  put32(retarget, 0x1148, 0x34); // first relocation onto CoeffDMAConfig[0]
  EXPECT_TRUE(audit_codes(audit_hwx(read_hwx(retarget, gen7()))).count("ANEC-AUD-004"));
  auto state = conv; // the input's thread state claims 4 channels (word 7 of the state at command offset)
  {
    Hwx h = read_hwx(conv, gen7());
    ASSERT_EQ(h.states.size(), 2u);
    EXPECT_EQ(h.states[0].name, "image");
    EXPECT_EQ(h.states[0].direction, 1u);
    EXPECT_EQ(h.states[1].direction, 2u);
    ASSERT_LE(h.states[0].offset + 16 + 4 * 8, state.size());
    put32(state, h.states[0].offset + 16 + 4 * 7, 4);
  }
  EXPECT_TRUE(audit_codes(audit_hwx(read_hwx(state, gen7()))).count("ANEC-AUD-006"));
  auto bounds = conv;
  put32(bounds, 0x4000 + 0x7c, 0x100); // CoeffBaseAddr[2] = 0x100: +0x40 runs past the 0xc0-byte __const
  EXPECT_TRUE(audit_codes(audit_hwx(read_hwx(bounds, gen7()))).count("ANEC-AUD-005"));
}

// EON on the last descriptor alone. A decoded chain always ends at its first EON, so the chains
// here are assembled from softmax's descriptors decoded one at a time: the first two (the last of
// them not marked EON), and the EON descriptor followed by the first.
TEST(Audit, EonOnTheLastDescriptorAlone) {
  auto b = read_file(kernels() / "activation" / "softmax.bin");
  std::vector<Finding> none;
  auto td = [&](uint64_t at) { return decode_td(b, at, at + 0x274, gen7(), none); };
  using Found = std::vector<std::pair<uint64_t, std::string>>;
  auto eon = [](const std::vector<Finding> &fs) {
    Found out;
    for (const Finding &f : fs)
      if (f.code == "ANEC-AUD-001") out.push_back({f.offset, f.message});
    return out;
  };
  Chain first_two;
  first_two.tds = {td(0), td(0x300)};
  EXPECT_EQ(eon(audit_chain(first_two)), (Found{{0x300, "descriptor 1 is the last but not marked EON"}}));
  Chain reordered;
  reordered.tds = {td(0xc00), td(0)};
  EXPECT_EQ(eon(audit_chain(reordered)), (Found{{0xc00, "descriptor 0 is marked EON but is not the last"},
                                                {0, "descriptor 1 is the last but not marked EON"}}));
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(eon(audit_chain(decode_raw_chain(b, gen7()))).empty());
}

TEST(Explain, SaysWhatLiesAtAnOffset) {
  auto conv = read_file(tinygrad("conv.hwx"));
  Hwx h = read_hwx(conv, gen7());
  std::string s = explain(conv, h.chain, &h, 0x4076);
  EXPECT_NE(s.find("section __TEXT.__text +0x76"), std::string::npos) << s;
  EXPECT_NE(s.find("relocated against __TEXT.__const"), std::string::npos) << s;
  EXPECT_NE(s.find("KernelDMASrc.CoeffBaseAddr[0].Addr=0"), std::string::npos) << s;
  EXPECT_NE(explain(conv, h.chain, &h, 0x20).find("load command 0x19"), std::string::npos);
  auto relu6 = read_file(kernels() / "activation" / "relu6.bin");
  Chain c = decode_raw_chain(relu6, gen7());
  EXPECT_NE(explain(relu6, c, nullptr, 0x12a).find("Common.InDim.Win=1600"), std::string::npos);
  EXPECT_NE(explain(relu6, c, nullptr, 0x124).find("stream header 0x3c000000"), std::string::npos);
  EXPECT_NE(explain(relu6, c, nullptr, 0x2f0).find("kernel data +0x70"), std::string::npos);
  EXPECT_NE(explain(relu6, c, nullptr, 0x278).find("no decoded structure"), std::string::npos);
  EXPECT_NE(explain(relu6, c, nullptr, 0x9999).find("past the end"), std::string::npos);
}

TEST(DescCli, AuditExitCodes) {
  EXPECT_EQ(desc_cli("audit " + tinygrad("gemm.hwx").string()).status, 0);
  auto b = read_file(kernels() / "activation" / "softmax.bin");
  b[0x600] = 7;
  fs::path bad = fs::temp_directory_path() / ("anec-audit-" + std::to_string(::getpid()) + ".bin");
  write_output(bad, b);
  CliResult r = desc_cli("audit " + bad.string());
  fs::remove(bad);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("ANEC-AUD-002"), std::string::npos) << r.out;
  CliResult e = desc_cli("explain " + tinygrad("conv.hwx").string() + " 0x4076");
  EXPECT_EQ(e.status, 0);
  EXPECT_NE(e.out.find("CoeffBaseAddr[0]"), std::string::npos);
  EXPECT_EQ(desc_cli("explain " + tinygrad("conv.hwx").string() + " nowhere").status, 2);
}
