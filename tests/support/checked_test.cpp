// Checked arithmetic and the strict command-line number parser at their boundaries: INT64_MAX,
// INT64_MIN, -1, 0, 2^32, UINT64_MAX, and the texts strtoull would silently accept.
#include "anec/support/checked.hpp"
#include "anec/support/format.hpp"
#include "anec/support/huge_pages.hpp"
#include "anec/support/printer.hpp"
#include "anec/support/text_out.hpp"

#include "../errors.hpp"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

using namespace anec;
using anec::test::code_of;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2to32 = int64_t(1) << 32;
} // namespace

TEST(Checked, AddAtTheBoundaries) {
  EXPECT_EQ(checked_add(kMax, 0), kMax);
  EXPECT_EQ(checked_add(kMax, -1), kMax - 1);
  EXPECT_EQ(checked_add(kMax, 1), std::nullopt);
  EXPECT_EQ(checked_add(kMin, -1), std::nullopt);
  EXPECT_EQ(checked_add(kMin, kMax), -1);
  EXPECT_EQ(checked_add(kMax, kMax), std::nullopt);
  EXPECT_EQ(checked_add(-1, 0), -1);
  EXPECT_EQ(checked_add(k2to32, k2to32), int64_t(1) << 33);
}

TEST(Checked, SubAtTheBoundaries) {
  EXPECT_EQ(checked_sub(kMin, 1), std::nullopt);
  EXPECT_EQ(checked_sub(0, kMin), std::nullopt); // -INT64_MIN does not exist
  EXPECT_EQ(checked_sub(-1, kMin), kMax);
  EXPECT_EQ(checked_sub(kMax, -1), std::nullopt);
  EXPECT_EQ(checked_sub(0, kMax), kMin + 1);
}

TEST(Checked, MulAtTheBoundaries) {
  EXPECT_EQ(checked_mul(k2to32, k2to32), std::nullopt);                     // 2^64
  EXPECT_EQ(checked_mul(k2to32, k2to32 / 2 - 1), kMax - k2to32 + 1);        // 2^63 - 2^32 fits
  EXPECT_EQ(checked_mul(int64_t(1) << 31, int64_t(1) << 32), std::nullopt); // 2^63 = INT64_MAX + 1
  EXPECT_EQ(checked_mul(-(int64_t(1) << 31), int64_t(1) << 32), kMin);      // exactly INT64_MIN fits
  EXPECT_EQ(checked_mul(kMin, -1), std::nullopt);
  EXPECT_EQ(checked_mul(kMax, -1), kMin + 1);
  EXPECT_EQ(checked_mul(kMax, 0), 0);
  EXPECT_EQ(checked_mul(kMin, 0), 0);
  EXPECT_EQ(checked_mul(kMax, 1), kMax);
  EXPECT_EQ(checked_mul(kMax, 2), std::nullopt);
  EXPECT_EQ(checked_mul(65536, 65536), k2to32);
  EXPECT_EQ(checked_mul(-1, -1), 1);
  EXPECT_EQ(checked_mul(-1, kMax), kMin + 1);
}

// The shape: 65536^4 = 2^64 overflows in the fourth multiplication, not before.
TEST(Checked, ShapeProductOverflowsAtTheFourthDimension) {
  int64_t n = 1;
  for (int i = 0; i < 3; ++i) {
    auto next = checked_mul(n, 65536);
    ASSERT_TRUE(next) << i;
    n = *next;
  }
  EXPECT_EQ(n, int64_t(1) << 48);
  EXPECT_EQ(checked_mul(n, 65536), std::nullopt);
}

TEST(Checked, ThrowingFormsNameTheOperands) {
  std::string msg;
  EXPECT_EQ(mul_or_throw(k2to32, 2, "ANEC-TEST-001", "w"), int64_t(1) << 33);
  EXPECT_EQ(code_of([&] { mul_or_throw(k2to32, k2to32, "ANEC-TEST-001", "tensor 'x'"); }, &msg),
            "ANEC-TEST-001");
  EXPECT_NE(msg.find("tensor 'x': 4294967296 x 4294967296"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { add_or_throw(kMax, 1, "ANEC-TEST-002", "sum"); }, &msg), "ANEC-TEST-002");
  EXPECT_NE(msg.find("9223372036854775807 + 1"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { sub_or_throw(kMin, 1, "ANEC-TEST-003", "diff"); }, &msg), "ANEC-TEST-003");
  EXPECT_NE(msg.find("-9223372036854775808 - 1"), std::string::npos) << msg;
  EXPECT_EQ(add_or_throw(-1, 1, "ANEC-TEST-002", "sum"), 0);
}

