// The anec-hal command line: exit codes, reason codes on stderr, no partial output files, goldens.
#include "anec/support/file.hpp"
#include "../run_tool.hpp"
#include "paths.hpp"

#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

using Result = anec::test::ToolRun;

class Cli : public ::testing::Test {
protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("anec-cli-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  Result run(const std::string &args) { return anec::test::run_tool(anec::test::tool("anec-hal").string(), anec::test::tables().string(), args); }
  void write(const fs::path &p, const std::vector<uint8_t> &b) { anec::write_output(p, b); }
};

} // namespace

TEST_F(Cli, ListPrintsAllTargetsMatchingGolden) {
  Result r = run("list");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, anec::read_text_file(anec::test::golden() / "anec-hal-list.txt"));
}

TEST_F(Cli, ShowMatchesGoldenInEveryFormat) {
  for (const char *fmt : {"text", "json", "toml"}) {
    Result r = run(std::string("show M1 --format ") + fmt);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, anec::read_text_file(anec::test::golden() / (std::string("anec-hal-show-h13.") + fmt))) << fmt;
  }
}

TEST_F(Cli, DiffMatchesGolden) {
  Result r = run("diff h13 h17s");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, anec::read_text_file(anec::test::golden() / "anec-hal-diff-h13-h17s.txt"));
}

TEST_F(Cli, EncodeThenDecodeReproducesTheTable) {
  fs::path blob = dir / "h16.bin", toml = dir / "h16.toml";
  ASSERT_EQ(run("encode h16 -o " + blob.string()).status, 0);
  EXPECT_EQ(fs::file_size(blob), 0x938u);
  Result d = run("decode " + blob.string() + " --target h16 -o " + toml.string());
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_EQ(anec::read_text_file(toml), anec::read_text_file(anec::test::tables() / "targets" / "h16.toml"));
  // The file form of encode, and diff of a blob against its target: nothing differs.
  fs::path blob2 = dir / "again.bin";
  ASSERT_EQ(run("encode " + toml.string() + " -o " + blob2.string()).status, 0);
  EXPECT_EQ(anec::read_file(blob), anec::read_file(blob2));
  Result df = run("diff " + blob.string() + " h16 --target-a h16");
  EXPECT_EQ(df.status, 0) << df.err;
  EXPECT_NE(df.out.find("\n0 fields differ"), std::string::npos) << df.out;
}

