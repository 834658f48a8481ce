#include "anec/hal/extract.hpp"

#include "anec/decode/disasm.hpp"
#include "anec/hal/codec.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <regex>
#include <set>

namespace anec::hal {
using decode::Binary;
using decode::MemoryReader;

namespace {

struct Candidate {
  std::string target, symbol, kind; // kind: implicit (this or sret), param, data, dispatcher, pointer
  uint64_t addr = 0;
  std::string class_name; // T as the binary spells it, when a class names the candidate
  bool known = true;      // `target` is a target of the registry
};

// A function or data symbol of ZinIrHal<T> that cannot fill a table, and why.
struct Rejection {
  std::string target, symbol, why; // target: the name the candidate's class gives
};

// A name as a target file name: lower case (canonical names are), characters other than letters,
// digits, '.', '-' and '_' as one '_', no '_' or '.' at either end, at most 64 characters.
std::string file_safe_name(std::string_view name) {
  std::string out;
  for (char ch : name) {
    bool plain = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_';
    if (plain)
      out += char(std::tolower(static_cast<unsigned char>(ch)));
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && (out.back() == '_' || out.back() == '.'))
    out.pop_back();
  size_t lead = out.find_first_not_of("_.");
  out = lead == std::string::npos ? "" : out.substr(lead, 64);
  return out.empty() ? "unnamed" : out;
}

// The target a name stands for: a target of the registry by its name or alias, else a new target
// named as written (file_safe_name).
std::pair<std::string, bool> target_named(std::string_view name, const Registry &registry) {
  if (const Target *t = registry.find(name))
    return {t->name, true};
  return {file_safe_name(name), false};
}

// The target a class names: its spelling without namespaces (ane::chip::H13 is H13) and without the
// prefix of the compiler's own target classes (ZinIrTargetH13 is H13). A number or an enum value
// ((ZinTarget)4) names no target and is kept as written.
std::pair<std::string, bool> target_of_class(const std::string &cls, const Registry &registry) {
  static const std::regex qualifier(R"(\b\w+::)");
  static const std::string prefix = "ZinIrTarget";
  std::string name = std::regex_replace(cls, qualifier, "");
  if (name.starts_with(prefix) && name.size() > prefix.size())
    name = name.substr(prefix.size());
  return target_named(name, registry);
}

// What a demangled symbol offers: a member of ZinIrHal<T> (in any namespace, for any T: a class, a
// number, an enum value) is a candidate, whatever its name, when it can fill the table — as `this`,
// through the sret register, through a ZinIrHalParameters pointer or reference, or as a data symbol;
// anything else is rejected unrun. What T names decides only what the table is called.
std::optional<Candidate> classify(const decode::Symbol &s, const Registry &registry,
                                  std::vector<Rejection> &rejected) {
  static const std::regex member(R"(^(?:\w+::)*ZinIrHal<([^<>]+)>::(~?\w+)(\((.*)\))?( const)?$)");
  static const std::regex table_arg(R"(^ZinIrHalParameters ?[*&]$)");
  std::smatch m;
  if (!std::regex_match(s.demangled, m, member))
    return std::nullopt;
  auto [target, known] = target_of_class(m[1].str(), registry);
  Candidate c{target, s.demangled, "", s.addr, m[1].str(), known};
  std::string args = m[4].str();
  if (!m[3].matched)
    c.kind = "data";
  else if (args.empty())
    c.kind = "implicit";
  else if (std::regex_match(args, table_arg))
    c.kind = "param";
  if (!c.kind.empty())
    return c;
  rejected.push_back({target, s.demangled,
                      args.find("ZinIrHalParameters const") != std::string::npos
                          ? "takes the table read-only"
                          : "takes arguments other than the table (" + args + ")"});
  return std::nullopt;
}

// Functions reached only through pointers in data (a table of {name, constructor} entries, say):
// every pointer-aligned word outside code that holds a function start. The function is named by
// the C string the word before points to when there is one (the entry's name), else by its address.
constexpr size_t kMaxPointed = 4096; // a bound on the emulator runs of the scan

std::vector<Candidate> pointed_functions(const Binary &binary, const Registry &registry) {
  static const std::regex plain_name(R"(^[\w.+-]{1,64}$)");
  const auto &starts = binary.function_starts();
  std::vector<Candidate> out;
  std::set<uint64_t> seen;
  for (const decode::Segment &seg : binary.segments()) {
    if (seg.executable || seg.name == "__LINKEDIT") // code, and the symbol table's own addresses
      continue;
    for (size_t at = 0; at + 8 <= seg.data.size(); at += 8) {
      uint64_t fn = le64(seg.data, at);
      if (!std::binary_search(starts.begin(), starts.end(), fn) || !seen.insert(fn).second)
        continue;
      std::optional<std::string> label;
      if (at >= 8)
        label = binary.read_cstring(le64(seg.data, at - 8), 64);
      if (label && !std::regex_match(*label, plain_name))
        label.reset();
      std::string where = "function at " + hex(fn) + " (pointer at " + hex(seg.vaddr + at) + ")";
      auto [target, known] =
          label ? target_named(*label, registry) : std::pair<std::string, bool>{"function_" + hex(fn), false};
      out.push_back({target, where, "pointer", fn, label.value_or(""), known});
      if (out.size() == kMaxPointed)
        return out;
    }
  }
  return out;
}

const Field &blob_field(const Schema &s, const char *name) {
  const Field *f = s.find(name);
  if (!f || !f->in_blob())
    throw Error("ANEC-EXT-003", std::string("schema has no blob field '") + name + "'");
  return *f;
}

// In-order walk of a libc++ std::map (node: left, right, parent, colour, then the value, here a
// pointer to the format's name), from the root pointer the table holds.
std::vector<std::string> walk_map(const MemoryReader &mem, uint64_t root, uint64_t size,
                                  const std::string &where) {
  std::vector<std::string> out;
  if (size > 1024)
    throw Error("ANEC-EXT-003",
                where + ": interchange-format map claims " + std::to_string(size) + " entries");
  std::vector<uint64_t> stack;
  std::set<uint64_t> seen;
  uint64_t node = root;
  while (node || !stack.empty()) {
    while (node) {
      if (!seen.insert(node).second || seen.size() > size + 1)
        throw Error("ANEC-EXT-003", where +
                                        ": interchange-format map has a cycle or more nodes than its size " +
                                        std::to_string(size));
      stack.push_back(node);
      auto left = mem.read_u64(node);
      if (!left)
        throw Error("ANEC-EXT-003", where + ": map node at " + hex(node) + " is unmapped");
      node = *left;
    }
    node = stack.back();
    stack.pop_back();
    auto name_ptr = mem.read_u64(node + 32);
    auto name = name_ptr ? mem.read_cstring(*name_ptr, 64) : std::nullopt;
    if (!name)
      throw Error("ANEC-EXT-003", where + ": map node at " + hex(node) + " has no readable name");
    out.push_back(*name);
    auto right = mem.read_u64(node + 8);
    if (!right)
      throw Error("ANEC-EXT-003", where + ": map node at " + hex(node) + " is truncated");
    node = *right;
  }
  if (out.size() != size)
    throw Error("ANEC-EXT-003", where + ": walked " + std::to_string(out.size()) +
                                    " map nodes, the table says " + std::to_string(size));
  return out;
}

ExtractedTable finish(const Schema &schema, const MemoryReader &mem, Bytes blob, ExtractedTable t) {
  std::string where = t.target + " (" + t.symbol + ")";
  const Field &root = blob_field(schema, "interchange_format_map_root"),
              &count = blob_field(schema, "interchange_format_count");
  t.interchange_formats = walk_map(mem, le64(blob, *root.offset), le64(blob, *count.offset), where);
  for (const Field &f : schema.fields()) // process addresses are not table content
    if (f.in_blob() && f.type == Type::Ptr)
      std::memset(&blob[*f.offset], 0, f.width);
  try { // a table is what decodes under the schema (a long-form string, say, does not)
    decode(schema, blob, t.target, nullptr, {});
  } catch (const Error &e) {
    throw Error("ANEC-EXT-004", where + ": filled a table that does not decode: " + e.what());
  }
  t.blob = std::move(blob);
  return t;
}

// Whether an instruction reads x8. Capstone 4 lists the destination of a move of an immediate
// (mov x8, #0) among the registers read; that move only writes it.
bool reads_x8(const decode::Instruction &i) {
  bool immediate_move =
      (i.mnemonic == "mov" || i.mnemonic == "movz" || i.mnemonic == "movn") && i.src.empty();
  return !immediate_move && std::find(i.reads.begin(), i.reads.end(), "x8") != i.reads.end();
}

// arm64: a constructor returning the table reads x8 (the indirect-result register) before writing it.
std::string arm64_convention(const Binary &b, uint64_t fn) {
  decode::Disassembler d(b.arch());
  for (const auto &i : d.disassemble(b, fn, b.function_end(fn))) {
    if (reads_x8(i))
      return "sret (x8)";
    for (auto &w : i.writes)
      if (w == "x8")
        return "this (x0)";
    if (i.is_call || i.is_return)
      break;
  }
  return "this (x0)";
}

// "; rejected: N x why (e.g. SYMBOL); ..." grouped by reason, for `target`'s symbols when given.
std::string rejections_text(const std::vector<Rejection> &rejected, const std::string &target = "") {
  std::vector<std::pair<std::string, std::pair<size_t, std::string>>> groups; // why -> (count, first symbol)
  for (const Rejection &r : rejected) {
    if (!target.empty() && r.target != target)
      continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto &g) { return g.first == r.why; });
    if (it == groups.end())
      groups.push_back({r.why, {1, r.symbol}});
    else
      ++it->second.first;
  }
  std::string out;
  for (size_t i = 0; i < groups.size() && i < 6; ++i)
    out += (i ? "; " : "; rejected: ") + std::to_string(groups[i].second.first) + " x " + groups[i].first +
           " (e.g. " + groups[i].second.second + ")";
  if (groups.size() > 6)
    out += "; and " + std::to_string(groups.size() - 6) + " other reasons";
  return out;
}

