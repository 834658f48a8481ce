// The layout engine: the compiled-in databases load strictly, each struct reads, writes and prints
// through one description, and a malformed description is refused with ANEC-LAYOUT-001 and where.
#include "anec/layout/layout.hpp"
#include "anec/support/error.hpp"
#include "anec/support/toml.hpp"

#include <gtest/gtest.h>

using namespace anec;
using namespace anec::layout;

namespace {

Database one(const std::string &text) {
  return Database::from_docs({{toml::parse(text, "t.toml"), "t.toml"}});
}

std::string refusal(const std::string &text) {
  try {
    one(text);
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-LAYOUT-001") << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return "";
}

const std::string kHead = "schema = \"anec-layout\"\nversion = \"1\"\nsource = \"test\"\n";

std::string with_struct(const std::string &fields, const std::string &extra = "") {
  return kHead +
         "[[struct]]\nname = \"s\"\nbytes = 16\nmeaning = \"m\"\nsource = \"x\"\nconfidence = \"decoded\"\n" +
         extra + "field = [\n" + fields + "]\n";
}

} // namespace

TEST(Layout, BuiltinDatabasesLoadAndEveryStructIsConsistent) {
  const Database &db = Database::builtin();
  ASSERT_FALSE(db.structs().empty());
  for (const Struct &s : db.structs()) {
    EXPECT_FALSE(s.fields.empty()) << s.name;
    for (const Field &f : s.fields) {
      EXPECT_LE(f.offset + f.bytes(), s.bytes) << s.name << "." << f.name;
      EXPECT_FALSE(f.meaning.empty()) << s.name << "." << f.name;
    }
    // A zero-filled struct reads back what a fresh Writer put there (magics and required values).
    Writer w(s);
    View v(s, w.bytes(), 0, "T");
    for (const Field &f : s.fields)
      if (f.value) {
        EXPECT_EQ(v.raw(f), *f.value) << s.name << "." << f.name;
      }
  }
}

TEST(Layout, ReadWriteRoundTripWithArraysBitsAndModifiers) {
  Database db = one(with_struct(R"x(
  { name = "magic", offset = 0, type = "u32", role = "magic", value = 0xbeefface, meaning = "m" },
  { name = "words", offset = 4, type = "u16", modifier = "minus(1)", meaning = "count - 1" },
  { name = "lo", offset = 6, type = "u16", bits = "3:0", meaning = "low nibble" },
  { name = "hi", offset = 6, type = "u16", bits = "15:12", enum = "e", meaning = "high nibble" },
  { name = "grid", offset = 8, type = "u8", count = [2, 3], meaning = "2 x 3" },
  { name = "page", offset = 14, type = "u16", modifier = "shl(6)", meaning = "64-byte units" },
)x") + "[[enum]]\nname = \"e\"\nsource = \"x\"\nvalues = [{ name = \"A\", value = 10 }]\n");
  const Struct &s = db.get("s");
  Writer w(s);
  w.set("words", 0x10).set("lo", 5).set("hi", 10).set("grid", 7, {1, 2}).set("page", 0x1c0);
  View v(s, w.bytes(), 0, "T");
  EXPECT_EQ(v.get("magic"), 0xbeefface);
  EXPECT_EQ(v.raw(s.at("words")), 0xf);
  EXPECT_EQ(v.get("words"), 0x10);
  EXPECT_EQ(v.get("lo"), 5);
  EXPECT_EQ(v.get("hi"), 10);
  EXPECT_EQ(v.get("grid", {1, 2}), 7);
  EXPECT_EQ(v.get("page"), 0x1c0);
  EXPECT_EQ(v.offset_of("grid", {1, 2}), 8 + 5);
  EXPECT_EQ(s.field_at(13), "grid[1][2]");
  EXPECT_EQ(s.field_at(6), "lo");
  std::string text = printed_text([&](Printer &p) { print(p, v, db); });
  EXPECT_NE(text.find("hi = A (0xa)"), std::string::npos) << text;
  EXPECT_NE(text.find("page = 0x1c0 [stored 0x7, shl(6)]"), std::string::npos) << text;
  EXPECT_NE(text.find("grid[1][2] = 0x7"), std::string::npos) << text;
  // Values that the field or its encoding cannot carry are refused, not truncated.
  for (auto bad :
       {std::pair<const char *, uint64_t>{"page", 0x1c1}, {"lo", 16}, {"words", 0}, {"grid", 256}}) {
    try {
      if (std::string(bad.first) == "grid")
        w.set("grid", bad.second, {0, 0});
      else
        w.set(bad.first, bad.second);
      ADD_FAILURE() << bad.first << " took " << bad.second;
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), "ANEC-LAYOUT-003");
    }
  }
  try {
    v.get("grid", {2, 0});
    ADD_FAILURE() << "an element past the extent was read";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-LAYOUT-002"); // the code and the database disagree, not the input
  }
  EXPECT_THROW(View(s, std::span(w.bytes()).first(15), 0, "ANEC-X-001"), Error);
}

