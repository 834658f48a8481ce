// anec-shell-gen: one tool's man page and its bash and zsh completions, made from its `--help` text at
// build time, so that neither can drift from the usage the tool prints.
//
//   anec-shell-gen --tool PATH --name NAME --summary TEXT --version V --targets-dir DIR
//                  --man OUT.1 --bash OUT --zsh OUT_NAME
//
// Two usage layouts are read. One usage line per command ("usage: anec [--tables DIR] check MODEL...",
// indented continuation lines, a lower-case word after the command being a subcommand: "package build"),
// or "usage: TOOL [--tables DIR] COMMAND [ARGS]" followed by a "commands:" table (two-space indented
// "name ARGS   description", deeper-indented lines continuing the description). The text after the
// usage block is the description; its "Exit codes:" sentence becomes EXIT STATUS. Each command's
// options come from its usage (an option followed by a value placeholder takes a value: `a|b|c` are
// its choices, T or TARGET a target name — the stems of DIR/*.toml —, DIR a directory, N, X, CODE,
// TEXT, NAME or NAME=N nothing to complete, anything else a file).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
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
  bool empty() const { return choices.empty() && !targets && !dirs && !files; }
};

struct Option {
  std::string name, value; // value: the placeholder text, empty for a flag
  Value kind;
};

