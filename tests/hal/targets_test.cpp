#include "anec/hal/codec.hpp"
#include "anec/hal/registry.hpp"
#include "anec/hal/target_io.hpp"
#include "anec/hal/validate.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"
#include "fixture.hpp"

#include "../errors.hpp"
#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace anec;
using namespace anec::hal;
using anec::test::code_of;
using test::Tables;
namespace fs = std::filesystem;

namespace {
const Target &T(const char *name) { return Tables::get().registry.get(name); }

std::vector<std::string> codes(const std::vector<Finding> &fs) {
  std::vector<std::string> out;
  for (auto &f : fs) out.push_back(f.code + " " + f.object + "." + f.field);
  return out;
}
bool has(const std::vector<Finding> &fs, const std::string &code, const std::string &field) {
  for (auto &f : fs)
    if (f.code == code && f.field == field) return true;
  return false;
}
} // namespace

// The checked-in tables are what the code generates from tables/reference (the same path as
// `anec-hal generate`): edit the reference, not the output.
TEST(Targets, CheckedInTablesMatchARegeneration) {
  const auto &t = Tables::get();
  ASSERT_EQ(t.reference.size(), 28u);
  for (const Target &r : t.reference) {
    SCOPED_TRACE(r.name);
    Target g = decode(t.schema, encode(t.schema, r), r.name, &r, {"x", Confidence::Decoded});
    EXPECT_EQ(to_toml(t.schema, g), read_text_file(test::tables() / "targets" / (r.name + ".toml")));
  }
}

TEST(Targets, AnchorsMatchTheGuide) {
  EXPECT_EQ(T("h13").uint("num_nes"), 4u);
  EXPECT_EQ(T("h13").uint("max_tensor_width"), 16384u);
  EXPECT_EQ(T("h13").uint("max_kernel_width_small_fp16"), 13u);
  EXPECT_EQ(T("h13").uint("texture_engine"), 0u);
  EXPECT_EQ(T("h13").text("cost_policy_name"), "Simple");
  EXPECT_EQ(T("h14").uint("texture_engine"), 1u);
  EXPECT_EQ(T("h14").uint("instruction_alignment"), 16u);
  EXPECT_EQ(T("h15").uint("l2_resident_threshold"), 32768u);
  EXPECT_EQ(T("h15").uint("reduction_transpose_extent"), 384u);
  EXPECT_EQ(T("h16").uint("max_tensor_width"), 65536u);
  EXPECT_EQ(T("h16").uint("interchange_format_count"), 14u);
  EXPECT_EQ(T("h17s").uint("num_nes"), 16u);
  EXPECT_EQ(T("h17d").uint("num_nes"), 64u);
  EXPECT_EQ(T("h18").uint("fp8_e4m3"), 1u);
  EXPECT_EQ(T("h17s").uint("fp8_e4m3"), 0u);
  EXPECT_EQ(T("m11").uint("num_nes"), 1u);
  EXPECT_EQ(T("m11").uint("max_kernel_width_small_fp16"), 15u);
  EXPECT_EQ(T("m9").uint("ne_perf_cycle_divisor"), 16u);
  EXPECT_EQ(T("h11").uint("ne_perf_cycle_divisor"), 32u);
  for (const char *u : {"u1", "u2", "u3"}) {
    EXPECT_EQ(T(u).uint("max_tensor_depth"), 1u);
    EXPECT_EQ(T(u).uint("max_kernel_width_small_fp16"), 1023u);
    ASSERT_NE(T(u).find("max_tensor_width"), nullptr);
    EXPECT_EQ(T(u).find("max_tensor_width")->provenance.confidence, Confidence::Placeholder);
  }
  EXPECT_EQ(T("h13").list("interchange_formats").size(), 3u);
}

