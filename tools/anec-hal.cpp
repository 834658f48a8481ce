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

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace anec;
using namespace anec::hal;

namespace {

const tools::Command kCommands[] = {
    {"list", "[--format text|json|csv]", "`list` prints the 28 targets in one table.\n"},
    {"show", "TARGET [--format text|toml|json]", "`show` prints one target definition.\n"},
    {"encode", "TARGET|FILE.toml -o BLOB", "`encode` packs a target into its 0x938-byte HAL blob.\n"},
    {"decode", "BLOB --target TARGET [--format toml|json|text] [-o FILE]",
     "`decode` unpacks a blob, its identity and provenance from TARGET.\n"},
    {"diff", "A B [--all] [--target-a TARGET] [--target-b TARGET] [--format text|json]",
     R"(`diff` compares two targets, target files (.toml) or blobs (.bin, whose targets --target-a
and --target-b name) field by field; --all prints the fields that agree too.
)"},
    {"validate", "FILE... | --all", "`validate` checks target definitions (exit 1 on findings).\n"},
    {"generate", "[-o DIR] [--check]",
     R"(`generate` makes tables/targets/*.toml from tables/reference through the blob (DIR is replaced
as a whole: it may hold only tables); --check says whether they are stale.
)"},
    {"schema", "[--format text|json]", "`schema` prints the HAL field map, gaps included.\n"},
    {"extract", "BINARY -o DIR [--targets T,...] [--max-instructions N] [--timeout-ms N]",
     R"(`extract` runs the per-target constructors of a compiler binary (Mach-O or ELF) and writes
DIR/<name>.toml (DIR is new or holds only tables: it is replaced); limits per constructor:
--max-instructions 1 to 10^12 (default 5000000), --timeout-ms 1 to 3600000 (default 20000); 0,
negative or larger values are rejected (ANEC-CLI-002), never wrapped or unlimited.
)"},
    {"xref", "BINARY [--type NAME] [--format text|json]",
     "`xref` says which table offsets each reader function of a compiler binary reads.\n"},
};

const tools::ToolTable kTool{
    "anec-hal", kCommands,
    R"(The ANE target tables. Target names are case-insensitive and accept aliases (m1, m5-pro, ...).
)",
    "Exit codes: 0 success, 1 validation findings or stale tables, 2 bad input.\n"};

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

