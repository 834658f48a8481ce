// json::ArrayStream: the elements of one top-level array, whatever the strings inside them hold
// (brackets, commas, escaped quotes, an escaped backslash before a closing quote), across the
// reader's chunks; the rest of the document with the array emptied; nullopt for a document it
// cannot split (the caller then reads it whole).
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json_stream.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace anec;
namespace fs = std::filesystem;

namespace {
fs::path write_doc(const std::string &name, const std::string &text) {
  fs::path p = fs::temp_directory_path() / ("anec-json-stream-" + std::to_string(::getpid()) + "-" + name);
  write_output(p, text);
  return p;
}

std::vector<std::string> elements(json::ArrayStream &s) {
  std::vector<std::string> out;
  while (auto e = s.next())
    out.emplace_back(*e);
  return out;
}
} // namespace

TEST(JsonStream, SplitsElementsWhateverTheirStringsHold) {
  fs::path p = write_doc("awkward.json", R"({"a": "ops", "ops" : [ {"k": "],[{"} , "x\"]," ,
    ["\\", {"n": [1, 2]}], 7 ], "z": {"ops": 1}})");
  auto s = json::ArrayStream::open(p, "ops");
  ASSERT_TRUE(s);
  EXPECT_EQ(elements(*s),
            (std::vector<std::string>{R"({"k": "],[{"})", R"("x\"],")", R"(["\\", {"n": [1, 2]}])", "7"}));
  EXPECT_EQ(s->rest(), R"({"a": "ops", "ops" : [], "z": {"ops": 1}})");
  EXPECT_EQ(s->elements(), 4u);
  fs::remove(p);
}

TEST(JsonStream, ElementsLargerThanAChunkAndManyChunks) {
  std::string big(3 << 20, 'x'), text = R"({"ops": [")" + big + R"(", 1)";
  for (int i = 0; i < 200000; ++i)
    text += ", " + std::to_string(i);
  text += "]}";
  fs::path p = write_doc("big.json", text);
  auto s = json::ArrayStream::open(p, "ops");
  ASSERT_TRUE(s);
  auto first = s->next();
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, "\"" + big + "\"");
  size_t count = 1;
  std::string last;
  while (auto e = s->next()) {
    ++count;
    last = *e;
  }
  EXPECT_EQ(count, 200002u);
  EXPECT_EQ(last, "199999");
  fs::remove(p);
}

TEST(JsonStream, DocumentsItCannotSplitOpenAsNothing) {
  for (const char *text :
       {R"({"other": []})", R"({"ops": [], "ops": []})", R"({"ops": {"a": 1}})", R"({"ops": [1, 2])",
        R"({"ops": [1, "2]})", R"([{"ops": []}])", R"({"x": {"ops": []}})"}) {
    fs::path p = write_doc("bad.json", text);
    EXPECT_FALSE(json::ArrayStream::open(p, "ops")) << text;
    fs::remove(p);
  }
  EXPECT_FALSE(json::ArrayStream::open("/nonexistent/anec.json", "ops"));
  EXPECT_FALSE(json::ArrayStream::open("/dev/null", "ops"));
}

TEST(JsonStream, AMissingElementOrATrailingCommaIsAnError) {
  for (auto [text, reason] : {std::pair{R"({"ops": [1, , 2]})", "an array element is missing"},
                              std::pair{R"({"ops": [, 1]})", "an array element is missing"},
                              std::pair{R"({"ops": [1, 2 , ]})", "the array ends with a comma"}}) {
    fs::path p = write_doc("commas.json", text);
    auto s = json::ArrayStream::open(p, "ops");
    ASSERT_TRUE(s) << text;
    try {
      elements(*s);
      ADD_FAILURE() << text << " read without an error";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), "ANEC-JSON-001");
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
    fs::remove(p);
  }
  fs::path p = write_doc("empty.json", R"({"ops": [ ]})");
  auto s = json::ArrayStream::open(p, "ops");
  ASSERT_TRUE(s);
  EXPECT_TRUE(elements(*s).empty());
  fs::remove(p);
}
