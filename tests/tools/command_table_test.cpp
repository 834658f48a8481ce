// The command-table mechanism on a table of its own (tools/command_table.hpp): parsing into values,
// defaults and flags, its errors and their reason codes, the usage and help it writes, and its
// machine form.
#include "anec/support/json.hpp"
#include "command_table.hpp"

#include <gtest/gtest.h>

namespace {

using namespace anec;
using tools::Completion;
using tools::Option;
using tools::Positional;

const Positional kFiles[] = {{.name = "FILE", .max = -1}};
const Option kOptions[] = {
    {.name = "output", .short_name = 'o', .value = "DIR", .required = true, .help = "where"},
    tools::kFormatTextJson,
    {.name = "dim", .value = "NAME=N", .repeatable = true, .help = "a binding"},
    {.name = "all", .help = "everything"},
    {.name = "seed", .value = "N", .fallback = "1", .help = "the seed"},
    {.name = "tolerance", .value = "X", .fallback = "0.5", .help = "the error"},
    {.name = "a-rather-long-option-name", .value = "SOME-PLACEHOLDER", .help = "long"}};
const tools::Command kCommands[] = {{"run", kFiles, kOptions, "`run` runs.\n", nullptr},
                                    {"pack build", {}, {}, "`pack build` builds.\n", nullptr},
                                    {"pack read", kFiles, {}, "`pack read` reads.\n", nullptr}};
const tools::ToolTable kTool{"tool", kCommands, "The tool.\n", "Exit codes: 0 success.\n"};

// The reason code of what `f` throws, and its message.
template <typename F> std::string failure(F &&f, std::string *message = nullptr) {
  try {
    f();
  } catch (const Error &e) {
    if (message)
      *message = e.what();
    return e.code();
  }
  return "";
}

TEST(CommandTable, ParsesValuesDefaultsFlagsAndRepetitions) {
  tools::Args a =
      tools::parse_command_line(kCommands[0], {"x.json", "-o", "out", "--dim", "a=1", "y.json", "--dim=b=2"});
  EXPECT_EQ(a.command(), "run");
  EXPECT_EQ(a.positional(), (std::vector<std::string>{"x.json", "y.json"}));
  EXPECT_EQ(a.value("output"), "out");
  EXPECT_EQ(a.value("format"), "text");
  EXPECT_EQ(a.value("seed"), "1");
  EXPECT_TRUE(a.given("output"));
  EXPECT_FALSE(a.given("format"));
  EXPECT_FALSE(a.given("all"));
  EXPECT_EQ(a.values("dim"), (std::vector<std::string>{"a=1", "b=2"}));
  EXPECT_DOUBLE_EQ(a.number("tolerance"), 0.5);
  tools::Args b = tools::parse_command_line(kCommands[0], {"z.json", "-o", "d", "--all", "--format", "json"});
  EXPECT_TRUE(b.given("all"));
  EXPECT_EQ(b.value("format"), "json");
  EXPECT_TRUE(b.values("dim").empty());
  EXPECT_THROW(b.value("no-such-option"), std::logic_error);
}

TEST(CommandTable, RejectsWithTheReasonCodes) {
  std::string message;
  EXPECT_EQ(failure(
                [] {
                  tools::parse_command_line(kCommands[0], {"--format", "yaml"});
                },
                &message),
            "ANEC-CLI-002");
  EXPECT_EQ(message, "ANEC-CLI-002: --format 'yaml' is not one of text, json");
  EXPECT_EQ(failure([] { tools::parse_command_line(kCommands[0], {"--colour"}); }, &message), "ANEC-CLI-001");
  EXPECT_NE(message.find("unrecognised option '--colour'"), std::string::npos) << message;
  EXPECT_EQ(failure([] {
              tools::parse_command_line(kCommands[0], {"--seed", "1", "--seed", "2"});
            }),
            "ANEC-CLI-001");
  EXPECT_EQ(failure([] { tools::parse_command_line(kCommands[1], {"extra"}); }), "ANEC-CLI-001");
  EXPECT_EQ(failure(
                [] {
                  tools::parse_command_line(kCommands[0], {"x", "-o", "d", "--tolerance", "0.1x"})
                      .number("tolerance");
                },
                &message),
            "ANEC-CLI-002");
  EXPECT_EQ(message, "ANEC-CLI-002: --tolerance '0.1x' is not a number");
}

TEST(CommandTable, RefusesACommandLineWithoutWhatItRequires) {
  std::string message;
  EXPECT_EQ(failure([] { tools::parse_command_line(kCommands[0], {"-o", "d"}); }, &message), "ANEC-CLI-001");
  EXPECT_TRUE(message.starts_with("ANEC-CLI-001: run needs FILE (run FILE... -o DIR")) << message;
  EXPECT_EQ(failure([] { tools::parse_command_line(kCommands[0], {"x.json"}); }, &message), "ANEC-CLI-001");
  EXPECT_TRUE(message.starts_with("ANEC-CLI-001: run needs --output (run FILE... -o DIR")) << message;
  EXPECT_NO_THROW(tools::parse_command_line(kCommands[0], {"x.json", "--output", "d"}));
}

TEST(CommandTable, WritesTheUsageFromTheTable) {
  EXPECT_EQ(tools::usage_item(kOptions[0]), "-o DIR");
  EXPECT_EQ(tools::usage_item(kOptions[1]), "[--format text|json]");
  EXPECT_EQ(tools::usage_item(kOptions[2]), "[--dim NAME=N ...]");
  EXPECT_EQ(tools::usage_item(kOptions[3]), "[--all]");
  EXPECT_EQ(tools::option_form(kOptions[0]), "-o, --output DIR");
  EXPECT_EQ(tools::option_notes(kOptions[1]), " (default text)");
  std::string usage = tools::usage_text(kTool);
  EXPECT_TRUE(usage.starts_with("usage: tool [--tables DIR] run FILE... -o DIR [--format text|json]"))
      << usage;
  EXPECT_NE(usage.find("\n       tool [--tables DIR] pack build\n"), std::string::npos) << usage;
  for (size_t at = 0, end; at < usage.size(); at = end + 1) {
    end = usage.find('\n', at);
    EXPECT_LE(end - at, 110u) << usage.substr(at, end - at);
  }
}

TEST(CommandTable, HelpsACommandOrAGroup) {
  std::string help = tools::command_help(kTool, "run");
  EXPECT_TRUE(help.starts_with("usage: tool [--tables DIR] run FILE...")) << help;
  EXPECT_NE(help.find("\noptions of run:\n  -o, --output DIR"), std::string::npos) << help;
  EXPECT_NE(help.find("  --format text|json          the output format (default text)\n"), std::string::npos)
      << help;
  EXPECT_NE(help.find("  --a-rather-long-option-name SOME-PLACEHOLDER\n                              long\n"),
            std::string::npos)
      << help;
  std::string group = tools::command_help(kTool, "pack");
  EXPECT_NE(group.find("`pack build` builds."), std::string::npos);
  EXPECT_NE(group.find("`pack read` reads."), std::string::npos);
  EXPECT_EQ(group.find("options of"), std::string::npos);
  EXPECT_TRUE(tools::names_command(kTool, "pack"));
  EXPECT_EQ(tools::find_command(kTool, "pack"), nullptr);
  EXPECT_EQ(tools::find_command(kTool, "pack read"), &kCommands[2]);
  EXPECT_EQ(failure([] { tools::command_help(kTool, "nope"); }), "ANEC-CLI-001");
}

TEST(CommandTable, ItsMachineFormHoldsEveryField) {
  Doc d = json::parse(tools::table_json(kTool), "table");
  EXPECT_EQ(d.find("name")->as_string(), "tool");
  const Doc &run = d.find("commands")->items()[0];
  EXPECT_EQ(run.find("positionals")->items()[0].find("max")->as_int(), -1);
  const Doc &output = run.find("options")->items()[0];
  EXPECT_EQ(output.find("short")->as_string(), "o");
  EXPECT_TRUE(output.find("required")->as_bool());
  EXPECT_EQ(tools::completion_named(output.find("completes")->as_string()), Completion::none);
  for (Completion c : {Completion::files, Completion::dirs, Completion::targets, Completion::targets_or_all,
                       Completion::targets_or_files})
    EXPECT_EQ(tools::completion_named(tools::completion_name(c)), c);
}

} // namespace