TEST(Targets, ProvenanceSaysHowEachValueIsKnown) {
  ASSERT_NE(T("h13").find("peak_tflops"), nullptr);
  EXPECT_EQ(T("h13").find("peak_tflops")->provenance.confidence, Confidence::Measured);
  ASSERT_NE(T("h17s").find("bandwidth_gbps"), nullptr);
  EXPECT_EQ(T("h17s").find("bandwidth_gbps")->provenance.confidence, Confidence::Measured);
  ASSERT_NE(T("h14").find("peak_tflops"), nullptr);
  EXPECT_EQ(T("h14").find("peak_tflops")->provenance.confidence, Confidence::Predicted);
  // A value measured on the M1 is only inferred on its tier siblings.
  ASSERT_NE(T("h13").find("max_tensor_channels"), nullptr);
  EXPECT_EQ(T("h13").find("max_tensor_channels")->provenance.confidence, Confidence::Measured);
  ASSERT_NE(T("h13g").find("max_tensor_channels"), nullptr);
  EXPECT_EQ(T("h13g").find("max_tensor_channels")->provenance.confidence, Confidence::Decoded);
  ASSERT_NE(T("h13g").find("argminmax_max_axis"), nullptr);
  EXPECT_EQ(T("h13g").find("argminmax_max_axis")->provenance.confidence, Confidence::Inferred);
  // Line-wide facts stay decoded on every tier; tier facts carried into a later tier are inferred.
  ASSERT_NE(T("h18").find("accumulators_per_core"), nullptr);
  EXPECT_EQ(T("h18").find("accumulators_per_core")->provenance.confidence, Confidence::Decoded);
  ASSERT_NE(T("h16").find("kmem_dense_cap"), nullptr);
  EXPECT_EQ(T("h16").find("kmem_dense_cap")->provenance.confidence, Confidence::Inferred);
  // A value nobody published is a placeholder, never silently made up.
  ASSERT_NE(T("h13").find("conv_stride_unicast_cin_limit"), nullptr);
  EXPECT_EQ(T("h13").find("conv_stride_unicast_cin_limit")->provenance.confidence, Confidence::Placeholder);
}

// Guide ch.18's derivation without the core count (num_nes is the per-die field, ch.34, and
// measured rates do not follow it): peak by eff x clock from the anchor, its bandwidth, the floor by
// clock.
TEST(Targets, CostParametersDeriveFromTheAnchors) {
  EXPECT_DOUBLE_EQ(T("h13g").real("bandwidth_gbps"), 9.0);
  EXPECT_DOUBLE_EQ(T("h13g").real("peak_tflops"), 3.25);
  EXPECT_DOUBLE_EQ(T("h17d").real("peak_tflops"), 8.9);
  EXPECT_DOUBLE_EQ(T("h17d").real("dispatch_floor_ms"), 0.11);
  size_t pairs = 0;
  for (auto &a : Tables::get().registry.targets())
    for (auto &b : Tables::get().registry.targets()) {
      bool same_clock = a.text("tier") == b.text("tier") &&
                        a.uint("clock_max_mhz") == b.uint("clock_max_mhz") &&
                        a.real("efficiency_at_clock_max") == b.real("efficiency_at_clock_max");
      if (!same_clock || a.uint("num_nes") == b.uint("num_nes"))
        continue;
      ++pairs;
      EXPECT_DOUBLE_EQ(a.real("peak_tflops"), b.real("peak_tflops")) << a.name << " vs " << b.name;
      EXPECT_DOUBLE_EQ(a.real("bandwidth_gbps"), b.real("bandwidth_gbps")) << a.name << " vs " << b.name;
    }
  EXPECT_GT(pairs, 10u);
}

TEST(Targets, NamesAreCaseInsensitiveAndAcceptAliases) {
  const auto &r = Tables::get().registry;
  EXPECT_EQ(r.get("M1").name, "h13");
  EXPECT_EQ(r.get("m5").name, "h17");
  EXPECT_EQ(r.get("M5 Pro").name, "h17s");
  EXPECT_EQ(r.get("m5_max").name, "h17s");
  EXPECT_EQ(r.get("H17S").name, "h17s");
  try {
    r.get("h13x");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-HAL-006");
    EXPECT_NE(std::string(e.what()).find("closest: h13"), std::string::npos) << e.what();
  }
  // A 64 MB name is quoted as an excerpt, with no edit distance to compute (it took 19 s and 400 MB)
  try {
    r.get(std::string(64 << 20, 'h'));
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-HAL-006");
    EXPECT_LT(std::string(e.what()).size(), 200u) << std::string(e.what()).substr(0, 300);
  }
}

