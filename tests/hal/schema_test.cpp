#include "anec/hal/schema.hpp"
#include "anec/support/error.hpp"
#include "anec/support/toml.hpp"
#include "paths.hpp"

#include <gtest/gtest.h>
#include <set>

using namespace anec;
using namespace anec::hal;

namespace {

Schema load() { return Schema::load(test::tables() / "schema" / "hal.toml"); }

std::string code_of(const std::string &text) {
  try {
    Schema::from_doc(toml::parse(text, "t.toml"), "t.toml");
  } catch (const Error &e) {
    return e.code() + " " + e.what();
  }
  return "no error";
}

const char *kHead = "schema = \"anec-hal\"\nversion = \"1.0\"\nblob_size = 0x20\ncapability_region = [0x10, 0x18]\n"
                    "cost_model_region = [0x18, 0x20]\n";
std::string field(const std::string &name, const std::string &extra) {
  return "[[field]]\nname = \"" + name + "\"\nsection = \"limits\"\nunit = \"\"\nmeaning = \"m\"\nsource = \"s\"\n"
         "confidence = \"decoded\"\n" + extra + "\n";
}

} // namespace

// Lint over the real database: every byte of the blob belongs to exactly one field, names are
// unique, and every field names its meaning, source and confidence.
TEST(SchemaLint, FieldsTileTheBlobExactly) {
  Schema s = load();
  EXPECT_EQ(s.blob_size(), 0x938u);
  uint32_t at = 0;
  std::set<std::string> names;
  for (const Field &f : s.fields()) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate " << f.name;
    EXPECT_FALSE(f.meaning.empty()) << f.name;
    EXPECT_FALSE(f.source.empty()) << f.name;
    if (!f.in_blob()) continue;
    EXPECT_EQ(*f.offset, at) << f.name << " leaves a gap or overlaps";
    at = *f.offset + f.width;
  }
  EXPECT_EQ(at, s.blob_size());
}

TEST(SchemaLint, NamedOffsetsFromTheGuide) {
  Schema s = load();
  // guide ch.24 tables 24.1 and 24.3
  const std::pair<const char *, uint32_t> expect[] = {
      {"num_nes", 0x238},       {"max_tensor_width", 0x138}, {"max_tensor_depth", 0x158},
      {"max_operand_bytes", 0x1b8}, {"dram_alignment", 0x1c0}, {"l2_bank_align", 0x1c8},
      {"texture_engine", 0x81d}, {"fp8_e4m3", 0x52d},        {"kmem_streaming_master", 0x48f},
      {"cost_policy_name", 0x580}, {"interchange_format_count", 0x668}, {"max_large_conv_kernel_dim_z", 0x70}};
  for (auto &[name, off] : expect) {
    const Field *f = s.find(name);
    ASSERT_NE(f, nullptr) << name;
    ASSERT_TRUE(f->in_blob()) << name;
    EXPECT_EQ(*f->offset, off) << name;
  }
}

TEST(SchemaLint, CapabilityBytesAreBytesAndGapsAreUnk) {
  Schema s = load();
  size_t unk = 0;
  for (const Field &f : s.fields()) {
    if (f.section == "capability" && f.unit == "flag") {
      EXPECT_EQ(f.width, 1u) << f.name;
    }
    if (f.synthesized) {
      ++unk;
      ASSERT_TRUE(f.offset) << f.name;
      EXPECT_EQ(f.name, "unk_" + hex(*f.offset));
    }
  }
  EXPECT_GT(unk, 0u);
}

TEST(SchemaLoader, AcceptsAMinimalSchemaAndFillsGaps) {
  Schema s = Schema::from_doc(toml::parse(std::string(kHead) + field("a", "type = \"u32\"\noffset = 0x4"), "t"), "t");
  ASSERT_EQ(s.fields().size(), 3u);
  EXPECT_EQ(s.fields()[0].name, "unk_0x0");
  EXPECT_EQ(s.fields()[1].name, "a");
  EXPECT_EQ(s.fields()[2].name, "unk_0x8");
  EXPECT_EQ(s.fields()[2].width, 0x18u);
}

TEST(SchemaLoader, RejectsEachBrokenRule) {
  std::string h = kHead;
  struct Case {
    std::string text, want;
  } cases[] = {
      {h + field("a", "type = \"u8\"\noffset = 1\ncolour = 3"), "unknown key 'colour'"},
      {h + field("a", "type = \"u8\"\noffset = 1") + field("a", "type = \"u8\"\noffset = 2"), "duplicate field name 'a'"},
      {h + field("a", "type = \"u32\"\noffset = 0") + field("b", "type = \"u8\"\noffset = 2"), "overlaps 'a'"},
      {h + field("a", "type = \"u64\"\noffset = 0x1c"), "past the blob end"},
      {h + field("a", "type = \"u128\"\noffset = 0"), "unknown type 'u128'"},
      {h + field("a", "type = \"u8\"") , "needs an offset"},
      {h + field("a", "type = \"int\"\noffset = 3"), "outside the blob"},
      {h + field("unk_0x1", "type = \"u8\"\noffset = 1"), "reserved"},
      {h + field("a", "type = \"u8\"\noffset = 1\nfloor = 9"), "floor must be"},
      {h, "no [[field]]"},
  };
  for (auto &c : cases) {
    std::string got = code_of(c.text);
    EXPECT_NE(got.find("ANEC-SCHEMA-001"), std::string::npos) << got;
    EXPECT_NE(got.find(c.want), std::string::npos) << "want '" << c.want << "' got: " << got;
  }
  std::string bad_conf = h + field("a", "type = \"u8\"\noffset = 1");
  bad_conf.replace(bad_conf.find("\"decoded\""), 9, "\"sure\"");
  EXPECT_NE(code_of(bad_conf).find("unknown confidence 'sure'"), std::string::npos);
}

TEST(SchemaLoader, ErrorsCarryLineAndColumn) {
  std::string got = code_of(std::string(kHead) + field("a", "type = \"u8\"\noffset = 1\ncolour = 3"));
  EXPECT_NE(got.find("t.toml:"), std::string::npos) << got;
}
