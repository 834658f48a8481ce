// The tools' shared entry: an optional leading `--tables DIR` (or `--tables=DIR`), usage on stderr
// with exit 2 when no command is given and on stdout with exit 0 for -h, --help or help, then
// `run(command, tables, remaining_args)` inside the error boundary.
#pragma once
#include "guarded.hpp"
#include "tables_path.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace anec::tools {

template <typename Run> int tool_main(const char *tool, const char *usage, int argc, char **argv, Run &&run) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return guarded(tool, [&]() -> int {
    std::string tables;
    while (!args.empty() && (args[0] == "--tables" || args[0].rfind("--tables=", 0) == 0)) {
      if (args[0] == "--tables") {
        if (args.size() < 2) throw Error("ANEC-CLI-001", "--tables needs a directory");
        tables = args[1];
        args.erase(args.begin(), args.begin() + 2);
      } else {
        tables = args[0].substr(9);
        args.erase(args.begin());
      }
    }
    if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
      std::fputs(usage, args.empty() ? stderr : stdout);
      return args.empty() ? 2 : 0;
    }
    std::string cmd = args[0];
    args.erase(args.begin());
    return run(cmd, find_tables(tables), args);
  });
}

} // namespace anec::tools