// A big-endian struct (a universal binary's header) reads and writes most significant byte first.
TEST(Layout, BigEndianStructs) {
  const Struct &fat = Database::builtin().get("fat.header");
  EXPECT_TRUE(fat.big_endian);
  Writer w(fat);
  w.set("nfat_arch", 2);
  EXPECT_EQ(w.bytes(), (std::vector<uint8_t>{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}));
  EXPECT_EQ(View(fat, w.bytes(), 0, "T").get("nfat_arch"), 2u);
}

TEST(Layout, VariantsAreChosenByTheirConditions) {
  Database db = one(kHead + R"x(
[[struct]]
name = "cmd"
bytes = 8
meaning = "head"
source = "x"
confidence = "decoded"
field = [{ name = "cmd", offset = 0, type = "u32", meaning = "id" }, { name = "size", offset = 4, type = "u32", role = "size", meaning = "bytes" }]
[[struct]]
name = "cmd.big"
bytes = 12
meaning = "a big one"
source = "x"
confidence = "inferred"
variant_of = "cmd"
when = [{ field = "cmd", equals = 2 }, { field = "size", at_least = 12 }]
field = [{ name = "cmd", offset = 0, type = "u32", meaning = "id" }, { name = "size", offset = 4, type = "u32", meaning = "bytes" },
         { name = "x", offset = 8, type = "u32", meaning = "extra" }]
)x");
  std::vector<uint8_t> b = {2, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_NE(db.variant("cmd", b, 0), nullptr);
  EXPECT_EQ(db.variant("cmd", b, 0)->name, "cmd.big");
  b[4] = 8;
  EXPECT_EQ(db.variant("cmd", b, 0), nullptr);
  EXPECT_EQ(db.variant("cmd", std::span(b).first(8), 0), nullptr); // too short for the variant
}

TEST(Layout, MalformedDescriptionsAreRefusedWithWhere) {
  const std::string f = "{ name = \"a\", offset = 0, type = \"u32\", meaning = \"m\" },\n";
  EXPECT_NE(refusal(with_struct(f + f)).find("duplicate field 'a'"), std::string::npos);
  EXPECT_NE(refusal(with_struct("{ name = \"a\", offset = 14, type = \"u32\", meaning = \"m\" },\n"))
                .find("runs past"),
            std::string::npos);
  EXPECT_NE(refusal(with_struct(f + "{ name = \"b\", offset = 2, type = \"u16\", meaning = \"m\" },\n"))
                .find("overlaps"),
            std::string::npos);
  EXPECT_NE(refusal(with_struct("{ name = \"a\", offset = 0, type = \"u24\", meaning = \"m\" },\n"))
                .find("unknown type"),
            std::string::npos);
  EXPECT_NE(refusal(with_struct(
                        "{ name = \"a\", offset = 0, type = \"u32\", role = \"sise\", meaning = \"m\" },\n"))
                .find("unknown role"),
            std::string::npos);
  EXPECT_NE(
      refusal(with_struct(
                  "{ name = \"a\", offset = 0, type = \"u32\", modifier = \"shr(2)\", meaning = \"m\" },\n"))
          .find("modifier"),
      std::string::npos);
  EXPECT_NE(refusal(with_struct(
                        "{ name = \"a\", offset = 0, type = \"u32\", bits = \"32:0\", meaning = \"m\" },\n"))
                .find("bits"),
            std::string::npos);
  EXPECT_NE(refusal(with_struct(
                        "{ name = \"a\", offset = 0, type = \"u32\", enum = \"nope\", meaning = \"m\" },\n"))
                .find("unknown enum"),
            std::string::npos);
  EXPECT_NE(refusal(with_struct(
                        "{ name = \"a\", offset = 0, type = \"u32\", role = \"magic\", meaning = \"m\" },\n"))
                .find("magic"),
            std::string::npos);
  EXPECT_NE(refusal(with_struct(f, "confidence_note = 1\n")).find("unknown key 'confidence_note'"),
            std::string::npos);
  EXPECT_NE(refusal(with_struct(f).replace(with_struct(f).find("\"decoded\""), 9, "\"guessed\""))
                .find("unknown confidence"),
            std::string::npos);
  EXPECT_NE(refusal(with_struct(f, "variant_of = \"t\"\nwhen = [{ field = \"a\", equals = 1 }]\n"))
                .find("unknown struct 't'"),
            std::string::npos);
  // Where: file, line and column of the offending entry.
  EXPECT_NE(refusal(with_struct(f + f)).find("t.toml:"), std::string::npos);
}