TEST(ParseUint, AcceptsDecimalAndHexWithinTheRange) {
  EXPECT_EQ(parse_uint("0", 0, 10, "N"), 0u);
  EXPECT_EQ(parse_uint("10", 0, 10, "N"), 10u);
  EXPECT_EQ(parse_uint("4294967296", 0, UINT64_MAX, "N"), uint64_t(1) << 32);
  EXPECT_EQ(parse_uint("0x100000000", 0, UINT64_MAX, "N"), uint64_t(1) << 32);
  EXPECT_EQ(parse_uint("0XfF", 0, 255, "N"), 255u);
  EXPECT_EQ(parse_uint("18446744073709551615", 0, UINT64_MAX, "N"), UINT64_MAX);
  EXPECT_EQ(parse_uint("0xffffffffffffffff", 0, UINT64_MAX, "N"), UINT64_MAX);
  EXPECT_EQ(parse_uint("010", 0, 100, "N"), 10u); // decimal, not octal as strtoull base 0 reads it
  EXPECT_EQ(parse_uint("9223372036854775807", 0, UINT64_MAX, "N"), uint64_t(kMax));
}

// A size with a binary unit: K, M, G; the range is checked in bytes, the unit's overflow too.
TEST(ParseSize, ReadsBinaryUnitsWithinTheRange) {
  EXPECT_EQ(parse_size("4096", 1, UINT64_MAX, "S"), 4096u);
  EXPECT_EQ(parse_size("4K", 1, UINT64_MAX, "S"), 4096u);
  EXPECT_EQ(parse_size("3M", 1, UINT64_MAX, "S"), 3u << 20);
  EXPECT_EQ(parse_size("2G", 1, UINT64_MAX, "S"), uint64_t(2) << 30);
  EXPECT_EQ(parse_size("17179869183G", 1, UINT64_MAX, "S"), uint64_t(17179869183) << 30);
  for (const char *bad : {"17179869184G", "0K", "G", "4T", "4k", "-1G", "4 G", "1.5G", ""})
    EXPECT_EQ(anec::test::code_of([&] { parse_size(bad, 1, UINT64_MAX, "S"); }), "ANEC-CLI-002") << bad;
}

TEST(SizeText, NamesTheLargestBinaryUnit) {
  EXPECT_EQ(size_text(0), "0 B");
  EXPECT_EQ(size_text(1023), "1023 B");
  EXPECT_EQ(size_text(1536), "1.5 KiB");
  EXPECT_EQ(size_text(3.5 * (1 << 30)), "3.5 GiB");
}

// fixed_to() writes fixed()'s text, and the text printer's text_fixed() and a file's terminal-safe
// text are the bytes a string's would be: plain text as it is, control characters escaped.
TEST(Fixed, EveryPathWritesTheSameText) {
  for (double v : {0.0, -0.0, 0.0005, 2.5, -372.6542276923077, 463626240.0, 1e300, -1.7976931348623157e308})
    for (int digits : {0, 1, 3, 17}) {
      char b[kFixedRoom];
      EXPECT_EQ(std::string(b, fixed_to(b, v, digits)), fixed(v, digits)) << v << " " << digits;
    }
  const char *names[] = {"op0", "", "t\x1b[31mred", "line\nbreak\x7f", "\xc3\xa9t\xc3\xa9"};
  std::FILE *f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  std::string expected;
  {
    TextOut file(f), text(expected);
    TextPrinter to_file(file), to_text(text);
    for (const char *name : names)
      for (TextPrinter *p : {&to_file, &to_text}) {
        p->field("name", name);
        p->text_fixed(-372.6542276923077, 3);
      }
  }
  std::rewind(f);
  std::string written(expected.size() + 1, '\0');
  written.resize(std::fread(written.data(), 1, written.size(), f));
  std::fclose(f);
  EXPECT_EQ(written, expected);
  EXPECT_NE(expected.find("t\\x1b[31mred"), std::string::npos);
  EXPECT_NE(expected.find("-372.654"), std::string::npos);
}

