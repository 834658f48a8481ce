// A tool's commands, declared once: its usage text (`TOOL --help`, from which the man page and the
// completions are made: completions/anec-shell-gen.cpp), `TOOL COMMAND --help` and
// `TOOL help COMMAND` all come from this table.
#pragma once
#include "anec/support/error.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace anec::tools {

struct Command {
  std::string_view name;     // "check", or a command with a subcommand, "package build"
  std::string_view synopsis; // its arguments and options; a line break continues them on an indented line
  std::string_view about;    // what it does and what its options mean, in a paragraph
};

struct ToolTable {
  std::string_view name;
  std::span<const Command> commands;
  std::string_view about;    // what the tool does, after the usage lines and before the commands
  std::string_view epilogue; // the last lines of `TOOL --help` (the exit codes)
};

namespace detail {

// Whether `c` is `command` or one of its subcommands ("package" holds "package build").
inline bool in_group(const Command &c, std::string_view command) {
  return command.empty() || c.name == command ||
         (c.name.size() > command.size() && c.name.starts_with(command) && c.name[command.size()] == ' ');
}

// "usage: TOOL [--tables DIR] NAME SYNOPSIS" for each command of the group, the first line so, the next
// ones aligned under it, a synopsis' continuation lines indented to its start.
inline std::string usage_lines(const ToolTable &t, std::string_view command) {
  std::string out, indent = "\n" + std::string(t.name.size() + 23, ' ');
  for (const Command &c : t.commands) {
    if (!in_group(c, command))
      continue;
    out += (out.empty() ? "usage: " : "       ") + std::string(t.name) + " [--tables DIR] " +
           std::string(c.name);
    for (size_t at = 0, end; at < c.synopsis.size(); at = end + 1) {
      end = std::min(c.synopsis.find('\n', at), c.synopsis.size());
      out += (at ? indent : " ") + std::string(c.synopsis.substr(at, end - at));
    }
    out += "\n";
  }
  return out;
}

} // namespace detail

// The tool's whole usage text: every command's usage line, the tool's description, each command's
// paragraph, the epilogue.
inline std::string usage_text(const ToolTable &t) {
  std::string out = detail::usage_lines(t, "") + "\n" + std::string(t.about);
  for (const Command &c : t.commands)
    out += std::string(c.about);
  return out + std::string(t.epilogue);
}

// Whether `words` (a command, or a command and its subcommand) names a command or a group of them.
inline bool names_command(const ToolTable &t, std::string_view words) {
  return !words.empty() && !detail::usage_lines(t, words).empty();
}

// The help of one command, or of a group (`package` gives every `package ...`): its usage lines and
// paragraphs, then the tool's description (the words its synopsis uses) and the epilogue. ANEC-CLI-001 when
// the table has no such command.
inline std::string command_help(const ToolTable &t, std::string_view command) {
  if (!names_command(t, command))
    throw Error("ANEC-CLI-001",
                "unknown command '" + std::string(command) + "' (see " + std::string(t.name) + " --help)");
  std::string out = detail::usage_lines(t, command) + "\n";
  for (const Command &c : t.commands)
    if (detail::in_group(c, command))
      out += std::string(c.about);
  return out + std::string(t.about) + std::string(t.epilogue);
}

} // namespace anec::tools
