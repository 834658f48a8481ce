// Inputs and outputs for files from anywhere: only regular files are read, sizes are checked
// before bytes, outputs never replace what is not a regular file, modes and umask are kept, a set
// of files is swapped in whole, and temporaries of killed runs are removed.
#include "../errors.hpp"
#include "anec/support/corpus.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/inside.hpp"
#include "anec/support/json.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace anec;
namespace fs = std::filesystem;
using anec::test::code_of;

namespace {

mode_t mode_of(const fs::path &p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

void put(const fs::path &p, const std::string &text) {
  std::ofstream(p, std::ios::binary) << text;
}

// A pid that no process has: a child's, once it has been reaped.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0)
    ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

class FileIo : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("anec-file-test-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

} // namespace

// A FIFO with no writer used to block the reader forever; a directory or a device is no input.
TEST_F(FileIo, OnlyRegularFilesAreRead) {
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(code_of([&] { read_file(dir / "fifo"); }), "ANEC-IO-004");
  EXPECT_EQ(code_of([&] { InputFile::open(dir / "fifo", 1 << 20); }), "ANEC-IO-004");
  EXPECT_EQ(code_of([&] { read_text_file(dir); }), "ANEC-IO-004");
  EXPECT_EQ(code_of([&] { read_file("/dev/zero"); }), "ANEC-IO-004");
  EXPECT_EQ(code_of([&] { read_file(dir / "missing"); }), "ANEC-IO-001");
}

// The size is known before a byte is read: a 1 GiB file over a 1 MiB limit is refused at once.
TEST_F(FileIo, SizeIsCheckedBeforeReading) {
  fs::path big = dir / "big";
  put(big, "");
  fs::resize_file(big, 1ull << 30); // sparse: no disk used
  try {
    read_file(big, 1 << 20);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-IO-002");
    EXPECT_NE(std::string(e.what()).find("1073741824 bytes"), std::string::npos) << e.what();
  }
  InputFile mapped = InputFile::open(big, 1ull << 30);
  ASSERT_EQ(mapped.bytes().size(), 1ull << 30);
  EXPECT_EQ(mapped.bytes()[12345], 0);
}

TEST_F(FileIo, InputFileHoldsTheBytes) {
  put(dir / "a", std::string("ab\0c", 4));
  put(dir / "empty", "");
  InputFile a = InputFile::open(dir / "a", 16);
  InputFile moved = std::move(a);
  EXPECT_EQ(moved.text(), std::string_view("ab\0c", 4));
  EXPECT_TRUE(InputFile::open(dir / "empty", 16).bytes().empty());
  EXPECT_EQ(code_of([&] { InputFile::open(dir / "a", 3); }), "ANEC-IO-002");
}

// -o used to rename over whatever was there: a link to /dev/null became a regular file.
TEST_F(FileIo, DevicesAndFifosAreStreamedToNeverReplaced) {
  fs::create_symlink("/dev/null", dir / "null");
  write_output(dir / "null", std::string_view("discarded"));
  EXPECT_TRUE(fs::is_symlink(dir / "null"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(dir / "fifo");
    got.assign(std::istreambuf_iterator<char>(in), {});
  });
  write_output(dir / "fifo", std::string_view("through the pipe"));
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(dir / "fifo"));

  EXPECT_EQ(code_of([&] { write_output(dir, std::string_view("x")); }), "ANEC-IO-006");
  EXPECT_EQ(code_of([&] { write_output(dir / "missing" / "x", std::string_view("x")); }), "ANEC-IO-003");
}

// A link to a regular file stays a link; the file it names gets the bytes.
TEST_F(FileIo, LinksAreFollowedToTheFileTheyName) {
  fs::create_directories(dir / "real");
  put(dir / "real" / "t.txt", "old");
  fs::create_symlink("real/t.txt", dir / "link");
  write_output(dir / "link", std::string_view("new"));
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(read_text_file(dir / "real" / "t.txt"), "new");
}

// A file a model names stays in its folder: climbing, absolute and empty paths are refused on their
// text, a link that leads out (to something or to nothing) when resolved; a missing file inside is
// named, for its reader to report.
TEST_F(FileIo, FilesAModelNamesStayInItsFolder) {
  fs::create_directories(dir / "model" / "w");
  put(dir / "model" / "w" / "a.bin", "a");
  put(dir / "outside.bin", "o");
  fs::create_symlink("../outside.bin", dir / "model" / "out.bin");
  fs::create_symlink("../nothing.bin", dir / "model" / "nowhere.bin");
  fs::create_symlink("w/a.bin", dir / "model" / "in.bin");
  fs::path m = dir / "model";
  EXPECT_EQ(resolve_inside(m, "w/a.bin"), fs::canonical(m / "w" / "a.bin"));
  EXPECT_EQ(resolve_inside(m, "in.bin"), fs::canonical(m / "w" / "a.bin"));
  EXPECT_EQ(resolve_inside(m, "missing.bin"), fs::canonical(m) / "missing.bin");
  for (const char *out :
       {"out.bin", "nowhere.bin", "../outside.bin", "w/../../outside.bin", "/etc/passwd", ""})
    EXPECT_EQ(resolve_inside(m, out), std::nullopt) << out;
  EXPECT_TRUE(names_inside("w/./a.bin"));
  for (const char *bad : {"w/../a.bin", "..", ".", "./", "/x", ""}) // ".." anywhere, even back inside
    EXPECT_FALSE(names_inside(bad)) << bad;
}

// Outputs were always 0644: an existing 0600 file and a umask of 077 were ignored.
TEST_F(FileIo, ModesAreKeptAndTheUmaskHonoured) {
  put(dir / "secret", "old");
  ::chmod((dir / "secret").c_str(), 0600);
  write_output(dir / "secret", std::string_view("new"));
  EXPECT_EQ(mode_of(dir / "secret"), 0600u);
  EXPECT_EQ(read_text_file(dir / "secret"), "new");

  mode_t old = ::umask(077);
  write_output(dir / "fresh", std::string_view("x"));
  ::umask(022);
  write_output(dir / "plain", std::string_view("x"));
  ::umask(old);
  EXPECT_EQ(mode_of(dir / "fresh"), 0600u);
  EXPECT_EQ(mode_of(dir / "plain"), 0644u);
}

// A killed writer's temporaries (this version's, with a dead owner, and the older unowned form)
// go with the next write into the directory; a live writer's stay.
TEST_F(FileIo, TemporariesOfKilledRunsAreRemoved) {
  std::string mine = ".t.anec-tmp-" + std::to_string(::getpid()) + "-99";
  std::string dead = ".t.anec-tmp-" + std::to_string(dead_pid()) + "-0";
  for (const std::string &n : {mine, dead, std::string(".t.tmp.AbC123"), std::string(".other.tmp.AbC123")})
    put(dir / n, "partial");
  write_output(dir / "t", std::string_view("whole"));
  EXPECT_TRUE(fs::exists(dir / mine));
  EXPECT_FALSE(fs::exists(dir / dead));
  EXPECT_FALSE(fs::exists(dir / ".t.tmp.AbC123"));
  EXPECT_TRUE(fs::exists(dir / ".other.tmp.AbC123")); // another file's, which may be a live writer's
  EXPECT_EQ(read_text_file(dir / "t"), "whole");
}

TEST_F(FileIo, SetsAreSwappedInWhole) {
  fs::path out = dir / "tables";
  write_output_set(out, {{"a.toml", "1"}, {"b.toml", "2"}});
  EXPECT_EQ(read_text_file(out / "a.toml"), "1");
  put(out / ".a.toml.tmp.Zz9Zz9", "left by an older version");
  ::chmod((out / "b.toml").c_str(), 0600);
  write_output_set(out, {{"b.toml", "3"}, {"c.toml", "4"}});
  EXPECT_FALSE(fs::exists(out / "a.toml")); // not in the new set
  EXPECT_FALSE(fs::exists(out / ".a.toml.tmp.Zz9Zz9"));
  EXPECT_EQ(read_text_file(out / "b.toml"), "3");
  EXPECT_EQ(mode_of(out / "b.toml"), 0600u);
  EXPECT_EQ(read_text_file(out / "c.toml"), "4");
  size_t entries = 0;
  for (auto &e : fs::directory_iterator(dir))
    entries += e.path().filename() != "tables";
  EXPECT_EQ(entries, 0u) << "no temporary left beside the set";

  put(out / "notes.md", "mine");
  EXPECT_EQ(code_of([&] { write_output_set(out, {{"b.toml", "5"}}); }), "ANEC-IO-006");
  EXPECT_EQ(read_text_file(out / "b.toml"), "3");
  EXPECT_EQ(code_of([&] { write_output_set(out / "b.toml", {{"x.toml", "5"}}); }), "ANEC-IO-006");
  fs::remove(out / "notes.md");
  fs::path here = fs::current_path();
  fs::current_path(out); // the folder a process stands in is never swapped away
  EXPECT_EQ(code_of([&] { write_output_set(".", {{"b.toml", "5"}}); }), "ANEC-IO-006");
  EXPECT_EQ(code_of([&] { write_output_set(dir, {{"b.toml", "5"}}); }), "ANEC-IO-006");
  fs::current_path(here);
  write_output_set(out.string() + "/", {{"b.toml", "6"}}); // a trailing separator names the folder
  EXPECT_EQ(read_text_file(out / "b.toml"), "6");
}

// A set dir left half-written by a killed run (this version's staging directory) is removed by
// the next run beside it.
TEST_F(FileIo, StagingDirectoriesOfKilledRunsAreRemoved) {
  fs::path staging = dir / (".tables.anec-tmp-" + std::to_string(dead_pid()) + "-0");
  fs::create_directories(staging);
  put(staging / "a.toml", "part");
  write_output_set(dir / "tables", {{"a.toml", "1"}});
  EXPECT_FALSE(fs::exists(staging));
}

// Killed at any moment, a set writer leaves the old set or the new one, never a mix.
TEST_F(FileIo, KillNineLeavesOneWholeSet) {
  fs::path out = dir / "tables";
  std::vector<std::pair<std::string, std::string>> old_set, new_set;
  for (int i = 0; i < 28; ++i) {
    old_set.push_back({"t" + std::to_string(i) + ".toml", std::string(20000, 'o')});
    new_set.push_back({"t" + std::to_string(i) + ".toml", std::string(20000, 'n')});
  }
  auto start = std::chrono::steady_clock::now();
  write_output_set(out, new_set);
  auto whole = std::chrono::steady_clock::now() - start; // the kills are spread over one run
  const int rounds = 16;
  for (int round = 0; round <= rounds; ++round) {
    write_output_set(out, old_set);
    pid_t pid = ::fork();
    if (pid == 0) {
      write_output_set(out, new_set);
      ::_exit(0);
    }
    std::this_thread::sleep_for(whole * round / rounds);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    std::set<char> seen;
    size_t files = 0;
    for (auto &e : fs::directory_iterator(out)) {
      ++files;
      seen.insert(read_text_file(e.path())[0]);
    }
    EXPECT_EQ(files, 28u) << "round " << round;
    EXPECT_EQ(seen.size(), 1u) << "round " << round << ": a mix of old and new tables";
  }
}

// The streaming hash agrees with the one-shot hash whatever the split.
TEST(Sha256Stream, PiecesHashAsTheWhole) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i * 7);
  std::string whole = sha256_hex(data);
  for (size_t cut : {0, 1, 55, 56, 63, 64, 65, 999, 1000}) {
    Sha256 s;
    s.update(std::span(data).subspan(0, cut));
    s.update(std::span(data).subspan(cut));
    EXPECT_EQ(s.hex_digest(), whole) << cut;
  }
}

