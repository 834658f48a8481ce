// anec-hal: list, show, encode, decode, diff, validate and generate target tables.
// Argument parsing and printing only; the work is in anec::hal.
#include "anec/decode/binary.hpp"
#include "anec/hal/codec.hpp"
#include "anec/hal/extract.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/hal/target_io.hpp"
#include "anec/hal/validate.hpp"
#include "anec/hal/xref.hpp"
#include "anec/support/checked.hpp"
#include "anec/support/document.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/table.hpp"
#include "anec/support/toml.hpp"
#include "tool_main.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace anec;
using namespace anec::hal;

namespace {

// What a command reads of the tables, each part on first use: a command on one target reads that
// target's table only (TargetTables).
struct Ctx {
  fs::path tables;
  Schema schema;
  TargetTables targets;
  std::optional<Lineup> lineup_;

  explicit Ctx(const fs::path &t)
      : tables(t), schema(Schema::load(t / "schema" / "hal.toml")), targets(schema, t) {}
  const Registry &reg() { return targets.all(); }
  const Lineup &lineup() {
    if (!lineup_)
      lineup_ = load_lineup(tables / "reference" / "lineup.toml");
    return *lineup_;
  }
};

void emit(const std::string &text, const std::string &out) {
  if (out.empty() || out == "-")
    std::fwrite(text.data(), 1, text.size(), stdout);
  else
    write_output(out, text);
}

// A target named on the command line: a definition file (a path, or a name ending in .toml), or a
// target name or alias.
Target resolve_target(Ctx &c, const std::string &arg) {
  if (arg.find('/') != std::string::npos || arg.ends_with(".toml")) return load_target(c.schema, arg);
  return c.targets.get(arg);
}

std::string pad(std::string s, size_t n) {
  if (s.size() < n) s.resize(n, ' ');
  return s;
}

int cmd_list(Ctx &c, const tools::Args &args) {
  const std::string &format = args.value("format");
  struct Col {
    const char *title, *field;
  };
  const Col cols[] = {{"target", nullptr},
                      {"class", "silicon_class"},
                      {"family", "family"},
                      {"hw", "hardware_version"},
                      {"td", "td_generation"},
                      {"cores", "num_nes"},
                      {"width", "max_tensor_width"},
                      {"depth", "max_tensor_depth"},
                      {"kw", "max_kernel_width_small_fp16"},
                      {"kd", "max_large_conv_kernel_dim_z"},
                      {"te", "texture_engine"},
                      {"fp8", "fp8_e4m3"},
                      {"formats", "interchange_format_count"},
                      {"peak_tflops", "peak_tflops"},
                      {"bw_gbps", "bandwidth_gbps"},
                      {"floor_ms", "dispatch_floor_ms"},
                      {"cost", nullptr}};
  auto cell = [&](const Target &t, const Col &col) -> std::string {
    if (!col.field) {
      if (std::string(col.title) == "target") return t.name;
      const Entry *p = t.find("peak_tflops");
      return p ? confidence_name(p->provenance.confidence) : "";
    }
    const Field *f = c.schema.find(col.field);
    const Entry *e = t.find(col.field);
    if (!e) return "?";
    if (auto *s = std::get_if<std::string>(&e->value)) return *s;
    if (auto *d = std::get_if<double>(&e->value)) {
      char b[32];
      std::snprintf(b, sizeof b, "%.3g", *d);
      return b;
    }
    return format_value(*f, e->value);
  };
  const auto &ts = c.reg().targets();
  Table table;
  for (auto &col : cols) {
    table.columns.push_back(col.title);
    table.max_width.push_back(table.columns.size() == 2 ? 22 : 40);
  }
  for (auto &t : ts) {
    std::vector<std::string> r;
    for (auto &col : cols) r.push_back(cell(t, col));
    table.rows.push_back(std::move(r));
  }
  // The document holds every definition whole; the text and CSV forms, the table of the columns.
  emit(render(format, "anec-hal.list",
              [&](Printer &p) {
                if (p.form() == Form::Json) {
                  List list(p, "targets");
                  for (auto &t : ts) {
                    Object o(p);
                    print(p, c.schema, t);
                  }
                  return;
                }
                print(p, table);
                p.text(std::to_string(ts.size()) + " targets\n");
              }),
       "");
  return 0;
}

// A target definition as --format asks: the definition file (TOML, with its header comment), its
// JSON document, or its text.
std::string definition(Ctx &c, const Target &t, const std::string &format) {
  if (format == "toml")
    return to_toml(c.schema, t);
  return render(format, "", [&](Printer &p) { print(p, c.schema, t); });
}

int cmd_show(Ctx &c, const tools::Args &args) {
  const std::string &format = args.value("format");
  Target t = resolve_target(c, args.positional()[0]);
  emit(definition(c, t, format), "");
  return 0;
}

int cmd_encode(Ctx &c, const tools::Args &args) {
  const std::string &out = args.value("output");
  Bytes blob = encode(c.schema, resolve_target(c, args.positional()[0]));
  write_output(out, blob);
  std::fprintf(stderr, "wrote %zu bytes to %s (sha256 %s)\n", blob.size(), out.c_str(),
               sha256_hex(blob).c_str());
  return 0;
}

Target decode_file(Ctx &c, const std::string &path, const std::string &target) {
  const Target &donor = c.targets.get(target);
  Bytes blob = read_file(path, 1 << 20);
  return hal::decode(c.schema, blob, donor.name, &donor,
                {"decoded from blob sha256:" + sha256_hex(blob), Confidence::Decoded});
}

int cmd_decode(Ctx &c, const tools::Args &args) {
  const std::string &target = args.value("target"), &out = args.value("output"),
                    &format = args.value("format");
  Target t = decode_file(c, args.positional()[0], target);
  emit(definition(c, t, format), out);
  return 0;
}

// The fields of two targets side by side: those that differ (all of them with `all`), then how
// many differ; with `table`, only the fields the 0x938-byte table holds.
void print_diff(Printer &p, const Schema &schema, const Target &a, const Target &b, bool all, bool table) {
  p.text(pad("offset", 8) + pad("field", 34));
  p.field("a", a.name, 26);
  p.text("  ");
  p.field("b", b.name);
  p.text("\n");
  size_t differing = 0;
  {
    List rows(p, "fields");
    for (const Field &f : schema.fields()) {
      if (table && !f.in_blob())
        continue;
      const Entry *ea = a.find(f.name), *eb = b.find(f.name);
      bool same = ea && eb && ea->value == eb->value;
      differing += (ea || eb) && !same;
      if ((!ea && !eb) || (same && !all))
        continue;
      Object row(p);
      p.text(pad(f.in_blob() ? hex(*f.offset) : "-", 8));
      if (f.in_blob())
        p.data("offset", *f.offset);
      p.field("field", f.name, 34);
      p.data("a", ea ? value_doc(f, ea->value) : Doc());
      p.data("b", eb ? value_doc(f, eb->value) : Doc());
      p.data("same", same);
      p.text(pad(ea ? format_value(f, ea->value) : "-", 26) + (same ? "  " : "≠ ") +
             (eb ? format_value(f, eb->value) : "-") + "\n");
    }
  }
  p.field("differing", differing);
  p.text(" fields differ\n");
}

int cmd_diff(Ctx &c, const tools::Args &args) {
  const std::vector<std::string> &ab = args.positional();
  const std::string &format = args.value("format"), &ta = args.value("target-a"),
                    &tb = args.value("target-b");
  bool all = args.given("all"), table = args.given("table");
  auto load = [&](const std::string &arg, const std::string &t) {
    if (arg.ends_with(".bin")) {
      if (t.empty())
        throw Error("ANEC-CLI-001", "a blob in diff needs --target-a/--target-b to name its target");
      return decode_file(c, arg, t);
    }
    return resolve_target(c, arg);
  };
  Target a = load(ab[0], ta), b = load(ab[1], tb);
  render_to_stdout(format, "anec-hal.diff", [&](Printer &p) { print_diff(p, c.schema, a, b, all, table); });
  return 0;
}

void print_findings(const std::vector<Finding> &fs) {
  for (auto &f : fs)
    std::printf("%s\n", diagnostic_text(f).c_str());
}

int cmd_validate(Ctx &c, const tools::Args &args) {
  const std::vector<std::string> &files = args.positional();
  std::vector<Target> ts;
  if (args.given("all"))
    ts = c.reg().targets();
  for (auto &f : files) ts.push_back(load_target(c.schema, f));
  if (ts.empty()) throw Error("ANEC-CLI-001", "validate needs FILE... or --all");
  std::vector<Finding> findings;
  for (auto &t : ts) {
    auto f = validate_target(c.schema, c.lineup(), t);
    findings.insert(findings.end(), f.begin(), f.end());
  }
  auto line = validate_line(c.schema, ts);
  findings.insert(findings.end(), line.begin(), line.end());
  print_findings(findings);
  std::printf("%zu target(s) checked, %zu finding(s)\n", ts.size(), findings.size());
  return findings.empty() ? 0 : 1;
}

int cmd_generate(Ctx &c, const tools::Args &args) {
  const std::string &out = args.value("output");
  bool check = args.given("check"), quiet = args.given("quiet");
  fs::path dir = out.empty() ? c.tables / "targets" : fs::path(out);
  std::vector<Target> ref = load_reference(c.schema, c.lineup(), c.tables / "reference");
  std::vector<Target> generated;
  std::vector<Finding> findings;
  std::vector<std::pair<std::string, std::string>> files;
  for (const Target &r : ref) {
    // The table goes through its blob: what is written is what the blob carries.
    Bytes blob = encode(c.schema, r);
    Target t = hal::decode(c.schema, blob, r.name, &r, {"decoded from generated blob", Confidence::Decoded});
    auto f = validate_target(c.schema, c.lineup(), t);
    findings.insert(findings.end(), f.begin(), f.end());
    files.push_back({t.name + ".toml", to_toml(c.schema, t)});
    generated.push_back(std::move(t));
  }
  files.push_back({"index.tsv", index_text(generated)});
  auto line = validate_line(c.schema, generated);
  findings.insert(findings.end(), line.begin(), line.end());
  if (!findings.empty()) {
    print_findings(findings);
    std::fprintf(stderr, "generate: reference facts fail validation; nothing written\n");
    return 1;
  }
  size_t stale = 0;
  for (auto &[name, text] : files) {
    std::string old;
    if (fs::exists(dir / name)) old = read_text_file(dir / name);
    if (old == text) continue;
    ++stale;
    if (check) std::printf("stale: %s\n", (dir / name).string().c_str());
  }
  if (!check && stale) write_output_set(dir, files); // the whole set at once: never part old, part new
  if (check) {
    std::printf("%zu of %zu target tables %s\n", stale, files.size(),
                stale ? "differ from a regeneration" : "up to date");
    return stale ? 1 : 0;
  }
  if (!quiet)
    std::fprintf(stderr, "generate: %zu targets, %zu file(s) rewritten in %s\n", generated.size(), stale,
                 dir.c_str());
  return 0;
}

// The schema's fields: where each sits in the blob, its type, name, confidence and meaning.
void print_fields(Printer &p, const Schema &schema) {
  List fields(p, "fields");
  for (const Field &f : schema.fields()) {
    Object x(p);
    p.text(pad(f.in_blob() ? hex(*f.offset) + "+" + std::to_string(f.width) : "-", 12));
    if (f.in_blob()) {
      p.data("offset", *f.offset);
      p.data("width", f.width);
    }
    p.field("type", type_name(f.type), 8);
    p.field("name", f.name, 34);
    p.field("confidence", confidence_name(f.confidence), 12);
    p.field("meaning", f.meaning);
    p.data("section", f.section);
    p.data("unit", f.unit);
    p.data("source", f.source);
    p.text("\n");
  }
}

int cmd_schema(Ctx &c, const tools::Args &args) {
  render_to_stdout(args.value("format"), "anec-hal.schema", [&](Printer &p) { print_fields(p, c.schema); });
  return 0;
}

std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

// One recovered table: its name, where it came from, and how it stands against the registry (the
// same as its target's table, different in some fields, or new with the nearest known target).
void print_extracted(Printer &p, const ExtractedTable &t, const fs::path &dir) {
  Object x(p);
  p.field("target", t.target, 10);
  p.field("symbol", t.symbol);
  p.text("  [");
  p.field("method", t.method);
  p.text("]\n  ");
  p.data("class", t.class_name);
  p.data("known", t.known);
  p.data("nearest", t.nearest);
  p.field("status", status_text(t));
  {
    List fields(p, "differing");
    for (size_t i = 0; i < t.differing.size(); ++i) {
      p.text(i ? ", " : ": ");
      p.item(t.differing[i]);
    }
  }
  if (!t.differing.empty())
    p.text("\n  see: anec-hal diff " + std::string(t.known ? "" : "--table ") + t.nearest + " " +
           (dir / (t.target + ".toml")).string());
  p.text("\n");
}

int cmd_extract(Ctx &c, const tools::Args &args) {
  const std::string &out = args.value("output"), &format = args.value("format");
  ExtractOptions opt;
  // Strict: a "-1" must not wrap to 2^64-1, and Unicorn takes a 0 timeout as none.
  opt.limits.max_instructions =
      parse_uint(args.value("max-instructions"), 1, 1'000'000'000'000, "--max-instructions");
  opt.limits.timeout_ms = parse_uint(args.value("timeout-ms"), 1, 3'600'000, "--timeout-ms");
  const std::string &binary = args.positional()[0];
  opt.targets = split_list(args.value("targets"));
  if (::isatty(2))
    opt.progress = [](size_t done, size_t total, const std::string &t) {
      std::fprintf(stderr, "\r[%zu/%zu] %-8s", done, total, t.c_str());
      if (done == total) std::fprintf(stderr, "\n");
    };
  opt.warn = [](const std::string &m) { std::fprintf(stderr, "anec-hal: warning: %s\n", m.c_str()); };
  decode::Binary bin = decode::Binary::load(binary);
  auto tables = extract(c.schema, c.reg(), bin, opt);
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto &t : tables)
    files.push_back({t.target + ".toml", to_toml(c.schema, to_target(c.schema, c.reg(), bin, t))});
  write_output_set(out, files);
  size_t fresh = std::count_if(tables.begin(), tables.end(), [](auto &t) { return !t.known; });
  render_to_stdout(format, "anec-hal.extract", [&](Printer &p) {
    {
      List list(p, "tables");
      for (const auto &t : tables)
        print_extracted(p, t, out);
    }
    p.text(std::to_string(tables.size()) + " table(s), " + std::to_string(fresh) + " of new targets\n");
  });
  std::fprintf(stderr, "extract: %zu table(s) from %s (%s %s, sha256 %s) written to %s\n", tables.size(),
               binary.c_str(), decode::format_name(bin.format()), decode::arch_name(bin.arch()),
               bin.sha256().substr(0, 16).c_str(), out.c_str());
  return 0;
}

