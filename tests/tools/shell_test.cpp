// The tools' command tables (tools/command_table.hpp) and the man pages and shell completions generated
// from them (tools/completions/): the commands are read here from each tool's --help on their own (not
// through the generator), and the options from each tool's `--command-table`; every option is
// accepted by its command's parser and shows in its help, man page and completions; the completion is
// driven in a real bash through `complete -p TOOL` with COMP_WORDS/COMP_CWORD, the man pages are
// rendered by groff (or man), and the install rules put each file where man, bash-completion and zsh
// look for it.
#include "anec/support/json.hpp"

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTools = {"anec", "anec-hal", "anec-desc", "anec-fw"};

struct Proc {
  int status = -1;
  std::string out, err;
};

std::string read_file(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// argv run in `cwd` (fork and exec: no shell quoting), stdout and stderr captured.
Proc run(const std::vector<std::string> &argv, const fs::path &cwd = fs::temp_directory_path(),
         const std::vector<std::pair<std::string, std::string>> &env = {}) {
  static int calls = 0;
  fs::path base = fs::temp_directory_path() /
                  ("anec-shell-run-" + std::to_string(::getpid()) + "-" + std::to_string(calls++));
  std::string out = base.string() + ".out", err = base.string() + ".err";
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0 || ::chdir(cwd.c_str()) != 0)
      ::_exit(126);
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0)
      ::dup2(null, 0);
    for (const auto &[k, v] : env)
      ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  Proc r{WIFEXITED(st) ? WEXITSTATUS(st) : -1, read_file(out), read_file(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

std::string find_program(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  std::istringstream in(p);
  for (std::string dir; std::getline(in, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / name).c_str(), X_OK) == 0)
      return (fs::path(dir) / name).string();
  return "";
}

fs::path tool(const std::string &name) {
  return fs::path(ANEC_TEST_TOOLS_DIR) / name;
}
fs::path shell_dir() {
  return ANEC_TEST_SHELL_DIR;
}
fs::path bash_file(const std::string &t) {
  return shell_dir() / "bash" / t;
}
fs::path man_file(const std::string &t) {
  return shell_dir() / "man" / (t + ".1");
}
fs::path zsh_file(const std::string &t) {
  std::string ident = t;
  std::replace(ident.begin(), ident.end(), '-', '_');
  return shell_dir() / "zsh" / ("_" + ident);
}

// The commands and subcommands each tool's --help lists, read with two plain patterns: a usage line
// per command ("usage: anec [--tables DIR] check ..." and its indented siblings), or the two-space
// indented rows of a "commands:" table.
struct Usage {
  std::string help;
  std::set<std::string> commands;
  std::map<std::string, std::set<std::string>> subs;
};

Usage usage(const std::string &t) {
  Usage u;
  Proc r = run({tool(t).string(), "--help"});
  EXPECT_EQ(r.status, 0) << r.err;
  u.help = r.out;
  std::string quoted = std::regex_replace(t, std::regex("-"), "\\-");
  std::regex line("^(?:usage: | +)" + quoted +
                  R"( \[--tables DIR\] ([a-z][a-z0-9-]*)(?: ([a-z][a-z0-9-]*))?(?: |$))");
  std::regex row("^  ([a-z][a-z0-9-]*)(?: |$)");
  std::istringstream in(r.out);
  bool table = false;
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (l == "commands:") {
      table = true;
    } else if (l.empty()) {
      table = false;
    } else if (std::regex_search(l, m, line)) {
      u.commands.insert(m[1]);
      if (m[2].matched)
        u.subs[m[1]].insert(m[2]);
    } else if (table && std::regex_search(l, m, row)) {
      u.commands.insert(m[1]);
    }
  }
  return u;
}

// One option of a command as the tool's `--command-table` gives it.
struct TableOption {
  std::string command, name, short_name, choices, fallback;
  bool flag = false, positional = false; // positional: the command takes positional arguments
};

// Every option of every command of the tool's table, and the words its commands are named with.
struct ToolOptions {
  std::vector<TableOption> options;
  std::set<std::string> words;
};