TEST(Validate, AllTablesAreClean) {
  const auto &t = Tables::get();
  for (auto &tg : t.registry.targets()) EXPECT_TRUE(validate_target(t.schema, t.lineup, tg).empty()) << tg.name;
  EXPECT_TRUE(validate_line(t.schema, t.registry.targets()).empty());
}

TEST(Validate, EachRuleFiresOnABrokenTarget) {
  const auto &t = Tables::get();
  auto check = [&](const char *name, const char *field, Value v) {
    Target x = T(name);
    x.values[field].value = std::move(v);
    return validate_target(t.schema, t.lineup, x);
  };
  EXPECT_TRUE(has(check("h13g", "num_nes", uint64_t{4}), "ANEC-HAL-102", "num_nes"));
  EXPECT_TRUE(has(check("h13", "num_nes", uint64_t{6}), "ANEC-HAL-109", "num_nes"));
  EXPECT_TRUE(has(check("h13", "family_index", uint64_t{3}), "ANEC-HAL-103", "family_index"));
  EXPECT_TRUE(has(check("h13", "family", std::string("A14")), "ANEC-HAL-103", "family"));
  EXPECT_TRUE(has(check("h13", "texture_engine", uint64_t{1}), "ANEC-HAL-104", "texture_engine"));
  EXPECT_TRUE(has(check("h13", "interchange_format_count", uint64_t{4}), "ANEC-HAL-105", "interchange_formats"));
  EXPECT_TRUE(has(check("h13", "interchange_formats", std::vector<std::string>{"&BGA", "&L0h", "BGRA8"}), "ANEC-HAL-108",
                  "interchange_formats"));
  EXPECT_TRUE(has(check("h13", "interchange_formats", std::vector<std::string>{"&L16", "&L0h", "&BGA"}), "ANEC-HAL-110",
                  "interchange_formats"));
  EXPECT_TRUE(has(check("h13", "clock_min_mhz", uint64_t{5000}), "ANEC-HAL-106", "clock_min_mhz"));
  EXPECT_TRUE(has(check("h13", "efficiency_at_clock_max", 1.5), "ANEC-HAL-101", "efficiency_at_clock_max"));
  Target y = T("h13");
  y.values.erase("num_nes");
  EXPECT_TRUE(has(validate_target(t.schema, t.lineup, y), "ANEC-HAL-100", "num_nes"));
}

TEST(Validate, LimitsNeverFallAcrossGenerations) {
  const auto &t = Tables::get();
  std::vector<Target> all = t.registry.targets();
  for (auto &x : all)
    if (x.name == "h17") x.values["max_tensor_width"].value = uint64_t{8192};
  auto f = validate_line(t.schema, all);
  ASSERT_EQ(f.size(), 1u) << ::testing::PrintToString(codes(f));
  EXPECT_EQ(f[0].code, "ANEC-HAL-107");
  EXPECT_EQ(f[0].object, "h17");
}