// A function that takes the table, and each read it makes through it: the field read, or an unnamed
// offset with the name proposed for it.
void print_reader(Printer &p, const Reader &r) {
  Object x(p);
  p.field("function", r.function);
  p.text("  [");
  p.field("address", Hex{r.address});
  p.data("argument", r.argument);
  p.text(", table in ");
  p.field("register", r.register_name);
  p.text("]\n");
  List reads(p, "reads");
  for (const auto &t : r.reads) {
    Object read(p);
    p.text("  " + pad(hex(t.offset), 8) + pad(std::to_string(t.width) + "B", 5));
    p.data("offset", t.offset);
    p.data("width", t.width);
    p.data("at", t.at);
    p.data("field", t.field);
    p.data("named", t.named);
    if (!t.named)
      p.data("proposal", t.proposal);
    p.text((t.named ? t.field
                    : "UNNAMED (in " + (t.field.empty() ? std::string("no field") : t.field) +
                          "), proposed: " + t.proposal) +
           "\n");
  }
  if (r.reads.empty())
    p.text("  (no reads through the table argument)\n");
}

int cmd_xref(Ctx &c, const tools::Args &args) {
  const std::string &type = args.value("type"), &format = args.value("format");
  decode::Binary bin = decode::Binary::load(args.positional()[0]);
  auto readers = find_readers(c.schema, bin, type);
  render_to_stdout(format, "anec-hal.xref", [&](Printer &p) {
    {
      List list(p, "readers");
      for (const Reader &r : readers)
        print_reader(p, r);
    }
    p.text(std::to_string(readers.size()) + " reader function(s) taking " + type + " const&\n");
  });
  return 0;
}