// copy_bytes() moves what memcpy does for every short length and offset; populate() leaves the
// memory it is given as it was, on any range (unaligned, empty, past a page).
TEST(Bytes, CopyBytesAndPopulateLeaveTheBytesMemcpyWould) {
  std::string from(64, '\0'), into(64, '-'), want(64, '-');
  for (size_t k = 0; k < from.size(); ++k)
    from[k] = char('a' + k % 26);
  for (size_t at = 0; at < 8; ++at)
    for (size_t n = 0; n + at <= 48; ++n) {
      into.assign(64, '-');
      want.assign(64, '-');
      copy_bytes(into.data() + at, from.data() + 3, n);
      std::memcpy(want.data() + at, from.data() + 3, n);
      EXPECT_EQ(into, want) << at << " " << n;
    }
  std::vector<char> block(3 << 20, 'x');
  populate(block.data() + 123, 1 << 20);
  populate(block.data() + (2 << 20) - 1, 2);
  populate(block.data(), 0);
  EXPECT_EQ(std::count(block.begin(), block.end(), 'x'), ptrdiff_t(block.size()));
}

// A file written through TextOut, of either buffer size, holds only whole 4 KiB pages until the
// last flush (pieces short and long, room() among them), and then every byte a string's would; a
// piece longer than the buffer is written as it is.
TEST(TextOut, WritesAFileInWholePagesUntilTheLastFlush) {
  for (size_t chunk : {size_t(0), size_t(256) << 10}) {
    std::FILE *f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    std::setvbuf(f, nullptr, _IONBF, 0);
    std::string expected, piece(300 << 10, 'L');
    {
      TextOut file(f, chunk), text(expected);
      for (int k = 0; k < 20000; ++k)
        for (TextOut *out : {&file, &text}) {
          *out << "row " << std::string_view(piece).substr(0, size_t(k % 97));
          std::memcpy(out->room(3), "!!\n", 3);
          if (k % 5000 == 4999)
            *out << std::string_view(piece).substr(0, 40 << 10);
        }
      EXPECT_EQ(std::ftell(f) % 4096, 0) << chunk;
      EXPECT_GT(std::ftell(f), 0) << chunk;
      file << piece;
      text << piece;
    }
    std::rewind(f);
    std::string written(expected.size() + 1, '\0');
    written.resize(std::fread(written.data(), 1, written.size(), f));
    std::fclose(f);
    EXPECT_EQ(written, expected) << chunk;
  }
}

TEST(ParseUint, RejectsWithCli002AndTheText) {
  struct Case {
    const char *text, *why;
    uint64_t min, max;
  } cases[] = {{"-1", "has a sign", 0, UINT64_MAX},
               {"+5", "has a sign", 0, 10},
               {"-0", "has a sign", 0, 10},
               {"", "is not a number", 0, 10},
               {"0x", "is not a number", 0, 10},
               {" 5", "is not a number", 0, 10},
               {"abc", "is not a number", 0, 10},
               {"5 ", "has text after the number", 0, 10},
               {"12abc", "has text after the number", 0, 100},
               {"1e3", "has text after the number", 0, 10000},
               {"0x1g", "has text after the number", 0, 100},
               {"0", "is out of range", 1, 10},
               {"11", "is out of range", 1, 10},
               {"18446744073709551616", "is out of range", 0, UINT64_MAX},        // 2^64
               {"0x10000000000000000", "is out of range", 0, UINT64_MAX},         // 2^64
               {"9223372036854775807", "is out of range", 1, uint64_t(1) << 40}}; // the issue's --dim
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    std::string msg;
    EXPECT_EQ(code_of([&] { parse_uint(c.text, c.min, c.max, "--opt"); }, &msg), "ANEC-CLI-002");
    EXPECT_NE(msg.find(std::string("--opt '") + c.text + "' " + c.why), std::string::npos) << msg;
    std::string range = "from " + std::to_string(c.min) + " to " + std::to_string(c.max);
    EXPECT_NE(msg.find(range), std::string::npos) << msg;
  }
}

TEST(ParseUint, QuotesAtMostFortyCharacters) {
  std::string text = std::string(100, '7') + "x\n";
  std::string msg;
  EXPECT_EQ(code_of([&] { parse_uint(text, 0, 10, "OFFSET"); }, &msg), "ANEC-CLI-002");
  EXPECT_NE(msg.find("OFFSET '" + std::string(40, '7') + "...'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find(std::string(41, '7')), std::string::npos) << msg;
  EXPECT_EQ(quote_arg("a\x1b[2Jb"), "'a?[2Jb'");
}