// Runs one candidate (or reads it, for data) and returns the table it filled, or nullopt when it
// left the table all zero (a getter, not a constructor) or the dispatcher does not know the name.
std::optional<ExtractedTable> run_candidate(const Schema &schema, const Binary &binary, const Candidate &c,
                                            const ExtractOptions &opt) {
  const uint32_t size = schema.blob_size();
  ExtractedTable t;
  t.target = c.target;
  t.class_name = c.class_name;
  t.known = c.known;
  t.symbol = c.symbol;
  t.address = c.addr;
  Bytes blob(size);
  auto empty = [&] { return std::all_of(blob.begin(), blob.end(), [](uint8_t b) { return b == 0; }); };
  if (c.kind == "data") {
    if (!binary.read(c.addr, blob))
      throw Error("ANEC-EXT-003",
                  "data symbol at " + hex(c.addr) + " is not mapped for " + std::to_string(size) + " bytes");
    if (empty())
      return std::nullopt;
    t.method = "data symbol";
    return finish(schema, binary, std::move(blob), std::move(t));
  }
  decode::Emulator emu(binary, opt.limits);
  uint64_t table = emu.alloc(size, 16);
  if (c.kind == "dispatcher") {
    uint64_t str = emu.alloc(c.target.size() + 1);
    emu.write(str, {reinterpret_cast<const uint8_t *>(c.target.c_str()), c.target.size() + 1});
    uint64_t args[] = {str, table};
    if ((emu.call(c.addr, args) & 0xff) == 0)
      return std::nullopt; // the dispatcher does not build this name
    t.method = "dispatcher";
  } else if (c.kind == "param") { // static: the table first; member: `this` first, the table second
    uint64_t args[] = {table, table};
    emu.call(c.addr, args, table);
    t.method = "table argument";
  } else { // the table as `this`, and as the sret register for one returned by value
    uint64_t args[] = {table};
    emu.call(c.addr, args, table);
    t.method =
        binary.arch() == decode::Arch::Arm64 ? arm64_convention(binary, c.addr) : "first argument (rdi)";
    if (c.kind == "pointer")
      t.method = "through a data pointer, " + t.method;
  }
  t.instructions = emu.instructions();
  emu.read(table, blob);
  if (empty())
    return std::nullopt;
  return finish(schema, emu, std::move(blob), std::move(t));
}

