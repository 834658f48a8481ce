// anec-shell-gen: one tool's man page and its bash and zsh completions, made at build time from the
// tool's command table (tools/command_table.hpp), which the tool prints with `TOOL --command-table`:
// the same table its parsing and its --help come from, so neither can drift from what the tool takes.
//
//   anec-shell-gen --tool PATH --name NAME --summary TEXT --version V --targets-dir DIR
//                  --man OUT.1 --bash OUT --zsh OUT_NAME
//
// An option's value completes from its choices, or as its table says: target names (the stems of
// DIR/*.toml), directories, files or nothing.
#include "anec/support/json.hpp"
#include "command_table.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Value { // what completes an option's value or a positional argument
  std::vector<std::string> choices;
  bool targets = false, dirs = false, files = false;
};

struct Option {
  std::string name, value; // value: the placeholder text, empty for a flag
  Value kind;
};

struct Command {
  std::string name, sub, args, description; // args: the usage after the command (and subcommand)
  std::vector<Option> options;              // every spelling (--output and -o) for the completions
  std::span<const anec::tools::Option> table_options;
  bool has_positional = false;
  Value first_positional;
  std::string key() const { return sub.empty() ? name : name + " " + sub; }
};

struct Help {
  std::string tool;
  std::vector<std::string> synopsis; // each usage entry, the tool's name and global options removed
  std::vector<Command> commands;
  std::vector<std::string> paragraphs;
  std::string exit_status;
};

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string join(const std::vector<std::string> &v, const std::string &sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? sep : "") + v[i];
  return out;
}

// The tool's command table, read from `TOOL --command-table`: its texts live in `doc`, the spans of
// `table` in the vectors.
struct LoadedTable {
  anec::Doc doc;
  std::vector<std::vector<anec::tools::Positional>> positionals;
  std::vector<std::vector<anec::tools::Option>> options;
  std::vector<anec::tools::Command> commands;
  anec::tools::ToolTable table;
};

std::string_view text_of(const anec::Doc &d, std::string_view key) {
  return d.find(key)->as_string();
}

anec::tools::Option option_of(const anec::Doc &d) {
  std::string_view short_name = text_of(d, "short");
  return {.name = text_of(d, "name"),
          .short_name = short_name.empty() ? '\0' : short_name[0],
          .value = text_of(d, "value"),
          .choices = text_of(d, "choices"),
          .fallback = text_of(d, "default"),
          .repeatable = d.find("repeatable")->as_bool(),
          .required = d.find("required")->as_bool(),
          .long_in_usage = d.find("long_in_usage")->as_bool(),
          .completes = anec::tools::completion_named(text_of(d, "completes")),
          .help = text_of(d, "help")};
}

anec::tools::Positional positional_of(const anec::Doc &d) {
  return {.name = text_of(d, "name"),
          .min = int(d.find("min")->as_int()),
          .max = int(d.find("max")->as_int()),
          .completes = anec::tools::completion_named(text_of(d, "completes"))};
}

std::unique_ptr<LoadedTable> load_table(const std::string &json, const std::string &source) {
  auto t = std::make_unique<LoadedTable>();
  t->doc = anec::json::parse(json, source);
  const std::vector<anec::Doc> &commands = t->doc.find("commands")->items();
  for (const anec::Doc &c : commands) {
    t->positionals.emplace_back();
    for (const anec::Doc &p : c.find("positionals")->items())
      t->positionals.back().push_back(positional_of(p));
    t->options.emplace_back();
    for (const anec::Doc &o : c.find("options")->items())
      t->options.back().push_back(option_of(o));
  }
  for (size_t i = 0; i < commands.size(); ++i)
    t->commands.push_back({text_of(commands[i], "name"), t->positionals[i], t->options[i],
                           text_of(commands[i], "about"), nullptr});
  t->table = {text_of(t->doc, "name"), t->commands, text_of(t->doc, "about"), text_of(t->doc, "epilogue")};
  return t;
}

// What completes a value: its choices, or its table's completion.
Value value_of(anec::tools::Completion completes, std::vector<std::string> choices = {}) {
  using anec::tools::Completion;
  Value v{std::move(choices)};
  if (completes == Completion::targets_or_all)
    v.choices.push_back("all");
  v.targets = completes == Completion::targets || completes == Completion::targets_or_all ||
              completes == Completion::targets_or_files;
  v.dirs = completes == Completion::dirs;
  v.files = completes == Completion::files || completes == Completion::targets_or_files;
  return v;
}

