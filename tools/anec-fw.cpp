// anec-fw: encode, decode and validate host-to-firmware commands. Argument parsing and printing
// only; the work is in anec::fw.
#include "anec/firmware/commands.hpp"
#include "anec/firmware/container.hpp"
#include "anec/firmware/image.hpp"
#include "anec/firmware/simulate.hpp"
#include "anec/firmware/wire.hpp"
#include "anec/support/corpus.hpp"
#include "anec/support/diagnostic.hpp"
#include "anec/support/document.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/json.hpp"
#include "anec/support/table.hpp"
#include "anec/support/toml.hpp"

#include "tool_main.hpp"

#include <algorithm>
#include <cstdio>

namespace fs = std::filesystem;
using namespace anec;

namespace {

fw::CommandTable table(const fs::path &tables) {
  return fw::CommandTable::load(tables / "schema" / "firmware" / "commands.toml");
}

// The command table: a line per command in text (id, name, direction, subsystem, [body]), a list of
// documents, or in the CSV form a row per command.
void print_commands(Printer &p, const fw::CommandTable &t) {
  if (p.form() == Form::Csv) {
    Table table{{"id", "name", "direction", "subsystem", "body_layout", "purpose"}, {}, {}};
    for (const fw::CommandSpec &c : t.commands())
      table.rows.push_back(
          {hex(c.id), c.name, c.direction, c.subsystem, t.body(c.name) ? "yes" : "no", c.purpose});
    print(p, table);
    return;
  }
  List list(p, "commands");
  for (const fw::CommandSpec &c : t.commands()) {
    Object o(p);
    bool body = t.body(c.name) != nullptr;
    p.field("id", Hex{c.id, 2});
    p.text("  ");
    p.field("name", c.name);
    p.text(std::string(c.name.size() < 48 ? 48 - c.name.size() : 1, ' '));
    p.data("direction", c.direction);
    p.text(c.direction == "host-to-firmware" ? "H->FW " : c.direction == "both" ? "FW<>H " : "FW->H ");
    p.field("subsystem", c.subsystem);
    p.data("purpose", c.purpose);
    p.data("body_layout", body);
    p.text(body ? " [body]\n" : "\n");
  }
}

int commands(const fs::path &tables, const tools::Args &args) {
  const std::string &format = args.value("format");
  fw::CommandTable t = table(tables);
  render_to_stdout(format, "anec-fw.commands", [&](Printer &p) { print_commands(p, t); });
  return 0;
}

int encode(const fs::path &tables, const tools::Args &args) {
  const std::string &out = args.value("output");
  const std::string &file = args.positional()[0];
  fw::CommandTable t = table(tables);
  Doc d = fs::path(file).extension() == ".json" ? json::parse(read_text_file(file), file)
                                                : toml::parse_file(file);
  d = document_body(std::move(d), "anec-fw.command", file);
  auto bytes = fw::encode(fw::command_from_doc(d, t, file), t);
  write_output(out, bytes);
  std::fprintf(stderr, "encode: %zu bytes written to %s\n", bytes.size(), out.c_str());
  return 0;
}

// The exit code of validating one capture or one command: 1 when a check fired.
int stream_outcome(const fw::StreamValidation &s) {
  return s.accepted == s.messages && s.unframed == 0 && s.truncated == 0 ? 0 : 1;
}
int command_outcome(const fw::Validation &v) {
  return v.violations.empty() ? 0 : 1;
}

// `validate --stream`: a capture of commands back to back, one summary.
int validate_stream(const std::string &file, const fw::CommandTable &t, fw::Channel on,
                    const std::string &format) {
  InputFile input = InputFile::open(file, 1ull << 32);
  fw::StreamValidation s = fw::validate_stream(input.bytes(), t, on);
  render_to_stdout(format, "anec-fw.validate-stream", [&](Printer &p) { fw::print(p, s, "stream " + file); });
  return stream_outcome(s);
}

// One file's verdict in a run over many: its summary as a capture (one command is a capture of
// one), the exit code validating it alone would give (0, 1, 2) and, when it cannot be read, why.
struct FileVerdict {
  fw::StreamValidation summary;
  int outcome = 0;
  std::string error;
};

fw::StreamValidation summary_of(const fw::Validation &v, uint64_t bytes) {
  fw::StreamValidation s;
  s.messages = 1;
  s.bytes = bytes;
  s.accepted = v.accepted();
  for (const fw::Violation &x : v.violations) {
    s.by_disposition[int(x.disposition)] = 1;
    s.first.push_back({0, x});
  }
  return s;
}

FileVerdict validate_file(const fs::path &file, const fw::CommandTable &t, fw::Channel on, bool stream) {
  FileVerdict r;
  try {
    InputFile input = InputFile::open(file, stream ? 1ull << 32 : 1ull << 24);
    if (stream) {
      r.summary = fw::validate_stream(input.bytes(), t, on, 1);
      r.outcome = stream_outcome(r.summary);
    } else {
      fw::Validation v = fw::validate(input.bytes(), t, on);
      r.summary = summary_of(v, input.bytes().size());
      r.outcome = command_outcome(v);
    }
  } catch (const Error &e) {
    r.outcome = 2;
    r.error = e.what();
  }
  return r;
}

std::vector<std::string> verdict_row(const fs::path &file, const FileVerdict &v) {
  if (v.outcome == 2)
    return {file.string(), "", "", "", "", "", "", "", "", v.error};
  const fw::StreamValidation &s = v.summary;
  std::vector<std::string> row{file.string(), std::to_string(s.messages), std::to_string(s.accepted)};
  for (fw::Disposition d : fw::kDispositions)
    row.push_back(std::to_string(s.by_disposition[int(d)]));
  row.push_back(std::to_string(s.unframed));
  row.push_back(s.truncated ? "at " + hex(s.truncated_offset) + ", " + std::to_string(s.truncated_length) +
                                  " bytes framed, " + std::to_string(s.bytes - s.truncated_offset) + " remain"
                            : "");
  row.push_back(s.first.empty()
                    ? ""
                    : s.first[0].violation.code + " " + s.first[0].violation.check + " in the message at " +
                          hex(s.first[0].offset) + ": " + s.first[0].violation.message);
  return row;
}

// Many files at once: spread over the cores, one row per file, one summary.
int validate_many(const std::vector<fs::path> &files, const fw::CommandTable &t, fw::Channel on, bool stream,
                  const std::string &format) {
  std::vector<FileVerdict> verdicts(files.size());
  spread_over_cores(files.size(), [&](size_t i) { verdicts[i] = validate_file(files[i], t, on, stream); });
  Table table{{"file", "messages", "accepted"}, {}, {}};
  for (fw::Disposition d : fw::kDispositions)
    table.columns.push_back(fw::disposition_name(d));
  table.columns.insert(table.columns.end(), {"unframed", "truncated", "first finding"});
  for (size_t i = 0; i < files.size(); ++i)
    table.rows.push_back(verdict_row(files[i], verdicts[i]));
  auto count = [&](int outcome) {
    return size_t(
        std::count_if(verdicts.begin(), verdicts.end(), [&](auto &v) { return v.outcome == outcome; }));
  };
  Corpus corpus{std::move(table), files.size(),        count(1),  count(2),
                "failed",         "without a finding", "with one"};
  render_to_stdout(format, "anec-fw.validate-corpus", [&](Printer &p) { print(p, corpus); });
  return corpus.unreadable ? 2 : corpus.failed ? 1 : 0;
}

int decode_or_validate(const fs::path &tables, const tools::Args &args, bool verdict) {
  const std::vector<std::string> &files = args.positional();
  const std::string &format = args.value("format"), &channel = args.value("channel");
  bool stream = verdict && args.given("stream");
  if (files.empty())
    throw Error("ANEC-CLI-001", std::string(verdict ? "validate" : "decode") + " needs FILE");
  fw::CommandTable t = table(tables);
  fw::Channel on = channel == "exeloop" ? fw::Channel::ExeLoop : fw::Channel::Ring;
  const std::string &file = files.front();
  if (verdict && (files.size() > 1 || fs::is_directory(file)))
    return validate_many(input_files(files, {".bin"}), t, on, stream, format);
  if (stream) return validate_stream(file, t, on, format);
  InputFile input = InputFile::open(file, 1ull << 24);
  fw::Validation v = fw::validate(input.bytes(), t, on);
  if (!verdict && !v.decoded) {
    std::string why =
        v.violations.empty() ? "" : v.violations.front().code + ": " + v.violations.front().message;
    throw Error("ANEC-FW-020", file + ": cannot be decoded (" + why + ")");
  }
  render_to_stdout(format, verdict ? "anec-fw.validate" : "anec-fw.command",
                   [&](Printer &p) { verdict ? fw::print(p, v, t) : fw::print(p, v.command, t); });
  return verdict ? command_outcome(v) : 0;
}

int package(const fs::path &tables, const tools::Args &args) {
  std::string sub(args.command().substr(args.command().find(' ') + 1));
  if (args.positional().empty())
    throw Error("ANEC-CLI-001", "package " + sub + " needs FILE");
  const std::string &file = args.positional()[0];
  auto schema = desc::TdSchema::load(tables / "schema" / "td" / "gen7.toml");
  if (sub == "build") {
    const std::string &out = args.value("output");
    if (out.empty()) throw Error("ANEC-CLI-001", "package build needs -o FILE");
    fs::path in(file);
    fw::Package p = in.extension() == ".hwx" ? fw::package_from_hwx(read_file(in, 256ull << 20), schema)
                    : in.extension() == ".json"
                        ? fw::package_from_doc(json::parse(read_text_file(in), file), in.parent_path(), file)
                        : fw::package_from_doc(toml::parse_file(in), in.parent_path(), file);
    auto bytes = fw::write_package(std::move(p));
    write_output(out, bytes);
    std::fprintf(stderr, "package: %zu bytes written to %s\n", bytes.size(), out.c_str());
    return 0;
  }
  InputFile input = InputFile::open(file, 1ull << 30); // mapped: a bad header costs one page
  std::span<const uint8_t> bytes = input.bytes();
  if (sub == "read") {
    fw::Package p = fw::read_package(bytes);
    std::string text = "package version " + std::to_string(p.version) + ", " +
                       std::to_string(p.programs.size()) + " program(s), " + hex(p.bytes) + " bytes\n";
    for (const fw::Program &g : p.programs) {
      text += "program id " + std::to_string(g.id) + " at " + hex(g.offset) + ": " + hex(g.bytes) +
              " bytes, " + std::to_string(g.buffers) + " buffer(s), " + std::to_string(g.operations) +
              " operation(s), " + std::to_string(g.procedures) + " procedure(s)\n";
      for (const fw::Section &x : g.sections)
        text += "  section " + std::string(fw::section_kind_name(x.kind)) + " +" + hex(x.offset) + " " +
                hex(x.size) + " bytes, device " + hex(x.device_address) + ", align " +
                std::to_string(x.alignment) +
                (x.bar == fw::kNoBar ? std::string() : ", bar " + std::to_string(x.bar)) + "\n";
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  if (sub == "audit") {
    auto findings = fw::audit_package(bytes, schema);
    for (const auto &f : findings)
      std::printf("%s\n", diagnostic_text(f, {.in_file = true}).c_str());
    std::printf("%zu finding(s)\n", findings.size());
    return findings.empty() ? 0 : 1;
  }
  throw Error("ANEC-CLI-001", "package " + sub + " is not build, read or audit");
}

int tables_cmd(const tools::Args &args) {
  const std::string &out = args.value("output"), &format = args.value("format");
  const std::string &file = args.positional()[0];
  Doc d = fw::tables_doc(fw::extract_tables(InputFile::open(file, 1ull << 30).bytes(), file));
  std::string text = format == "json" ? json_document("anec-fw.tables", std::move(d)) : toml::write(d);
  if (out.empty()) std::fwrite(text.data(), 1, text.size(), stdout);
  else write_output(out, text);
  return 0;
}

int im4p_cmd(const tools::Args &args) {
  std::string sub(args.command().substr(args.command().find(' ') + 1));
  const std::string &out = args.value("output");
  if (args.positional().empty() || out.empty())
    throw Error("ANEC-CLI-001", "im4p " + sub + " needs FILE and -o FILE");
  const std::string &file = args.positional()[0];
  if (sub == "wrap") {
    const std::string &type = args.value("type"), &description = args.value("description");
    if (type.size() != 4) throw Error("ANEC-CLI-002", "--type " + type + " is not a four-character type");
    write_output(out, fw::write_im4p({type, description, read_file(file, 1ull << 30)}));
  } else if (sub == "unwrap") {
    write_output(out, fw::read_im4p(InputFile::open(file, 1ull << 30).bytes()).payload);
  } else {
    throw Error("ANEC-CLI-001", "im4p " + sub + " is not wrap or unwrap");
  }
  return 0;
}

int simulate_cmd(const tools::Args &args) {
  const std::string &format = args.value("format");
  const std::string &file = args.positional()[0];
  Doc d = fs::path(file).extension() == ".json" ? json::parse(read_text_file(file), file)
                                                : toml::parse_file(file);
  auto [config, events] = fw::script_from_doc(d, file);
  fw::SimResult r = fw::simulate(config, events);
  render_to_stdout(format, "anec-fw.simulate", [&](Printer &p) { fw::print(p, r); });
  return 0;
}

using tools::Completion;
using tools::kFormatTextJson;
using tools::Option;
using tools::Positional;

const Option kChannel{.name = "channel",
                      .choices = "ring|exeloop",
                      .fallback = "ring",
                      .help = "the channel the commands arrive on"};

const Positional kFile[] = {{.name = "FILE"}};
const Positional kFiles[] = {{.name = "FILE", .max = -1}};
const Positional kCmd[] = {{.name = "CMD.toml|CMD.json"}};
const Positional kSpec[] = {{.name = "SPEC.toml|SPEC.json|FILE.hwx"}};
const Positional kImage[] = {{.name = "IMAGE"}};
const Positional kPayload[] = {{.name = "PAYLOAD"}};
const Positional kScript[] = {{.name = "SCRIPT.toml|SCRIPT.json"}};

const Option kCommandsOptions[] = {tools::kFormatTextJsonCsv};
const Option kOutputOptions[] = {{.name = "output",
                                  .short_name = 'o',
                                  .value = "FILE",
                                  .required = true,
                                  .completes = Completion::files,
                                  .help = "the file written"}};
const Option kDecodeOptions[] = {kFormatTextJson, kChannel};
const Option kValidateOptions[] = {
    {.name = "stream", .help = "FILE is a capture of commands back to back: one summary"},
    kChannel,
    kFormatTextJson};
const Option kTablesOptions[] = {
    {.name = "output",
     .short_name = 'o',
     .value = "FILE",
     .completes = Completion::files,
     .help = "the file written (default: standard output)"},
    {.name = "format", .choices = "toml|json", .fallback = "toml", .help = "the output format"}};
const Option kWrapOptions[] = {
    kOutputOptions[0],
    {.name = "type", .value = "TYPE", .fallback = "anef", .help = "the IM4P's four-character type"},
    {.name = "description", .value = "TEXT", .fallback = "ANE firmware", .help = "the IM4P's description"}};
const Option kUnwrapOptions[] = {{.name = "output",
                                  .short_name = 'o',
                                  .value = "PAYLOAD",
                                  .required = true,
                                  .completes = Completion::files,
                                  .help = "the payload written"}};
const Option kSimulateOptions[] = {kFormatTextJson};

const tools::Command kCommands[] = {
    {"commands", {}, kCommandsOptions, "`commands` lists the commands the wire table knows.\n", commands},
    {"encode", kCmd, kOutputOptions, "`encode` writes a command described in TOML or JSON.\n", encode},
    {"decode", kFile, kDecodeOptions, "`decode` prints one command.\n",
     [](const fs::path &t, const tools::Args &a) { return decode_or_validate(t, a, false); }},
    {"validate", kFiles, kValidateOptions,
     R"(`validate` applies every check — length, magic, checksum, padding, known id, direction,
priority band, program/process/procedure ranges, body size, field limits, events, chained buffers,
and on the exeloop channel the accepted ids — each with its reason code and the firmware's
disposition (reject with a status, drop, fault and reset, warn); `validate --stream` walks a
capture of commands laid back to back (a ring dump), framing each by its header's size, and prints
one summary: messages, accepted, per-disposition counts, granules that could not be framed (the walk
resumes at the next granule), a last message the capture cuts short (the walk stops there), and the
first findings. `validate` with several FILEs or a directory (its .bin files) spreads them over the
cores and prints one row per file (messages, accepted, per-disposition counts, unframed granules,
the truncation, the first finding or why the file could not be read) and
one summary; exit 2 if a file is unreadable, else 1 if one has a finding.
)",
     [](const fs::path &t, const tools::Args &a) { return decode_or_validate(t, a, true); }},
    {"package build", kSpec, kOutputOptions,
     R"(`package build` builds a program container (ANEH -> ANEP -> ANES,
docs/firmware-container.md) from a description or from an hwx program.
)",
     package},
    {"package read", kFile, {}, "`package read` prints a program container.\n", package},
    {"package audit",
     kFile,
     {},
     R"(`package audit` audits a program container as the firmware does at load (section bounds,
overlaps, alignment, the 0xE0000000 window, buffer and operation counts, BAR indices, the
task-descriptor chain of text sections).
)",
     package},
    {"tables", kImage, kTablesOptions,
     R"(`tables` recovers the command-name string table, the {name, id} wire-enum array and the
register-init blocks from a firmware Mach-O, bare or in an IM4P of type `anef`.
)",
     [](const fs::path &, const tools::Args &a) { return tables_cmd(a); }},
    {"im4p wrap", kPayload, kWrapOptions, "`im4p wrap` wraps a payload.\n",
     [](const fs::path &, const tools::Args &a) { return im4p_cmd(a); }},
    {"im4p unwrap", kFile, kUnwrapOptions, "`im4p unwrap` takes the payload out of an IM4P.\n",
     [](const fs::path &, const tools::Args &a) { return im4p_cmd(a); }},
    {"simulate", kScript, kSimulateOptions,
     R"(`simulate` replays a timed script of commands and faults through the execution-loop model
(docs/firmware-simulation.md).
)",
     [](const fs::path &, const tools::Args &a) { return simulate_cmd(a); }},
};

const tools::ToolTable kTool{
    "anec-fw", kCommands,
    R"(Host-to-firmware commands (docs/firmware-wire.md): the 24-byte header (id, size, priority,
programId, processId, procedureId), the body laid out as tables/schema/firmware/commands.toml
gives, the envelope (magic word, CRC-32) and zero padding to the 16-byte granule.
)",
    "Exit codes: 0 accepted, 1 a check fired, 2 bad input.\n"};

} // namespace

int main(int argc, char **argv) {
  return anec::tools::tool_main(kTool, argc, argv);
}
