#include "anec/support/diagnostic.hpp"
#include "anec/support/doc.hpp"
#include "anec/support/document.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/interned.hpp"
#include "anec/support/json.hpp"
#include "anec/support/json_view.hpp"
#include "anec/support/list_spool.hpp"
#include "anec/support/plist.hpp"
#include "anec/support/print_behind.hpp"
#include "anec/support/print_later.hpp"
#include "anec/support/table.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace anec;
namespace fs = std::filesystem;

TEST(Sha256, KnownVectors) {
  auto h = [](std::string s) { return sha256_hex({reinterpret_cast<const uint8_t *>(s.data()), s.size()}); };
  EXPECT_EQ(h(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(h("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(h("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// prepend puts a member first, keeping the others' order; erase removes one and says whether it was
// there.
TEST(Interned, OneCopyOfEachWordFromEveryThread) {
  Interned none, fp16("fp16"), again(std::string("fp1") + "6"), other("fp32");
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none, Interned(""));
  EXPECT_EQ(&fp16.str(), &again.str()); // the same copy, not an equal one
  EXPECT_NE(fp16, other);
  EXPECT_EQ(fp16, "fp16");
  EXPECT_EQ(std::string("w:") + other, "w:fp32");
  std::vector<const std::string *> seen(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&seen, i] {
      for (int k = 0; k < 1000; ++k)
        Interned("word" + std::to_string(k));
      seen[i] = &Interned("word7").str();
    });
  for (std::thread &t : threads)
    t.join();
  for (const std::string *s : seen)
    EXPECT_EQ(s, &Interned("word7").str());
}

TEST(Doc, PrependAndEraseKeepTheOtherMembersInOrder) {
  anec::Doc t = anec::Doc::table();
  t.append("b", anec::Doc::integer(2));
  t.append("c", anec::Doc::integer(3));
  t.prepend("a", anec::Doc::integer(1)).hex = true;
  std::string keys;
  for (const anec::DocMember &m : t.members())
    keys += m.key;
  ASSERT_EQ(keys, "abc");
  EXPECT_TRUE(t.members().front().value.hex);
  EXPECT_TRUE(t.erase("b"));
  EXPECT_FALSE(t.erase("b"));
  EXPECT_FALSE(anec::Doc::integer(1).erase("a"));
  keys.clear();
  for (const anec::DocMember &m : t.members())
    keys += m.key;
  EXPECT_EQ(keys, "ac");
  ASSERT_NE(t.find("c"), nullptr);
  EXPECT_EQ(t.find("c")->as_int(), 3);
}

// set() replaces a key where it stands and appends a new one; an object read from JSON with a key
// given twice keeps the last value, in the first one's place.
TEST(Doc, SetReplacesAKeyInPlaceAndTheReaderKeepsTheLastValue) {
  anec::Doc t = anec::Doc::table();
  t.set("a", anec::Doc::integer(1));
  t.set("b", anec::Doc::integer(2));
  t.set("a", anec::Doc::integer(3));
  ASSERT_EQ(t.members().size(), 2u);
  EXPECT_EQ(t.members()[0].key, "a");
  EXPECT_EQ(t.members()[0].value.as_int(), 3);
  anec::json::Document d(R"({"x": 1, "y": [2], "x": "last"})", "t.json");
  anec::Doc read = d.root().doc();
  ASSERT_EQ(read.members().size(), 2u);
  EXPECT_EQ(read.members()[0].key, "x");
  EXPECT_EQ(read.members()[0].value.as_string(), "last");
  EXPECT_EQ(read.members()[1].value.items().size(), 1u);
}

// A Doc refilled value after value (a reader reusing one op's attributes) reads as a fresh one each
// time, whatever it held before: kinds change, arrays and tables grow and shrink, a key given twice
// keeps its first place, and a refilled string or table drops the hints of what was there.
TEST(Doc, ARefilledDocReadsAsAFreshOne) {
  const char *texts[] = {
      R"({"kernel": [3, 3], "pad": [1, 1, 1, 1], "name": "a long name past the small-string size"})",
      R"({"pad": [0], "kernel": {"h": 1}})",
      R"([1, "two", [3.5, true, null], {"k": "v", "k": [4]}])",
      R"({})",
      R"({"x": "short", "y": [[1, 2], []], "x": {"z": false}})",
      R"("just a string")",
      R"({"kernel": [3, 3], "pad": [1, 1, 1, 1], "groups": 1})",
  };
  anec::Doc reused = anec::Doc::integer(0xff, true);
  reused.line = 3;
  for (const char *text : texts) {
    anec::json::Document d(text, "t.json");
    d.root().doc_into(reused);
    EXPECT_EQ(anec::json::write(reused), anec::json::write(d.root().doc())) << text;
    EXPECT_EQ(anec::json::write(reused), anec::json::write(anec::json::parse(text, "t.json"))) << text;
    EXPECT_FALSE(reused.hex);
    EXPECT_EQ(reused.line, 0u);
  }
}

// A Doc holds one kind at a time: every accessor of another kind reads false, 0 or empty, and
// building an array or a table replaces what was there.
TEST(Doc, EachKindReadsOnlyItsOwnValue) {
  anec::Doc f = anec::Doc::number(2.5), i = anec::Doc::integer(-7), s = anec::Doc::string("x");
  EXPECT_EQ(f.as_int(), 0);
  EXPECT_EQ(f.as_float(), 2.5);
  EXPECT_EQ(i.as_float(), 0.0);
  EXPECT_FALSE(i.as_bool());
  EXPECT_EQ(i.as_int(), -7);
  EXPECT_TRUE(s.items().empty());
  EXPECT_TRUE(s.members().empty());
  EXPECT_EQ(f.as_string(), "");
  anec::Doc t = anec::Doc::table();
  t.set("a", s);
  t.set("a", i); // replaces, keeping the position
  t.set("b", f);
  ASSERT_EQ(t.members().size(), 2u);
  ASSERT_NE(t.find("a"), nullptr);
  EXPECT_EQ(t.find("a")->as_int(), -7);
  EXPECT_TRUE(t.items().empty());
  anec::Doc copy = t;
  copy.push(s); // a table made an array: its members are gone, the copy's source keeps them
  EXPECT_TRUE(copy.is(anec::Doc::Kind::Array));
  EXPECT_EQ(copy.items().size(), 1u);
  EXPECT_TRUE(copy.members().empty());
  EXPECT_EQ(t.members().size(), 2u);
}

TEST(TomlWriter, RoundTripsThroughTheParser) {
  Doc d = Doc::table();
  d.set("plain", Doc::string("a \"quoted\" \\ line\nwith\ttabs and \x01 control"));
  d.set("needs quotes", Doc::integer(-5));
  d.set("hex", Doc::integer(0x81d, true));
  d.set("float", Doc::number(0.23));
  d.set("whole", Doc::number(3.0));
  d.set("list", Doc::array({Doc::string("&BGA"), Doc::string("|L16")}));
  Doc inl = Doc::table();
  inl.inline_table = true;
  inl.set("value", Doc::boolean(true));
  Doc sec = Doc::table();
  sec.set("entry", inl);
  d.set("section", sec);
  std::string text = toml::write(d);
  Doc back = toml::parse(text, "t");
  EXPECT_EQ(toml::write(back), text);
  for (const char *key : {"plain", "needs quotes", "hex", "float", "whole", "section"})
    ASSERT_NE(back.find(key), nullptr) << key << " in " << text;
  ASSERT_NE(d.find("plain"), nullptr);
  ASSERT_NE(back.find("section")->find("entry"), nullptr) << text;
  ASSERT_NE(back.find("section")->find("entry")->find("value"), nullptr) << text;
  EXPECT_EQ(back.find("plain")->as_string(), d.find("plain")->as_string());
  EXPECT_EQ(back.find("needs quotes")->as_int(), -5);
  EXPECT_TRUE(back.find("hex")->hex);
  EXPECT_EQ(back.find("float")->as_float(), 0.23);
  EXPECT_TRUE(back.find("whole")->is(Doc::Kind::Float));
  EXPECT_TRUE(back.find("section")->find("entry")->find("value")->as_bool());
}

TEST(Files, AtomicWriteLeavesNoTemporaryAndReadErrorsHaveCodes) {
  fs::path dir = fs::temp_directory_path() / ("anec-files-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_output(dir / "a.txt", std::string_view("one"));
  write_output(dir / "a.txt", std::string_view("two"));
  EXPECT_EQ(read_text_file(dir / "a.txt"), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  try {
    write_output(dir / "missing" / "b.txt", std::string_view("x"));
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-IO-003");
  }
  try {
    read_file(dir / "nope");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-IO-001");
  }
  try {
    read_file(dir / "a.txt", 2);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-IO-002");
  }
  fs::remove_all(dir);
}

// XML and binary-free property lists become documents; a string holding a NUL (which makes
// libplist's own string getter assert, found by the fuzzer) is read whole; junk has a reason code.
TEST(Plist, ReadsDocumentsAndRejectsJunk) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                    "<plist version=\"1.0\"><dict><key>n</key><integer>3</integer>"
                    "<key>s</key><string>a</string><key>b</key><true/>"
                    "<key>a</key><array><real>1.5</real></array></dict></plist>";
  anec::Doc d = anec::plist::parse(xml, "t.plist");
  for (const char *key : {"n", "s", "b", "a"})
    ASSERT_NE(d.find(key), nullptr) << key;
  ASSERT_FALSE(d.find("a")->items().empty());
  EXPECT_EQ(d.find("n")->as_int(), 3);
  EXPECT_EQ(d.find("s")->as_string(), "a");
  EXPECT_TRUE(d.find("b")->as_bool());
  EXPECT_DOUBLE_EQ(d.find("a")->items()[0].as_float(), 1.5);
  std::string nul = xml;
  nul.replace(nul.find("<string>a"), 9, std::string("<string>a\0", 10));
  EXPECT_NO_THROW(anec::plist::parse(nul, "nul.plist"));
  try {
    anec::plist::parse("not a plist", "junk.plist");
    ADD_FAILURE() << "junk parsed";
  } catch (const anec::Error &e) {
    EXPECT_EQ(e.code(), "ANEC-PLIST-001");
  }
}

TEST(Hex, BytesRoundTripAndBadDigits) {
  std::vector<uint8_t> b = {0x00, 0x7f, 0xab, 0xff};
  EXPECT_EQ(anec::bytes_from_hex(anec::hex_bytes(b)), b);
  EXPECT_EQ(anec::bytes_from_hex("ABcd"), (std::vector<uint8_t>{0xab, 0xcd}));
  EXPECT_FALSE(anec::bytes_from_hex("abc"));
  EXPECT_FALSE(anec::bytes_from_hex("0g"));
  EXPECT_FALSE(anec::bytes_from_hex("+1"));
}

// ---- Property lists: limits before work ---------------------------------------------------------
// A bplist00 writer for the hostile and valid inputs below, so that no binary blob is committed.
// Objects come encoded; references are 2 bytes and offsets 4, enough for every graph here.
namespace bplist {
std::string be(uint64_t v, int width) {
  std::string s;
  for (int i = width - 1; i >= 0; --i) s += char(uint8_t(v >> (8 * i)));
  return s;
}
// A marker with its count; a count of 15 or more follows as an 8-byte int object.
std::string head(unsigned type, uint64_t count) {
  if (count < 15) return std::string(1, char(type << 4 | count));
  return std::string(1, char(type << 4 | 0xf)) + char(0x13) + be(count, 8);
}
std::string integer(uint64_t v) { return char(0x13) + be(v, 8); }
std::string ascii(const std::string &s) { return head(0x5, s.size()) + s; }
std::string data(size_t n) { return head(0x4, n) + std::string(n, 'd'); }
std::string utf16(const std::u16string &s) {
  std::string r = head(0x6, s.size());
  for (char16_t c : s) r += be(c, 2);
  return r;
}
std::string array(const std::vector<uint64_t> &refs) {
  std::string r = head(0xa, refs.size());
  for (uint64_t x : refs) r += be(x, 2);
  return r;
}
std::string dict(const std::vector<uint64_t> &keys, const std::vector<uint64_t> &values) {
  std::string r = head(0xd, keys.size());
  for (uint64_t x : keys) r += be(x, 2);
  for (uint64_t x : values) r += be(x, 2);
  return r;
}
// Header, objects, offset table, trailer (offset size 4, reference size 2).
std::string file(const std::vector<std::string> &objects, uint64_t top = 0) {
  std::string body = "bplist00", table;
  for (const std::string &o : objects) {
    table += be(body.size(), 4);
    body += o;
  }
  uint64_t table_at = body.size();
  return body + table + std::string(6, '\0') + char(4) + char(2) + be(objects.size(), 8) + be(top, 8) +
         be(table_at, 8);
}
// "Billion laughs": object i is an array holding object i+1 twice, the last a 24-byte string, so
// libplist would build 2^(levels+1) - 1 nodes.
std::string shared_bomb(int levels) {
  std::vector<std::string> objects;
  for (int i = 0; i < levels; ++i) objects.push_back(array({uint64_t(i + 1), uint64_t(i + 1)}));
  objects.push_back(ascii(std::string(24, 'x')));
  return file(objects);
}
// `levels` arrays, each holding the next, around the integer 7.
std::string nested(int levels) {
  std::vector<std::string> objects;
  for (int i = 0; i < levels; ++i) objects.push_back(array({uint64_t(i + 1)}));
  objects.push_back(integer(7));
  return file(objects);
}
} // namespace bplist

namespace {
std::string nested_xml(int levels, const std::string &inner = "<integer>7</integer>") {
  std::string open, close;
  for (int i = 0; i < levels; ++i) {
    open += "<array>";
    close += "</array>";
  }
  return "<?xml version=\"1.0\"?><plist version=\"1.0\">" + open + inner + close + "</plist>";
}
std::string plist_code(const std::string &bytes, std::string *message = nullptr) {
  return anec::test::code_of([&] { anec::plist::parse(bytes, "t.plist"); }, message);
}
// The integer at the bottom of `levels` nested arrays.
int64_t innermost(const anec::Doc &d, int levels) {
  const anec::Doc *p = &d;
  for (int i = 0; i < levels; ++i) p = &p->items().at(0);
  return p->as_int();
}
} // namespace

// A few hundred bytes that libplist 2.2 expands into 2^25 nodes (22.8 s, 7.9 GB) and, at 40 levels,
// into memory without bound: rejected from the object graph before libplist runs. The byte budget
// is reached with few nodes: one 1 MiB data object referenced 300 times.
TEST(PlistBudgets, SharedReferenceBombsAreRejectedBeforeExpansion) {
  for (int levels : {24, 40}) {
    std::string message;
    EXPECT_EQ(plist_code(bplist::shared_bomb(levels), &message), "ANEC-PLIST-002") << levels;
    std::string budget = "more than " + std::to_string(anec::plist::max_nodes) + " nodes through shared";
    EXPECT_NE(message.find(budget), std::string::npos) << message;
  }
  std::vector<uint64_t> refs(300, 1);
  std::string message;
  std::string bytes = bplist::file({bplist::array(refs), bplist::data(1 << 20)});
  EXPECT_EQ(plist_code(bytes, &message), "ANEC-PLIST-002");
  EXPECT_NE(message.find("more than " + std::to_string(anec::plist::max_bytes) + " bytes"), std::string::npos)
      << message;
}

TEST(PlistBudgets, ReferenceCyclesAreErrorsNotHangs) {
  std::string message;
  EXPECT_EQ(plist_code(bplist::file({bplist::array({0})}), &message), "ANEC-PLIST-001");
  EXPECT_NE(message.find("object 0 contains itself (a reference cycle)"), std::string::npos) << message;
  EXPECT_EQ(plist_code(bplist::file({bplist::array({1}), bplist::dict({2}, {0}), bplist::ascii("k")})),
            "ANEC-PLIST-001");
}

// libplist parses 200,000 nested arrays but its recursive free overflowed the stack (SIGSEGV).
TEST(PlistBudgets, DeepXmlIsRejectedWithoutCrashing) {
  std::string message;
  EXPECT_EQ(plist_code(nested_xml(200000), &message), "ANEC-PLIST-002");
  EXPECT_NE(message.find("nested deeper than 64 levels"), std::string::npos) << message;
  EXPECT_LT(message.size(), 200u) << "the message quotes the input";
}

TEST(PlistBudgets, SixtyFourLevelsParseSixtyFiveAreRejected) {
  EXPECT_EQ(innermost(anec::plist::parse(nested_xml(64), "t.plist"), 64), 7);
  EXPECT_EQ(innermost(anec::plist::parse(bplist::nested(64), "t.plist"), 64), 7);
  EXPECT_EQ(plist_code(nested_xml(65)), "ANEC-PLIST-002");
  EXPECT_EQ(plist_code(bplist::nested(65)), "ANEC-PLIST-002");
  // Depth through a shared subtree: a chain of 59 arrays is reached first under 1 array (60 levels),
  // then, already measured, under 6 (65 levels).
  std::vector<std::string> objects = {bplist::array({1, 61})};
  for (int i = 1; i < 61; ++i) objects.push_back(bplist::array({uint64_t(i + 1)}));
  objects.back() = bplist::integer(7);
  for (int i = 61; i < 66; ++i) objects.push_back(bplist::array({uint64_t(i + 1 == 66 ? 1 : i + 1)}));
  EXPECT_EQ(plist_code(bplist::file(objects)), "ANEC-PLIST-002");
}

// What libplist skips does not nest: empty containers, comments, CDATA, processing instructions
// and a DOCTYPE with an internal subset, and a quoted attribute holding "<array>".
TEST(PlistBudgets, XmlDepthScanSkipsWhatLibplistSkips) {
  std::string many_empty;
  for (int i = 0; i < 100; ++i) many_empty += "<array/><dict/><array />";
  EXPECT_EQ(anec::plist::parse(nested_xml(1, many_empty), "t.plist").items().size(), 300u);
  std::string opens;
  for (int i = 0; i < 100; ++i) opens += "<array>";
  std::string hidden = "<?pi \"" + opens + "?>\"?><!DOCTYPE plist [ <!-- \"]>\" --> ]><plist version=\"1.0\">"
                       "<array><!-- " + opens + " --><string><![CDATA[" + opens + "]]></string>"
                       "<array a=\"" + opens + "\"><true/></array></array></plist>";
  anec::Doc d = anec::plist::parse(hidden, "t.plist");
  EXPECT_EQ(d.items().at(0).as_string(), opens);
  EXPECT_TRUE(d.items().at(1).items().at(0).as_bool());
}

// Sharing itself is legal: a string referenced ten times becomes ten strings.
TEST(PlistBudgets, ModerateSharingStillParses) {
  std::string bytes = bplist::file({
      bplist::dict({1, 2, 3}, {4, 5, 6}), bplist::ascii("list"), bplist::ascii("n"), bplist::ascii("name"),
      bplist::array(std::vector<uint64_t>(10, 7)), bplist::integer(70000), bplist::utf16(u"r\u00e9seau"),
      bplist::ascii("a shared string longer than fifteen")});
  anec::Doc d = anec::plist::parse(bytes, "t.plist");
  for (const char *key : {"list", "n", "name"})
    ASSERT_NE(d.find(key), nullptr) << key;
  ASSERT_EQ(d.find("list")->items().size(), 10u);
  for (const anec::Doc &s : d.find("list")->items())
    EXPECT_EQ(s.as_string(), "a shared string longer than fifteen");
  EXPECT_EQ(d.find("n")->as_int(), 70000);
  EXPECT_EQ(d.find("name")->as_string(), "r\xc3\xa9seau");
}

// Offsets, counts and references that leave the file are reason codes, never reads out of bounds.
TEST(PlistBudgets, MalformedBinaryIsRejectedWithinBounds) {
  std::string good = bplist::file({bplist::array({1, 1}), bplist::ascii("s")});
  ASSERT_NO_THROW(anec::plist::parse(good, "t.plist"));
  auto patched = [&](size_t from_end, const std::string &bytes) {
    std::string b = good;
    b.replace(b.size() - from_end, bytes.size(), bytes);
    return b;
  };
  EXPECT_EQ(plist_code(patched(8, bplist::be(1 << 20, 8))), "ANEC-PLIST-001");   // table past the end
  EXPECT_EQ(plist_code(patched(16, bplist::be(2, 8))), "ANEC-PLIST-001");        // top object 2 of 2
  EXPECT_EQ(plist_code(patched(24, bplist::be(1ull << 40, 8))), "ANEC-PLIST-001"); // too many objects
  EXPECT_EQ(plist_code(patched(26, std::string(1, char(0)))), "ANEC-PLIST-001");  // offset size 0
  EXPECT_EQ(plist_code(patched(25, std::string(1, char(9)))), "ANEC-PLIST-001");  // reference size 9
  std::string ref_out = bplist::file({bplist::array({1, 5}), bplist::ascii("s")});
  EXPECT_EQ(plist_code(ref_out), "ANEC-PLIST-001");
  std::string long_count = bplist::file({bplist::head(0xa, 1ull << 62), bplist::ascii("s")});
  EXPECT_EQ(plist_code(long_count), "ANEC-PLIST-001");
  std::string long_string = bplist::file({bplist::head(0x5, 1000) + "short"});
  EXPECT_EQ(plist_code(long_string), "ANEC-PLIST-001");
  for (size_t n = 0; n < good.size(); ++n) // every truncation; ASan watches the reads
    EXPECT_EQ(plist_code(good.substr(0, n)), "ANEC-PLIST-001") << n;
}

// The real engine network plist (tinygrad's net.plist) still reads, with its values.
TEST(PlistBudgets, RealNetworkPlistStillParses) {
  fs::path path = fs::path(__FILE__).parent_path() / "../../../shared/testdata/external/tinygrad/net.plist";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
  anec::Doc d = anec::plist::parse(anec::read_text_file(path), path.string());
  for (const char *key : {"Version", "Networks", "net"})
    ASSERT_NE(d.find(key), nullptr) << key;
  EXPECT_EQ(d.find("Version")->as_string(), "1.0.9");
  ASSERT_EQ(d.find("Networks")->items().size(), 1u);
  EXPECT_EQ(d.find("Networks")->items()[0].as_string(), "net");
  ASSERT_NE(d.find("net")->find("Outputs"), nullptr);
  ASSERT_FALSE(d.find("net")->find("Outputs")->items().empty());
  EXPECT_EQ(d.find("net")->find("Outputs")->items()[0].as_string(), "probs@output");
}

// A dictionary key holding a NUL made libplist's iterator assert and abort the process (found by
// the fuzzer once it could see the library); binary keys are checked first, and an XML key with a
// NUL is read or refused, never an abort.
TEST(PlistBudgets, DictionaryKeysWithNulAreRefusedNotAborted) {
  using namespace bplist;
  std::string message;
  std::string nul_key = file({dict({1}, {2}), ascii(std::string("a\0b", 3)), integer(1)});
  EXPECT_EQ(plist_code(nul_key, &message), "ANEC-PLIST-001");
  EXPECT_NE(message.find("NUL"), std::string::npos) << message;
  EXPECT_EQ(plist_code(file({dict({1}, {2}), utf16(std::u16string(u"a\0b", 3)), integer(1)})),
            "ANEC-PLIST-001");
  EXPECT_EQ(plist_code(file({dict({1}, {2}), ascii("ab"), integer(1)})), "none");
  std::string xml = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a" + std::string(1, '\0') +
                    "b</key><integer>1</integer></dict></plist>";
  std::string code = plist_code(xml);
  EXPECT_TRUE(code == "none" || code == "ANEC-PLIST-001") << code;
}

// One diagnostic printer for every tool: a text line, a document with only the parts that are set,
// and CSV rows whose fields are quoted and escaped.
TEST(Diagnostic, PrintsAsTextDocumentAndEscapedCsv) {
  Diagnostic d = finding_about("ANEC-CHK-001", "conv 1", "kernel_width",
                               "kernel width 14, it should be in [1,13]", Severity::Reject);
  d.value = "14";
  d.limit = "13";
  d.fix = "split the kernel, say \"7 + 7\"";
  EXPECT_EQ(
      diagnostic_text(d),
      "ANEC-CHK-001 reject conv 1.kernel_width: kernel width 14, it should be in [1,13]; fix: split the "
      "kernel, say \"7 + 7\"");
  EXPECT_EQ(
      diagnostic_text(d, {.object_shown = true}),
      "ANEC-CHK-001 reject kernel_width: kernel width 14, it should be in [1,13]; fix: split the kernel, "
      "say \"7 + 7\"");
  EXPECT_EQ(diagnostic_text(finding_at("ANEC-TD-101", 0x4030, "no block"), {.in_file = true}),
            "ANEC-TD-101 warn at 0x4030: no block");
  Doc doc = printed_doc([&](Printer &p) { print(p, d); });
  ASSERT_TRUE(doc.find("severity") && doc.find("limit"));
  EXPECT_EQ(doc.find("severity")->as_string(), "reject");
  EXPECT_EQ(doc.find("limit")->as_string(), "13");
  EXPECT_EQ(doc.find("limit_field"), nullptr) << "unset parts are left out";
  std::vector<Diagnostic> findings = {d};
  std::string csv =
      render(Form::Csv, "", [&](Printer &p) { print(p, findings, "findings", {.in_file = true}); });
  EXPECT_EQ(csv,
            "code,severity,object,field,offset,message,value,limit,limit_field,limit_confidence,fix\n"
            "ANEC-CHK-001,reject,conv 1,kernel_width,0x0,\"kernel width 14, it should be in [1,13]\",14,13,,,"
            "\"split the kernel, say \"\"7 + 7\"\"\"\n");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
}

// The one table printer: aligned text with capped columns, CSV with quoting, a row per object;
// typed cells keep their type in the document form.
TEST(Table, RendersAsTextCsvAndDocument) {
  Table t{{"target", "class", "note"},
          {{"h13", "A13, M1 base", "say \"hi\""}, {"h17s", "A17 Pro-class, the M5 part", ""}},
          {0, 10, 0}};
  auto table = [&](Printer &p) { print(p, t); };
  EXPECT_EQ(render(Form::Text, "", table), "target  class       note\n"
                                           "h13     A13, M1 b~  say \"hi\"\n"
                                           "h17s    A17 Pro-c~\n");
  EXPECT_EQ(render(Form::Csv, "", table), "target,class,note\n"
                                          "h13,\"A13, M1 base\",\"say \"\"hi\"\"\"\n"
                                          "h17s,\"A17 Pro-class, the M5 part\",\n");
  Doc d = printed_doc(table);
  ASSERT_EQ(d.items().size(), 2u);
  ASSERT_NE(d.items()[1].find("class"), nullptr);
  EXPECT_EQ(d.items()[1].find("class")->as_string(), "A17 Pro-class, the M5 part");
  Table typed{{"target", "latency_us"}, {}, {}};
  typed.add({"h13", {"unknown", Doc()}});
  typed.add({"h16", {"110.0", Doc::number(110)}});
  EXPECT_EQ(render(Form::Text, "", [&](Printer &p) { print(p, typed); }),
            "target  latency_us\nh13     unknown\nh16     110.0\n");
  Doc rows = printed_doc([&](Printer &p) { print(p, typed); });
  ASSERT_EQ(rows.items().size(), 2u);
  ASSERT_NE(rows.items()[0].find("latency_us"), nullptr);
  EXPECT_TRUE(rows.items()[0].find("latency_us")->is(Doc::Kind::Null));
  EXPECT_TRUE(rows.items()[1].find("latency_us")->is(Doc::Kind::Float));
}

// The printer renders each value one way for every document: hex as 0x... in text and a number in a
// document, a named value as its name in text and its name and raw value in a document; text words
// and numbers stay out of the document, data() out of the text; scopes nest.
TEST(Printer, OneDescriptionTwoForms) {
  auto doc = [](Printer &p) {
    p.text("state ");
    p.field("name", "image");
    p.text(" ");
    p.field("direction", Named{"input", 1});
    p.text(" at ");
    p.field("vmaddr", Hex{0x30004000, 8});
    p.data("bytes", 4096);
    p.text(", ");
    p.text_fixed(4.096, 1);
    p.text(" kB\n");
    List l(p, "dims");
    for (int v : {1, 3}) {
      p.text(" ");
      p.item(v);
    }
  };
  EXPECT_EQ(printed_text(doc), "state image input at 0x30004000, 4.1 kB\n 1 3");
  Doc d = printed_doc(doc);
  ASSERT_TRUE(d.find("vmaddr") && d.find("direction") && d.find("direction_value") && d.find("dims"));
  EXPECT_EQ(d.find("vmaddr")->as_int(), 0x30004000);
  EXPECT_TRUE(d.find("vmaddr")->hex);
  EXPECT_EQ(d.find("direction")->as_string(), "input");
  EXPECT_EQ(d.find("direction_value")->as_int(), 1);
  EXPECT_EQ(d.find("bytes")->as_int(), 4096);
  EXPECT_EQ(d.find("dims")->items().size(), 2u);
  EXPECT_EQ(anec::test::code_of([] { printed_doc([](Printer &p) { p.end(); }); }), "ANEC-INTERNAL");
  EXPECT_EQ(anec::test::code_of([] { printed_doc([](Printer &p) { p.begin_object("x"); }); }),
            "ANEC-INTERNAL");
}

namespace {
// The JSON form written as printed, and the tree's form written whole: the same bytes.
std::string streamed(const PrintFn &print, std::string_view schema = {}) {
  return render(Form::Json, schema, print);
}
std::string whole(const PrintFn &print, std::string_view schema = {}) {
  return schema.empty() ? json::write(printed_doc(print)) : json_document(schema, printed_doc(print));
}
} // namespace

// Every kind of member and scope: nested and empty objects and lists, named and hex values, floats
// that need their shortest form, NaN, strings with quotes, control characters, UTF-8 and bytes that
// are not UTF-8, a document value given whole, keyless objects in a list and in an object.
TEST(JsonPrinter, WritesWhatTheTreeWritesAsItIsPrinted) {
  Doc nested = Doc::table();
  nested.set("a", Doc::array());
  nested.set("b", Doc::number(0.1));
  auto print = [&](Printer &p) {
    p.field("name", "q\"uote\\ \x01\x1f\n\t é \xff end");
    p.field("direction", Named{"input", 1});
    p.field("vmaddr", Hex{0x30004000, 8});
    p.field("huge", Hex{0xffffffffffffffffull, 16});
    p.data("ratio", 1.0 / 3);
    p.data("whole", 2.0);
    p.data("nan", std::nan(""));
    p.data("big", uint64_t(18446744073709551615ull));
    p.data("flag", false);
    p.data("doc", nested);
    { Object empty(p, "empty"); }
    { List none(p, "none"); }
    {
      Object keyless(p);
      p.data("x", -1);
    }
    List rows(p, "rows");
    for (int i = 0; i < 3; ++i) {
      Object row(p);
      p.field("i", i);
      List inner(p, "inner");
      for (int k = 0; k < i; ++k)
        p.item(k);
    }
  };
  EXPECT_EQ(streamed(print), whole(print));
  EXPECT_EQ(streamed(print, "anec.check"), whole(print, "anec.check"));
  auto root_list = [](Printer &p) {
    List all(p);
    for (int i = 0; i < 2; ++i) {
      Object o(p);
      p.data("i", i);
    }
  };
  EXPECT_EQ(streamed(root_list), whole(root_list));
  auto root_object = [](Printer &p) {
    Object o(p);
    p.data("only", 1);
  };
  EXPECT_EQ(streamed(root_object, "anec.eval"), whole(root_object, "anec.eval"));
  EXPECT_EQ(streamed([](Printer &) {}, "anec.eval"), whole([](Printer &) {}, "anec.eval"));
  EXPECT_EQ(streamed([](Printer &) {}), "{}\n");
  auto same_key_in_nested_objects = [](Printer &p) {
    p.data("x", 1);
    {
      Object inner(p, "inner");
      p.data("x", 2);
      p.data("y", 3);
    }
    p.data("y", 4);
  };
  EXPECT_EQ(streamed(same_key_in_nested_objects), whole(same_key_in_nested_objects));
  // What a tree would silently replace or refuse, the stream refuses.
  for (const PrintFn &bad :
       std::vector<PrintFn>{[](Printer &p) {
                              p.data("a", 1);
                              p.data("a", 2);
                            },
                            [](Printer &p) {
                              p.data("a", 1);
                              { Object inner(p, "inner"); }
                              p.data("a", 2);
                            },
                            [](Printer &p) { p.item(1); },
                            [](Printer &p) {
                              List l(p, "l");
                              p.data("a", 1);
                            },
                            [](Printer &p) { p.end(); }, [](Printer &p) { p.begin_object("x"); }})
    EXPECT_EQ(anec::test::code_of([&] { streamed(bad); }), "ANEC-INTERNAL");
}

// Scopes nested past the depth whose indent is written in one piece (128 levels), and keys past the
// length written in one piece (256 bytes), are written as the tree writes them.
TEST(JsonPrinter, DeepScopesAndLongKeysAsTheTreeDoes) {
  auto print = [](Printer &p) {
    std::vector<std::unique_ptr<Object>> scopes;
    for (int depth = 0; depth < 150; ++depth) {
      scopes.push_back(std::make_unique<Object>(p, "level" + std::to_string(depth)));
      p.data(std::string(depth * 2, 'k'), depth);
    }
    while (!scopes.empty())
      scopes.pop_back();
    List items(p, "items");
    p.item(1);
  };
  EXPECT_EQ(streamed(print), whole(print));
}

// A string is written as it is unless a byte needs escaping: every byte value, at each place of
// strings of several lengths, in a value and in a key, is written as the tree writes it.
TEST(JsonPrinter, WritesEveryByteOfAStringAsTheTreeDoes) {
  for (size_t length : {1, 7, 8, 9, 16, 19})
    for (size_t at = 0; at < length; ++at) {
      auto print = [&](Printer &p) {
        List all(p, "strings");
        for (int byte = 0; byte < 256; ++byte) {
          std::string s(length, 'k');
          s[at] = char(byte);
          Object o(p);
          p.data("value", s);
          p.data(s + "#", byte); // the mark keeps the key apart from "value"
        }
      };
      EXPECT_EQ(streamed(print), whole(print)) << length << " " << at;
    }
}

// Numbers as the serializer writes them: whole numbers on both sides of the 15 digits written
// without its shortest-digit search, signed zeros, fractions, the extremes and what is not finite.
TEST(JsonPrinter, WritesEveryNumberAsTheTreeDoes) {
  std::vector<double> numbers = {0.0,
                                 -0.0,
                                 1.0,
                                 -1.0,
                                 2.0,
                                 10.0,
                                 524288.0,
                                 191146999808.0,
                                 999999999999999.0,
                                 -999999999999999.0,
                                 1e15,
                                 -1e15,
                                 1e15 + 1,
                                 9007199254740992.0,
                                 1e16,
                                 1e21,
                                 1e22,
                                 1e300,
                                 0.5,
                                 -0.5,
                                 1e-5,
                                 0.1,
                                 1.0 / 3,
                                 6.133208182573642,
                                 123456.5,
                                 5e-324,
                                 1.7976931348623157e308,
                                 std::nan(""),
                                 INFINITY,
                                 -INFINITY};
  for (int e = 0; e < 60; ++e)
    for (double v : {std::ldexp(1.0, e), std::ldexp(1.0, e) - 1, -std::ldexp(3.0, e), std::pow(10.0, e / 3)})
      numbers.push_back(v);
  auto print = [&](Printer &p) {
    List all(p, "numbers");
    for (double v : numbers)
      p.item(v);
  };
  EXPECT_EQ(streamed(print), whole(print));
}

// A list whose items are printed ahead into a spool and spliced where the list belongs gives the
// bytes of the list printed in place, in the text and JSON forms: empty, one item, nested objects,
// a list two scopes down. Spliced at another depth, it is refused.
TEST(ListSpool, SplicesTheBytesTheListPrintedInPlaceGives) {
  auto rows = [](Printer &p, int n) {
    for (int i = 0; i < n; ++i) {
      Object row(p);
      p.text("row ");
      p.field("i", i);
      List inner(p, "inner");
      for (int k = 0; k < i; ++k)
        p.item(k);
      p.text("\n");
    }
  };
  for (Form form : {Form::Text, Form::Json})
    for (int n : {0, 1, 3}) {
      auto in_place = [&](Printer &p) {
        p.field("total", n);
        Object outer(p, "outer");
        List list(p, "rows");
        rows(p, n);
      };
      ListSpool spool(form, 3);
      rows(spool.items(), n);
      auto spliced = [&](Printer &p) {
        p.field("total", n);
        Object outer(p, "outer");
        List list(p, "rows");
        spool.splice_into(p);
      };
      EXPECT_EQ(render(form, "anec.check", spliced), render(form, "anec.check", in_place)) << n;
    }
  ListSpool shallow(Form::Json, 2);
  shallow.items().item(1);
  EXPECT_EQ(anec::test::code_of([&] {
              render(Form::Json, "", [&](Printer &p) {
                Object outer(p, "outer");
                List list(p, "rows");
                shallow.splice_into(p);
              });
            }),
            "ANEC-INTERNAL");
  EXPECT_EQ(anec::test::code_of([] { ListSpool(Form::Csv, 2); }), "ANEC-INTERNAL");
}

// A spool spliced into a printer writing a file is sent by the kernel (sendfile), after what the
// printer buffered and before what it prints next; into a file opened to append, which the kernel
// refuses, it is copied through a buffer. Both give the bytes of the list printed in place.
TEST(ListSpool, SplicedIntoAFileGivesTheBytesPrintedInPlace) {
  auto rows = [](Printer &p, int n) {
    for (int i = 0; i < n; ++i) {
      Object row(p);
      p.field("i", i);
      p.data("name", "o" + std::to_string(i));
    }
  };
  auto listed = [](int n, const std::function<void(Printer &)> &items) {
    return [n, &items](Printer &p) {
      p.field("total", n);
      List list(p, "rows");
      items(p);
      p.item("after");
    };
  };
  const fs::path path = fs::temp_directory_path() / ("anec-spool-" + std::to_string(::getpid()) + ".json");
  for (const char *mode : {"w", "a"})
    for (int n : {0, 1, 20000}) {
      ListSpool spool(Form::Json, 2);
      rows(spool.items(), n);
      fs::remove(path);
      std::FILE *f = std::fopen(path.c_str(), mode);
      ASSERT_NE(f, nullptr);
      {
        TextOut out(f);
        render(Form::Json, "anec.check", listed(n, [&](Printer &p) { spool.splice_into(p); }), out);
      }
      std::fclose(f);
      EXPECT_EQ(read_text_file(path),
                render(Form::Json, "anec.check", listed(n, [&](Printer &p) { rows(p, n); })))
          << mode << " " << n;
    }
  fs::remove(path);
}

// Items printed behind (on a thread, support/print_behind.hpp) give the bytes of items printed in
// place: every kind of value, in the text and JSON forms, a few rows (replayed on the caller's
// thread) and many (on the thread, in many chunks). A misuse the replay meets is thrown at the
// splice; a spool dropped unspliced leaves nothing waiting.
TEST(ListSpool, ItemsPrintedBehindGiveTheBytesOfItemsPrintedInPlace) {
  const Doc doc = Doc::array().push(Doc::integer(1)).push(Doc::string("two"));
  auto rows = [&](Printer &p, int n) {
    for (int i = 0; i < n; ++i) {
      Object row(p);
      p.text("row ");
      p.field("i", i, 8);
      p.field("name", "o" + std::to_string(i) + (i % 7 ? "" : " \"quoted\"\n"));
      p.data("negative", -i);
      p.field("big", uint64_t(1) << 63);
      p.data("ratio", i / 3.0);
      p.field("on", i % 2 == 0);
      p.field("hex", Hex{uint64_t(i), 4});
      p.field("kind", Named{"conv", i});
      p.data("doc", doc);
      p.text_fixed(i / 7.0, i % 4);
      List inner(p, "inner");
      for (int k = 0; k < i % 4; ++k)
        p.item(k);
      p.text("\n");
    }
  };
  auto listed = [](int n, const std::function<void(Printer &)> &items) {
    return [n, &items](Printer &p) {
      p.field("total", n);
      List list(p, "rows");
      items(p);
    };
  };
  for (Form form : {Form::Text, Form::Json})
    for (int n : {0, 3, 20000}) {
      PrintBehind behind;
      ListSpool spool(form, 2, &behind);
      rows(spool.items(), n);
      std::string spliced = render(form, "anec.check", listed(n, [&](Printer &p) { spool.splice_into(p); }));
      behind.stop();
      EXPECT_EQ(spliced, render(form, "anec.check", listed(n, [&](Printer &p) { rows(p, n); })))
          << n << (form == Form::Json ? " json" : " text");
    }
  for (int n : {3, 20000}) {
    PrintBehind behind;
    ListSpool spool(Form::Json, 2, &behind);
    rows(spool.items(), n);
    Object twice(spool.items());
    spool.items().data("k", 1);
    spool.items().data("k", 2);
    EXPECT_EQ(anec::test::code_of(
                  [&] { render(Form::Json, "", listed(n, [&](Printer &p) { spool.splice_into(p); })); }),
              "ANEC-INTERNAL")
        << n;
    behind.stop();
  }
  PrintBehind behind;
  ListSpool dropped(Form::Json, 2, &behind);
  rows(dropped.items(), 20000);
  behind.stop();
}

TEST(ListSpool, SplicedAfterItemsPrintedInPlaceFollowsThem) {
  auto rows = [](Printer &p, int from, int to) {
    for (int i = from; i < to; ++i) {
      Object row(p);
      p.text("row ");
      p.field("i", i);
      p.text("\n");
    }
  };
  for (Form form : {Form::Text, Form::Json})
    for (int here : {0, 1, 3})
      for (int spooled : {0, 1, 3}) {
        ListSpool spool(form, 2);
        rows(spool.items(), here, here + spooled);
        auto printed = [&](bool spliced) {
          return render(form, "anec.place", [&](Printer &p) {
            List list(p, "rows");
            rows(p, 0, here);
            spliced ? spool.splice_into(p) : rows(p, here, here + spooled);
          });
        };
        EXPECT_EQ(printed(true), printed(false)) << here << " " << spooled;
      }
}

namespace {
struct LaterRow {
  std::string_view name;
  int64_t i = 0;
  double ratio = 0;
  bool on = false;
  auto tie() { return std::tie(name, i, ratio, on); }
};
void print_later_row(Printer &p, const LaterRow &r) {
  Object row(p);
  p.text("row ");
  p.field("name", r.name);
  p.field("i", r.i);
  p.data("ratio", r.ratio);
  p.field("on", r.on);
  p.text("\n");
}
} // namespace

TEST(PrintLater, RowsPrintedBehindGiveTheBytesOfRowsPrintedInPlace) {
  // Every third row is printed call by call, between rows handed over whole; each row's name is a
  // string overwritten once the row is given, so a row that kept a view of it would show the change.
  auto rows = [](Printer &p, int n, bool later) {
    std::string name;
    for (int i = 0; i < n; ++i) {
      name = "o" + std::to_string(i) + (i % 5 ? "" : " \"quoted\"");
      LaterRow row{name, -i, i / 3.0, i % 2 == 0};
      later &&i % 3 ? print_later<LaterRow, print_later_row>(p, row) : print_later_row(p, row);
      name.assign(name.size(), 'x');
    }
  };
  for (Form form : {Form::Text, Form::Json})
    for (int n : {0, 3, 20000}) {
      PrintBehind behind;
      ListSpool spool(form, 2, &behind);
      rows(spool.items(), n, true);
      auto listed = [&](bool spliced) {
        return render(form, "anec.check", [&](Printer &p) {
          List list(p, "rows");
          spliced ? spool.splice_into(p) : rows(p, n, false);
        });
      };
      std::string spliced = listed(true);
      behind.stop();
      EXPECT_EQ(spliced, listed(false)) << n << (form == Form::Json ? " json" : " text");
    }
}