// A text's lines joined into one, each trimmed.
std::string one_line(std::string_view text) {
  std::string out;
  for (const std::string &l : split(std::string(text), '\n'))
    if (!trim(l).empty())
      out += (out.empty() ? "" : " ") + trim(l);
  return out;
}

Command command_of(const anec::tools::Command &c) {
  Command out;
  std::string name(c.name);
  size_t space = name.find(' ');
  out.name = name.substr(0, space);
  out.sub = space == std::string::npos ? "" : name.substr(space + 1);
  out.args = join(anec::tools::synopsis_items(c), " ");
  out.description = one_line(c.about);
  out.table_options = c.options;
  for (const anec::tools::Option &o : c.options) {
    std::string value = anec::tools::usage_item(o).find(' ') == std::string::npos ? "" : "VALUE";
    Value kind = value_of(o.completes, anec::tools::choices_of(o));
    out.options.push_back({"--" + std::string(o.name), value, kind});
    if (o.short_name)
      out.options.push_back({std::string("-") + o.short_name, value, kind});
  }
  out.has_positional = !c.positionals.empty();
  if (out.has_positional)
    out.first_positional = value_of(c.positionals.front().completes);
  return out;
}

Help help_of(const anec::tools::ToolTable &t) {
  Help h;
  h.tool = t.name;
  for (const anec::tools::Command &c : t.commands) {
    h.commands.push_back(command_of(c));
    h.synopsis.push_back(h.commands.back().key() + " " + h.commands.back().args);
  }
  h.paragraphs.push_back(one_line(t.about));
  h.exit_status = one_line(t.epilogue);
  if (h.exit_status.starts_with("Exit codes:"))
    h.exit_status = trim(h.exit_status.substr(11));
  return h;
}

std::string run_table(const std::string &tool_path) {
  std::string quoted = "'";
  for (char c : tool_path)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE *p = ::popen((quoted + " --command-table").c_str(), "r");
  if (!p)
    throw std::runtime_error("cannot run " + tool_path);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    out.append(buf, n);
  int st = ::pclose(p);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    throw std::runtime_error(tool_path + " --command-table failed");
  return out;
}

// ---- man page ----

// Text for troff: a backslash is \e, a non-ASCII character (UTF-8) \[uXXXX], and with `minus` a hyphen is
// the minus sign of an option (\-); plain text keeps its hyphens.
std::string roff_chars(const std::string &s, bool minus) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-' && minus) {
      out += "\\-";
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
      unsigned cp = c & (0x3F >> extra);
      for (int k = 0; k < extra && i + 1 < s.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F);
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", cp);
      out += buf;
    }
  }
  return out;
}

std::string roff_escape(const std::string &s) {
  return roff_chars(s, true);
}
std::string roff_text(const std::string &s) {
  return roff_chars(s, false);
}

std::string roff_line(std::string s) {
  return (!s.empty() && (s[0] == '.' || s[0] == '\'')) ? "\\&" + s : s;
}

// A usage fragment: options, commands and literal choices bold, placeholders italic, syntax plain.
std::string roff_usage(const std::string &s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::string(" []|=,<>/.").find(c) != std::string::npos) { // syntax, and the dots of "FILE..."
      out += c;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && std::string(" []|=,<>/").find(s[j]) == std::string::npos) {
      if (s[j] == '.' && (j + 1 == s.size() || s[j + 1] == '.' || s[j + 1] == ' ' || s[j + 1] == ']'))
        break;
      ++j;
    }
    std::string w = s.substr(i, j - i);
    bool upper =
        std::any_of(w.begin(), w.end(), [](char ch) { return std::isupper(static_cast<unsigned char>(ch)); });
    out += (upper ? "\\fI" : "\\fB") + roff_escape(w) + "\\fR";
    i = j;
  }
  return out;
}

// Prose: `code` bold, options bold.
std::string roff_prose(const std::string &p) {
  std::string out;
  bool code = false;
  std::string word;
  auto emit = [&](const std::string &w) {
    if (w.empty())
      return;
    if (code || std::regex_match(w, std::regex("--?[a-z][a-z0-9-]*")))
      out += "\\fB" + roff_escape(w) + "\\fR";
    else
      out += roff_text(w);
  };
  for (char c : p) {
    if (c == '`') {
      emit(word);
      word.clear();
      code = !code;
    } else if (!code && (c == ' ' || c == '(' || c == ')' || c == ',' || c == ';' || c == ':' || c == '/')) {
      emit(word);
      word.clear();
      out += c;
    } else {
      word += c;
    }
  }
  emit(word);
  return roff_line(out);
}