// A command's handler, run on the context of the tables.
template <int (*Run)(Ctx &, const tools::Args &)>
int on_tables(const fs::path &tables, const tools::Args &args) {
  Ctx c(tables);
  return Run(c, args);
}

using tools::Completion;
using tools::kFormatTextJson;
using tools::Option;
using tools::Positional;

const Positional kTarget[] = {{.name = "TARGET", .completes = Completion::targets}};
const Positional kTargetOrFile[] = {{.name = "TARGET|FILE.toml", .completes = Completion::targets_or_files}};
const Positional kBlob[] = {{.name = "BLOB"}};
const Positional kTwo[] = {{.name = "A"}, {.name = "B"}};
const Positional kFiles[] = {{.name = "FILE", .min = 0, .max = -1}};
const Positional kBinary[] = {{.name = "BINARY"}};

const Option kListOptions[] = {tools::kFormatTextJsonCsv};
const Option kShowOptions[] = {
    {.name = "format", .choices = "text|toml|json", .fallback = "text", .help = "the output format"}};
const Option kEncodeOptions[] = {{.name = "output",
                                  .short_name = 'o',
                                  .value = "BLOB",
                                  .required = true,
                                  .completes = Completion::files,
                                  .help = "the blob written"}};
const Option kDecodeOptions[] = {
    {.name = "target",
     .value = "TARGET",
     .required = true,
     .completes = Completion::targets,
     .help = "the target whose identity and provenance the blob takes"},
    {.name = "format", .choices = "toml|json|text", .fallback = "toml", .help = "the output format"},
    {.name = "output",
     .short_name = 'o',
     .value = "FILE",
     .completes = Completion::files,
     .help = "the file written (default: standard output)"}};