TEST(TargetFiles, StrictReadingNamesLineAndColumn) {
  const auto &t = Tables::get();
  std::string good = to_toml(t.schema, T("h13"));
  auto error = [&](std::string text) -> std::string {
    try {
      from_doc(t.schema, toml::parse(text, "x.toml"), "x.toml");
    } catch (const Error &e) {
      return e.what();
    }
    return "none";
  };
  auto replace = [&](std::string from, std::string to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_NE(error(replace("[limits]", "[limits")).find("ANEC-TOML-001: x.toml:"), std::string::npos);
  EXPECT_NE(error(replace("[limits]\n", "[limits]\nwingspan = { value = 1, confidence = \"decoded\", source = \"s\" }\n"))
                .find("ANEC-HAL-003: x.toml:"),
            std::string::npos);
  EXPECT_NE(error(replace("offset = 0x81d, value = 0", "offset = 0x81d, value = 300")).find("ANEC-HAL-004"),
            std::string::npos);
  EXPECT_NE(error(replace("offset = 0x81d, value = 0", "offset = 0x81d, value = \"no\"")).find("ANEC-HAL-004"),
            std::string::npos);
  EXPECT_NE(error(replace("offset = 0x81d", "offset = 0x81e")).find("disagrees with the schema"), std::string::npos);
  EXPECT_NE(error(replace("anec-hal/1.0", "anec-hal/0.9")).find("ANEC-HAL-003"), std::string::npos);
  EXPECT_NE(error(replace("confidence = \"measured\"", "confidence = \"certain\"")).find("unknown confidence"),
            std::string::npos);
}

// A typed accessor asked for a field the target has no value for, or for one of another type
// (num_nes is an integer, not text).
TEST(Targets, MissingOrMistypedValueIsAnError) {
  Target t = T("h13");
  t.values.erase("num_nes");
  std::string msg;
  EXPECT_EQ(code_of([&] { (void)t.uint("num_nes"); }, &msg), "ANEC-HAL-007");
  EXPECT_NE(msg.find("target 'h13' has no value for 'num_nes'"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { (void)T("h13").text("num_nes"); }, &msg), "ANEC-HAL-007");
  EXPECT_NE(msg.find("target 'h13': 'num_nes' has another type"), std::string::npos) << msg;
  EXPECT_EQ(T("h13").uint("num_nes"), 4u);
}

namespace {
// A scratch folder for one test, removed with it.
struct Scratch {
  fs::path dir = fs::temp_directory_path() /
                 ("anec-targets-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
};
std::string replaced(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}
} // namespace

// The registry over a targets folder: a line-up target without its table, then a table that
// defines another target (h14's table saved as h13.toml).
TEST(Targets, MissingOrMisnamedTableIsAnError) {
  const auto &t = Tables::get();
  Scratch s;
  Lineup one = t.lineup;
  one.targets = {"h13"};
  std::string msg;
  EXPECT_EQ(code_of([&] { Registry::load(t.schema, one, s.dir); }, &msg), "ANEC-HAL-008");
  EXPECT_NE(msg.find("h13.toml is missing; run `anec-hal generate`"), std::string::npos) << msg;
  fs::copy_file(test::tables() / "targets" / "h14.toml", s.dir / "h13.toml");
  EXPECT_EQ(code_of([&] { Registry::load(t.schema, one, s.dir); }, &msg), "ANEC-HAL-008");
  EXPECT_NE(msg.find("defines 'h14', expected 'h13'"), std::string::npos) << msg;
  fs::remove(s.dir / "h13.toml");
  fs::copy_file(test::tables() / "targets" / "h13.toml", s.dir / "h13.toml");
  EXPECT_EQ(Registry::load(t.schema, one, s.dir).targets().size(), 1u);
}

// Malformed reference facts, each in a copy of tables/reference: a line-up of another format, a
// target inheriting a tier that does not exist, a target file the line-up does not name.
TEST(Reference, MalformedFactsAreErrors) {
  const auto &t = Tables::get();
  Scratch s;
  fs::path ref = s.dir / "reference";
  fs::copy(test::tables() / "reference", ref, fs::copy_options::recursive);
  EXPECT_EQ(load_reference(t.schema, load_lineup(ref / "lineup.toml"), ref).size(), 28u);
  std::string msg;
  std::string lineup = read_text_file(ref / "lineup.toml");
  write_output(ref / "lineup.toml", replaced(lineup, "\"anec-lineup/1\"", "\"anec-lineup/2\""));
  EXPECT_EQ(code_of([&] { load_lineup(ref / "lineup.toml"); }, &msg), "ANEC-REF-001");
  EXPECT_NE(msg.find("format must be \"anec-lineup/1\""), std::string::npos) << msg;
  write_output(ref / "lineup.toml", lineup);
  std::string h13 = read_text_file(ref / "targets" / "h13.toml");
  write_output(ref / "targets" / "h13.toml", replaced(h13, "inherits = \"a13\"", "inherits = \"a99\""));
  EXPECT_EQ(code_of([&] { load_reference(t.schema, t.lineup, ref); }, &msg), "ANEC-REF-001");
  EXPECT_NE(msg.find("tier 'a99' not found"), std::string::npos) << msg;
  write_output(ref / "targets" / "h13.toml", h13);
  fs::copy_file(ref / "targets" / "h13.toml", ref / "targets" / "h99.toml");
  EXPECT_EQ(code_of([&] { load_reference(t.schema, t.lineup, ref); }, &msg), "ANEC-REF-001");
  EXPECT_NE(msg.find("h99.toml is not in the line-up"), std::string::npos) << msg;
}

// A TOML date where a target table holds a number: refused with its line and column.
TEST(TargetFiles, DatesAreRefused) {
  std::string text = replaced(to_toml(Tables::get().schema, T("h13")), "offset = 0x81d, value = 0",
                              "offset = 0x81d, value = 2024-01-01");
  size_t at = text.find("2024-01-01");
  ASSERT_NE(at, std::string::npos);
  long line = 1 + std::count(text.begin(), text.begin() + long(at), '\n');
  std::string where = "x.toml:" + std::to_string(line) + ":" + std::to_string(at - text.rfind('\n', at));
  std::string msg;
  EXPECT_EQ(code_of([&] { from_doc(Tables::get().schema, toml::parse(text, "x.toml"), "x.toml"); }, &msg),
            "ANEC-TOML-002");
  EXPECT_NE(msg.find(where + ": dates and times are not used by anec tables"), std::string::npos) << msg;
}

// The index generate writes agrees with the tables it was written from, and a broken one is an error.
TEST(Targets, IndexAgreesWithTheTables) {
  std::vector<hal::IndexEntry> index = hal::load_index(anec::test::tables() / "targets");
  const auto &targets = Tables::get().registry.targets();
  ASSERT_EQ(index.size(), targets.size());
  for (size_t i = 0; i < index.size(); ++i) {
    const hal::Target &t = targets[i];
    EXPECT_EQ(index[i].name, t.name);
    EXPECT_EQ(index[i].td_generation, t.uint("td_generation"));
    EXPECT_EQ(index[i].aliases, t.aliases) << t.name;
    ASSERT_NE(t.find("cpusubtype"), nullptr) << t.name;
    bool published = t.find("cpusubtype")->provenance.confidence != Confidence::Placeholder;
    ASSERT_EQ(index[i].cpusubtype.has_value(), published) << t.name;
    if (published) {
      EXPECT_EQ(*index[i].cpusubtype, t.uint("cpusubtype")) << t.name;
    }
  }
  fs::path dir = fs::temp_directory_path() / ("anec-index-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_EQ(anec::test::code_of([&] { hal::load_index(dir); }), "ANEC-HAL-009");
  write_output(dir / "index.tsv", std::string("h13\t4\n"));
  EXPECT_EQ(anec::test::code_of([&] { hal::load_index(dir); }), "ANEC-HAL-009");
  write_output(dir / "index.tsv", std::string("h13\tx\t7\tm1\n"));
  EXPECT_EQ(anec::test::code_of([&] { hal::load_index(dir); }), "ANEC-HAL-009");
  write_output(dir / "index.tsv", std::string("h13\t4\t7\n")); // the three-column index of earlier builds
  EXPECT_EQ(anec::test::code_of([&] { hal::load_index(dir); }), "ANEC-HAL-009");
  fs::remove_all(dir);
}

// A name or alias loads its own table, the same one the line-up holds; an unknown name gets the
// line-up's error with its closest names.
TEST(Targets, TablesLoadOnFirstUse) {
  hal::TargetTables tables(Tables::get().schema, anec::test::tables());
  const hal::Registry &all = Tables::get().registry;
  for (const hal::Target &t : all.targets()) {
    std::string name = t.aliases.empty() ? t.name : t.aliases.front();
    const hal::Target &loaded = tables.get(name);
    EXPECT_EQ(loaded.name, t.name) << name;
    EXPECT_EQ(loaded.uint("num_nes"), t.uint("num_nes")) << name;
    EXPECT_EQ(&tables.get(t.name), &loaded) << "loaded once";
    EXPECT_TRUE(tables.known(name));
  }
  EXPECT_FALSE(tables.known("h99"));
  std::string message;
  EXPECT_EQ(anec::test::code_of([&] { tables.get("h1e"); }, &message), "ANEC-HAL-006");
  EXPECT_NE(message.find("closest:"), std::string::npos) << message;
}
