// A tool's commands, declared once: each command's positional arguments and options (value, choices,
// default, help), its paragraph and its handler. The parsing (command_line.cpp), the usage lines,
// `TOOL --help`, `TOOL COMMAND --help`, `TOOL help COMMAND`, the man page and the completions
// (completions/anec-shell-gen.cpp reads the table from `TOOL --command-table`) all come from it.
#pragma once
#include "anec/support/error.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace anec::tools {

// What completes a value or a positional argument in the shells.
enum class Completion { none, files, dirs, targets, targets_or_all, targets_or_files };

// The machine form's name of a completion ("targets_or_all"), and back (ANEC-CLI-001 for none).
std::string_view completion_name(Completion c);
Completion completion_named(std::string_view name);

struct Option {
  std::string_view name = {};     // the long name: "format" is --format
  char short_name = 0;            // 'o' is -o; 0 for none
  std::string_view value = {};    // the value's placeholder ("FILE", "N"); empty with choices, or for a flag
  std::string_view choices = {};  // "text|json|csv": the only values accepted (else ANEC-CLI-002)
  std::string_view fallback = {}; // the value when the option is not given
  bool repeatable = false;        // each of several values kept (--dim a=1 --dim b=2)
  bool required = false;          // the command refuses to run without it (its usage shows it unbracketed)
  bool long_in_usage = false;     // the usage spells the long name though there is a short one
  Completion completes = Completion::none;
  std::string_view help = {}; // one line: what the option does
};

struct Positional {
  std::string_view name = {}; // "MODEL", "TARGET|FILE.toml"
  int min = 1;                // how many the command needs
  int max = 1;                // how many it takes, -1 for any number
  Completion completes = Completion::files;
};

// The output formats most commands offer.
inline constexpr Option kFormatTextJson{
    .name = "format", .choices = "text|json", .fallback = "text", .help = "the output format"};
inline constexpr Option kFormatTextJsonCsv{
    .name = "format", .choices = "text|json|csv", .fallback = "text", .help = "the output format"};

class Args;
// A command's work: the tables directory and its parsed command line; the exit code.
using Handler = int (*)(const std::filesystem::path &tables, const Args &args);

struct Command {
  std::string_view name = {}; // "check", or a command with a subcommand, "package build"
  std::span<const Positional> positionals = {};
  std::span<const Option> options = {};
  std::string_view about = {}; // what it does, in a paragraph
  Handler run = nullptr;
};

struct ToolTable {
  std::string_view name;
  std::span<const Command> commands;
  std::string_view about;    // what the tool does, after the usage lines and before the commands
  std::string_view epilogue; // the last lines of `TOOL --help` (the exit codes)
};

// One command line, parsed against its command's table (parse_command_line, command_line.cpp).
class Args {
public:
  explicit Args(const Command &command) : command_(&command) {}

  std::string_view command() const { return command_->name; }
  const std::vector<std::string> &positional() const { return positional_; }
  // The option's last value, else its default, else "".
  const std::string &value(std::string_view option) const;
  // Every value of a repeatable option, in order.
  const std::vector<std::string> &values(std::string_view option) const;
  bool given(std::string_view option) const;
  // The option's value (or default) as a real number: ANEC-CLI-002 when it is not one.
  double number(std::string_view option) const;

private:
  friend Args parse_command_line(const Command &command, const std::vector<std::string> &words);
  const Option &option(std::string_view name) const;

  const Command *command_;
  std::vector<std::string> positional_;
  std::map<std::string, std::vector<std::string>, std::less<>> given_;
  std::vector<std::string> defaults_; // the defaults value() returns, kept alive
};

// Parses `words` (the arguments after the command) into the options and positional arguments of
// `command`: an unknown option, a repeated one or too many arguments is ANEC-CLI-001, a value not
// among an option's choices ANEC-CLI-002.
Args parse_command_line(const Command &command, const std::vector<std::string> &words);

// The options' choices as a list: "text|json|csv" gives text, json, csv.
std::vector<std::string> choices_of(const Option &o);
// How the usage writes an option: "-o FILE", "[--format text|json]", "[--dim NAME=N ...]", "[--all]".
std::string usage_item(const Option &o);
// How a command's option list writes it: "-o, --output FILE".
std::string option_form(const Option &o);
// What the option list says after the help: choices, default, repetition.
std::string option_notes(const Option &o);
// The command's arguments and options as the usage writes them, in order.
std::vector<std::string> synopsis_items(const Command &c);

// The tool's whole usage text: every command's usage line, the tool's description, each command's
// paragraph, the epilogue.
std::string usage_text(const ToolTable &t);
// Whether `words` (a command, or a command and its subcommand) names a command or a group of them.
bool names_command(const ToolTable &t, std::string_view words);
// The command `words` name exactly, or null (a group, "package", or no command).
const Command *find_command(const ToolTable &t, std::string_view words);
// The help of one command, or of a group (`package` gives every `package ...`): its usage lines,
// paragraphs and options, then the tool's description and the epilogue. ANEC-CLI-001 when the table has
// no such command.
std::string command_help(const ToolTable &t, std::string_view command);
// The table in a machine form (JSON), read by the generator of the man pages and completions.
std::string table_json(const ToolTable &t);

} // namespace anec::tools