struct Command {
  std::string name, sub, args, description; // args: the usage after the command (and subcommand)
  std::vector<Option> options;
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

std::vector<std::string> split_ws(const std::string &s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
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

std::string strip_brackets(std::string w) {
  w.erase(std::remove_if(w.begin(), w.end(), [](char c) { return c == '[' || c == ']'; }), w.end());
  return w;
}

bool is_word(const std::string &w) {
  return std::regex_match(w, std::regex("[a-z][a-z0-9-]*"));
}
bool is_option(const std::string &w) {
  return std::regex_match(w, std::regex("--?[a-zA-Z][a-zA-Z0-9-]*"));
}

Value classify(std::string placeholder) {
  Value v;
  for (const char *tail : {",...", "..."})
    if (placeholder.size() > std::string(tail).size() && placeholder.ends_with(tail))
      placeholder.resize(placeholder.size() - std::string(tail).size());
  for (const std::string &alt : split(placeholder, '|')) {
    if (std::regex_match(alt, std::regex("[a-z0-9][a-z0-9_.-]*")))
      v.choices.push_back(alt);
    else if (alt == "T" || alt == "TARGET")
      v.targets = true;
    else if (alt == "DIR")
      v.dirs = true;
    else if (alt == "N" || alt == "X" || alt == "CODE" || alt == "TEXT" || alt == "NAME" ||
             std::regex_match(alt, std::regex("[A-Z]+=N")))
      ;
    else if (!alt.empty())
      v.files = true;
  }
  return v;
}

void add_option(Command &c, const Option &o) {
  for (const Option &have : c.options)
    if (have.name == o.name)
      return;
  c.options.push_back(o);
}

// The options and positional arguments of one usage: `--opt VALUE`, `[--flag]`, `--flag [--other ...]`.
void parse_args(Command &c) {
  std::vector<std::string> t = split_ws(c.args);
  for (size_t i = 0; i < t.size(); ++i) {
    std::string w = strip_brackets(t[i]);
    if (w.empty() || w == "|" || w == "..." || w == "...]")
      continue;
    if (is_option(w)) {
      Option o{w, "", {}};
      bool closed = t[i].ends_with("]");
      if (!closed && i + 1 < t.size()) {
        std::string next = strip_brackets(t[i + 1]);
        if (!next.empty() && next[0] != '-' && next != "|" && next != "...") {
          o.value = next;
          o.kind = classify(next);
          ++i;
        }
      }
      add_option(c, o);
    } else if (!c.has_positional) {
      c.has_positional = true;
      c.first_positional = classify(w);
    }
  }
}

// Options named only in a commands-table description ("named by --target-a/-b") take a value of the
// kind of the usage option they extend (--target, of any command).
void parse_description_options(Command &c, const std::vector<Command> &all) {
  std::string d = c.description;
  static const std::regex opt_re("(--[a-z][a-z0-9-]*)(/-([a-z0-9]+))?");
  for (auto it = std::sregex_iterator(d.begin(), d.end(), opt_re); it != std::sregex_iterator(); ++it) {
    std::vector<std::string> names{(*it)[1]};
    if ((*it)[2].matched) {
      std::string first = (*it)[1], alt = (*it)[3];
      size_t dash = first.rfind('-');
      if (dash != std::string::npos && dash > 1)
        names.push_back(first.substr(0, dash + 1) + alt);
    }
    for (const std::string &n : names) {
      Option o{n, "VALUE", {}};
      o.kind.files = true;
      for (const Command &other : all)
        for (const Option &base : other.options)
          if (n.starts_with(base.name + "-") && !base.value.empty())
            o.kind = base.kind;
      add_option(c, o);
    }
  }
}

Help parse_help(const std::string &tool, const std::string &text) {
  Help h;
  h.tool = tool;
  std::vector<std::string> lines = split(text, '\n');
  size_t i = 0;
  while (i < lines.size() && !lines[i].starts_with("usage: "))
    ++i;
  if (i == lines.size())
    throw std::runtime_error(tool + " --help has no 'usage: ' line");
  const std::string head = tool + " ";
  std::vector<std::string> entries;
  for (; i < lines.size() && !trim(lines[i]).empty(); ++i) {
    std::string l = trim(lines[i].starts_with("usage: ") ? lines[i].substr(7) : lines[i]);
    if (l.starts_with(head) || entries.empty())
      entries.push_back(l);
    else
      entries.back() += " " + l;
  }
  bool table = false;
  for (std::string e : entries) {
    if (e.starts_with(head))
      e = trim(e.substr(head.size()));
    for (const char *global : {"[--tables DIR]", "[--tables=DIR]"})
      if (e.starts_with(global))
        e = trim(e.substr(std::string(global).size()));
    h.synopsis.push_back(e);
    std::vector<std::string> w = split_ws(e);
    if (w.empty())
      continue;
    if (!is_word(w[0])) { // COMMAND [ARGS]: the commands table follows
      table = true;
      continue;
    }
    Command c;
    c.name = w[0];
    size_t skip = 1;
    if (w.size() > 1 && is_word(w[1])) {
      c.sub = w[1];
      skip = 2;
    }
    std::vector<std::string> rest(w.begin() + skip, w.end());
    c.args = join(rest, " ");
    h.commands.push_back(c);
  }
  if (table) {
    while (i < lines.size() && trim(lines[i]) != "commands:")
      ++i;
    if (i == lines.size())
      throw std::runtime_error(tool + " --help has COMMAND but no 'commands:' table");
    for (++i; i < lines.size() && !trim(lines[i]).empty(); ++i) {
      const std::string &l = lines[i];
      if (l.size() > 2 && l.starts_with("  ") && l[2] != ' ') {
        std::string body = l.substr(2);
        size_t gap = body.find("  ");
        Command c;
        std::string syn = trim(body.substr(0, gap));
        if (gap != std::string::npos)
          c.description = trim(body.substr(gap));
        std::vector<std::string> w = split_ws(syn);
        c.name = w[0];
        c.args = join(std::vector<std::string>(w.begin() + 1, w.end()), " ");
        h.commands.push_back(c);
      } else if (!h.commands.empty()) {
        std::string &d = h.commands.back().description;
        d += (d.empty() ? "" : " ") + trim(l);
      }
    }
  }
  if (h.commands.empty())
    throw std::runtime_error(tool + " --help names no command");
  for (Command &c : h.commands)
    parse_args(c);
  for (Command &c : h.commands)
    parse_description_options(c, h.commands);

  // The description: paragraphs split at blank lines and at lines opening with a `command`.
  std::string para;
  auto flush = [&] {
    if (!para.empty())
      h.paragraphs.push_back(para);
    para.clear();
  };
  for (; i < lines.size(); ++i) {
    std::string l = trim(lines[i]);
    if (l.empty() || l.starts_with("`") || l.starts_with("Exit codes:"))
      flush();
    if (!l.empty())
      para += (para.empty() ? "" : " ") + l;
  }
  flush();
  for (std::string &p : h.paragraphs) {
    size_t at = p.find("Exit codes:");
    if (at == std::string::npos)
      continue;
    h.exit_status = trim(p.substr(at + 11));
    p = trim(p.substr(0, at));
  }
  std::erase_if(h.paragraphs, [](const std::string &p) { return p.empty(); });
  return h;
}

std::string run_help(const std::string &tool_path) {
  std::string quoted = "'";
  for (char c : tool_path)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE *p = ::popen((quoted + " --help").c_str(), "r");
  if (!p)
    throw std::runtime_error("cannot run " + tool_path);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    out.append(buf, n);
  int st = ::pclose(p);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    throw std::runtime_error(tool_path + " --help failed");
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
  m << ".\\\" Generated by anec-shell-gen from `" << h.tool << " --help`: do not edit.\n";
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
  // Each option form (name and value) with the commands that take it, in order of first use.
  std::vector<std::pair<std::string, std::vector<std::string>>> forms;
  for (const Command &c : h.commands)
    for (const Option &o : c.options) {
      std::string form =
          roff_usage(o.name) + (o.value.empty() || o.value == "VALUE" ? "" : " " + roff_usage(o.value));
      auto it = std::find_if(forms.begin(), forms.end(), [&](const auto &f) { return f.first == form; });
      if (it == forms.end()) {
        forms.push_back({form, {}});
        it = forms.end() - 1;
      }
      if (std::find(it->second.begin(), it->second.end(), c.key()) == it->second.end())
        it->second.push_back(c.key());
    }
  for (const auto &[form, cmds] : forms) {
    m << ".TP\n" << form << "\n" << (cmds.size() == 1 ? "Command " : "Commands ");
    for (size_t i = 0; i < cmds.size(); ++i)
      m << (i ? (i + 1 == cmds.size() ? " and " : ", ") : "") << "\\fB" << roff_escape(cmds[i]) << "\\fR";
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
    << " --help`: do not edit.\n\n";
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
    << h.tool << " --help`: do not edit.\n\n";
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
        desc = !c.description.empty() ? c.description : c.sub.empty() ? c.args : "";
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
    Help h = parse_help(a["--name"], run_help(a["--tool"]));
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