ToolOptions table_options(const std::string &t) {
  Proc r = run({tool(t).string(), "--command-table"});
  EXPECT_EQ(r.status, 0) << r.err;
  ToolOptions out;
  anec::Doc table = anec::json::parse(r.out, t + " --command-table");
  for (const anec::Doc &c : table.find("commands")->items()) {
    std::string command = c.find("name")->as_string();
    std::istringstream words(command);
    for (std::string w; words >> w;)
      out.words.insert(w);
    for (const anec::Doc &o : c.find("options")->items()) {
      auto text = [&](const char *key) { return o.find(key)->as_string(); };
      out.options.push_back({command, text("name"), text("short"), text("choices"), text("default"),
                             text("value").empty() && text("choices").empty(),
                             !c.find("positionals")->items().empty()});
    }
  }
  return out;
}

// `TOOL --tables TABLES COMMAND [no-such-file] --OPTION`: the command line of one option.
std::vector<std::string> option_line(const std::string &t, const fs::path &tables, const TableOption &o) {
  std::vector<std::string> out{tool(t).string(), "--tables", tables.string()};
  std::istringstream in(o.command);
  for (std::string w; in >> w;)
    out.push_back(w);
  if (o.positional)
    out.push_back("no-such-file");
  out.push_back("--" + o.name);
  return out;
}

std::set<std::string> targets() {
  std::set<std::string> t;
  for (const auto &e : fs::directory_iterator(fs::path(ANEC_TEST_TABLES_DIR) / "targets"))
    if (e.path().extension() == ".toml")
      t.insert(e.path().stem().string());
  return t;
}

std::set<std::string> starting_with(const std::set<std::string> &s, const std::string &prefix) {
  std::set<std::string> out;
  for (const std::string &w : s)
    if (w.starts_with(prefix))
      out.insert(w);
  return out;
}

const char *kBashDriver = R"(source "$1" || exit 3
spec=$(complete -p "$2") || exit 4
fn=${spec##*-F }
fn=${fn%% *}
shift 2
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" || exit 5
printf '%s\n' "${COMPREPLY[@]}"
)";

class BashCompletion : public ::testing::Test {
protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("anec-shell-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir / "tabs");
    std::ofstream(dir / "net.json") << "{}";
  }
  void TearDown() override { fs::remove_all(dir); }

  // What the bash completion of `words` (the last one being completed) replies, run in `dir`.
  std::set<std::string> complete(const std::vector<std::string> &words) {
    std::vector<std::string> argv{
        "bash", "--norc", "--noprofile", "-c", kBashDriver, "bash", bash_file(words[0]).string(), words[0]};
    argv.insert(argv.end(), words.begin(), words.end());
    Proc r = run(argv, dir);
    EXPECT_EQ(r.status, 0) << r.err;
    std::set<std::string> out;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);)
      if (!l.empty())
        out.insert(l);
    return out;
  }
};

using S = std::set<std::string>;

TEST_F(BashCompletion, ListsEveryCommandOfTheHelp) {
  for (const std::string &t : kTools) {
    SCOPED_TRACE(t);
    Usage u = usage(t);
    ASSERT_FALSE(u.commands.empty()) << u.help;
    S all = complete({t, ""}), commands, options;
    for (const std::string &w : all)
      (w.starts_with("-") ? options : commands).insert(w);
    EXPECT_EQ(commands, u.commands);
    EXPECT_TRUE(options.count("--tables") && options.count("--help"));
    for (const auto &[cmd, subs] : u.subs)
      EXPECT_EQ(complete({t, cmd, ""}), subs) << cmd;
  }
}

TEST_F(BashCompletion, CoversEveryCommandOfTheTable) {
  for (const std::string &t : kTools) {
    SCOPED_TRACE(t);
    S known = complete({t, ""}), words = table_options(t).words;
    ASSERT_FALSE(words.empty());
    for (const std::string &c : S(known))
      for (const std::string &w : complete({t, c, ""}))
        known.insert(w);
    for (const std::string &w : words)
      EXPECT_TRUE(known.count(w)) << "'" << w << "' is not completed";
  }
}

TEST_F(BashCompletion, CompletesCommandPrefixes) {
  for (const std::string &t : kTools) {
    Usage u = usage(t);
    for (const std::string &c : u.commands) {
      std::string prefix = c.substr(0, 2);
      EXPECT_EQ(complete({t, prefix}), starting_with(u.commands, prefix)) << t << " " << prefix;
    }
  }
  EXPECT_EQ(complete({"anec", "ch"}), S{"check"});
  EXPECT_EQ(complete({"anec", "e"}), (S{"estimate", "eval", "explain"}));
  EXPECT_EQ(complete({"anec-hal", "ex"}), S{"extract"});
  EXPECT_EQ(complete({"anec-desc", "co"}), S{"convert"});
  EXPECT_EQ(complete({"anec-fw", "package", "b"}), S{"build"});
  EXPECT_EQ(complete({"anec-fw", "im4p", ""}), (S{"wrap", "unwrap"}));
  EXPECT_EQ(complete({"anec", "--tables", "/t", "ch"}), S{"check"});
  EXPECT_EQ(complete({"anec", "--tables", "=", "/t", "ch"}), S{"check"}); // --tables=/t, split at '='
  EXPECT_EQ(complete({"anec", "--t"}), S{"--tables"});
  EXPECT_EQ(complete({"anec", "--tables", ""}), S{"tabs"});
  EXPECT_EQ(complete({"anec", "nosuchcommand", ""}), S{});
}

