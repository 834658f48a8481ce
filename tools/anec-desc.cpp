// anec-desc: decode task-descriptor programs. Argument parsing and printing only.
#include "anec/descriptors/anec_container.hpp"
#include "anec/descriptors/audit.hpp"
#include "anec/descriptors/dump.hpp"
#include "anec/descriptors/encode.hpp"
#include "anec/descriptors/hwx.hpp"
#include "anec/descriptors/program.hpp"
#include "anec/descriptors/td.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/checked.hpp"
#include "anec/support/corpus.hpp"
#include "anec/support/document.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/json.hpp"
#include "anec/support/table.hpp"
#include "anec/support/text_out.hpp"
#include "desc_html.hpp"
#include "tool_main.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

using namespace anec;

namespace {

// A program file read as an hwx container (by its magic), an anec container (by its header) or
// else as a raw chain (anec/descriptors/program.hpp), mapped: a 48 MB chain is not copied.
struct Program : desc::DescProgram {
  InputFile file;
};

using desc::Databases;
using desc::RawChain;

// The register databases, an hwx's generation told by the target index.
Databases databases_of(const std::filesystem::path &tables) {
  return Databases(
      tables, [tables](uint32_t subtype) { return hal::generation_of_subtype(tables / "targets", subtype); });
}

Program load(Databases &databases, const std::string &file, int generation, RawChain raw = RawChain::Tree) {
  InputFile input = InputFile::open(file, 256ull << 20);
  std::span<const uint8_t> bytes = input.bytes();
  auto warn = [](const std::string &w) { std::fprintf(stderr, "anec-desc: warning: %s\n", w.c_str()); };
  return {desc::read_program(databases, bytes, generation, raw, warn), std::move(input)};
}

// A numeric option given as text (an int option took "-1" and a negative --td used to mean
// "every descriptor"): -1 when absent, else a whole number up to `max` (ANEC-CLI-002).
int option_number(const std::string &text, uint64_t max, const char *what) {
  return text.empty() ? -1 : int(parse_uint(text, 0, max, what));
}
constexpr uint64_t kMaxGeneration = 255, kMaxTd = 1u << 24;

int dump(const std::filesystem::path &tables, const tools::Args &args) {
  const std::string &format = args.value("format");
  int td = option_number(args.value("td"), kMaxTd, "--td");
  int generation = option_number(args.value("generation"), kMaxGeneration, "--generation");
  const std::string &file = args.positional()[0];
  Databases databases = databases_of(tables);
  Program p = load(databases, file, generation, RawChain::Undecoded); // a raw chain: printed as decoded
  std::optional<size_t> only;
  if (td >= 0) only = size_t(td);
  auto print = [&](Printer &printer) { desc::print(printer, p, only); };
  TextOut out(stdout); // the text is written as it is printed, not gathered first
  if (format == "html")
    tools::desc_html(print, p.bytes, file, out);
  else
    render(form_named(format), "anec-desc.dump", print, out);
  return 0;
}

struct Audited {
  size_t descriptors = 0;
  std::vector<Diagnostic> findings;
};

// A raw chain is audited in flat form, its register words walked but not kept: the checks read the
// structure and the header fields only.
Audited audit_file(Databases &databases, const std::string &file, int generation) {
  Program p = load(databases, file, generation, RawChain::Undecoded);
  if (p.hwx)
    return {p.chain.tds.size(), desc::audit_hwx(*p.hwx)};
  if (p.anec)
    return {p.chain.tds.size(), desc::audit_anec(*p.anec)};
  desc::FlatChain flat;
  desc::decode_flat(p.bytes, *p.schema, flat, desc::FlatDetail::Headers);
  return {flat.tds.size(), desc::audit_chain(flat, *p.schema)};
}

int audit_one(Databases &databases, const std::string &file, int generation, const std::string &format) {
  Audited a = audit_file(databases, file, generation);
  std::string out = render(format, "anec-desc.audit", [&](Printer &p) {
    p.data("descriptors", a.descriptors);
    print(p, a.findings, "findings", {.in_file = true});
    p.text(std::to_string(a.descriptors) + " descriptor(s) audited, " + std::to_string(a.findings.size()) +
           " finding(s)\n");
  });
  std::fwrite(out.data(), 1, out.size(), stdout);
  return a.findings.empty() ? 0 : 1;
}

// Many files at once: spread over the cores, one row per file, one summary. Each finding names its
// file as its object; a file that cannot be read is a row with its error (and an error diagnostic
// in the list), not the end of the run.
int audit_many(Databases &databases, const std::vector<std::filesystem::path> &files, int generation,
               const std::string &format) {
  std::vector<Audited> results(files.size());
  std::vector<std::string> errors(files.size());
  spread_over_cores(files.size(), [&](size_t i) {
    try {
      results[i] = audit_file(databases, files[i].string(), generation);
    } catch (const Error &e) {
      errors[i] = e.what();
      results[i].findings = {
          finding_at(e.code(), 0, std::string(e.what()).substr(e.code().size() + 2), Severity::Error)};
    } catch (const std::exception &e) {
      errors[i] = std::string("ANEC-INTERNAL: ") + e.what();
      results[i].findings = {finding_at("ANEC-INTERNAL", 0, e.what(), Severity::Error)};
    }
    for (Diagnostic &f : results[i].findings)
      f.object = files[i].string();
  });
  Corpus corpus{{{"file", "descriptors", "findings", "error"}, {}, {}},
                files.size(),
                0,
                0,
                "with_findings",
                "without a finding",
                "with findings"};
  std::vector<Diagnostic> findings;
  for (size_t i = 0; i < files.size(); ++i) {
    bool failed = !errors[i].empty();
    corpus.unreadable += failed;
    corpus.failed += !failed && !results[i].findings.empty();
    corpus.rows.rows.push_back({files[i].string(), failed ? "" : std::to_string(results[i].descriptors),
                                failed ? "" : std::to_string(results[i].findings.size()), errors[i]});
    findings.insert(findings.end(), results[i].findings.begin(), results[i].findings.end());
  }
  // The findings come first in the text and CSV forms, after the counts in the document; the CSV
  // form has no rows per file.
  std::string out = render(format, "anec-desc.audit-corpus", [&](Printer &p) {
    if (p.form() == Form::Json)
      print(p, corpus);
    print(p, findings, "findings", {.in_file = true});
    if (p.text_form())
      print(p, corpus);
  });
  std::fwrite(out.data(), 1, out.size(), stdout);
  return corpus.unreadable ? 2 : corpus.failed ? 1 : 0;
}

int audit(const std::filesystem::path &tables, const tools::Args &args) {
  const std::vector<std::string> &files = args.positional();
  const std::string &format = args.value("format");
  int generation = option_number(args.value("generation"), kMaxGeneration, "--generation");
  Databases databases = databases_of(tables);
  if (files.size() == 1 && !std::filesystem::is_directory(files[0]))
    return audit_one(databases, files[0], generation, format);
  return audit_many(databases, input_files(files, {".bin", ".hwx", ".anec"}), generation, format);
}

int explain(const std::filesystem::path &tables, const tools::Args &args) {
  const std::vector<std::string> &pos = args.positional();
  int generation = option_number(args.value("generation"), kMaxGeneration, "--generation");
  // Strict: stoull read "-1" as 2^64-1 and a leading 0 as octal.
  uint64_t offset = parse_uint(pos[1], 0, UINT64_MAX, "OFFSET");
  Databases databases = databases_of(tables);
  Program p = load(databases, pos[0], generation);
  if (offset >= p.bytes.size())
    throw Error("ANEC-CLI-002", "OFFSET " + quote_arg(pos[1]) + " (" + hex(offset) +
                                    ") lies at or past the end of " + pos[0] + " (" +
                                    std::to_string(p.bytes.size()) + " bytes)");
  std::string out = desc::explain(p.bytes, p.chain, p.hwx ? &*p.hwx : nullptr, offset);
  if (p.anec && offset < p.anec->header_bytes)
    out = hex(offset) + ": anec header " + desc::anec_header_field(*p.anec, offset) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int convert(const std::filesystem::path &tables, const tools::Args &args) {
  const std::string &out = args.value("output"), &header = args.value("header-bytes");
  const std::string &file = args.positional()[0];
  Databases databases = databases_of(tables);
  Program p = load(databases, file, -1);
  if (!p.hwx) throw Error("ANEC-CONV-001", file + " is not an hwx container");
  auto bytes = desc::hwx_to_anec(*p.hwx, p.bytes, uint32_t(std::stoul(header, nullptr, 0)));
  write_output(out, bytes);
  std::fprintf(stderr, "convert: %zu bytes written to %s\n", bytes.size(), out.c_str());
  return 0;
}

int encode(const std::filesystem::path &tables, const tools::Args &args) {
  const std::string &out = args.value("output");
  const std::string &file = args.positional()[0];
  auto bytes = desc::encode_program(tables, json::parse(read_text_file(file), file), file);
  write_output(out, bytes);
  std::fprintf(stderr, "encode: %zu bytes written to %s\n", bytes.size(), out.c_str());
  return 0;
}

using tools::Completion;
using tools::Option;
using tools::Positional;

const Option kGeneration{
    .name = "generation", .value = "N", .help = "the register database's generation (7 is H13), 0 to 255"};
const Option kOutput{.name = "output",
                     .short_name = 'o',
                     .value = "FILE",
                     .required = true,
                     .completes = Completion::files,
                     .help = "the file written"};

const Positional kFile[] = {{.name = "FILE"}};
const Positional kDump[] = {{.name = "DUMP.json"}};
const Positional kFiles[] = {{.name = "FILE", .max = -1}};
const Positional kFileOffset[] = {{.name = "FILE"}, {.name = "OFFSET", .completes = Completion::none}};
const Positional kHwx[] = {{.name = "FILE.hwx"}};

const Option kDumpOptions[] = {
    {.name = "format", .choices = "text|json|html", .fallback = "text", .help = "the output format"},
    {.name = "td", .value = "N", .help = "print descriptor N only"},
    kGeneration};
const Option kEncodeOptions[] = {kOutput};
const Option kAuditOptions[] = {kGeneration, tools::kFormatTextJsonCsv};
const Option kExplainOptions[] = {kGeneration};
const Option kConvertOptions[] = {{.name = "output",
                                   .short_name = 'o',
                                   .value = "FILE.anec",
                                   .required = true,
                                   .completes = Completion::files,
                                   .help = "the anec container written"},
                                  {.name = "header-bytes",
                                   .choices = "0x800|0x1000|2048|4096",
                                   .fallback = "0x1000",
                                   .help = "the size of the anec header"}};

const tools::Command kCommands[] = {
    {"dump", kFile, kDumpOptions,
     R"(`dump` decodes a task-descriptor program, its container detected from its bytes: an hwx
container (magic 0xbeefface: load commands, segments, tensor names, the program state's buffer
slots, tensor states, banner, symbols, __text relocations resolved to the registers they patch, then
the descriptor chain in __text), an anec container (the Linux driver's header, 0x800 or 0x1000
bytes, then the chain and kernel data), or a raw chain (descriptors back to back, the last marked
EON, then kernel data: the H13 layout of the eiln kernels). Every descriptor's header and register
streams are printed, each register word with its raw value and decoded fields; unknown registers
and set reserved bits are reported. --td N prints descriptor N only. --format html writes one
self-contained page: the JSON dump's tree beside a hex view of the file, a selected node's bytes
highlighted, a selected byte's nodes opened (#sel=NODE-ID or #byte=OFFSET in the address selects as
a click does).
)",
     dump},
    {"encode", kDump, kEncodeOptions,
     R"(`encode` rebuilds the file from a full JSON dump, packing each register word from its fields
(edit a value to patch the program).
)",
     encode},
    {"audit", kFiles, kAuditOptions,
     R"(`audit` runs the named checks (EON, TIDs, NextPointer, relocation targets, kernel bounds,
program state, buffer slots, strides, anec header sizes) and exits 1 on findings; given several
FILEs or a directory (its .bin, .hwx and .anec files), it spreads them over the cores and prints
their findings, one row per file and one summary (exit 2 if a file could not be read, else 1 if any
has a finding).
)",
     audit},
    {"explain", kFileOffset, kExplainOptions, "`explain` says what lies at a byte offset of FILE.\n",
     explain},
    {"convert", kHwx, kConvertOptions,
     "`convert` writes an hwx as the anec container the Linux driver loads.\n", convert},
};

const tools::ToolTable kTool{
    "anec-desc", kCommands,
    R"(Decodes, encodes, audits and converts task-descriptor programs. The register database is
chosen by --generation N, else for an hwx by its cpusubtype through the target tables, else
generation 7 (H13).
)",
    "Exit codes: 0 success, 1 audit findings, 2 bad input.\n"};

} // namespace

int main(int argc, char **argv) {
  return anec::tools::tool_main(kTool, argc, argv);
}
