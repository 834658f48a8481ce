// The flat decoder (flat.hpp) against the register database read directly (not through its compiled
// tables) and against the tree built from it, on every real chain in ../shared/testdata; the two
// levels of detail against each other; the chain errors on hostile inputs; `anec-desc audit` over
// several files.
#include "../errors.hpp"
#include "../gen7.hpp"
#include "../run_tool.hpp"
#include "anec/descriptors/audit.hpp"
#include "anec/descriptors/flat.hpp"
#include "anec/descriptors/hwx.hpp"
#include "anec/descriptors/td.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/json.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

using namespace anec;
using namespace anec::desc;
using anec::test::code_of;
using anec::test::gen7;
namespace fs = std::filesystem;

namespace {
fs::path testdata() {
  return fs::path(ANEC_TEST_SHARED_DIR) / "testdata";
}
fs::path kernels() {
  return testdata() / "external" / "eiln-ane" / "kernels";
}

// A real chain: its bytes, the database of its generation and where the chain lies in the file.
struct RealChain {
  std::string name;
  std::vector<uint8_t> bytes;
  const TdSchema *schema;
  uint64_t begin = 0, end = UINT64_MAX;
};

const TdSchema &database(int generation) {
  static std::map<int, std::unique_ptr<TdSchema>> loaded;
  auto &s = loaded[generation];
  if (!s)
    s = std::make_unique<TdSchema>(TdSchema::load(fs::path(ANEC_TEST_TABLES_DIR) / "schema" / "td" /
                                                  ("gen" + std::to_string(generation) + ".toml")));
  return *s;
}

// The descriptor generation of an hwx cpusubtype, from the targets index (one generation per
// subtype among the real files' subtypes).
int generation_of(uint32_t subtype) {
  std::istringstream index(read_text_file(fs::path(ANEC_TEST_TABLES_DIR) / "targets" / "index.tsv"));
  std::string name, cpusubtype, generation;
  for (std::string line; std::getline(index, line);) {
    std::istringstream fields(line);
    if (line.starts_with("#") || !(fields >> name >> cpusubtype >> generation))
      continue;
    if (cpusubtype == std::to_string(subtype))
      return std::stoi(generation);
  }
  ADD_FAILURE() << "no target of cpusubtype " << subtype;
  return 7;
}

// Every raw chain and every hwx whose chain its generation's database walks.
std::vector<RealChain> real_chains() {
  std::vector<RealChain> out;
  for (const char *folder : {"external", "newer", "more-generations"})
    for (auto &e : fs::recursive_directory_iterator(testdata() / folder)) {
      std::string ext = e.path().extension().string(), name = e.path().filename().string();
      if (ext == ".bin") {
        out.push_back({name, read_file(e.path()), &gen7()});
      } else if (ext == ".hwx" || name == "model.hwx.golden") {
        std::vector<uint8_t> b = read_file(e.path());
        const TdSchema &s = database(generation_of(le32(b, 8)));
        if (!s.walkable())
          continue;
        Hwx h = read_hwx(b, s);
        if (h.chain_not_decoded.empty())
          out.push_back({name, std::move(b), &s, h.text.offset, uint64_t(h.text.offset) + h.text.size});
      }
    }
  return out;
}

// The word as the database's lists give it: the raw bytes at its offset, its block, each field of
// that block at that address in database order with its value, the bits they leave uncovered.
void expect_word_as_listed(const RealChain &r, const FlatChain &c, uint32_t index, uint64_t offset,
                           bool header) {
  const TdSchema &s = *r.schema;
  ASSERT_LT(index, c.words.size()) << hex(offset);
  const FlatWord &w = c.words[index];
  uint32_t address = c.address(index, s);
  EXPECT_EQ(w.raw, le32(r.bytes, offset)) << hex(offset);
  const TdBlock *b = header ? nullptr : s.block_at(address);
  std::string block = header ? "Header" : b ? b->name : "";
  EXPECT_EQ(FlatChain::block(w, s), header ? kHeaderBlock : b ? BlockId(b - s.blocks.data()) : kNoBlock);
  std::span<const FieldExtract> x = FlatChain::extracts(w, s);
  uint32_t covered = 0, k = 0;
  for (const TdField &f : s.fields)
    if (f.block == block && f.address == address) {
      ASSERT_LT(k, x.size()) << f.path() << " at " << hex(offset);
      EXPECT_EQ(&s.fields[x[k].field], &f) << hex(offset);
      EXPECT_EQ(x[k++].get(w.raw), f.get(w.raw)) << f.path() << " at " << hex(offset);
      covered |= f.mask();
    }
  EXPECT_EQ(k, x.size()) << hex(offset);
  EXPECT_EQ(FlatChain::reserved(w, s), w.raw & ~covered) << hex(offset);
}

void expect_same_word(const TdSchema &s, const FlatChain &c, uint32_t index, uint64_t offset, const Word &t) {
  ASSERT_LT(index, c.words.size()) << hex(offset);
  const FlatWord &f = c.words[index];
  EXPECT_EQ(t.offset, offset);
  EXPECT_EQ(t.address, c.address(index, s));
  EXPECT_EQ(t.raw, f.raw);
  EXPECT_EQ(t.reserved, FlatChain::reserved(f, s));
  BlockId block = FlatChain::block(f, s);
  EXPECT_EQ(t.block, block == kHeaderBlock ? "Header" : block == kNoBlock ? "" : s.blocks[block].name);
  std::span<const FieldExtract> x = FlatChain::extracts(f, s);
  ASSERT_EQ(t.fields.size(), x.size()) << hex(offset);
  for (size_t k = 0; k < x.size(); ++k) {
    EXPECT_EQ(t.fields[k].field, &s.fields[x[k].field]);
    EXPECT_EQ(t.fields[k].value, x[k].get(f.raw));
  }
}

// What both levels of detail keep: descriptors, header words, findings.
void expect_same_descriptors(const TdSchema &s, const FlatChain &a, const FlatChain &b) {
  ASSERT_EQ(a.tds.size(), b.tds.size());
  for (size_t i = 0; i < a.tds.size(); ++i) {
    const FlatTd &x = a.tds[i], &y = b.tds[i];
    EXPECT_EQ(std::tie(x.offset, x.size, x.eon, x.streams), std::tie(y.offset, y.size, y.eon, y.streams));
    for (size_t k = 0; k < s.header_bytes / 4; ++k)
      EXPECT_EQ(a.header(x, s)[k].raw, b.header(y, s)[k].raw);
  }
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i)
    EXPECT_EQ(diagnostic_text(a.findings[i]), diagnostic_text(b.findings[i]));
  EXPECT_EQ(std::tie(a.kernel_offset, a.kernel_size, a.sized),
            std::tie(b.kernel_offset, b.kernel_size, b.sized));
}
} // namespace

