// Test helper: run one of the command-line tools against a tables directory and capture its exit
// status, stdout and stderr (each call in its own scratch directory).
#pragma once
#include "anec/support/file.hpp"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace anec::test {

struct ToolRun {
  int status;
  std::string out, err;
};

inline ToolRun run_tool(const std::string &tool, const std::string &tables, const std::string &args) {
  static std::atomic<unsigned> calls{0};
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("anec-tool-" + std::to_string(::getpid()) + "-" + std::to_string(calls++));
  fs::create_directories(dir);
  std::string cmd = tool + " --tables " + tables + " " + args + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  int st = std::system(cmd.c_str());
  ToolRun r{WIFEXITED(st) ? WEXITSTATUS(st) : -1, read_text_file(dir / "out"), read_text_file(dir / "err")};
  fs::remove_all(dir);
  return r;
}

} // namespace anec::test