std::string upper(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string man_page(const Help &h, const std::string &summary, const std::string &version,
                     const std::vector<std::string> &others) {
  std::ostringstream m;
  const std::string tool = roff_escape(h.tool);
  m << ".\\\" Generated by anec-shell-gen from `" << h.tool << " --command-table`: do not edit.\n";
  m << ".TH " << upper(tool) << " 1 \"\" \"anec " << version << "\" \"User Commands\"\n";
  m << ".nh\n"; // no hyphenation: option names and paths stay whole
  m << ".SH NAME\n" << tool << " \\- " << roff_text(summary) << "\n";
  m << ".SH SYNOPSIS\n.ad l\n";
  for (const std::string &s : h.synopsis) {
    m << ".HP " << h.tool.size() + 1 << "\n\\fB" << tool << "\\fR [\\fB\\-\\-tables\\fR \\fIDIR\\fR] "
      << roff_usage(s) << "\n";
  }
  m << ".ad\n";
  m << ".SH DESCRIPTION\n";
  for (size_t i = 0; i < h.paragraphs.size(); ++i)
    m << (i ? ".PP\n" : "") << roff_prose(h.paragraphs[i]) << "\n";
  m << ".SH COMMANDS\n";
  for (const Command &c : h.commands) {
    m << ".TP\n\\fB" << roff_escape(c.key()) << "\\fR\n";
    if (!c.args.empty())
      m << roff_usage(c.args) << "\n";
    if (!c.args.empty() && !c.description.empty())
      m << ".br\n";
    if (!c.description.empty())
      m << roff_prose(c.description) << "\n";
  }
  m << ".SH OPTIONS\n";
  m << ".TP\n\\fB\\-\\-tables\\fR \\fIDIR\\fR, \\fB\\-\\-tables=\\fR\\fIDIR\\fR\n"
       "Before the command: the tables directory (else \\fB$ANEC_TABLES\\fR, else the tables of the source "
       "tree the tool was built from, else the installed tables).\n";
  m << ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR, \\fBhelp\\fR\nPrint the usage on standard output and exit 0 "
       "(with no command at all the usage goes to standard error, exit 2).\n";
  // Each option form ("-o, --output FILE") and help with the commands that take it, in order of first use.
  struct Form {
    std::string form, help;
    std::vector<std::string> commands;
  };
  std::vector<Form> forms;
  for (const Command &c : h.commands)
    for (const anec::tools::Option &o : c.table_options) {
      std::string form = roff_usage(anec::tools::option_form(o)),
                  help = std::string(o.help) + anec::tools::option_notes(o);
      auto it = std::find_if(forms.begin(), forms.end(),
                             [&](const Form &f) { return f.form == form && f.help == help; });
      if (it == forms.end())
        it = forms.insert(forms.end(), {form, help, {}});
      it->commands.push_back(c.key());
    }
  for (const Form &f : forms) {
    m << ".TP\n"
      << f.form << "\n"
      << roff_prose(f.help) << ".\n.br\n"
      << (f.commands.size() == 1 ? "Command " : "Commands ");
    for (size_t i = 0; i < f.commands.size(); ++i)
      m << (i ? (i + 1 == f.commands.size() ? " and " : ", ") : "") << "\\fB" << roff_escape(f.commands[i])
        << "\\fR";
    m << ".\n";
  }
  if (!h.exit_status.empty())
    m << ".SH EXIT STATUS\n" << roff_prose(h.exit_status) << "\n";
  m << ".SH ENVIRONMENT\n"
       ".TP\n.B ANEC_TABLES\nThe tables directory when \\fB\\-\\-tables\\fR is not given.\n"
       ".TP\n.B ANEC_COMPILED_TABLES\nWhere the compiled forms of the tables are read (empty: none).\n"
       ".TP\n.B ANEC_PLUGIN_DIR\nWhere the modules loaded on first use are looked for first.\n";
  m << ".SH SEE ALSO\n";
  for (size_t i = 0; i < others.size(); ++i)
    m << ".BR " << roff_escape(others[i]) << " (1)" << (i + 1 < others.size() ? "," : "") << "\n";
  return m.str();
}

// ---- completions ----

std::string ident(const std::string &tool) {
  std::string s = "_";
  for (char c : tool)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

std::string kinds(const Value &v) {
  std::vector<std::string> k;
  if (!v.choices.empty())
    k.push_back("choices");
  if (v.targets)
    k.push_back("targets");
  if (v.dirs)
    k.push_back("dirs");
  if (v.files)
    k.push_back("files");
  return k.empty() ? "none" : join(k, " ");
}

struct Tables {                                         // what both shells need, per command key
  std::vector<std::string> commands;                    // in order, unique
  std::map<std::string, std::vector<std::string>> subs; // command -> subcommands
  std::vector<const Command *> keyed;                   // one per key
};

Tables tables(const Help &h) {
  Tables t;
  for (const Command &c : h.commands) {
    if (std::find(t.commands.begin(), t.commands.end(), c.name) == t.commands.end())
      t.commands.push_back(c.name);
    if (!c.sub.empty())
      t.subs[c.name].push_back(c.sub);
    t.keyed.push_back(&c);
  }
  return t;
}

std::string option_names(const Command &c, bool values_only) {
  std::vector<std::string> n;
  for (const Option &o : c.options)
    if (!values_only || !o.value.empty())
      n.push_back(o.name);
  return join(n, " ");
}

std::string join_nonempty(const std::string &a, const std::string &b) {
  return a.empty() ? b : a + " " + b;
}

std::string positional(const Command &c) {
  return c.has_positional ? kinds(c.first_positional) : "";
}

std::string bash_completion(const Help &h, const std::vector<std::string> &targets) {
  Tables t = tables(h);
  const std::string f = ident(h.tool), v = f + "_values";
  std::ostringstream b;
  b << "# bash completion for " << h.tool << ", generated by anec-shell-gen from `" << h.tool
    << " --command-table`: do not edit.\n\n";
  b << "# " << v << " KINDS CHOICES CUR: COMPREPLY from the kinds (choices targets dirs files none).\n";
  b << v << "() {\n"
    << "  local k\n  COMPREPLY=()\n"
    << "  for k in $1; do\n    case $k in\n"
    << "      choices) mapfile -t -O ${#COMPREPLY[@]} COMPREPLY < <(compgen -W \"$2\" -- \"$3\") ;;\n"
    << "      targets) mapfile -t -O ${#COMPREPLY[@]} COMPREPLY < <(compgen -W \"" << join(targets, " ")
    << "\" -- \"$3\") ;;\n"
    << "      dirs) mapfile -t -O ${#COMPREPLY[@]} COMPREPLY < <(compgen -d -- \"$3\"); "
       "compopt -o filenames 2>/dev/null ;;\n"
    << "      files) mapfile -t -O ${#COMPREPLY[@]} COMPREPLY < <(compgen -f -- \"$3\"); "
       "compopt -o filenames 2>/dev/null ;;\n"
    << "    esac\n  done\n  return 0\n}\n\n";
  b << f << "() {\n"
    << "  COMPREPLY=()\n"
    << "  local cur=${COMP_WORDS[COMP_CWORD]} prev= i=1 cmd= key= w subs= opts= vopts= pos=\n"
    << "  (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
    << "  # --option=value: bash splits the word at '=' (COMP_WORDBREAKS)\n"
    << "  if [[ $cur == = ]]; then\n    cur=\n"
    << "  elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then\n    prev=${COMP_WORDS[COMP_CWORD-2]}\n  fi\n"
    << "  while (( i < COMP_CWORD )); do\n    w=${COMP_WORDS[i]}\n"
    << "    if [[ $w == --tables ]]; then\n"
    << "      if [[ ${COMP_WORDS[i+1]} == = ]]; then (( i += 3 )); else (( i += 2 )); fi\n      continue\n"
    << "    elif [[ $w == --tables=* ]]; then\n      (( i += 1 ))\n      continue\n    fi\n"
    << "    cmd=$w\n    break\n  done\n"
    << "  if [[ -z $cmd ]]; then\n"
    << "    if [[ $prev == --tables ]]; then " << v << " dirs \"\" \"$cur\"; return 0; fi\n"
    << "    " << v << " choices \"" << join(t.commands, " ") << " --tables --help -h\" \"$cur\"\n"
    << "    return 0\n  fi\n";
  b << "  (( i += 1 ))\n  case $cmd in\n";
  for (const auto &[cmd, subs] : t.subs)
    b << "    " << cmd << ") subs=\"" << join(subs, " ") << "\" ;;\n";
  b << "  esac\n  key=$cmd\n"
    << "  if [[ -n $subs ]]; then\n"
    << "    if (( i == COMP_CWORD )); then " << v << " choices \"$subs\" \"$cur\"; return 0; fi\n"
    << "    key=\"$cmd ${COMP_WORDS[i]}\"\n    (( i += 1 ))\n  fi\n";
  b << "  case $key in\n";
  for (const Command *c : t.keyed) {
    b << "    \"" << c->key() << "\") opts=\"" << join_nonempty(option_names(*c, false), "--help")
      << "\"; vopts=\"" << option_names(*c, true) << "\"; pos=\"" << positional(*c) << "\" ;;\n";
  }
  b << "    *) return 0 ;;\n  esac\n";
  b << "  case \"$key $prev\" in\n";
  for (const Command *c : t.keyed)
    for (const Option &o : c->options) {
      if (o.value.empty())
        continue;
      b << "    \"" << c->key() << " " << o.name << "\") " << v << " \"" << kinds(o.kind) << "\" \""
        << join(o.kind.choices, " ") << "\" \"$cur\"; return 0 ;;\n";
    }
  b << "  esac\n";
  b << "  if [[ $cur == -* || -z $pos ]]; then " << v << " choices \"$opts\" \"$cur\"; return 0; fi\n"
    << "  local n=0\n  while (( i < COMP_CWORD )); do\n    w=${COMP_WORDS[i]}\n"
    << "    if [[ \" $vopts \" == *\" $w \"* ]]; then\n"
    << "      if [[ ${COMP_WORDS[i+1]} == = ]]; then (( i += 3 )); else (( i += 2 )); fi\n      continue\n   "
       " fi\n"
    << "    [[ $w == -* || $w == = ]] || (( n += 1 ))\n    (( i += 1 ))\n  done\n"
    << "  if (( n == 0 )); then " << v << " \"$pos\" \"\" \"$cur\"; else " << v
    << " files \"\" \"$cur\"; fi\n"
    << "  return 0\n}\n\n";
  b << "complete -F " << f << " " << h.tool << "\n";
  return b.str();
}

std::string zsh_quote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string zsh_completion(const Help &h, const std::vector<std::string> &targets) {
  Tables t = tables(h);
  const std::string f = ident(h.tool), v = f + "_values";
  std::ostringstream z;
  z << "#compdef " << h.tool << "\n# zsh completion for " << h.tool << ", generated by anec-shell-gen from `"
    << h.tool << " --command-table`: do not edit.\n\n";
  z << "# " << v << " KINDS CHOICES: candidates from the kinds (choices targets dirs files none).\n";
  z << v << "() {\n  local k\n  for k in ${=1}; do\n    case $k in\n"
    << "      choices) compadd -- ${=2} ;;\n"
    << "      targets) compadd -- " << join(targets, " ") << " ;;\n"
    << "      dirs) _directories ;;\n      files) _files ;;\n    esac\n  done\n  return 0\n}\n\n";
  z << f << "() {\n"
    << "  local cur=$words[CURRENT] prev=$words[CURRENT-1] i=2 cmd= key= w subs= opts= vopts= pos=\n"
    << "  if [[ $cur == --*=* ]]; then\n    prev=${cur%%=*}\n    compset -P '*='\n    cur=${cur#*=}\n  fi\n"
    << "  while (( i < CURRENT )); do\n    w=$words[i]\n    case $w in\n"
    << "      --tables) (( i += 2 )); continue ;;\n      --tables=*) (( i += 1 )); continue ;;\n    esac\n"
    << "    cmd=$w\n    break\n  done\n"
    << "  if [[ -z $cmd ]]; then\n"
    << "    if [[ $prev == --tables ]]; then " << v << " dirs; return 0; fi\n"
    << "    if [[ $cur == -* ]]; then compadd -- --tables --help -h; return 0; fi\n"
    << "    local -a cmds\n    cmds=(\n";
  for (const std::string &name : t.commands) {
    std::string desc;
    for (const Command &c : h.commands)
      if (c.name == name && desc.empty())
        desc = c.sub.empty() ? c.args : "";
    if (desc.empty() && t.subs.count(name))
      desc = join(t.subs.at(name), ", ");
    if (desc.size() > 70) { // cut at a character boundary (UTF-8)
      size_t cut = 67;
      while (cut > 0 && (static_cast<unsigned char>(desc[cut]) & 0xC0) == 0x80)
        --cut;
      desc = desc.substr(0, cut) + "...";
    }
    z << "      " << zsh_quote(name + ":" + desc) << "\n";
  }
  z << "    )\n    _describe -t commands " << zsh_quote(h.tool + " command") << " cmds\n    return 0\n  fi\n";
  z << "  (( i += 1 ))\n  case $cmd in\n";
  for (const auto &[cmd, subs] : t.subs)
    z << "    (" << cmd << ") subs=\"" << join(subs, " ") << "\" ;;\n";
  z << "  esac\n  key=$cmd\n"
    << "  if [[ -n $subs ]]; then\n"
    << "    if (( i == CURRENT )); then " << v << " choices \"$subs\"; return 0; fi\n"
    << "    key=\"$cmd $words[i]\"\n    (( i += 1 ))\n  fi\n";
  z << "  case $key in\n";
  for (const Command *c : t.keyed)
    z << "    (\"" << c->key() << "\") opts=\"" << join_nonempty(option_names(*c, false), "--help")
      << "\"; vopts=\"" << option_names(*c, true) << "\"; pos=\"" << positional(*c) << "\" ;;\n";
  z << "    (*) return 1 ;;\n  esac\n";
  z << "  case \"$key $prev\" in\n";
  for (const Command *c : t.keyed)
    for (const Option &o : c->options) {
      if (o.value.empty())
        continue;
      z << "    (\"" << c->key() << " " << o.name << "\") " << v << " \"" << kinds(o.kind) << "\" \""
        << join(o.kind.choices, " ") << "\"; return 0 ;;\n";
    }
  z << "  esac\n";
  z << "  if [[ $cur == -* || -z $pos ]]; then " << v << " choices \"$opts\"; return 0; fi\n"
    << "  local n=0\n  while (( i < CURRENT )); do\n    w=$words[i]\n"
    << "    if [[ \" $vopts \" == *\" $w \"* ]]; then (( i += 2 )); continue; fi\n"
    << "    [[ $w == -* ]] || (( n += 1 ))\n    (( i += 1 ))\n  done\n"
    << "  if (( n == 0 )); then " << v << " \"$pos\"; else " << v << " files; fi\n"
    << "  return 0\n}\n\n";
  z << "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n  " << f << " \"$@\"\nelse\n  compdef " << f
    << " " << h.tool << "\nfi\n";
  return z.str();
}

void write(const fs::path &p, const std::string &text) {
  if (p.has_parent_path())
    fs::create_directories(p.parent_path());
  fs::path tmp = p;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.flush())
      throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, p);
}

} // namespace

