// The texts a tool's command table gives: the usage lines, the tool's and each command's help, and the
// table's machine form (command_table.hpp).
#include "command_table.hpp"

#include "anec/support/json.hpp"

namespace anec::tools {

namespace {

constexpr size_t kUsageWidth = 110; // the columns of a usage line, wrapped past them
constexpr size_t kHelpColumn = 30;  // where an option's help starts in a command's option list

std::string dashed(const Option &o, bool short_first) {
  if (short_first && o.short_name)
    return std::string("-") + o.short_name;
  return "--" + std::string(o.name);
}

std::string placeholder(const Option &o) {
  return std::string(o.choices.empty() ? o.value : o.choices);
}

bool is_flag(const Option &o) {
  return o.value.empty() && o.choices.empty();
}

std::string positional_item(const Positional &p) {
  std::string item = std::string(p.name) + (p.max == 1 ? "" : "...");
  return p.min == 0 ? "[" + item + "]" : item;
}

// Whether `c` is `command` or one of its subcommands ("package" holds "package build").
bool in_group(const Command &c, std::string_view command) {
  return command.empty() || c.name == command ||
         (c.name.size() > command.size() && c.name.starts_with(command) && c.name[command.size()] == ' ');
}

// "usage: TOOL [--tables DIR] NAME SYNOPSIS" for each command of the group, the first line so, the next
// ones aligned under it, a synopsis wrapped within kUsageWidth onto lines indented to its start.
std::string usage_lines(const ToolTable &t, std::string_view command) {
  std::string out, indent(t.name.size() + 23, ' ');
  for (const Command &c : t.commands) {
    if (!in_group(c, command))
      continue;
    std::string line = (out.empty() ? "usage: " : "       ") + std::string(t.name) + " [--tables DIR] " +
                       std::string(c.name);
    for (const std::string &item : synopsis_items(c)) {
      if (line.size() + 1 + item.size() > kUsageWidth && line.size() > indent.size() + item.size()) {
        out += line + "\n";
        line = indent + item;
      } else {
        line += " " + item;
      }
    }
    out += line + "\n";
  }
  return out;
}

// "options of NAME:" and one line per option: its form, its help and notes from kHelpColumn.
std::string option_list(const Command &c) {
  if (c.options.empty())
    return "";
  std::string out = "\noptions of " + std::string(c.name) + ":\n";
  for (const Option &o : c.options) {
    std::string form = "  " + option_form(o);
    form += form.size() + 2 <= kHelpColumn ? std::string(kHelpColumn - form.size(), ' ')
                                           : "\n" + std::string(kHelpColumn, ' ');
    out += form + std::string(o.help) + option_notes(o) + "\n";
  }
  return out;
}

Doc option_doc(const Option &o) {
  Doc d = Doc::table();
  d.set("name", Doc::string(std::string(o.name)));
  d.set("short", Doc::string(o.short_name ? std::string(1, o.short_name) : ""));
  d.set("value", Doc::string(std::string(o.value)));
  d.set("choices", Doc::string(std::string(o.choices)));
  d.set("default", Doc::string(std::string(o.fallback)));
  d.set("repeatable", Doc::boolean(o.repeatable));
  d.set("required", Doc::boolean(o.required));
  d.set("long_in_usage", Doc::boolean(o.long_in_usage));
  d.set("completes", Doc::string(std::string(completion_name(o.completes))));
  d.set("help", Doc::string(std::string(o.help)));
  return d;
}

Doc positional_doc(const Positional &p) {
  Doc d = Doc::table();
  d.set("name", Doc::string(std::string(p.name)));
  d.set("min", Doc::integer(p.min));
  d.set("max", Doc::integer(p.max));
  d.set("completes", Doc::string(std::string(completion_name(p.completes))));
  return d;
}

Doc command_doc(const Command &c) {
  Doc d = Doc::table(), positionals = Doc::array(), options = Doc::array();
  for (const Positional &p : c.positionals)
    positionals.push(positional_doc(p));
  for (const Option &o : c.options)
    options.push(option_doc(o));
  d.set("name", Doc::string(std::string(c.name)));
  d.set("positionals", std::move(positionals));
  d.set("options", std::move(options));
  d.set("about", Doc::string(std::string(c.about)));
  return d;
}

// The completions' names, in the order of the enumeration.
constexpr std::string_view kCompletionNames[] = {"none",    "files",          "dirs",
                                                 "targets", "targets_or_all", "targets_or_files"};

} // namespace

std::string_view completion_name(Completion c) {
  return kCompletionNames[size_t(c)];
}

Completion completion_named(std::string_view name) {
  auto found = std::find(std::begin(kCompletionNames), std::end(kCompletionNames), name);
  if (found == std::end(kCompletionNames))
    throw Error("ANEC-CLI-001", "no completion is named '" + std::string(name) + "'");
  return Completion(found - std::begin(kCompletionNames));
}

std::vector<std::string> choices_of(const Option &o) {
  std::vector<std::string> out;
  for (size_t at = 0, end; !o.choices.empty() && at <= o.choices.size(); at = end + 1) {
    end = std::min(o.choices.find('|', at), o.choices.size());
    out.emplace_back(o.choices.substr(at, end - at));
  }
  return out;
}

std::string usage_item(const Option &o) {
  std::string item = dashed(o, !o.long_in_usage) + (is_flag(o) ? "" : " " + placeholder(o));
  if (o.repeatable)
    item += " ...";
  return o.required ? item : "[" + item + "]";
}

std::string option_form(const Option &o) {
  std::string names = o.short_name ? dashed(o, true) + ", " + dashed(o, false) : dashed(o, false);
  return is_flag(o) ? names : names + " " + placeholder(o);
}

std::string option_notes(const Option &o) {
  std::string notes;
  if (!o.fallback.empty())
    notes += " (default " + std::string(o.fallback) + ")";
  if (o.repeatable)
    notes += " (repeatable)";
  if (o.required)
    notes += " (required)";
  return notes;
}

std::vector<std::string> synopsis_items(const Command &c) {
  std::vector<std::string> items;
  for (const Positional &p : c.positionals)
    items.push_back(positional_item(p));
  for (const Option &o : c.options)
    items.push_back(usage_item(o));
  return items;
}

std::string usage_text(const ToolTable &t) {
  std::string out = usage_lines(t, "") + "\n" + std::string(t.about);
  for (const Command &c : t.commands)
    out += std::string(c.about);
  return out + std::string(t.epilogue);
}

bool names_command(const ToolTable &t, std::string_view words) {
  return !words.empty() && std::any_of(t.commands.begin(), t.commands.end(),
                                       [&](const Command &c) { return in_group(c, words); });
}

const Command *find_command(const ToolTable &t, std::string_view words) {
  auto found =
      std::find_if(t.commands.begin(), t.commands.end(), [&](const Command &c) { return c.name == words; });
  return found == t.commands.end() ? nullptr : &*found;
}

std::string command_help(const ToolTable &t, std::string_view command) {
  if (!names_command(t, command))
    throw Error("ANEC-CLI-001",
                "unknown command '" + std::string(command) + "' (see " + std::string(t.name) + " --help)");
  std::string out = usage_lines(t, command) + "\n", options;
  for (const Command &c : t.commands)
    if (in_group(c, command)) {
      out += std::string(c.about);
      options += option_list(c);
    }
  return out + options + (options.empty() ? "" : "\n") + std::string(t.about) + std::string(t.epilogue);
}

std::string table_json(const ToolTable &t) {
  Doc d = Doc::table(), commands = Doc::array();
  for (const Command &c : t.commands)
    commands.push(command_doc(c));
  d.set("name", Doc::string(std::string(t.name)));
  d.set("about", Doc::string(std::string(t.about)));
  d.set("epilogue", Doc::string(std::string(t.epilogue)));
  d.set("commands", std::move(commands));
  return json::write(d);
}

} // namespace anec::tools
