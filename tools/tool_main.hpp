// The tools' shared entry: an optional leading `--tables DIR` (or `--tables=DIR`), usage on stderr
// with exit 2 when no command is given and on stdout with exit 0 for -h, --help or help; the command
// table in its machine form for `--command-table`; a command's own help, exit 0, for `help COMMAND` and
// for -h or --help anywhere after the command, whatever else is given or missing; an unknown command
// (or a group without its subcommand) is ANEC-CLI-001; else the command's handler, given its parsed
// command line, inside the error boundary.
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

// A group named without one of its subcommands ("package", "package bogus"): ANEC-CLI-001 naming them.
[[noreturn]] inline void throw_missing_subcommand(const ToolTable &t, const std::vector<std::string> &words) {
  std::vector<std::string> subs;
  for (const Command &c : t.commands)
    if (c.name.starts_with(words[0] + " "))
      subs.emplace_back(c.name.substr(words[0].size() + 1));
  std::string list;
  for (size_t i = 0; i < subs.size(); ++i)
    list += (i == 0 ? "" : i + 1 == subs.size() ? " or " : ", ") + subs[i];
  if (words.size() < 2 || words[1].starts_with("-"))
    throw Error("ANEC-CLI-001", words[0] + " needs " + list);
  throw Error("ANEC-CLI-001", words[0] + " " + words[1] + " is not " + list);
}

// The command `words` begin with, its handler run on the rest.
inline int run_command(const ToolTable &t, const std::string &tables, std::vector<std::string> words) {
  std::string name = command_of(t, words);
  const Command *command = find_command(t, name);
  if (!command)
    throw_missing_subcommand(t, words);
  words.erase(words.begin(), words.begin() + (name.find(' ') == std::string::npos ? 1 : 2));
  std::filesystem::path dir = use_tables(tables);
  return command->run(dir, parse_command_line(*command, words));
}

inline int tool_main(const ToolTable &tool, int argc, char **argv) {
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
    if (args.size() == 1 && args[0] == "--command-table") {
      std::string json = table_json(tool);
      std::fputs(json.c_str(), stdout);
      return 0;
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
    return run_command(tool, tables, args);
  });
}

} // namespace anec::tools
