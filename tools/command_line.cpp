// A command line parsed against its command's table (command_table.hpp): the one place the tools use
// Boost.Program_options.
#include "command_table.hpp"

#include "anec/support/checked.hpp"

#include <boost/program_options.hpp>
#include <charconv>
#include <stdexcept>

namespace po = boost::program_options;

namespace anec::tools {

namespace {

constexpr const char *kPositional = "positional arguments";

// How many positional arguments the command takes: -1 for any number.
int positional_count(const Command &c) {
  int count = 0;
  for (const Positional &p : c.positionals) {
    if (p.max < 0)
      return -1;
    count += p.max;
  }
  return count;
}

po::options_description described(const Command &c) {
  po::options_description d;
  for (const Option &o : c.options) {
    std::string names = std::string(o.name) + (o.short_name ? std::string(",") + o.short_name : "");
    if (o.value.empty() && o.choices.empty())
      d.add_options()(names.c_str(), po::bool_switch());
    else if (o.repeatable)
      d.add_options()(names.c_str(), po::value<std::vector<std::string>>()->composing());
    else
      d.add_options()(names.c_str(), po::value<std::string>());
  }
  d.add_options()(kPositional, po::value<std::vector<std::string>>());
  return d;
}

po::variables_map parsed(const Command &c, const std::vector<std::string> &words) {
  po::positional_options_description positional;
  positional.add(kPositional, positional_count(c));
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(words).options(described(c)).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error &e) {
    throw Error("ANEC-CLI-001", e.what());
  }
  return vm;
}

std::string joined(const std::vector<std::string> &words) {
  std::string out;
  for (const std::string &w : words)
    out += (out.empty() ? "" : ", ") + w;
  return out;
}

void check_choice(const Option &o, const std::string &value) {
  std::vector<std::string> choices = choices_of(o);
  if (!choices.empty() && std::find(choices.begin(), choices.end(), value) == choices.end())
    throw Error("ANEC-CLI-002",
                "--" + std::string(o.name) + " " + quote_arg(value) + " is not one of " + joined(choices));
}

// The command as its usage line writes it: "check MODEL... --target T|all [--format text|json]".
std::string synopsis(const Command &c) {
  std::string out(c.name);
  for (const std::string &item : synopsis_items(c))
    out += " " + item;
  return out;
}

// Refuses a command line without the positional arguments or the options its command requires.
void check_complete(const Command &c, const Args &args) {
  size_t needed = 0;
  for (const Positional &p : c.positionals)
    if ((needed += size_t(p.min)) > args.positional().size())
      throw Error("ANEC-CLI-001",
                  std::string(c.name) + " needs " + std::string(p.name) + " (" + synopsis(c) + ")");
  for (const Option &o : c.options)
    if (o.required && args.value(o.name).empty())
      throw Error("ANEC-CLI-001",
                  std::string(c.name) + " needs --" + std::string(o.name) + " (" + synopsis(c) + ")");
}

} // namespace

Args parse_command_line(const Command &command, const std::vector<std::string> &words) {
  po::variables_map vm = parsed(command, words);
  Args args(command);
  if (vm.count(kPositional))
    args.positional_ = vm[kPositional].as<std::vector<std::string>>();
  for (const Option &o : command.options) {
    std::string name(o.name);
    if (!vm.count(name) || vm[name].defaulted())
      continue;
    if (o.value.empty() && o.choices.empty()) {
      if (vm[name].as<bool>())
        args.given_[name] = {"true"};
      continue;
    }
    std::vector<std::string> values =
        o.repeatable ? vm[name].as<std::vector<std::string>>() : std::vector{vm[name].as<std::string>()};
    for (const std::string &v : values)
      check_choice(o, v);
    args.given_[name] = std::move(values);
  }
  for (const Option &o : command.options)
    args.defaults_.emplace_back(o.fallback);
  check_complete(command, args);
  return args;
}

const Option &Args::option(std::string_view name) const {
  for (const Option &o : command_->options)
    if (o.name == name)
      return o;
  throw std::logic_error("the command " + std::string(command_->name) + " has no option --" +
                         std::string(name));
}

const std::string &Args::value(std::string_view name) const {
  const Option &o = option(name);
  auto found = given_.find(name);
  if (found != given_.end())
    return found->second.back();
  return defaults_[size_t(&o - command_->options.data())];
}

const std::vector<std::string> &Args::values(std::string_view name) const {
  static const std::vector<std::string> none;
  option(name);
  auto found = given_.find(name);
  return found == given_.end() ? none : found->second;
}

bool Args::given(std::string_view name) const {
  option(name);
  return given_.count(name) > 0;
}

double Args::number(std::string_view name) const {
  const std::string &text = value(name);
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw Error("ANEC-CLI-002", "--" + std::string(name) + " " + quote_arg(text) + " is not a number");
  return v;
}

} // namespace anec::tools