// The candidates --targets asks for: a known target by name or alias, or a new one by the name
// extraction gives it; ANEC-HAL-006 for a name that is neither (with the registry's suggestions),
// ANEC-EXT-002 for a known target without a candidate.
std::vector<Candidate> wanted(const std::vector<Candidate> &found, const Registry &registry,
                              const std::vector<std::string> &names, const std::string &binary) {
  std::vector<Candidate> out;
  for (const auto &want : names) {
    const Target *known = registry.find(want);
    std::string name = known ? known->name : file_safe_name(want);
    size_t before = out.size();
    for (const Candidate &c : found)
      if (c.target == name)
        out.push_back(c);
    if (out.size() > before)
      continue;
    registry.get(want); // a name that is neither throws here
    throw Error("ANEC-EXT-002", "target '" + name + "' has no constructor in '" + binary + "'");
  }
  return out;
}

// How a recovered table stands against the registry: a known target's differing fields; a new
// one's nearest known target and the fields it differs in.
void compare_with_registry(const Schema &schema, const Registry &registry, ExtractedTable &t) {
  if (t.known) {
    t.nearest = t.target;
    t.differing = differing_fields(schema, t, registry.get(t.target));
    return;
  }
  const Target *best = nullptr;
  for (const Target &ref : registry.targets()) {
    auto diff = differing_fields(schema, t, ref);
    if (!best || diff.size() < t.differing.size()) {
      best = &ref;
      t.differing = std::move(diff);
    }
  }
  if (best)
    t.nearest = best->name;
}
} // namespace