// The 36 raw chains and the 14 hwx programs (7 tinygrad H13; the matmul for M10, H11, T0, H12, H13,
// H14 and H15): every word read and every field extracted as the database lists them.
TEST(FlatDecode, EveryRealChainDecodesAsTheDatabaseListsIt) {
  size_t chains = 0, words = 0;
  FlatChain c; // reused from file to file, as the decoder's callers do
  for (const RealChain &r : real_chains()) {
    SCOPED_TRACE(r.name);
    decode_flat(r.bytes, *r.schema, c, FlatDetail::Words, {}, r.begin, r.end);
    ++chains;
    ASSERT_FALSE(c.tds.empty());
    for (const FlatTd &td : c.tds) {
      for (size_t k = 0; k < r.schema->header_bytes / 4; ++k)
        expect_word_as_listed(r, c, uint32_t(td.first_word + k), c.header_offset(td, k), true);
      for (const FlatStream &st : c.streams_of(td)) {
        EXPECT_EQ(st.header, le32(r.bytes, st.offset));
        ASSERT_EQ(c.words_of(st).size(), st.count);
        for (size_t i = 0; i < st.count; ++i, ++words)
          expect_word_as_listed(r, c, uint32_t(st.first_word + i), c.stream_offset(st, i), false);
      }
    }
  }
  EXPECT_EQ(chains, 50u);
  EXPECT_GT(words, 10000u);
}