int main(int argc, char **argv) {
  try {
    std::map<std::string, std::string> a;
    std::vector<std::string> others;
    for (int i = 1; i + 1 < argc; i += 2) {
      std::string k = argv[i];
      if (k == "--see-also")
        others.push_back(argv[i + 1]);
      else
        a[k] = argv[i + 1];
    }
    for (const char *k :
         {"--tool", "--name", "--summary", "--version", "--targets-dir", "--man", "--bash", "--zsh"})
      if (!a.count(k))
        throw std::runtime_error(std::string("missing ") + k);
    std::unique_ptr<LoadedTable> table = load_table(run_table(a["--tool"]), a["--tool"] + " --command-table");
    Help h = help_of(table->table);
    std::vector<std::string> targets;
    for (const auto &e : fs::directory_iterator(a["--targets-dir"]))
      if (e.path().extension() == ".toml")
        targets.push_back(e.path().stem().string());
    std::sort(targets.begin(), targets.end());
    if (targets.empty())
      throw std::runtime_error("no target tables in " + a["--targets-dir"]);
    write(a["--man"], man_page(h, a["--summary"], a["--version"], others));
    write(a["--bash"], bash_completion(h, targets));
    write(a["--zsh"], zsh_completion(h, targets));
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "anec-shell-gen: %s\n", e.what());
    return 1;
  }
}