std::vector<std::string> differing_fields(const Schema &schema, const ExtractedTable &t, const Target &ref) {
  Bytes theirs = encode(schema, ref);
  std::vector<std::string> out;
  for (const Field &f : schema.fields())
    if (f.in_blob() && f.type != Type::Ptr &&
        !std::equal(t.blob.begin() + *f.offset, t.blob.begin() + *f.offset + f.width,
                    theirs.begin() + *f.offset))
      out.push_back(f.name);
  const Entry *formats = ref.find("interchange_formats");
  const auto *names = formats ? std::get_if<std::vector<std::string>>(&formats->value) : nullptr;
  if (!names || *names != t.interchange_formats)
    out.push_back("interchange_formats");
  return out;
}

std::vector<ExtractedTable> extract(const Schema &schema, const Registry &registry, const Binary &binary,
                                    const ExtractOptions &opt) {
  static const std::regex dispatcher(R"(^CreateHalFromString\(char const\*, ZinIrHalParameters\*\)$)");
  std::vector<Candidate> found;
  std::vector<Rejection> rejected;
  const decode::Symbol *dispatch = nullptr;
  for (const auto &s : binary.symbols()) {
    if (auto c = classify(s, registry, rejected))
      found.push_back(std::move(*c));
    else if (std::regex_match(s.demangled, dispatcher))
      dispatch = &s;
  }
  if (found.empty() && dispatch)
    for (const auto &t : registry.targets())
      found.push_back({t.name, dispatch->demangled, "dispatcher", dispatch->addr, "", true});
  if (found.empty())
    found = pointed_functions(binary, registry);
  if (found.empty())
    throw Error("ANEC-EXT-001",
                "no recoverable HAL constructors in '" + binary.name() + "' (" +
                    std::to_string(binary.symbols().size()) +
                    " symbols); tried: every function of ZinIrHal<T> (any T, in any namespace) that takes "
                    "no argument or a ZinIrHalParameters pointer or reference, data symbols of "
                    "ZinIrHal<T>, the exported dispatcher CreateHalFromString(char const*, "
                    "ZinIrHalParameters*), functions pointed to from data" +
                    rejections_text(rejected));
  std::vector<Candidate> todo =
      opt.targets.empty() ? found : wanted(found, registry, opt.targets, binary.name());

  std::vector<ExtractedTable> out;
  std::set<std::string> done;
  std::vector<Error> faults;
  for (size_t i = 0; i < todo.size(); ++i) {
    const Candidate &c = todo[i];
    if (done.count(c.target))
      continue; // a target's first accepted candidate wins
    if (opt.progress)
      opt.progress(i, todo.size(), c.target);
    try {
      if (auto t = run_candidate(schema, binary, c, opt)) {
        compare_with_registry(schema, registry, *t);
        out.push_back(std::move(*t));
        done.insert(c.target);
      } else if (c.kind != "dispatcher") {
        rejected.push_back({c.target, c.symbol, "left the table all zero"});
      }
    } catch (const Error &e) {
      rejected.push_back({c.target, c.symbol, e.what()});
      faults.push_back(Error(e.code(), c.target + " (" + c.symbol + " at " + hex(c.addr) + "): " + e.what()));
    }
  }
  if (opt.progress)
    opt.progress(todo.size(), todo.size(), "");
  if (out.empty() && faults.size() == 1 && todo.size() == 1)
    throw faults.front(); // the one constructor's own fault
  if (out.empty())
    throw Error("ANEC-EXT-001", "no table recovered from '" + binary.name() + "'" +
                                    (dispatch && found.front().kind == "dispatcher"
                                         ? "; the dispatcher built none for any known target name"
                                         : "") +
                                    rejections_text(rejected));
  for (const Candidate &c : todo)
    if (!done.count(c.target) && opt.warn)
      opt.warn("no table for " + c.target + rejections_text(rejected, c.target));
  return out;
}