TEST_F(BashCompletion, CompletesOptionsAndTheirValues) {
  S all = targets();
  ASSERT_TRUE(all.count("h13") && all.count("h17s"));
  EXPECT_EQ(complete({"anec", "check", "net.json", "--fo"}), S{"--format"});
  EXPECT_EQ(complete({"anec", "check", "net.json", "--format", ""}), (S{"text", "json", "csv"}));
  EXPECT_EQ(complete({"anec", "check", "net.json", "--format", "=", "j"}), S{"json"});
  EXPECT_EQ(complete({"anec", "estimate", "net.json", "--model", ""}), (S{"calibrated", "analytic"}));
  S h17 = starting_with(all, "h17");
  EXPECT_EQ(complete({"anec", "check", "net.json", "--target", "h17"}), h17);
  S with_all = all;
  with_all.insert("all");
  EXPECT_EQ(complete({"anec", "place", "net.json", "--target", ""}), with_all);
  EXPECT_EQ(complete({"anec", "eval", "net.json", "--precision", "fp"}), (S{"fp32", "fp16"}));
  EXPECT_EQ(complete({"anec", "explain", "--m"}), S{"--markdown"});
  EXPECT_EQ(complete({"anec", "check", "n"}), S{"net.json"});
  EXPECT_EQ(complete({"anec", "eval", "net.json", "-o", ""}), S{"tabs"});
  EXPECT_EQ(complete({"anec-hal", "show", "h13"}), starting_with(all, "h13"));
  EXPECT_EQ(complete({"anec-hal", "show", ""}), all);
  EXPECT_EQ(complete({"anec-hal", "decode", "b.bin", "--target", "u"}), starting_with(all, "u"));
  EXPECT_EQ(complete({"anec-hal", "diff", "a.bin", "b.bin", "--target-b", "m"}), starting_with(all, "m"));
  EXPECT_EQ(complete({"anec-hal", "list", ""}), (S{"--format", "--help"}));
  S generate = complete({"anec-hal", "generate", "-"});
  EXPECT_TRUE(generate.count("-o") && generate.count("--check"));
  EXPECT_EQ(complete({"anec-hal", "generate", "-o", ""}), S{"tabs"});
  EXPECT_EQ(complete({"anec-hal", "extract", "x.dylib", "--targets", "h18"}), S{"h18"});
  EXPECT_EQ(complete({"anec-desc", "convert", "f.hwx", "--header-bytes", ""}),
            (S{"0x800", "0x1000", "2048", "4096"}));
  EXPECT_EQ(complete({"anec-desc", "dump", "f.hwx", "--format", ""}), (S{"text", "json", "html"}));
  EXPECT_EQ(complete({"anec", "report", "m.json", "--model", ""}), (S{"calibrated", "analytic"}));
  EXPECT_EQ(complete({"anec", "report", "m.json", "--target", "h18"}), S{"h18"});
  EXPECT_EQ(complete({"anec-fw", "validate", "f.bin", "--channel", ""}), (S{"ring", "exeloop"}));
  EXPECT_EQ(complete({"anec-fw", "package", "build", "spec.toml", "-"}), (S{"-o", "--output", "--help"}));
  EXPECT_EQ(complete({"anec-fw", "decode", "f.bin", "--channel", ""}), (S{"ring", "exeloop"}));
  EXPECT_EQ(complete({"anec-hal", "generate", "--output", ""}), S{"tabs"});
  EXPECT_EQ(complete({"anec-fw", "simulate", "--format", "t"}), S{"text"});
}

