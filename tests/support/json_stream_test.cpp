// json::ArrayStream: the elements of one top-level array, whatever the strings inside them hold
// (brackets, commas, escaped quotes, an escaped backslash before a closing quote), across the
// reader's chunks; the rest of the document with the array emptied; nullopt for a document it
// cannot split (the caller then reads it whole).
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json_stream.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
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

namespace {
// A JSON string of `n` characters drawn from those that end, escape or nest something.
std::string awkward_string(std::mt19937 &rng, size_t n) {
  static constexpr std::string_view kChars = "a \"\\[]{},:";
  std::string s = "\"";
  for (size_t k = 0; k < n; ++k) {
    char c = kChars[rng() % kChars.size()];
    s += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  }
  return s + "\"";
}
// A value nested up to `depth` deep: numbers, awkward strings, arrays and objects.
std::string awkward_value(std::mt19937 &rng, int depth) {
  switch (depth > 0 ? rng() % 4 : rng() % 2) {
  case 0:
    return std::to_string(rng() % 1000);
  case 1:
    return awkward_string(rng, rng() % 12);
  case 2: {
    std::string a = "[";
    for (unsigned k = 0, n = rng() % 4; k < n; ++k)
      a += (k ? ", " : "") + awkward_value(rng, depth - 1);
    return a + "]";
  }
  default: {
    std::string o = "{";
    for (unsigned k = 0, n = rng() % 4; k < n; ++k)
      o += (k ? ", " : "") + awkward_string(rng, rng() % 6) + ": " + awkward_value(rng, depth - 1);
    return o + "}";
  }
  }
}
} // namespace

// Elements generated at random, whose strings hold runs of backslashes, escaped quotes, brackets and
// commas across the first pass's 64-byte steps, come back as written; and an escape or a closing
// quote at every position around the boundary of the reader's 1 MiB chunks.
TEST(JsonStream, RandomAwkwardElementsComeBackAsWritten) {
  std::mt19937 rng(7);
  for (int doc = 0; doc < 300; ++doc) {
    std::vector<std::string> written;
    std::string text = R"({"before": )" + awkward_value(rng, 2) + R"(, "ops": [)";
    for (unsigned k = 0, n = rng() % 40; k < n; ++k) {
      written.push_back(awkward_value(rng, 3));
      text += (k ? "," + std::string(rng() % 3, ' ') : "") + written.back();
    }
    text += R"(], "after": )" + awkward_value(rng, 2) + "}";
    fs::path p = write_doc("random.json", text);
    auto s = json::ArrayStream::open(p, "ops");
    ASSERT_TRUE(s) << text;
    EXPECT_EQ(elements(*s), written) << text;
    fs::remove(p);
  }
  const std::string tail = R"("\\", "\"]", "a\\\"", [1, {"k": "}"}]], "after": 1})";
  const std::vector<std::string> tail_elements = {R"("\\")", R"("\"]")", R"("a\\\"")", R"([1, {"k": "}"}])"};
  for (size_t shift = 0; shift < 48; ++shift) {
    std::string head = R"({"ops": [")" + std::string((size_t(1) << 20) - 24 + shift, 'x') + "\", ";
    fs::path p = write_doc("boundary.json", head + tail);
    auto s = json::ArrayStream::open(p, "ops");
    ASSERT_TRUE(s) << shift;
    std::vector<std::string> got = elements(*s);
    ASSERT_EQ(got.size(), 5u) << shift;
    EXPECT_EQ(std::vector<std::string>(got.begin() + 1, got.end()), tail_elements) << shift;
    fs::remove(p);
  }
}

// A file of 8 MiB or more is scanned in two halves at once, the later one from a likely boundary of
// elements ("}, {") just past the middle. Every way that guess can be wrong gives what one pass
// gives: the pattern inside a string, inside a deeper list, in another member after the array, or
// in a second "ops" array.
TEST(JsonStream, ALargeFileScannedInTwoHalvesGivesWhatOnePassGives) {
  const std::string padding(size_t(5) << 20, 'x'), more(size_t(6) << 20, 'x');
  auto objects = [](size_t n) {
    std::vector<std::string> v;
    for (size_t k = 0; k < n; ++k)
      v.push_back(R"({"name": "op)" + std::to_string(k) + R"(", "v": [1, 2]})");
    return v;
  };
  auto numbers = [](size_t n) { return std::vector<std::string>(n, "1234567"); };
  struct Case {
    const char *what;
    std::vector<std::string> before, middle, after;
    std::string tail; // after the array's ']'
  } cases[] = {
      {"objects", objects(130000), {}, objects(130000), "}"},
      {"a string", numbers(600000), {"\"" + more + "}, {" + padding + "\""}, numbers(600000), "}"},
      {"a deeper list",
       numbers(600000),
       {R"({"deep": [{"a": 1}, {"b": 2}], "pad": ")" + padding + "\"}"},
       {},
       "}"},
      {"another member",
       numbers(10),
       {},
       {},
       R"(, "a": ")" + more + R"(", "b": [{}, {}], "c": ")" + padding + "\"}"},
      {"a second key",
       numbers(10),
       {},
       {},
       R"(, "a": ")" + more + R"(", "ops": [{}, {}], "c": ")" + padding + "\"}"},
  };
  for (const Case &c : cases) {
    std::vector<std::string> written = c.before;
    written.insert(written.end(), c.middle.begin(), c.middle.end());
    written.insert(written.end(), c.after.begin(), c.after.end());
    std::string text = R"({"format": "anec-graph", "ops": [)";
    for (size_t k = 0; k < written.size(); ++k)
      text += (k ? ", " : "") + written[k];
    text += "]" + c.tail;
    ASSERT_GE(text.size(), size_t(8) << 20) << c.what;
    // The pattern the later half looks for lies within its first MiB past the middle: a guess is made.
    ASSERT_LT(text.find("}, {", text.size() / 2) - text.size() / 2, size_t(1) << 20) << c.what;
    fs::path p = write_doc("halves.json", text);
    auto s = json::ArrayStream::open(p, "ops");
    if (std::string_view(c.what) == "a second key") {
      EXPECT_FALSE(s) << c.what;
    } else {
      ASSERT_TRUE(s) << c.what;
      EXPECT_EQ(s->elements(), written.size()) << c.what;
      EXPECT_EQ(elements(*s), written) << c.what;
    }
    fs::remove(p);
  }
}