void check_format(const std::string &f, std::initializer_list<const char *> allowed) {
  for (auto *a : allowed)
    if (f == a) return;
  std::string list;
  for (auto *a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
  throw Error("ANEC-CLI-002", "--format " + f + " is not one of " + list);
}

void emit(const std::string &text, const std::string &out) {
  if (out.empty() || out == "-")
    std::fwrite(text.data(), 1, text.size(), stdout);
  else
    write_output(out, text);
}

po::variables_map parse(const std::vector<std::string> &args, po::options_description &opts,
                        const po::positional_options_description &pos) {
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  po::notify(vm);
  return vm;
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

int cmd_list(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::string format = "text";
  o.add_options()("format", po::value(&format));
  parse(args, o, {});
  check_format(format, {"text", "json", "csv"});
  struct Col {
    const char *title, *field;
  };
  const Col cols[] = {{"target", nullptr},       {"class", "silicon_class"},   {"family", "family"},
                      {"hw", "hardware_version"}, {"td", "td_generation"},     {"cores", "num_nes"},
                      {"width", "max_tensor_width"}, {"depth", "max_tensor_depth"}, {"kw", "max_kernel_width_small_fp16"},
                      {"kd", "max_large_conv_kernel_dim_z"}, {"te", "texture_engine"}, {"fp8", "fp8_e4m3"},
                      {"formats", "interchange_format_count"}, {"peak_tflops", "peak_tflops"},
                      {"bw_gbps", "bandwidth_gbps"}, {"floor_ms", "dispatch_floor_ms"}, {"cost", nullptr}};
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
  if (format == "json") {
    Doc arr = Doc::array();
    for (auto &t : ts) arr.push(to_doc(c.schema, t));
    emit(json_list_document("anec-hal.list", "targets", std::move(arr)), "");
    return 0;
  }
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
  emit(render(format, "anec-hal.list", [&](Printer &p) {
         print(p, table);
         p.text(std::to_string(ts.size()) + " targets\n");
       }),
       "");
  return 0;
}

int cmd_show(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::string format = "text", target;
  o.add_options()("format", po::value(&format))("target", po::value(&target));
  po::positional_options_description p;
  p.add("target", 1);
  parse(args, o, p);
  check_format(format, {"text", "toml", "json"});
  if (target.empty()) throw Error("ANEC-CLI-001", "show needs a TARGET");
  Target t = resolve_target(c, target);
  emit(format == "toml" ? to_toml(c.schema, t) : format == "json" ? to_json(c.schema, t) : to_text(c.schema, t), "");
  return 0;
}

int cmd_encode(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::string target, out;
  o.add_options()("target", po::value(&target))("output,o", po::value(&out));
  po::positional_options_description p;
  p.add("target", 1);
  parse(args, o, p);
  if (target.empty() || out.empty()) throw Error("ANEC-CLI-001", "encode needs TARGET|FILE.toml and -o BLOB");
  Bytes blob = encode(c.schema, resolve_target(c, target));
  write_output(out, blob);
  std::fprintf(stderr, "wrote %zu bytes to %s (sha256 %s)\n", blob.size(), out.c_str(), sha256_hex(blob).c_str());
  return 0;
}

Target decode_file(Ctx &c, const std::string &path, const std::string &target) {
  const Target &donor = c.targets.get(target);
  Bytes blob = read_file(path, 1 << 20);
  return hal::decode(c.schema, blob, donor.name, &donor,
                {"decoded from blob sha256:" + sha256_hex(blob), Confidence::Decoded});
}

int cmd_decode(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::string blob, target, out, format = "toml";
  o.add_options()("blob", po::value(&blob))("target", po::value(&target))("format", po::value(&format))(
      "output,o", po::value(&out));
  po::positional_options_description p;
  p.add("blob", 1);
  parse(args, o, p);
  check_format(format, {"text", "toml", "json"});
  if (blob.empty() || target.empty()) throw Error("ANEC-CLI-001", "decode needs BLOB and --target TARGET");
  Target t = decode_file(c, blob, target);
  emit(format == "toml" ? to_toml(c.schema, t) : format == "json" ? to_json(c.schema, t) : to_text(c.schema, t), out);
  return 0;
}

int cmd_diff(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::vector<std::string> ab;
  std::string format = "text", ta, tb;
  bool all = false;
  o.add_options()("ab", po::value(&ab))("all", po::bool_switch(&all))("format", po::value(&format))(
      "target-a", po::value(&ta))("target-b", po::value(&tb));
  po::positional_options_description p;
  p.add("ab", 2);
  parse(args, o, p);
  check_format(format, {"text", "json"});
  if (ab.size() != 2) throw Error("ANEC-CLI-001", "diff needs two targets or files");
  auto load = [&](const std::string &arg, const std::string &t) {
    if (arg.ends_with(".bin")) {
      if (t.empty()) throw Error("ANEC-CLI-001", "a blob in diff needs --target-a/--target-b to name its target");
      return decode_file(c, arg, t);
    }
    return resolve_target(c, arg);
  };
  Target a = load(ab[0], ta), b = load(ab[1], tb);
  Doc rows = Doc::array();
  std::string text;
  size_t differing = 0;
  for (const Field &f : c.schema.fields()) {
    const Entry *ea = a.find(f.name), *eb = b.find(f.name);
    if (!ea && !eb) continue;
    bool same = ea && eb && ea->value == eb->value;
    differing += !same;
    if (same && !all) continue;
    std::string va = ea ? format_value(f, ea->value) : "-", vb = eb ? format_value(f, eb->value) : "-";
    Doc r = Doc::table();
    r.set("field", Doc::string(f.name));
    if (f.in_blob()) r.set("offset", Doc::integer(*f.offset));
    r.set("a", ea ? value_doc(f, ea->value) : Doc());
    r.set("b", eb ? value_doc(f, eb->value) : Doc());
    r.set("same", Doc::boolean(same));
    rows.push(std::move(r));
    text += pad(f.in_blob() ? hex(*f.offset) : "-", 8) + pad(f.name, 34) + pad(va, 26) + (same ? "  " : "≠ ") + vb + "\n";
  }
  if (format == "json") {
    Doc d = Doc::table(4);
    d.append("a", Doc::string(a.name));
    d.append("b", Doc::string(b.name));
    d.append("differing", Doc::integer(int64_t(differing)));
    d.append("fields", std::move(rows));
    emit(json_document("anec-hal.diff", std::move(d)), "");
  } else {
    std::string head = pad("offset", 8) + pad("field", 34) + pad(a.name, 26) + "  " + b.name + "\n";
    emit(head + text + std::to_string(differing) + " fields differ\n", "");
  }
  return 0;
}

void print_findings(const std::vector<Finding> &fs) {
  for (auto &f : fs) std::printf("%s\n", diagnostic_text(f, {.in_file = false}).c_str());
}

int cmd_validate(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::vector<std::string> files;
  bool all = false;
  o.add_options()("files", po::value(&files))("all", po::bool_switch(&all));
  po::positional_options_description p;
  p.add("files", -1);
  parse(args, o, p);
  std::vector<Target> ts;
  if (all)
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

int cmd_generate(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::string out;
  bool check = false, quiet = false;
  o.add_options()("output,o", po::value(&out))("check", po::bool_switch(&check))("quiet,q", po::bool_switch(&quiet));
  parse(args, o, {});
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
    std::printf("%zu of %zu target tables %s\n", stale, files.size(), stale ? "differ from a regeneration" : "up to date");
    return stale ? 1 : 0;
  }
  if (!quiet)
    std::fprintf(stderr, "generate: %zu targets, %zu file(s) rewritten in %s\n", generated.size(), stale,
                 dir.c_str());
  return 0;
}

int cmd_schema(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::string format = "text";
  o.add_options()("format", po::value(&format));
  parse(args, o, {});
  check_format(format, {"text", "json"});
  Doc arr = Doc::array();
  std::string text;
  for (const Field &f : c.schema.fields()) {
    Doc d = Doc::table();
    d.set("name", Doc::string(f.name));
    if (f.in_blob()) {
      d.set("offset", Doc::integer(*f.offset));
      d.set("width", Doc::integer(f.width));
    }
    d.set("type", Doc::string(type_name(f.type)));
    d.set("section", Doc::string(f.section));
    d.set("unit", Doc::string(f.unit));
    d.set("meaning", Doc::string(f.meaning));
    d.set("source", Doc::string(f.source));
    d.set("confidence", Doc::string(confidence_name(f.confidence)));
    arr.push(std::move(d));
    text += pad(f.in_blob() ? hex(*f.offset) + "+" + std::to_string(f.width) : "-", 12) + pad(type_name(f.type), 8) +
            pad(f.name, 34) + pad(confidence_name(f.confidence), 12) + f.meaning + "\n";
  }
  emit(format == "json" ? json_list_document("anec-hal.schema", "fields", std::move(arr)) : text, "");
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

int cmd_extract(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::string binary, out, targets;
  ExtractOptions opt;
  // Read as text: program_options reads "-1" into an unsigned as 2^64-1, and Unicorn takes a 0
  // timeout as none.
  std::string max_instructions, timeout_ms;
  o.add_options()("binary", po::value(&binary))("output,o", po::value(&out))("targets", po::value(&targets))(
      "max-instructions", po::value(&max_instructions))("timeout-ms", po::value(&timeout_ms));
  po::positional_options_description p;
  p.add("binary", 1);
  po::variables_map vm = parse(args, o, p);
  if (vm.count("max-instructions"))
    opt.limits.max_instructions = parse_uint(max_instructions, 1, 1'000'000'000'000, "--max-instructions");
  if (vm.count("timeout-ms")) opt.limits.timeout_ms = parse_uint(timeout_ms, 1, 3'600'000, "--timeout-ms");
  if (binary.empty() || out.empty()) throw Error("ANEC-CLI-001", "extract needs a BINARY and -o DIR");
  opt.targets = split_list(targets);
  if (::isatty(2))
    opt.progress = [](size_t done, size_t total, const std::string &t) {
      std::fprintf(stderr, "\r[%zu/%zu] %-8s", done, total, t.c_str());
      if (done == total) std::fprintf(stderr, "\n");
    };
  opt.warn = [](const std::string &m) { std::fprintf(stderr, "anec-hal: warning: %s\n", m.c_str()); };
  decode::Binary bin = decode::Binary::load(binary);
  auto tables = extract(c.schema, c.reg(), bin, opt);
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto &t : tables) files.push_back({t.target + ".toml", to_toml(c.schema, to_target(c.schema, c.reg(), bin, t))});
  write_output_set(out, files);
  std::fprintf(stderr, "extract: %zu table(s) from %s (%s %s, sha256 %s) written to %s\n", tables.size(), binary.c_str(),
               decode::format_name(bin.format()), decode::arch_name(bin.arch()), bin.sha256().substr(0, 16).c_str(), out.c_str());
  return 0;
}

int cmd_xref(Ctx &c, const std::vector<std::string> &args) {
  po::options_description o;
  std::string binary, type = "ZinIrHalParameters", format = "text";
  o.add_options()("binary", po::value(&binary))("type", po::value(&type))("format", po::value(&format));
  po::positional_options_description p;
  p.add("binary", 1);
  parse(args, o, p);
  check_format(format, {"text", "json"});
  if (binary.empty()) throw Error("ANEC-CLI-001", "xref needs a BINARY");
  decode::Binary bin = decode::Binary::load(binary);
  auto readers = find_readers(c.schema, bin, type);
  Doc arr = Doc::array();
  std::string text;
  for (const auto &r : readers) {
    Doc d = Doc::table();
    d.set("function", Doc::string(r.function));
    d.set("address", Doc::integer(int64_t(r.address)));
    d.set("argument", Doc::integer(r.argument));
    d.set("register", Doc::string(r.register_name));
    Doc reads = Doc::array();
    text += r.function + "  [" + hex(r.address) + ", table in " + r.register_name + "]\n";
    for (const auto &t : r.reads) {
      Doc x = Doc::table();
      x.set("offset", Doc::integer(int64_t(t.offset)));
      x.set("width", Doc::integer(t.width));
      x.set("at", Doc::integer(int64_t(t.at)));
      x.set("field", Doc::string(t.field));
      x.set("named", Doc::boolean(t.named));
      if (!t.named) x.set("proposal", Doc::string(t.proposal));
      reads.push(std::move(x));
      text += "  " + pad(hex(t.offset), 8) + pad(std::to_string(t.width) + "B", 5) +
              (t.named ? t.field : "UNNAMED (in " + (t.field.empty() ? std::string("no field") : t.field) + "), proposed: " + t.proposal) + "\n";
    }
    if (r.reads.empty()) text += "  (no reads through the table argument)\n";
    d.set("reads", std::move(reads));
    arr.push(std::move(d));
  }
  text += std::to_string(readers.size()) + " reader function(s) taking " + type + " const&\n";
  emit(format == "json" ? json_list_document("anec-hal.xref", "readers", std::move(arr)) : text, "");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return anec::tools::tool_main(
      kTool, argc, argv,
      [](const std::string &cmd, const fs::path &tables, std::vector<std::string> &args) -> int {
        Ctx c(tables);
        if (cmd == "list")
          return cmd_list(c, args);
        if (cmd == "show")
          return cmd_show(c, args);
        if (cmd == "encode")
          return cmd_encode(c, args);
        if (cmd == "decode")
          return cmd_decode(c, args);
        if (cmd == "diff")
          return cmd_diff(c, args);
        if (cmd == "validate")
          return cmd_validate(c, args);
        if (cmd == "generate")
          return cmd_generate(c, args);
        if (cmd == "schema")
          return cmd_schema(c, args);
        if (cmd == "extract")
          return cmd_extract(c, args);
        if (cmd == "xref")
          return cmd_xref(c, args);
        throw Error("ANEC-CLI-001", "unknown command '" + cmd + "' (see anec-hal --help)");
      });
}