// Every command and subcommand its --help lists answers `COMMAND --help`, `COMMAND -h` (after other
// arguments too, given or not) and `help COMMAND` with its own usage and exit 0; an unknown one is
// ANEC-CLI-001 with exit 2.
TEST(ToolHelp, EveryCommandOfTheHelpAnswersItsOwnHelp) {
  for (const std::string &t : kTools) {
    SCOPED_TRACE(t);
    Usage u = usage(t);
    ASSERT_FALSE(u.commands.empty()) << u.help;
    std::vector<std::vector<std::string>> commands;
    for (const std::string &c : u.commands)
      commands.push_back({c});
    for (const auto &[c, subs] : u.subs)
      for (const std::string &sub : subs)
        commands.push_back({c, sub});
    for (const std::vector<std::string> &c : commands) {
      std::string words = c[0] + (c.size() > 1 ? " " + c[1] : "");
      std::vector<std::vector<std::string>> asks = {c, c, {"help"}, c};
      asks[0].push_back("--help");
      asks[1].push_back("-h");
      asks[2].insert(asks[2].end(), c.begin(), c.end());
      asks[3].insert(asks[3].end(), {"no-such-file", "--format", "nonsense", "--help"});
      for (std::vector<std::string> argv : asks) {
        argv.insert(argv.begin(), tool(t).string());
        Proc r = run(argv);
        EXPECT_EQ(r.status, 0) << words << ": " << r.err;
        EXPECT_EQ(r.err, "") << words;
        EXPECT_TRUE(r.out.starts_with("usage: " + t + " [--tables DIR] " + words)) << words << " answers:\n"
                                                                                   << r.out.substr(0, 200);
        EXPECT_NE(r.out.find("`" + words), std::string::npos) << words << ": its paragraph";
      }
    }
    for (std::vector<std::string> argv : {std::vector<std::string>{"help", "no-such-command"},
                                          {"no-such-command", "--help"},
                                          {"no-such-command"}}) {
      argv.insert(argv.begin(), tool(t).string());
      Proc r = run(argv);
      EXPECT_EQ(r.status, 2) << argv[1];
      EXPECT_NE(r.err.find("ANEC-CLI-001"), std::string::npos) << r.err;
    }
  }
}

// Every option of every command's table is taken by that command's parser: given with a value it
// accepts (its first choice, its default, else a word), the command fails for something else than its
// command line (the tables directory it is given is empty, its input missing); and the handler reads
// no option its table lacks.
TEST(ToolTable, EveryOptionIsAcceptedByItsCommand) {
  fs::path cwd = fs::temp_directory_path() / ("anec-options-" + std::to_string(::getpid()));
  fs::create_directories(cwd / "no-tables");
  for (const std::string &t : kTools)
    for (const TableOption &o : table_options(t).options) {
      std::vector<std::string> argv = option_line(t, cwd / "no-tables", o);
      if (!o.flag)
        argv.push_back(!o.choices.empty()    ? o.choices.substr(0, o.choices.find('|'))
                       : !o.fallback.empty() ? o.fallback
                                             : "x");
      Proc r = run(argv, cwd);
      EXPECT_EQ(r.status, 2) << t << " " << o.command << " --" << o.name << ": " << r.err;
      for (const char *parser_error : {"unrecognised option", "is not one of", "more than once",
                                       "too many positional", "ambiguous", "ANEC-INTERNAL"})
        EXPECT_EQ(r.err.find(parser_error), std::string::npos)
            << t << " " << o.command << " --" << o.name << ": " << r.err;
    }
  fs::remove_all(cwd);
}

// A value outside an option's choices is ANEC-CLI-002 naming the option, the value and the choices,
// exit 2, before the command reads anything.
TEST(ToolTable, ABadChoiceIsRejected) {
  size_t checked = 0;
  for (const std::string &t : kTools)
    for (const TableOption &o : table_options(t).options) {
      if (o.choices.empty())
        continue;
      std::vector<std::string> argv = option_line(t, ANEC_TEST_TABLES_DIR, o);
      argv.push_back("nonsense");
      Proc r = run(argv);
      std::string listed = std::regex_replace(o.choices, std::regex("\\|"), ", ");
      EXPECT_EQ(r.status, 2) << t << " " << o.command << " --" << o.name;
      EXPECT_NE(r.err.find("ANEC-CLI-002: --" + o.name + " 'nonsense' is not one of " + listed),
                std::string::npos)
          << t << " " << o.command << ": " << r.err;
      ++checked;
    }
  EXPECT_GE(checked, 20u);
}

