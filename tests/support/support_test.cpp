#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/plist.hpp"
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

// XML and binary-free property lists become documents; a string holding a NUL (which makes
// libplist's own string getter assert, found by the fuzzer) is read whole; junk has a reason code.
TEST(Plist, ReadsDocumentsAndRejectsJunk) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>n</key><integer>3</integer>"
                    "<key>s</key><string>a</string><key>b</key><true/><key>a</key><array><real>1.5</real></array></dict></plist>";
  anec::Doc d = anec::plist::parse(xml, "t.plist");
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