// The tree is the flat result, word for word and field for field; the audits agree.
TEST(FlatDecode, TheTreeHoldsTheFlatWords) {
  for (const RealChain &r : real_chains()) {
    SCOPED_TRACE(r.name);
    const TdSchema &s = *r.schema;
    FlatChain c;
    decode_flat(r.bytes, s, c, FlatDetail::Words, {}, r.begin, r.end);
    Chain tree = decode_raw_chain(r.bytes, s, {}, r.begin, r.end);
    ASSERT_EQ(tree.tds.size(), c.tds.size());
    for (size_t i = 0; i < c.tds.size(); ++i) {
      const Td &t = tree.tds[i];
      const FlatTd &f = c.tds[i];
      EXPECT_EQ(std::tie(t.offset, t.size, t.eon), std::tie(f.offset, f.size, f.eon));
      ASSERT_EQ(t.header.size(), c.header(f, s).size());
      for (size_t k = 0; k < t.header.size(); ++k)
        expect_same_word(s, c, uint32_t(f.first_word + k), c.header_offset(f, k), t.header[k]);
      ASSERT_EQ(t.streams.size(), f.streams);
      for (size_t k = 0; k < f.streams; ++k) {
        const FlatStream &fs = c.streams_of(f)[k];
        const Stream &ts = t.streams[k];
        EXPECT_EQ(std::tie(ts.offset, ts.header, ts.address, ts.count),
                  std::tie(fs.offset, fs.header, fs.address, fs.count));
        ASSERT_EQ(ts.words.size(), c.words_of(fs).size());
        for (size_t w = 0; w < ts.words.size(); ++w)
          expect_same_word(s, c, uint32_t(fs.first_word + w), c.stream_offset(fs, w), ts.words[w]);
      }
      EXPECT_EQ(header_field(t, "EON").value_or(0) != 0, f.eon);
    }
    std::vector<Finding> flat_audit = audit_chain(c, s), tree_audit = audit_chain(tree);
    ASSERT_EQ(flat_audit.size(), tree_audit.size());
    for (size_t i = 0; i < flat_audit.size(); ++i)
      EXPECT_EQ(diagnostic_text(flat_audit[i]), diagnostic_text(tree_audit[i]));
  }
}

namespace {
// softmax (5 descriptors) damaged so that the walk reports every kind of finding it has:
// reserved header bits (TD-103), a stream running out of its block (TD-102), nonzero padding
// (TD-104), a missing NextPointer (TD-106), and a TID and a NextPointer the audit reports.
std::vector<uint8_t> damaged_softmax() {
  auto b = read_file(kernels() / "activation" / "softmax.bin");
  b[0x303] |= 0x80;                    // TD 1: header bit 31, no field there
  store_le(b, 0x1c, 0, 4);             // TD 0: no NextPointer (next assumed at 0x300, where it is)
  b[0x600] = 7;                        // TD 2: TID 7
  b[0x280] = 1;                        // padding after TD 0
  store_le(b, 0xc00 + 0x1c, 0x300, 4); // TD 4, the last: NextPointer 0x300, not 0
  return b;
}
} // namespace

// Headers detail walks the same descriptors and streams and reports the same findings, the same
// audit; it keeps no streams or register words.
TEST(FlatDecode, HeadersDetailFindsWhatWordsDetailFinds) {
  std::vector<RealChain> chains = real_chains();
  chains.push_back({"damaged softmax", damaged_softmax(), &gen7()});
  size_t with_findings = 0;
  for (const RealChain &r : chains) {
    SCOPED_TRACE(r.name);
    FlatChain words, headers;
    decode_flat(r.bytes, *r.schema, words, FlatDetail::Words, {}, r.begin, r.end);
    decode_flat(r.bytes, *r.schema, headers, FlatDetail::Headers, {}, r.begin, r.end);
    expect_same_descriptors(*r.schema, words, headers);
    EXPECT_TRUE(headers.streams.empty());
    EXPECT_EQ(headers.words.size(), headers.tds.size() * r.schema->header_bytes / 4);
    std::vector<Finding> a = audit_chain(words, *r.schema), b = audit_chain(headers, *r.schema);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(diagnostic_text(a[i]), diagnostic_text(b[i]));
    with_findings += !a.empty();
  }
  EXPECT_EQ(with_findings, 1u); // the damaged chain only
}