std::string status_text(const ExtractedTable &t) {
  std::string n = std::to_string(t.differing.size()) + (t.differing.size() == 1 ? " field" : " fields");
  if (t.known)
    return t.differing.empty() ? "matches the table of " + t.target
                               : "differs from the table of " + t.target + " in " + n;
  return "new target; nearest known target " +
         (t.nearest.empty() ? "none"
                            : t.nearest + ", " + n + (t.differing.size() == 1 ? " differs" : " differ"));
}

Target to_target(const Schema &schema, const Registry &registry, const Binary &binary,
                 const ExtractedTable &x) {
  const Target *donor = x.known ? registry.find(x.target) : nullptr;
  Provenance from_binary{"decoded from " + binary.name() + " (" + x.symbol + ")", Confidence::Decoded};
  Target t = decode(schema, x.blob, x.target, donor, from_binary);
  Entry formats{x.interchange_formats, from_binary};
  if (const Entry *d = donor ? donor->find("interchange_formats") : nullptr; d && d->value == formats.value)
    formats = *d;
  t.values["interchange_formats"] = formats;
  t.extraction = {{"binary", std::filesystem::path(binary.name()).filename().string()},
                  {"sha256", binary.sha256()},
                  {"uuid", binary.uuid()},
                  {"format", decode::format_name(binary.format())},
                  {"arch", decode::arch_name(binary.arch())},
                  {"symbol", x.symbol},
                  {"address", hex(x.address)},
                  {"method", x.method},
                  {"instructions", std::to_string(x.instructions)}};
  if (!x.class_name.empty())
    t.extraction.push_back({"class", x.class_name});
  t.extraction.push_back({"status", status_text(x)});
  return t;
}

} // namespace anec::hal
