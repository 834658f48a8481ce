// The tools' shared entry: an optional leading `--tables DIR` (or `--tables=DIR`), usage on stderr
// with exit 2 when no command is given and on stdout with exit 0 for -h, --help or help; a command's
// own help, exit 0, for `help COMMAND` and for -h or --help anywhere after the command, whatever else
// is given or missing; an unknown command is ANEC-CLI-001; else `run(command, tables, remaining_args)`
// inside the error boundary.
#pragma once
#include "anec/support/tables_path.hpp"
#include "command_table.hpp"
#include "guarded.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace anec::tools {

// The command `words` name: the first, with the second when the two name a subcommand ("package build").
inline std::string command_of(const ToolTable &t, const std::vector<std::string> &words) {
  if (words.size() >= 2 && names_command(t, words[0] + " " + words[1]))
    return words[0] + " " + words[1];
  return words.empty() ? "" : words[0];
}

template <typename Run> int tool_main(const ToolTable &tool, int argc, char **argv, Run &&run) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string name(tool.name);
  return guarded(name.c_str(), [&]() -> int {
    std::string tables;
    while (!args.empty() && (args[0] == "--tables" || args[0].rfind("--tables=", 0) == 0)) {
      if (args[0] == "--tables") {
        if (args.size() < 2)
          throw Error("ANEC-CLI-001", "--tables needs a directory");
        tables = args[1];
        args.erase(args.begin(), args.begin() + 2);
      } else {
        tables = args[0].substr(9);
        args.erase(args.begin());
      }
    }
    auto is_help = [](const std::string &a) { return a == "-h" || a == "--help"; };
    if (args.empty() || is_help(args[0]) || (args[0] == "help" && args.size() == 1)) {
      std::string usage = usage_text(tool);
      std::fputs(usage.c_str(), args.empty() ? stderr : stdout);
      return args.empty() ? 2 : 0;
    }
    bool help = args[0] == "help";
    if (help)
      args.erase(args.begin());
    help = help || std::any_of(args.begin() + 1, args.end(), is_help);
    if (help || !names_command(tool, args[0])) {
      std::string text = command_help(tool, command_of(tool, args)); // ANEC-CLI-001 when unknown
      std::fputs(text.c_str(), stdout);
      return 0;
    }
    std::string cmd = args[0];
    args.erase(args.begin());
    return run(cmd, use_tables(tables), args);
  });
}

} // namespace anec::tools