TEST(FlatDecode, DamagedChainFindingsAndOffsets) {
  FlatChain c;
  decode_flat(damaged_softmax(), gen7(), c, FlatDetail::Headers);
  std::vector<std::string> found;
  for (const Finding &f : audit_chain(c, gen7()))
    found.push_back(f.code + " " + hex(f.offset) + " " + f.message);
  EXPECT_EQ(found, (std::vector<std::string>{
                       "ANEC-TD-106 0x0 descriptor without EON has no NextPointer; next assumed at 0x300",
                       "ANEC-TD-104 0x280 nonzero padding between descriptors",
                       "ANEC-TD-103 0x300 reserved header bits 0x80000000 set",
                       "ANEC-AUD-003 0x0 NextPointer 0x0, the next descriptor is at 0x300",
                       "ANEC-AUD-002 0x600 descriptor 2 has TID 7",
                       "ANEC-AUD-003 0xc00 NextPointer 0x300, the next descriptor is at 0x0",
                   }));
}

// relu6's 4-word PE stream moved to start on PE's last register: its other three words lie outside
// every block, each reported where it is (TD-102).
TEST(FlatDecode, StreamRunningOutOfItsBlockIsReportedPerWord) {
  auto b = read_file(kernels() / "activation" / "relu6.bin");
  ASSERT_EQ(le32(b, 0x228), 0x0c008800u); // 4 words at PE 0x8800
  const TdBlock *pe = gen7().block_at(0x8800);
  ASSERT_NE(pe, nullptr);
  uint32_t last_pe = pe->address + 4 * pe->words - 4; // the stream starts on PE's last word
  store_le(b, 0x228, 0x0c000000 | last_pe, 4);
  FlatChain c;
  decode_flat_td(b, 0, 0x274, gen7(), c);
  ASSERT_EQ(c.findings.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(c.findings[k].code, "ANEC-TD-102");
    EXPECT_EQ(c.findings[k].offset, 0x230u + 4 * k);
  }
  EXPECT_NE(c.findings[0].message.find("stream starting in PE runs into "), std::string::npos)
      << c.findings[0].message;
}

// relu6's PE stream moved off a word address inside PE: its words keep their block (recovered from
// their slot) but have no fields, every set bit reserved.
TEST(FlatDecode, OffWordStreamKeepsItsBlock) {
  auto b = read_file(kernels() / "activation" / "relu6.bin");
  ASSERT_EQ(le32(b, 0x228), 0x0c008800u); // 4 words at PE 0x8800
  store_le(b, 0x228, 0x0c008802, 4);
  FlatChain c;
  decode_flat_td(b, 0, 0x274, gen7(), c);
  EXPECT_TRUE(c.findings.empty());
  BlockId pe_block = BlockId(gen7().block_at(0x8800) - gen7().blocks.data());
  ASSERT_GE(c.streams.size(), 5u);
  const FlatStream &pe = c.streams[4];
  ASSERT_EQ(pe.count, 4u);
  ASSERT_LE(pe.first_word + pe.count, c.words.size());
  for (uint32_t i = 0; i < pe.count; ++i) {
    const FlatWord &w = c.words[pe.first_word + i];
    EXPECT_EQ(c.address(pe.first_word + i, gen7()), 0x8802u + 4 * i);
    EXPECT_EQ(FlatChain::block(w, gen7()), pe_block);
    EXPECT_TRUE(FlatChain::extracts(w, gen7()).empty());
    EXPECT_EQ(FlatChain::reserved(w, gen7()), w.raw);
  }
}

