#include "anec/hal/extract.hpp"

#include "anec/decode/disasm.hpp"
#include "anec/hal/codec.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <regex>
#include <set>

namespace anec::hal {
using decode::Binary;
using decode::MemoryReader;

namespace {

struct Candidate {
  std::string target, symbol, kind; // kind: implicit (this or sret), param, data, dispatcher
  uint64_t addr = 0;
};

// A function or data symbol of ZinIrHal<T> that cannot fill a table, and why.
struct Rejection {
  std::string target, symbol, why; // target: canonical name, "" when the symbol names none
};

// What a demangled symbol offers: a member of ZinIrHal<T> for a known T is a candidate, whatever
// its name, when it can fill the table — as `this`, through the sret register, through a
// ZinIrHalParameters pointer or reference, or as a data symbol; anything else is rejected unrun.
std::optional<Candidate> classify(const decode::Symbol &s, const Registry &registry,
                                  std::vector<Rejection> &rejected) {
  static const std::regex member(R"(^ZinIrHal<(\w+)>::(~?\w+)(\((.*)\))?( const)?$)");
  static const std::regex table_arg(R"(^ZinIrHalParameters ?[*&]$)");
  std::smatch m;
  if (!std::regex_match(s.demangled, m, member))
    return std::nullopt;
  const Target *t = registry.find(m[1].str());
  if (!t) {
    rejected.push_back({"", s.demangled, "names no known target"});
    return std::nullopt;
  }
  if (!m[3].matched)
    return Candidate{t->name, s.demangled, "data", s.addr};
  std::string args = m[4].str();
  if (args.empty())
    return Candidate{t->name, s.demangled, "implicit", s.addr};
  if (std::regex_match(args, table_arg))
    return Candidate{t->name, s.demangled, "param", s.addr};
  rejected.push_back({t->name, s.demangled,
                      args.find("ZinIrHalParameters const") != std::string::npos
                          ? "takes the table read-only"
                          : "takes arguments other than the table (" + args + ")"});
  return std::nullopt;
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
  t.blob = std::move(blob);
  return t;
}

// arm64: a constructor returning the table reads x8 (the indirect-result register) before writing it.
std::string arm64_convention(const Binary &b, uint64_t fn) {
  decode::Disassembler d(b.arch());
  for (const auto &i : d.disassemble(b, fn, b.function_end(fn))) {
    for (auto &r : i.reads)
      if (r == "x8")
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
  }
  t.instructions = emu.instructions();
  emu.read(table, blob);
  if (empty())
    return std::nullopt;
  return finish(schema, emu, std::move(blob), std::move(t));
}
} // namespace

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
      found.push_back({t.name, dispatch->demangled, "dispatcher", dispatch->addr});
  if (found.empty())
    throw Error(
        "ANEC-EXT-001",
        "no recoverable HAL constructors in '" + binary.name() + "' (" +
            std::to_string(binary.symbols().size()) +
            " symbols); tried: every function of ZinIrHal<T> for a known target T that takes no argument "
            "or a ZinIrHalParameters pointer or reference, data symbols of ZinIrHal<T>, the exported "
            "dispatcher CreateHalFromString(char const*, ZinIrHalParameters*)" +
            rejections_text(rejected));
  std::vector<Candidate> todo;
  if (opt.targets.empty()) {
    todo = found;
  } else {
    for (const auto &want : opt.targets) {
      const Target &t = registry.get(want);
      size_t before = todo.size();
      for (const Candidate &c : found)
        if (c.target == t.name)
          todo.push_back(c);
      if (todo.size() == before)
        throw Error("ANEC-EXT-002", "target '" + t.name + "' has no constructor in '" + binary.name() + "'");
    }
  }

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

Target to_target(const Schema &schema, const Registry &registry, const Binary &binary,
                 const ExtractedTable &x) {
  const Target *donor = registry.find(x.target);
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
  return t;
}

} // namespace anec::hal