const Option kDiffOptions[] = {
    {.name = "all", .help = "print the fields that agree too"},
    {.name = "table", .help = "compare only the fields the 0x938-byte table holds"},
    {.name = "target-a", .value = "TARGET", .completes = Completion::targets, .help = "the target of blob A"},
    {.name = "target-b", .value = "TARGET", .completes = Completion::targets, .help = "the target of blob B"},
    kFormatTextJson};
const Option kValidateOptions[] = {{.name = "all", .help = "check every target of the tables"}};
const Option kGenerateOptions[] = {
    {.name = "output",
     .short_name = 'o',
     .value = "DIR",
     .completes = Completion::dirs,
     .help = "the directory written (default: the tables' targets/)"},
    {.name = "check", .help = "write nothing: say whether the tables are stale (exit 1 if so)"},
    {.name = "quiet", .short_name = 'q', .help = "no summary on standard error"}};
const Option kSchemaOptions[] = {kFormatTextJson};
const Option kExtractOptions[] = {{.name = "output",
                                   .short_name = 'o',
                                   .value = "DIR",
                                   .required = true,
                                   .completes = Completion::dirs,
                                   .help = "the directory of the tables written"},
                                  {.name = "targets",
                                   .value = "T,...",
                                   .completes = Completion::targets,
                                   .help = "the targets extracted (default: all)"},
                                  {.name = "max-instructions",
                                   .value = "N",
                                   .fallback = "5000000",
                                   .help = "the instructions a constructor may run, 1 to 10^12"},
                                  {.name = "timeout-ms",
                                   .value = "N",
                                   .fallback = "20000",
                                   .help = "the milliseconds a constructor may run, 1 to 3600000"},
                                  kFormatTextJson};