// Hostile chains get the errors, codes and messages the walk always gave, whatever the detail.
TEST(FlatDecode, HostileChainsGetTheirErrors) {
  auto relu6 = read_file(kernels() / "activation" / "relu6.bin");
  struct Case {
    const char *what;
    std::vector<uint8_t> bytes;
    uint64_t begin;
    std::string code, message;
    const TdSchema *schema = &gen7();
  };
  auto with = [&](size_t size, std::initializer_list<std::pair<size_t, uint32_t>> words) {
    std::vector<uint8_t> b(relu6.begin(), relu6.begin() + long(std::min(size, relu6.size())));
    b.resize(size, 0);
    for (auto [at, v] : words)
      store_le(b, at, v, 4);
    return b;
  };
  std::vector<Case> cases = {
      {"cut inside the first stream", with(0x100, {}), 0, "ANEC-TD-002",
       "ANEC-TD-002: stream at 0x28 (header 0xf401f800: 62 words at 0x1f800) runs past the descriptor end "
       "0x100"},
      {"the last stream runs past the end", with(0x272, {}), 0, "ANEC-TD-002",
       "ANEC-TD-002: stream at 0x254 (header 0x18017800: 7 words at 0x17800) runs past the descriptor end "
       "0x272"},
      {"the largest count (64 words) past the end", with(0x100, {{0x28, 0xfc01f800}}), 0, "ANEC-TD-002",
       "ANEC-TD-002: stream at 0x28 (header 0xfc01f800: 64 words at 0x1f800) runs past the descriptor end "
       "0x100"},
      {"a sized descriptor of the most words (2047)", std::vector<uint8_t>{0, 0, 0xff, 0x07, 0, 0, 0, 0}, 0,
       "ANEC-TD-002",
       "ANEC-TD-002: descriptor at 0x0 gives 2047 words; 0x8 bytes remain and the header takes 0x20",
       &database(8)},
      {"a sized chain ending in 3 bytes after an empty frame", std::vector<uint8_t>(0x13, 0), 0,
       "ANEC-TD-001", "ANEC-TD-001: descriptor at 0x10: 0x3 bytes remain", &database(8)},
      {"no descriptor marked EON", with(0x300, {{0, le32(relu6, 0) & ~(1u << 25)}}), 0, "ANEC-TD-003",
       "ANEC-TD-003: the chain ends at 0x300 without a descriptor marked EON"},
      {"a header cut short", with(0x20, {}), 0, "ANEC-TD-003",
       "ANEC-TD-003: the chain ends at 0x0 without a descriptor marked EON"},
      {"NextPointer back into itself", with(0x300, {{0, le32(relu6, 0) & ~(1u << 25)}, {0x1c, 0x100}}), 0,
       "ANEC-TD-004",
       "ANEC-TD-004: descriptor at 0x0 points its NextPointer 0x100 back into itself or an earlier "
       "descriptor (it ends at 0x274)"},
      {"a start past the end", with(0x300, {}), 0x310, "ANEC-TD-001",
       "ANEC-TD-001: chain start 0x310 lies past the end 0x300"},
  };
  for (const Case &k : cases)
    for (FlatDetail detail : {FlatDetail::Words, FlatDetail::Headers}) {
      SCOPED_TRACE(k.what);
      FlatChain c;
      std::string message;
      EXPECT_EQ(code_of([&] { decode_flat(k.bytes, *k.schema, c, detail, {}, k.begin); }, &message), k.code);
      EXPECT_EQ(message, k.message);
      EXPECT_EQ(code_of([&] { decode_raw_chain(k.bytes, *k.schema, {}, k.begin); }), k.code);
    }
  FlatChain c;
  std::string message;
  EXPECT_EQ(code_of([&] { decode_flat_td(relu6, 0x2f0, 0x300, gen7(), c); }, &message), "ANEC-TD-001");
  EXPECT_EQ(message, "ANEC-TD-001: descriptor at 0x2f0 needs a 0x28-byte header, 0x10 bytes remain");
  EXPECT_EQ(code_of([&] { decode_flat_td(relu6, 0, 0x400, gen7(), c); }, &message), "ANEC-TD-002");
  EXPECT_EQ(message, "ANEC-TD-002: stream header at 0x300 runs past the end 0x300");
}

// The same buffers serve call after call: a long chain, then a short one, leave only the short one.
TEST(FlatDecode, ReusedBuffersHoldOnlyTheLastChain) {
  FlatChain c;
  decode_flat(read_file(kernels() / "activation" / "softmax.bin"), gen7(), c);
  ASSERT_EQ(c.tds.size(), 5u);
  auto relu6 = read_file(kernels() / "activation" / "relu6.bin");
  decode_flat(relu6, gen7(), c);
  ASSERT_EQ(c.tds.size(), 1u);
  EXPECT_EQ(c.streams.size(), 7u);
  EXPECT_EQ(c.words.size(), 0x274u / 4 - 7); // every word but the 7 stream headers
  EXPECT_TRUE(c.findings.empty());
  EXPECT_EQ(c.kernel_offset, 0x280u);
}