// Each command's help, its man page and its completions name every option of its table.
TEST(ToolTable, EveryOptionShowsInTheHelpTheManPageAndTheCompletions) {
  for (const std::string &t : kTools) {
    SCOPED_TRACE(t);
    std::string man = std::regex_replace(read_file(man_file(t)), std::regex(R"(\\-)"), "-");
    std::string bash = read_file(bash_file(t)), zsh = read_file(zsh_file(t));
    for (const TableOption &o : table_options(t).options) {
      std::string help = run({tool(t).string(), "help", o.command}).out, names = "--" + o.name;
      if (!o.short_name.empty())
        names = "-" + o.short_name + ", " + names;
      EXPECT_NE(help.find("\n  " + names), std::string::npos) << o.command << " help lacks " << names;
      EXPECT_NE(man.find("\\fB--" + o.name + "\\fR"), std::string::npos) << "the man page lacks --" << o.name;
      if (!o.short_name.empty()) {
        EXPECT_NE(man.find("\\fB-" + o.short_name + "\\fR, \\fB--" + o.name), std::string::npos)
            << "the man page lacks -" << o.short_name;
      }
      if (!o.choices.empty()) {
        EXPECT_NE(man.find("--" + o.name + "\\fR \\fB" + o.choices.substr(0, o.choices.find('|'))),
                  std::string::npos)
            << "the man page lacks the choices of --" << o.name;
      }
      std::regex opts("\"" + o.command + "\"\\) opts=\"[^\"]*--" + o.name + "[ \"]");
      EXPECT_TRUE(std::regex_search(bash, opts)) << "bash: " << o.command << " --" << o.name;
      EXPECT_TRUE(std::regex_search(zsh, opts)) << "zsh: " << o.command << " --" << o.name;
    }
  }
}

// The generator reads the tables: it parses no help text back.
TEST(ToolTable, TheGeneratorParsesNoHelpText) {
  std::string gen = read_file(fs::path(ANEC_TEST_TOOLS_SOURCE_DIR) / "completions" / "anec-shell-gen.cpp");
  EXPECT_NE(gen.find("--command-table"), std::string::npos);
  for (const char *help_parsing : {"parse_help", "\"usage: \"", "\"commands:\"", "\" --help\""})
    EXPECT_EQ(gen.find(help_parsing), std::string::npos) << help_parsing;
}

TEST(ToolManPage, RendersAndNamesEveryCommandAndOption) {
  std::string groff = find_program("groff"), man = find_program("man");
  if (groff.empty() && man.empty())
    GTEST_SKIP() << "neither groff nor man is installed";
  for (const std::string &t : kTools) {
    SCOPED_TRACE(t);
    ASSERT_TRUE(fs::exists(man_file(t)));
    Proc r = !groff.empty() ? run({groff, "-man", "-Tutf8", "-ww", "-P-cbou", man_file(t).string()})
                            : run({man, "-l", man_file(t).string()}, fs::temp_directory_path(),
                                  {{"MANWIDTH", "100"}, {"MANPAGER", "cat"}, {"PAGER", "cat"}});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "") << "warnings while rendering";
    std::string page = std::regex_replace(r.out, std::regex(".\b|\x1b\\[[0-9;]*m"), "");
    for (const char *dash : {"\u2010", "\u2011", "\u2212"})
      page = std::regex_replace(page, std::regex(dash), "-");
    for (const char *section : {"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXIT STATUS"})
      EXPECT_NE(page.find(std::string("\n") + section + "\n"), std::string::npos) << section;
    EXPECT_TRUE(std::regex_search(page, std::regex("\n +" + t + " +- "))) << "NAME line";
    Usage u = usage(t);
    auto named = [&](const std::string &w) {
      return std::regex_search(page, std::regex("(^|[^a-z0-9-])" + w + "([^a-z0-9-]|$)"));
    };
    for (const std::string &c : u.commands)
      EXPECT_TRUE(named(c)) << "command " << c;
    for (const auto &[c, subs] : u.subs)
      for (const std::string &s : subs)
        EXPECT_TRUE(named(s)) << "subcommand " << c << " " << s;
    std::string head = u.help.substr(0, u.help.find("\n\n"));
    std::regex opt(R"((--[a-z][a-z0-9-]*))");
    for (auto it = std::sregex_iterator(head.begin(), head.end(), opt); it != std::sregex_iterator(); ++it)
      EXPECT_TRUE(named((*it)[1])) << "option " << (*it)[1];
  }
}

