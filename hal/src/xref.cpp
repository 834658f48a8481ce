#include "anec/hal/xref.hpp"

#include "anec/decode/disasm.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

namespace anec::hal {

namespace {

// Top-level parameters of a demangled signature, and whether it is a const member function.
std::vector<std::string> parameters(const std::string &sig, bool &const_method) {
  std::vector<std::string> out;
  const_method = false;
  size_t close = sig.rfind(')');
  if (close == std::string::npos) return out;
  const_method = sig.compare(close + 1, std::string::npos, " const") == 0;
  int depth = 0;
  size_t open = std::string::npos;
  for (size_t i = close + 1; i-- > 0;) { // the '(' matching the last ')'
    if (sig[i] == ')') ++depth;
    if (sig[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string::npos) return out;
  std::string cur;
  depth = 0;
  for (size_t i = open + 1; i < close; ++i) {
    char c = sig[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    if (!(c == ' ' && cur.empty())) cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

const char *arg_register(decode::Arch arch, int i) {
  static const char *a64[] = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"};
  static const char *x64[] = {"rdi", "rsi", "rdx", "rcx", "r8", "r9"};
  if (arch == decode::Arch::Arm64) return i < 8 ? a64[i] : nullptr;
  return i < 6 ? x64[i] : nullptr;
}

bool caller_saved(decode::Arch arch, const std::string &r) {
  if (arch == decode::Arch::Arm64) {
    if (r == "x30") return true;
    if (r.size() >= 2 && r[0] == 'x' && std::isdigit(static_cast<unsigned char>(r[1])))
      return std::stoi(r.substr(1)) <= 18;
    return false;
  }
  static const std::set<std::string> x = {"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"};
  return x.count(r);
}

bool frame_base(const std::string &r) { return r == "sp" || r == "x29" || r == "rsp" || r == "rbp"; }

} // namespace

std::string propose_name(const std::string &function) {
  std::string name = function.substr(0, function.find('('));
  if (size_t c = name.rfind("::"); c != std::string::npos) name = name.substr(c + 2);
  for (const char *p : {"Validate", "Compute", "Get", "Has", "Can", "Use", "Is"})
    if (name.rfind(p, 0) == 0 && name.size() > std::strlen(p) &&
        std::isupper(static_cast<unsigned char>(name[std::strlen(p)]))) {
      name = name.substr(std::strlen(p));
      break;
    }
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      bool boundary =
          i > 0 && (std::islower(static_cast<unsigned char>(name[i - 1])) ||
                    std::isdigit(static_cast<unsigned char>(name[i - 1])) ||
                    (i + 1 < name.size() && std::islower(static_cast<unsigned char>(name[i + 1])) &&
                     std::isupper(static_cast<unsigned char>(name[i - 1]))));
      if (boundary) out += '_';
      out += char(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<Reader> find_readers(const Schema &schema, const decode::Binary &binary,
                                 const std::string &type) {
  std::vector<Reader> out;
  decode::Disassembler dis(binary.arch());
  const std::string wanted = type + " const&";
  for (const auto &sym : binary.symbols()) {
    if (!binary.is_executable(sym.addr)) continue;
    bool const_method = false;
    auto params = parameters(sym.demangled, const_method);
    auto it = std::find(params.begin(), params.end(), wanted);
    if (it == params.end()) continue;
    Reader r;
    r.function = sym.demangled;
    r.address = sym.addr;
    r.argument = int(it - params.begin()) + (const_method ? 1 : 0);
    const char *reg = arg_register(binary.arch(), r.argument);
    if (!reg) continue; // passed on the stack: not followed
    r.register_name = reg;
    std::set<std::string> holds = {reg};                       // registers holding the table pointer
    std::set<std::pair<std::string, int64_t>> spilled;          // frame slots holding it
    for (const auto &i : dis.disassemble(binary, sym.addr, binary.function_end(sym.addr))) {
      std::set<std::string> gained;
      if (i.mem && i.mem->store && holds.count(i.dest) && frame_base(i.mem->base))
        spilled.insert({i.mem->base, i.mem->disp});
      if (i.mem && i.mem->load && !i.mem->base.empty()) {
        if (holds.count(i.mem->base) && !frame_base(i.mem->base)) {
          TableRead t;
          t.offset = uint64_t(i.mem->disp);
          t.width = i.mem->size;
          t.at = i.addr;
          for (const Field &f : schema.fields()) {
            if (!f.in_blob() || t.offset < *f.offset || t.offset >= *f.offset + f.width) continue;
            t.field = f.name;
            t.named = !f.synthesized && t.offset == *f.offset;
          }
          if (!t.named) t.proposal = propose_name(r.function);
          r.reads.push_back(t);
        } else if (spilled.count({i.mem->base, i.mem->disp}) && !i.dest.empty()) {
          gained.insert(i.dest);
        }
      }
      if (!i.mem && (i.mnemonic == "mov" || i.mnemonic == "movq") && holds.count(i.src) && !i.dest.empty())
        gained.insert(i.dest);
      for (const auto &w : i.writes) holds.erase(w);
      if (i.is_call)
        for (auto h = holds.begin(); h != holds.end();)
          h = caller_saved(binary.arch(), *h) ? holds.erase(h) : std::next(h);
      holds.insert(gained.begin(), gained.end());
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.address < b.address; });
  return out;
}

} // namespace anec::hal