namespace {
anec::test::ToolRun desc_cli(const std::string &args) {
  return anec::test::run_tool(ANEC_TEST_DESC_TOOL, ANEC_TEST_TABLES_DIR, args);
}

// A scratch directory of the given files, removed at the end of the test.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("anec-audit-many-" + std::to_string(::getpid()));
  explicit Scratch(const std::map<std::string, std::vector<uint8_t>> &files) {
    fs::create_directories(dir);
    for (const auto &[name, bytes] : files)
      write_output(dir / name, bytes);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string &name) const { return (dir / name).string(); }
};
} // namespace

TEST(DescCli, AuditSpreadsSeveralFilesAndSummarises) {
  auto relu6 = read_file(kernels() / "activation" / "relu6.bin");
  auto softmax = read_file(kernels() / "activation" / "softmax.bin");
  auto tid = softmax;
  tid[0x600] = 7;
  auto cut = relu6;
  cut.resize(0x100);
  Scratch s({{"a.bin", relu6}, {"b.bin", softmax}, {"c.bin", tid}, {"d.bin", cut}, {"notes.txt", {1, 2}}});

  auto clean = desc_cli("audit " + s / "a.bin" + " " + s / "b.bin");
  EXPECT_EQ(clean.status, 0) << clean.err;
  EXPECT_NE(clean.out.find("2 file(s): 2 without a finding, 0 with findings, 0 unreadable"),
            std::string::npos)
      << clean.out;

  auto found = desc_cli("audit " + s / "a.bin" + " " + s / "c.bin");
  EXPECT_EQ(found.status, 1) << found.err;
  EXPECT_NE(found.out.find("ANEC-AUD-002 warn " + s / "c.bin" + " at 0x600: descriptor 2 has TID 7"),
            std::string::npos)
      << found.out;

  // The directory: its .bin files in name order, notes.txt left out; the cut file is unreadable.
  auto all = desc_cli("audit " + s.dir.string() + " --format json");
  EXPECT_EQ(all.status, 2) << all.err;
  Doc d = json::parse(all.out, "audit");
  for (const char *key : {"files", "with_findings", "unreadable", "rows", "findings"})
    ASSERT_NE(d.find(key), nullptr) << key << " in " << all.out;
  EXPECT_EQ(d.find("files")->as_int(), 4);
  EXPECT_EQ(d.find("with_findings")->as_int(), 1);
  EXPECT_EQ(d.find("unreadable")->as_int(), 1);
  const auto &rows = d.find("rows")->items();
  ASSERT_EQ(rows.size(), 4u);
  ASSERT_TRUE(rows[2].find("file") && rows[1].find("descriptors") && rows[3].find("error")) << all.out;
  EXPECT_EQ(rows[2].find("file")->as_string(), s / "c.bin");
  EXPECT_EQ(rows[1].find("descriptors")->as_string(), "5");
  EXPECT_EQ(rows[3].find("error")->as_string().substr(0, 12), "ANEC-TD-002:");
  std::vector<std::string> codes;
  for (const Doc &f : d.find("findings")->items()) {
    ASSERT_TRUE(f.find("code") && f.find("object")) << all.out;
    codes.push_back(f.find("code")->as_string() + " " + f.find("object")->as_string());
  }
  EXPECT_EQ(codes, (std::vector<std::string>{"ANEC-AUD-002 " + s / "c.bin", "ANEC-TD-002 " + s / "d.bin"}));

  auto csv = desc_cli("audit " + s / "c.bin" + " " + s / "d.bin" + " --format csv");
  EXPECT_EQ(csv.status, 2);
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')), "code,severity,object,field,offset,message,value,limit,"
                                                   "limit_field,limit_confidence,fix");
  EXPECT_NE(csv.out.find("ANEC-TD-002,error," + s / "d.bin"), std::string::npos) << csv.out;

  auto missing = desc_cli("audit " + s / "a.bin" + " " + s / "none.bin");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("ANEC-IO-001"), std::string::npos) << missing.out;
}
