// Every command that takes a file rejects a 1 GiB file of zeros in bounded memory: the size or the
// magic is checked before the bytes are read, hashed or copied. The peak resident set of each run
// (wait4's ru_maxrss) is printed and held to 64 MB. Skipped in the sanitizer build, whose shadow
// memory is not the program's.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Outcome {
  int status;
  long peak_kb;
};

// Runs argv with stdout and stderr sent to /dev/null.
Outcome run(const std::vector<std::string> &argv) {
  std::fflush(stdout); // or the child's freopen writes what this process had buffered
  pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    std::vector<char *> args;
    for (const auto &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int st = 0;
  struct rusage ru {};
  ::wait4(pid, &st, 0, &ru);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), ru.ru_maxrss};
}

std::string tool(const char *name) {
  return std::string(ANEC_TEST_TOOLS_DIR) + "/" + name;
}

} // namespace

TEST(HostileInputs, OneGibibyteOfZerosIsRejectedInBoundedMemory) {
#ifdef ANEC_TEST_SANITIZED
  GTEST_SKIP() << "peak memory is measured in the unsanitized build";
#endif
  fs::path dir = fs::temp_directory_path() / ("anec-hostile-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path zeros = dir / "zeros.bin";
  std::ofstream(zeros).close();
  fs::resize_file(zeros, 1ull << 30); // sparse: no disk used
  for (const char *ext : {".onnx", ".json", ".plist", ".hwx", ".toml"})
    fs::create_symlink(zeros, dir / ("zeros" + std::string(ext)));
  auto in = [&](const char *ext) { return (dir / ("zeros" + std::string(ext))).string(); };
  std::string out = (dir / "out").string(), tables = std::string("--tables=") + ANEC_TEST_TABLES_DIR;
  const std::vector<std::vector<std::string>> commands = {
      {tool("anec-hal"), tables, "xref", in(".bin")},
      {tool("anec-hal"), tables, "extract", in(".bin"), "-o", out},
      {tool("anec-hal"), tables, "decode", in(".bin"), "--target", "h13"},
      {tool("anec-hal"), tables, "validate", in(".toml")},
      {tool("anec-desc"), tables, "dump", in(".hwx")},
      {tool("anec-desc"), tables, "audit", in(".hwx")},
      {tool("anec-desc"), tables, "encode", in(".json"), "-o", out},
      {tool("anec-fw"), tables, "tables", in(".bin")},
      {tool("anec-fw"), tables, "validate", in(".bin")},
      {tool("anec-fw"), tables, "package", "read", in(".bin")},
      {tool("anec-fw"), tables, "package", "audit", in(".bin")},
      {tool("anec-fw"), tables, "package", "build", in(".hwx"), "-o", out},
      {tool("anec-fw"), tables, "im4p", "unwrap", in(".bin"), "-o", out},
      {tool("anec"), tables, "check", in(".onnx"), "--target", "h13"},
      {tool("anec"), tables, "check", in(".json"), "--target", "h13"},
      {tool("anec"), tables, "estimate", in(".plist"), "--target", "h13"},
      {tool("anec"), tables, "report", in(".json"), "--target", "h13", "-o", out},
      {tool("anec-desc"), tables, "dump", in(".hwx"), "--format", "html"},
  };
  for (const auto &c : commands) {
    Outcome r = run(c);
    std::string what = fs::path(c[0]).filename().string();
    for (size_t i = 2; i < c.size() && c[i] != "-o"; ++i)
      what += " " + fs::path(c[i]).filename().string();
    std::printf("  %-34s exit %d, peak %6ld KB\n", what.c_str(), r.status, r.peak_kb);
    EXPECT_EQ(r.status, 2) << what;
    EXPECT_LE(r.peak_kb, 64 * 1024) << what;
  }
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}
