#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace anec;
namespace fs = std::filesystem;

TEST(Sha256, KnownVectors) {
  auto h = [](std::string s) { return sha256_hex({reinterpret_cast<const uint8_t *>(s.data()), s.size()}); };
  EXPECT_EQ(h(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(h("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(h("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
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
  write_file_atomic(dir / "a.txt", std::string_view("one"));
  write_file_atomic(dir / "a.txt", std::string_view("two"));
  EXPECT_EQ(read_text_file(dir / "a.txt"), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  try {
    write_file_atomic(dir / "missing" / "b.txt", std::string_view("x"));
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
