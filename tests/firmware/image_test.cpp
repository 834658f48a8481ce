// Firmware tables recovered from the stand-in built from tests/fixtures/firmware_standin.toml with
// clang and ld64.lld (bare and inside an IM4P of type anef) equal that source; IM4P damage has
// reason codes.
#include "anec/firmware/commands.hpp"
#include "anec/firmware/image.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"
#include <filesystem>
#include <gtest/gtest.h>

using namespace anec;
using namespace anec::fw;
using anec::test::code_of;
namespace fs = std::filesystem;

namespace {
const fs::path kStandin = fs::path(ANEC_TEST_FIXTURE_DIR) / "fw_standin.macho";

void expect_source_tables(const FirmwareTables &t) {
  CommandTable commands = CommandTable::load(fs::path(ANEC_TEST_TABLES_DIR) / "schema" / "firmware" / "commands.toml");
  ASSERT_EQ(t.logger_names.size(), commands.commands().size());
  for (size_t i = 0; i < t.logger_names.size(); ++i) EXPECT_EQ(t.logger_names[i], commands.commands()[i].name) << i;
  Doc source = toml::parse_file(fs::path(ANEC_TEST_SOURCE_DIR) / "fixtures" / "firmware_standin.toml");
  const auto &ids = source.find("wire_id")->items();
  ASSERT_EQ(t.wire_ids.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(t.wire_ids[i].first, ids[i].find("name")->as_string());
    EXPECT_EQ(t.wire_ids[i].second, uint64_t(ids[i].find("id")->as_int()));
  }
  const auto &blocks = source.find("block")->items();
  ASSERT_EQ(t.blocks.size(), blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    SCOPED_TRACE(t.blocks[i].name);
    EXPECT_EQ(t.blocks[i].name, blocks[i].find("name")->as_string());
    EXPECT_EQ(t.blocks[i].base, uint64_t(blocks[i].find("base")->as_int()));
    const auto &recs = blocks[i].find("records")->items();
    ASSERT_EQ(t.blocks[i].records.size(), recs.size());
    for (size_t r = 0; r < recs.size(); ++r) {
      EXPECT_EQ(t.blocks[i].records[r].offset, uint64_t(recs[r].items()[0].as_int()));
      EXPECT_EQ(t.blocks[i].records[r].mask, uint64_t(recs[r].items()[1].as_int()));
      EXPECT_EQ(t.blocks[i].records[r].value, uint64_t(recs[r].items()[2].as_int()));
    }
  }
}
} // namespace

TEST(FirmwareTables, RecoveredFromTheStandInEqualTheSource) {
  auto macho = read_file(kStandin);
  FirmwareTables bare = extract_tables(macho, kStandin.string());
  EXPECT_TRUE(bare.im4p_type.empty());
  expect_source_tables(bare);
  auto wrapped = write_im4p({"anef", "ANE firmware stand-in", macho});
  EXPECT_TRUE(looks_like_im4p(wrapped));
  FirmwareTables inside = extract_tables(wrapped, "standin.im4p");
  EXPECT_EQ(inside.im4p_type, "anef");
  expect_source_tables(inside);
  // The TOML form reads back to the same tables.
  Doc d = toml::parse(toml::write(tables_doc(bare)), "tables.toml");
  ASSERT_TRUE(d.find("logger_names") && d.find("block"));
  EXPECT_EQ(d.find("logger_names")->items().size(), 93u);
  EXPECT_EQ(d.find("block")->items().size(), bare.blocks.size());
}

TEST(FirmwareTables, Im4pRoundTripAndDamage) {
  Im4p x{"anef", "d", {1, 2, 3}};
  auto bytes = write_im4p(x);
  Im4p back = read_im4p(bytes);
  EXPECT_EQ(back.type, "anef");
  EXPECT_EQ(back.payload, x.payload);
  std::vector<uint8_t> big(300, 7); // long-form lengths
  EXPECT_EQ(read_im4p(write_im4p({"anef", "", big})).payload, big);
  EXPECT_EQ(code_of([&] { extract_tables(write_im4p({"rkrn", "", read_file(kStandin)}), "x"); }), "ANEC-IM4P-003");
  auto cut = bytes;
  cut.pop_back();
  EXPECT_EQ(code_of([&] { read_im4p(cut); }), "ANEC-IM4P-002");
  auto name = bytes;
  name[4] = 'X'; // "IM4P" -> "XM4P"
  EXPECT_EQ(code_of([&] { read_im4p(name); }), "ANEC-IM4P-001");
  EXPECT_EQ(code_of([&] { read_im4p(std::vector<uint8_t>{0xcf, 0xfa}); }), "ANEC-IM4P-001");
  auto nothing = read_file(fs::path(ANEC_TEST_FIXTURE_DIR) / "libhal_O2.dylib");
  EXPECT_EQ(code_of([&] { extract_tables(nothing, "libhal_O2.dylib"); }), "ANEC-FWX-001");
}