const Option kXrefOptions[] = {
    {.name = "type", .value = "NAME", .fallback = "ZinIrHalParameters", .help = "the table's C++ type"},
    kFormatTextJson};

const tools::Command kCommands[] = {
    {"list", {}, kListOptions, "`list` prints the 28 targets in one table.\n", on_tables<cmd_list>},
    {"show", kTarget, kShowOptions, "`show` prints one target definition.\n", on_tables<cmd_show>},
    {"encode", kTargetOrFile, kEncodeOptions, "`encode` packs a target into its 0x938-byte HAL blob.\n",
     on_tables<cmd_encode>},
    {"decode", kBlob, kDecodeOptions, "`decode` unpacks a blob, its identity and provenance from TARGET.\n",
     on_tables<cmd_decode>},
    {"diff", kTwo, kDiffOptions,
     R"(`diff` compares two targets, target files (.toml) or blobs (.bin, whose targets --target-a
and --target-b name) field by field; --all prints the fields that agree too, --table only the
fields the table holds (an extracted new target has no others).
)",
     on_tables<cmd_diff>},
    {"validate", kFiles, kValidateOptions, "`validate` checks target definitions (exit 1 on findings).\n",
     on_tables<cmd_validate>},
    {"generate",
     {},
     kGenerateOptions,
     R"(`generate` makes tables/targets/*.toml from tables/reference through the blob (DIR is replaced
as a whole: it may hold only tables); --check says whether they are stale.
)",
     on_tables<cmd_generate>},
    {"schema",
     {},
     kSchemaOptions,
     "`schema` prints the HAL field map, gaps included.\n",
     on_tables<cmd_schema>},
    {"extract", kBinary, kExtractOptions,
     R"(`extract` runs the per-target constructors of a compiler binary (Mach-O or ELF) and writes
DIR/<name>.toml (DIR is new or holds only tables: it is replaced); limits per constructor:
--max-instructions 1 to 10^12 (default 5000000), --timeout-ms 1 to 3600000 (default 20000); 0,
negative or larger values are rejected (ANEC-CLI-002), never wrapped or unlimited. It prints each
table's status: the same as its target's, different in some fields (anec-hal diff shows them), or a
new target named by its class, with the known target nearest to it (the fewest differing fields).
)",
     on_tables<cmd_extract>},
    {"xref", kBinary, kXrefOptions,
     "`xref` says which table offsets each reader function of a compiler binary reads.\n",
     on_tables<cmd_xref>},
};

const tools::ToolTable kTool{
    "anec-hal", kCommands,
    R"(The ANE target tables. Target names are case-insensitive and accept aliases (m1, m5-pro, ...).
)",
    "Exit codes: 0 success, 1 validation findings or stale tables, 2 bad input.\n"};

} // namespace

int main(int argc, char **argv) {
  return anec::tools::tool_main(kTool, argc, argv);
}