TEST_F(Cli, BadBlobsFailWithReasonAndLeaveNoOutput) {
  fs::path blob = dir / "h13.bin", out = dir / "out.toml";
  ASSERT_EQ(run("encode h13 -o " + blob.string()).status, 0);
  auto bytes = anec::read_file(blob);
  auto shorter = bytes;
  shorter.resize(100);
  write(dir / "short.bin", shorter);
  bytes.push_back(0);
  write(dir / "long.bin", bytes);
  for (const char *name : {"short.bin", "long.bin"}) {
    Result r = run("decode " + (dir / name).string() + " --target h13 -o " + out.string());
    EXPECT_EQ(r.status, 2) << name;
    EXPECT_NE(r.err.find("ANEC-HAL-001"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  Result missing = run("decode " + (dir / "nothing.bin").string() + " --target h13");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("ANEC-IO-001"), std::string::npos);
}

TEST_F(Cli, OutOfRangeValueInADefinitionFails) {
  std::string text = anec::read_text_file(anec::test::tables() / "targets" / "h13.toml");
  text.replace(text.find("offset = 0x81d, value = 0"), 25, "offset = 0x81d, value = 256");
  anec::write_output(dir / "h13.toml", text);
  fs::path out = dir / "h13.bin";
  Result r = run("encode " + (dir / "h13.toml").string() + " -o " + out.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ANEC-HAL-004"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("h13.toml:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, UnknownTargetSuggestsClosest) {
  Result r = run("show h17z");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ANEC-HAL-006: unknown target 'h17z'; closest: h17"), std::string::npos) << r.err;
}

TEST_F(Cli, UsageErrors) {
  EXPECT_EQ(run("frobnicate").status, 2);
  EXPECT_EQ(run("list --format yaml").status, 2);
  EXPECT_EQ(run("decode x.bin").status, 2);
  // An unknown command, a missing required option and an unknown option: ANEC-CLI-001.
  struct Case {
    const char *args, *message;
  } cases[] = {{"frobnicate", "ANEC-CLI-001: unknown command 'frobnicate'"},
               {"decode x.bin", "ANEC-CLI-001: decode needs --target (decode BLOB --target TARGET"},
               {"list --colour", "ANEC-CLI-001: unrecognised option '--colour'"}};
  for (const Case &c : cases) {
    Result r = run(c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
  Result h = run("--help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("generate"), std::string::npos);
}

TEST_F(Cli, ValidateExitCodes) {
  EXPECT_EQ(run("validate --all").status, 0);
  std::string good = anec::read_text_file(anec::test::tables() / "targets" / "h13g.toml");
  std::string bad = good;
  bad.replace(bad.find("offset = 0x238, value = 8"), 25, "offset = 0x238, value = 2");
  anec::write_output(dir / "bad.toml", bad);
  Result r = run("validate " + (dir / "bad.toml").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("ANEC-HAL-102 error h13g.num_nes"), std::string::npos) << r.out;
  anec::write_output(dir / "broken.toml", good.substr(0, good.size() / 2) + "\n[[[");
  Result p = run("validate " + (dir / "broken.toml").string());
  EXPECT_EQ(p.status, 2);
  EXPECT_NE(p.err.find("ANEC-TOML-001"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("broken.toml:"), std::string::npos) << p.err;
}

TEST_F(Cli, GenerateCheckAndFreshOutput) {
  Result c = run("generate --check");
  EXPECT_EQ(c.status, 0) << c.out << c.err;
  Result g = run("generate -q -o " + dir.string());
  ASSERT_EQ(g.status, 0) << g.err;
  size_t n = 0;
  for (auto &e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".toml") continue;
    ++n;
    EXPECT_EQ(anec::read_text_file(e.path()), anec::read_text_file(anec::test::tables() / "targets" / e.path().filename()));
  }
  EXPECT_EQ(n, 28u);
}

TEST_F(Cli, ExtractWritesTheCommittedTables) {
  Result r = run("extract " + anec::test::fixture("libhal_Os.dylib").string() + " -o " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("extract: 28 table(s)"), std::string::npos) << r.err;
  size_t n = 0;
  for (auto &e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".toml") continue;
    ++n;
    std::string text = anec::read_text_file(e.path());
    size_t cut = text.find("\n\n[extraction]\n"); // the definition, then a blank line and [extraction]
    ASSERT_NE(cut, std::string::npos) << e.path();
    EXPECT_EQ(text.substr(0, cut + 1), anec::read_text_file(anec::test::tables() / "targets" / e.path().filename()));
  }
  EXPECT_EQ(n, 28u);
  EXPECT_EQ(run("validate " + (dir / "h17s.toml").string()).status, 0);
}

// A binary whose classes the registry does not list (ZinIrHal<ZinIrTargetH13>, ...): every table is
// written; the report says which match their target's table, which differ (h14) and which are new
// (h19, nearest h18), and diff shows the fields that differ.
TEST_F(Cli, ExtractReportsChangedAndNewTargets) {
  Result r = run("extract " + anec::test::fixture("libhal_prefix.dylib").string() + " -o " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("h14       ZinIrHal<ZinIrTargetH14>::CreateParams()  [sret (x8)]\n"
                       "  differs from the table of h14 in 1 field: max_tensor_width\n"
                       "  see: anec-hal diff h14 " +
                       (dir / "h14.toml").string() + "\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("h19       ZinIrHal<ZinIrTargetH19>::GetParams()  [this (x0)]\n"
                       "  new target; nearest known target h18, 1 field differs: num_nes\n"
                       "  see: anec-hal diff --table h18 " +
                       (dir / "h19.toml").string() + "\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(
                "h13       ZinIrHal<ZinIrTargetH13>::GetParams()  [this (x0)]\n  matches the table of h13\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("29 table(s), 1 of new targets\n"), std::string::npos) << r.out;
  Result d = run("diff h14 " + (dir / "h14.toml").string());
  EXPECT_EQ(d.status, 0) << d.err;
  EXPECT_NE(
      d.out.find(
          "0x138   max_tensor_width                  16384                     ≠ 32768\n1 fields differ\n"),
      std::string::npos)
      << d.out;
  Result n = run("diff --table h18 " + (dir / "h19.toml").string());
  EXPECT_EQ(n.status, 0) << n.err;
  EXPECT_NE(n.out.find(
                "0x238   num_nes                           4                         ≠ 8\n1 fields differ\n"),
            std::string::npos)
      << n.out;
  std::string h19 = anec::read_text_file(dir / "h19.toml");
  EXPECT_NE(
      h19.find(
          "class = \"ZinIrTargetH19\"\nstatus = \"new target; nearest known target h18, 1 field differs\"\n"),
      std::string::npos)
      << h19;
}

TEST_F(Cli, ExtractErrorsExitTwoWithoutOutput) {
  struct Case {
    std::string args, code;
  } cases[] = {{"libhal_loop.dylib --max-instructions 100000", "ANEC-EMU-002"},
               {"libhal_import.dylib", "ANEC-EMU-003"},
               {"libhal_nothing.dylib", "ANEC-EXT-001"},
               {"libhal_decoys.dylib", "ANEC-EXT-001"},
               {"riscv.o", "ANEC-BIN-003"},
               {"libhal_O2.dylib --targets h99", "ANEC-HAL-006"}};
  for (auto &c : cases) {
    std::string file = c.args.substr(0, c.args.find(' ')), rest = c.args.substr(file.size());
    Result r = run("extract " + anec::test::fixture(file.c_str()).string() + rest + " -o " + dir.string());
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find(c.code), std::string::npos) << c.args << ": " << r.err;
  }
  auto bytes = anec::read_file(anec::test::fixture("libhal_O2.dylib"));
  bytes.resize(bytes.size() / 3);
  write(dir / "cut.dylib", bytes);
  Result t = run("extract " + (dir / "cut.dylib").string() + " -o " + dir.string());
  EXPECT_EQ(t.status, 2);
  EXPECT_NE(t.err.find("ANEC-BIN-001"), std::string::npos) << t.err;
  for (auto &e : fs::directory_iterator(dir)) EXPECT_NE(e.path().extension(), ".toml") << e.path();
}

// The emulator limits: 0 must not mean "no timeout", "-1" must not wrap to 2^64-1, and a value
// past the documented maximum is rejected (ANEC-CLI-002 naming the option and the text), before
// the binary is read.
TEST_F(Cli, ExtractLimitsAreStrict) {
  std::string binary = anec::test::fixture("libhal_O2.dylib").string();
  struct Case {
    std::string args, quoted;
  } cases[] = {{"--timeout-ms -1", "--timeout-ms '-1' has a sign"},
               {"--timeout-ms=-1", "--timeout-ms '-1' has a sign"},
               {"--timeout-ms 0", "--timeout-ms '0' is out of range"},
               {"--timeout-ms 3600001", "--timeout-ms '3600001' is out of range"},
               {"--timeout-ms 18446744073709551615", "--timeout-ms '18446744073709551615' is out of range"},
               {"--timeout-ms 20s", "--timeout-ms '20s' has text after the number"},
               {"--max-instructions -1", "--max-instructions '-1' has a sign"},
               {"--max-instructions 0", "--max-instructions '0' is out of range"},
               {"--max-instructions 1000000000001", "--max-instructions '1000000000001' is out of range"}};
  for (auto &c : cases) {
    Result r = run("extract " + binary + " " + c.args + " -o " + dir.string());
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find("ANEC-CLI-002: " + c.quoted), std::string::npos) << c.args << ": " << r.err;
  }
  for (auto &e : fs::directory_iterator(dir)) EXPECT_NE(e.path().extension(), ".toml") << e.path();
  Result ok = run("extract " + binary + " --targets h13 --timeout-ms 3600000 --max-instructions 0x4c4b40 -o " +
                  dir.string());
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST_F(Cli, XrefMatchesGolden) {
  Result r = run("xref " + anec::test::fixture("libhal_O2.dylib").string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::string out = r.out;
  // Addresses depend on the compiler that built the fixture: compare without them.
  for (size_t at; (at = out.find("  [0x")) != std::string::npos;) out.erase(at + 3, out.find(", ", at) + 2 - (at + 3));
  EXPECT_EQ(out, anec::read_text_file(anec::test::golden() / "anec-hal-xref.txt"));
}

// A run killed during generate left hidden temporaries that no later run removed, and a table set
// part old, part new; now the set is swapped in whole and the next run clears what a killed one
// left: its staging directory beside the tables and an older version's temporaries among them.
TEST_F(Cli, GenerateReplacesTheSetAndClearsWhatKilledRunsLeft) {
  fs::path out = dir / "targets";
  ASSERT_EQ(run("generate -q -o " + out.string()).status, 0);
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  fs::path staging = dir / (".targets.anec-tmp-" + std::to_string(gone) + "-0");
  fs::create_directories(staging);
  write(staging / "h13.toml", {'x'});
  write(out / ".h13.toml.tmp.a1B2c3", {'x'});
  write(out / "h13.toml", {'o', 'l', 'd'});
  write(out / "h99.toml", {'o', 'l', 'd'}); // a table of an earlier lineup: not in the new set
  ASSERT_EQ(run("generate -q -o " + out.string()).status, 0);
  EXPECT_FALSE(fs::exists(staging));
  EXPECT_FALSE(fs::exists(out / ".h13.toml.tmp.a1B2c3"));
  EXPECT_FALSE(fs::exists(out / "h99.toml"));
  EXPECT_EQ(anec::read_text_file(out / "h13.toml"),
            anec::read_text_file(anec::test::tables() / "targets" / "h13.toml"));
  write(out / "README", {'x'}); // not a table: the directory is not the tool's to replace
  write(out / "h13.toml", {'o', 'l', 'd'});
  Result r = run("generate -q -o " + out.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ANEC-IO-006"), std::string::npos) << r.err;
}

// Output lost on standard output (a full disk) used to end with exit 0.
TEST_F(Cli, LostStandardOutputIsAnError) {
  std::string cmd = anec::test::tool("anec-hal").string() + " --tables " + anec::test::tables().string() +
                    " list > /dev/full 2> " + (dir / "err").string();
  int st = std::system(cmd.c_str());
  EXPECT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 2);
  EXPECT_NE(anec::read_text_file(dir / "err").find("ANEC-IO-005"), std::string::npos);
}

// Every file-taking command used to block forever on a FIFO; now it is refused at once.
TEST_F(Cli, FifoInputsAreRefused) {
  fs::path fifo = dir / "in.bin";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (std::string c : {"xref ", "extract ", "decode ", "validate "}) {
    Result r = run(c + fifo.string() + (c == "extract " ? " -o " + (dir / "o").string() : "") +
                   (c == "decode " ? " --target h13" : ""));
    EXPECT_EQ(r.status, 2) << c;
    EXPECT_NE(r.err.find("ANEC-IO-004"), std::string::npos) << c << r.err;
  }
}
