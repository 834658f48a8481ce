// Compiled tables (compiled_doc.hpp): every table of the project reads back from its compiled form
// as the same Doc (values, kinds, order, source positions, printing hints); a compiled form is used
// only for the text it was made from; damaged forms read as absent; the build's compiled directory
// holds a current form of every table; toml::parse reads a compiled form when one is there.
#include "anec/support/compiled_doc.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace anec;
namespace fs = std::filesystem;

namespace {

// Empty when a and b are the same tree, else the path of the first difference.
std::string difference(const Doc &a, const Doc &b, const std::string &path = "") {
  if (a.kind() != b.kind() || a.line != b.line || a.column != b.column || a.hex != b.hex ||
      a.inline_table != b.inline_table || a.as_bool() != b.as_bool() || a.as_int() != b.as_int() ||
      a.as_string() != b.as_string() ||
      (a.as_float() != b.as_float() && !(std::isnan(a.as_float()) && std::isnan(b.as_float()))) ||
      a.items().size() != b.items().size() || a.members().size() != b.members().size())
    return path.empty() ? "/" : path;
  for (size_t i = 0; i < a.items().size(); ++i)
    if (auto d = difference(a.items()[i], b.items()[i], path + "/" + std::to_string(i)); !d.empty())
      return d;
  for (size_t i = 0; i < a.members().size(); ++i) {
    auto &ma = a.members()[i], &mb = b.members()[i];
    if (ma.key != mb.key)
      return path + "/" + ma.key;
    if (auto d = difference(ma.value, mb.value, path + "/" + ma.key); !d.empty())
      return d;
  }
  return "";
}

std::vector<fs::path> project_tables() {
  std::vector<fs::path> out;
  for (auto &e : fs::recursive_directory_iterator(fs::path(ANEC_TEST_PROJECT_DIR) / "tables"))
    if (e.path().extension() == ".toml")
      out.push_back(e.path());
  return out;
}

const char *kSample = "# a sample\nname = \"h13\"\nhex = 0x1f\nneg = -7\nf = 2.5\nnan = nan\nflag = true\n"
                      "list = [1, [\"a\", { b = 2 }]]\n[sub]\nx = 1\n[[rows]]\ny = 2\n[[rows]]\ny = 3\n";

} // namespace

TEST(CompiledDoc, EveryProjectTableReadsBackAsTheSameTree) {
  auto tables = project_tables();
  ASSERT_GT(tables.size(), 50u);
  for (auto &path : tables) {
    std::string text = read_text_file(path);
    Doc parsed = toml::parse(text, path.string());
    auto back = compiled::decode(compiled::encode(parsed, text), text);
    ASSERT_TRUE(back) << path;
    EXPECT_EQ(difference(parsed, *back), "") << path;
  }
}

TEST(CompiledDoc, ReadsOnlyForTheTextItWasMadeFrom) {
  std::string text = kSample, other = text + "z = 1\n";
  std::string bytes = compiled::encode(toml::parse(text, "sample"), text);
  EXPECT_TRUE(compiled::decode(bytes, text));
  EXPECT_FALSE(compiled::decode(bytes, other));
  EXPECT_FALSE(compiled::decode(bytes, text.substr(0, text.size() - 1)));
  EXPECT_NE(compiled::file_name(text), compiled::file_name(other));
  std::string wrong_version = bytes;
  ASSERT_GT(wrong_version.size(), 8u);
  wrong_version[8] ^= 1;
  EXPECT_FALSE(compiled::decode(wrong_version, text));
}

TEST(CompiledDoc, DamagedFormsReadAsAbsentOrAsSomeTreeNeverACrash) {
  std::string text = kSample;
  std::string bytes = compiled::encode(toml::parse(text, "sample"), text);
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(compiled::decode(bytes.substr(0, n), text)) << n;
  EXPECT_FALSE(compiled::decode(bytes + "x", text));
  // Past the header every flipped bit either fails to read or reads as some tree (a changed value);
  // under the sanitizers this shows no read outside the bytes.
  for (size_t bit = 28 * 8; bit < bytes.size() * 8; ++bit) {
    std::string flipped = bytes;
    flipped[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    (void)compiled::decode(flipped, text);
  }
  // A count far beyond the bytes, and nesting past any table's depth.
  std::string header = bytes.substr(0, 28);
  EXPECT_FALSE(compiled::decode(header + std::string("\x05\x01\x01\xff\xff\xff\xff\x0f", 8), text));
  std::string deep;
  for (int i = 0; i < 1000; ++i)
    deep += std::string("\x05\x01\x01\x01", 4);
  EXPECT_FALSE(compiled::decode(header + deep, text));
}

TEST(CompiledDoc, TheBuildHoldsACurrentFormOfEveryTable) {
  for (auto &path : project_tables()) {
    std::string text = read_text_file(path);
    std::ifstream in(fs::path(ANEC_TEST_COMPILED_TABLES_DIR) / compiled::file_name(text), std::ios::binary);
    ASSERT_TRUE(in) << path << ": no compiled form; the build makes them (target anec_compiled_tables)";
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto doc = compiled::decode(bytes, text);
    ASSERT_TRUE(doc) << path;
    EXPECT_EQ(difference(toml::parse(text, path.string()), *doc), "") << path;
  }
}

TEST(CompiledDoc, ParseReadsTheCompiledFormWhenThereIsOne) {
  fs::path dir = fs::temp_directory_path() / ("anec-compiled-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // A compiled form that differs from the text (made from another text, filed under this one's
  // name) shows which of the two parse read.
  std::string text = kSample;
  Doc marked = toml::parse("name = \"compiled\"\n", "marked");
  std::string bytes = compiled::encode(marked, "name = \"compiled\"\n");
  std::string forged = compiled::encode(marked, text);
  std::ofstream(dir / compiled::file_name(text), std::ios::binary) << forged;
  // The name parse reads; a failure, not a return (the compiled-tables folder must be reset below).
  auto name = [&] {
    Doc d = toml::parse(text, "sample");
    if (!d.find("name")) {
      ADD_FAILURE() << "no name";
      return std::string();
    }
    return d.find("name")->as_string();
  };
  toml::use_compiled_tables(dir);
  EXPECT_EQ(name(), "compiled");
  // A form for another text under this name is not used.
  std::ofstream(dir / compiled::file_name(text), std::ios::binary) << bytes;
  EXPECT_EQ(name(), "h13");
  toml::use_compiled_tables({});
  EXPECT_EQ(name(), "h13");
  fs::remove_all(dir);
}