// A truncated JSON dump used to echo up to 33 KB of its input in one error line (the parser quotes
// the token it was reading); the message now quotes an excerpt.
TEST(ErrorMessages, QuoteOnlyAnExcerptOfTheInput) {
  std::string truncated = "{\"regions\": [\"" + std::string(40000, 'a'); // a string that never ends
  try {
    json::parse(truncated, "dump.json");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-JSON-001");
    EXPECT_LT(std::string(e.what()).size(), 400u) << std::string(e.what()).substr(0, 400);
    EXPECT_NE(std::string(e.what()).find("more bytes)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_EQ(excerpt(std::string(100, 'x'), 10), "xxxxxxxxxx... (90 more bytes)");
}

// same_text agrees with == on every length its word compares cover and past them, whichever byte
// differs (the first, one in the middle, the last), and on texts of different lengths.
TEST(SameText, AgreesWithEqualityOnEveryLengthAndByte) {
  for (size_t n = 0; n <= 20; ++n) {
    std::string a(n, 'x'), b = a;
    for (size_t k = 0; k < n; ++k)
      a[k] = b[k] = char('a' + k);
    EXPECT_TRUE(same_text(a, b)) << n;
    EXPECT_FALSE(same_text(a, b + "y")) << n;
    for (size_t k = 0; k < n; ++k) {
      std::string c = b;
      c[k] = '#';
      EXPECT_FALSE(same_text(a, c)) << n << " at " << k;
    }
  }
}

// text_hash keeps apart names that differ only in their last characters, in its low bits (which a
// table of 2^k slots takes): 100,000 tensor names "t0".."t99999" fill as many of 65,536 slots as a
// random spread would (about 51,000), not a few thousand.
TEST(TextHash, SpreadsNamesThatDifferAtTheEndOverTheLowBits) {
  std::set<uint64_t> slots;
  for (int k = 0; k < 100000; ++k)
    slots.insert(text_hash("t" + std::to_string(k)) & 0xffff);
  EXPECT_GT(slots.size(), 48000u);
  EXPECT_NE(text_hash("abcdefgh"), text_hash("abcdefg"));
  EXPECT_NE(text_hash(""), text_hash(std::string(1, '\0')));
}

// A corpus lists every entry named like an input, whatever it is: a link to itself (which ended every
// tool's directory run with "Too many levels of symbolic links"), a dangling link, a FIFO, a folder
// named like a file. Reading each gives its row and reason; others are not inputs.
TEST_F(FileIo, ACorpusListsEveryEntryNamedLikeAnInput) {
  fs::create_symlink("loop.json", dir / "loop.json");
  fs::create_symlink("missing.json", dir / "dangling.json");
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  fs::create_directories(dir / "folder.json");
  put(dir / "good.json", "{}");
  put(dir / "notes.txt", "not an input");
  std::vector<std::string> names;
  for (const fs::path &p : input_files({dir.string()}, {".json"}))
    names.push_back(p.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"dangling.json", "fifo.json", "folder.json", "good.json",
                                             "loop.json"}));
  EXPECT_EQ(code_of([&] { read_file(dir / "loop.json"); }), "ANEC-IO-001");
  EXPECT_EQ(code_of([&] { read_file(dir / "folder.json"); }), "ANEC-IO-004");
}
