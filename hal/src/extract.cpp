#include "anec/hal/extract.hpp"

#include "anec/decode/disasm.hpp"
#include "anec/hal/codec.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"

#include <cstring>
#include <regex>
#include <set>

namespace anec::hal {
using decode::Binary;
using decode::MemoryReader;

namespace {

struct Candidate {
  std::string target, symbol, kind; // kind: ctor, data
  uint64_t addr = 0;
};

const Field &blob_field(const Schema &s, const char *name) {
  const Field *f = s.find(name);
  if (!f || !f->in_blob()) throw Error("ANEC-EXT-003", std::string("schema has no blob field '") + name + "'");
  return *f;
}

// In-order walk of a libc++ std::map (node: left, right, parent, colour, then the value, here a
// pointer to the format's name), from the root pointer the table holds.
std::vector<std::string> walk_map(const MemoryReader &mem, uint64_t root, uint64_t size, const std::string &where) {
  std::vector<std::string> out;
  if (size > 1024) throw Error("ANEC-EXT-003", where + ": interchange-format map claims " + std::to_string(size) + " entries");
  std::vector<uint64_t> stack;
  std::set<uint64_t> seen;
  uint64_t node = root;
  while (node || !stack.empty()) {
    while (node) {
      if (!seen.insert(node).second || seen.size() > size + 1)
        throw Error("ANEC-EXT-003", where + ": interchange-format map has a cycle or more nodes than its size " + std::to_string(size));
      stack.push_back(node);
      auto left = mem.read_u64(node);
      if (!left) throw Error("ANEC-EXT-003", where + ": map node at " + hex(node) + " is unmapped");
      node = *left;
    }
    node = stack.back();
    stack.pop_back();
    auto name_ptr = mem.read_u64(node + 32);
    auto name = name_ptr ? mem.read_cstring(*name_ptr, 64) : std::nullopt;
    if (!name) throw Error("ANEC-EXT-003", where + ": map node at " + hex(node) + " has no readable name");
    out.push_back(*name);
    auto right = mem.read_u64(node + 8);
    if (!right) throw Error("ANEC-EXT-003", where + ": map node at " + hex(node) + " is truncated");
    node = *right;
  }
  if (out.size() != size)
    throw Error("ANEC-EXT-003", where + ": walked " + std::to_string(out.size()) + " map nodes, the table says " + std::to_string(size));
  return out;
}

ExtractedTable finish(const Schema &schema, const MemoryReader &mem, Bytes blob, ExtractedTable t) {
  std::string where = t.target + " (" + t.symbol + ")";
  const Field &root = blob_field(schema, "interchange_format_map_root"), &count = blob_field(schema, "interchange_format_count");
  t.interchange_formats = walk_map(mem, le64(blob, *root.offset), le64(blob, *count.offset), where);
  for (const Field &f : schema.fields()) // process addresses are not table content
    if (f.in_blob() && f.type == Type::Ptr) std::memset(&blob[*f.offset], 0, f.width);
  t.blob = std::move(blob);
  return t;
}

// arm64: a constructor returning the table reads x8 (the indirect-result register) before writing it.
std::string arm64_convention(const Binary &b, uint64_t fn) {
  decode::Disassembler d(b.arch());
  for (const auto &i : d.disassemble(b, fn, b.function_end(fn))) {
    for (auto &r : i.reads)
      if (r == "x8") return "sret (x8)";
    for (auto &w : i.writes)
      if (w == "x8") return "this (x0)";
    if (i.is_call || i.is_return) break;
  }
  return "this (x0)";
}

} // namespace

std::vector<ExtractedTable> extract(const Schema &schema, const Registry &registry, const Binary &binary,
                                    const ExtractOptions &opt) {
  // The table is `this`, the returned value or an argument (static with a pointer, or a member with
  // a pointer or reference in the second argument register); the name is GetParams or CreateParams.
  static const std::regex ctor(
      R"(^ZinIrHal<(\w+)>::(GetParams|CreateParams)\((ZinIrHalParameters ?[*&])?\)( const)?$)");
  static const std::regex data(R"(^ZinIrHal<(\w+)>::kParams$)");
  static const std::regex dispatcher(R"(^CreateHalFromString\(char const\*, ZinIrHalParameters\*\)$)");
  std::vector<Candidate> found;
  const decode::Symbol *dispatch = nullptr;
  std::vector<std::string> unknown;
  for (const auto &s : binary.symbols()) {
    std::smatch m;
    bool is_ctor = std::regex_match(s.demangled, m, ctor);
    if (is_ctor || std::regex_match(s.demangled, m, data)) {
      const Target *t = registry.find(m[1].str());
      if (!t) {
        unknown.push_back(s.demangled);
        continue;
      }
      found.push_back({t->name, s.demangled, !is_ctor ? "data" : m[3].matched ? "param" : "ctor", s.addr});
    } else if (std::regex_match(s.demangled, dispatcher)) {
      dispatch = &s;
    }
  }
  if (found.empty() && dispatch)
    for (const auto &t : registry.targets()) found.push_back({t.name, dispatch->demangled, "dispatcher", dispatch->addr});
  if (found.empty()) {
    std::string msg = "no recoverable HAL constructors in '" + binary.name() + "' (" + std::to_string(binary.symbols().size()) +
                      " symbols); tried: demangled ZinIrHal<T>::GetParams / ZinIrHal<T>::CreateParams constructors "
                      "(no argument, or a ZinIrHalParameters pointer or reference), "
                      "data symbols ZinIrHal<T>::kParams, the exported dispatcher "
                      "CreateHalFromString(char const*, ZinIrHalParameters*)";
    if (!unknown.empty()) msg += "; symbols naming unknown targets: " + unknown.front();
    throw Error("ANEC-EXT-001", msg);
  }
  std::vector<Candidate> todo;
  if (opt.targets.empty()) {
    todo = found;
  } else {
    for (const auto &want : opt.targets) {
      const Target &t = registry.get(want);
      auto it = std::find_if(found.begin(), found.end(), [&](auto &c) { return c.target == t.name; });
      if (it == found.end()) throw Error("ANEC-EXT-002", "target '" + t.name + "' has no constructor in '" + binary.name() + "'");
      todo.push_back(*it);
    }
  }

  std::vector<ExtractedTable> out;
  const uint32_t size = schema.blob_size();
  for (size_t i = 0; i < todo.size(); ++i) {
    const Candidate &c = todo[i];
    if (opt.progress) opt.progress(i, todo.size(), c.target);
    ExtractedTable t;
    t.target = c.target;
    t.symbol = c.symbol;
    t.address = c.addr;
    try {
      if (c.kind == "data") {
        Bytes blob(size);
        if (!binary.read(c.addr, blob)) throw Error("ANEC-EXT-003", "data symbol at " + hex(c.addr) + " is not mapped for " + std::to_string(size) + " bytes");
        t.method = "data symbol";
        out.push_back(finish(schema, binary, std::move(blob), std::move(t)));
        continue;
      }
      decode::Emulator emu(binary, opt.limits);
      uint64_t table = emu.alloc(size, 16);
      if (c.kind == "dispatcher") {
        std::string name = c.target;
        uint64_t str = emu.alloc(name.size() + 1);
        emu.write(str, {reinterpret_cast<const uint8_t *>(name.c_str()), name.size() + 1});
        uint64_t args[] = {str, table};
        if ((emu.call(c.addr, args) & 0xff) == 0) continue; // the dispatcher does not build this name
        t.method = "dispatcher";
      } else if (c.kind == "param") { // static: the table first; member: `this` first, the table second
        uint64_t args[] = {table, table};
        emu.call(c.addr, args, table);
        t.method = "table argument";
      } else {
        uint64_t args[] = {table};
        emu.call(c.addr, args, table);
        t.method = binary.arch() == decode::Arch::Arm64 ? arm64_convention(binary, c.addr) : "first argument (rdi)";
      }
      t.instructions = emu.instructions();
      Bytes blob(size);
      emu.read(table, blob);
      out.push_back(finish(schema, emu, std::move(blob), std::move(t)));
    } catch (const Error &e) {
      throw Error(e.code(), c.target + " (" + c.symbol + " at " + hex(c.addr) + "): " + e.what());
    }
  }
  if (opt.progress) opt.progress(todo.size(), todo.size(), "");
  if (out.empty()) throw Error("ANEC-EXT-001", "the dispatcher in '" + binary.name() + "' built no table for any known target name");
  return out;
}

Target to_target(const Schema &schema, const Registry &registry, const Binary &binary, const ExtractedTable &x) {
  const Target *donor = registry.find(x.target);
  Provenance from_binary{"decoded from " + binary.name() + " (" + x.symbol + ")", Confidence::Decoded};
  Target t = decode(schema, x.blob, x.target, donor, from_binary);
  Entry formats{x.interchange_formats, from_binary};
  if (const Entry *d = donor ? donor->find("interchange_formats") : nullptr; d && d->value == formats.value) formats = *d;
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