TEST(ToolManPage, ManFindsTheGeneratedPage) {
  std::string man = find_program("man");
  if (man.empty())
    GTEST_SKIP() << "man is not installed";
  Proc r = run({man, "-l", man_file("anec-hal").string()}, fs::temp_directory_path(),
               {{"MANWIDTH", "100"}, {"MANPAGER", "cat"}, {"PAGER", "cat"}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("anec-hal"), std::string::npos);
  EXPECT_NE(r.out.find("extract"), std::string::npos);
}

TEST(ZshCompletion, NamesEveryCommandOfTheHelp) {
  for (const std::string &t : kTools) {
    SCOPED_TRACE(t);
    std::string z = read_file(zsh_file(t));
    ASSERT_TRUE(z.starts_with("#compdef " + t + "\n")) << zsh_file(t);
    Usage u = usage(t);
    for (const std::string &c : u.commands)
      EXPECT_NE(z.find("'" + c + ":"), std::string::npos) << c;
    for (const auto &[c, subs] : u.subs)
      for (const std::string &s : subs)
        EXPECT_NE(z.find(" " + s), std::string::npos) << c << " " << s;
  }
}

// With zsh installed: the completion function run with the completion system's builtins stubbed
// (each prints its candidates, unfiltered: zsh filters them by the typed prefix itself).
TEST(ZshCompletion, CompletesInZsh) {
  std::string zsh = find_program("zsh");
  if (zsh.empty())
    GTEST_SKIP() << "zsh is not installed";
  const char *driver = R"(compadd() { [[ $1 == -- ]] && shift; print -l -- "$@" }
_describe() { local -a a; a=("${(@P)4}"); print -l -- "${a[@]%%:*}" }
_files() { print -- '<files>' }
_directories() { print -- '<dirs>' }
compset() { : }
compdef() { : }
source "$1" || exit 3
fn=${1:t}
shift
words=("$@")
CURRENT=$#
$fn
)";
  auto complete = [&](const std::vector<std::string> &words) {
    std::string t = words[0];
    std::vector<std::string> argv{zsh, "-f", "-c", driver, "zsh", zsh_file(t).string()};
    argv.insert(argv.end(), words.begin(), words.end());
    Proc r = run(argv);
    EXPECT_EQ(r.status, 0) << r.err;
    S out;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);)
      if (!l.empty())
        out.insert(l);
    return out;
  };
  for (const std::string &t : kTools) {
    Proc syntax = run({zsh, "-n", zsh_file(t).string()});
    EXPECT_EQ(syntax.status, 0) << t << ": " << syntax.err;
    EXPECT_EQ(complete({t, ""}), usage(t).commands) << t;
  }
  EXPECT_EQ(complete({"anec", "check", "net.json", "--format", ""}), (S{"text", "json", "csv"}));
  EXPECT_EQ(complete({"anec", "check", "net.json", "--format=j"}), (S{"text", "json", "csv"}));
  EXPECT_EQ(complete({"anec", "--tables", ""}), S{"<dirs>"});
  EXPECT_EQ(complete({"anec", "--tables", "/t", "check", ""}), S{"<files>"});
  EXPECT_EQ(complete({"anec-fw", "package", ""}), (S{"build", "read", "audit"}));
  EXPECT_EQ(complete({"anec-hal", "show", ""}), targets());
  EXPECT_EQ(complete({"anec-hal", "list", "-"}), (S{"--format", "--help"}));
}

TEST(ShellInstall, PutsEachFileWhereItsReaderLooks) {
  fs::path prefix = fs::temp_directory_path() / ("anec-shell-install-" + std::to_string(::getpid()));
  fs::remove_all(prefix);
  Proc r = run({ANEC_TEST_CMAKE, "-DCMAKE_INSTALL_PREFIX=" + prefix.string(), "-P",
                (shell_dir() / "cmake_install.cmake").string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (const std::string &t : kTools) {
    std::string ident = zsh_file(t).filename().string();
    for (fs::path p :
         {prefix / "share/man/man1" / (t + ".1"), prefix / "share/bash-completion/completions" / t,
          prefix / "share/zsh/site-functions" / ident})
      EXPECT_TRUE(fs::is_regular_file(p)) << p;
  }
  std::string man = find_program("man");
  if (!man.empty()) {
    Proc w = run({man, "-M", (prefix / "share/man").string(), "-w", "anec-fw"});
    EXPECT_EQ(w.status, 0) << w.err;
    EXPECT_NE(w.out.find("man1/anec-fw.1"), std::string::npos) << w.out;
  }
  fs::remove_all(prefix);
}

} // namespace
