// The emulator, on the Unicorn adapter of the decode module (backend.hpp): the memory map, the
// import trampolines and their stand-ins, the budgets.
#include "anec/decode/emulator.hpp"

#include "backend.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

namespace anec::decode {

namespace {
// Fixed regions above any address the binaries here link at.
constexpr uint64_t kTrampolines = 0x10000000000ull; // one `ret` per import, 16 bytes apart
constexpr uint64_t kExit = kTrampolines + 0xff000;   // the address a top-level call returns to
constexpr uint64_t kTrampolineSize = 0x100000;
constexpr uint64_t kStack = 0x20000000000ull, kStackSize = 8ull << 20;
constexpr uint64_t kHeap = 0x30000000000ull;

using backend::Reg;

} // namespace

struct Emulator::State {
  const backend::Api &api = backend::api();
  // Owned here, so that an engine opened by a constructor that then throws is closed too.
  backend::Cpu *cpu = nullptr;
  ~State() {
    if (cpu)
      api.cpu_close(cpu);
  }
  Arch arch;
  EmuLimits limits;
  uint64_t heap_top = kHeap, heap_end = kHeap;
  std::vector<Import> imports; // index = trampoline slot
  std::vector<std::string> called;
  std::string pending_error_code, pending_error;
  uint64_t fault_addr = 0;
  int fault_type = 0;
  uint64_t count = 0;

  static Reg reg_arg(int i) { return Reg(int(Reg::Arg0) + i); }
  uint64_t get(Reg reg) const { return api.cpu_get(cpu, reg); }
  void set(Reg reg, uint64_t v) { api.cpu_set(cpu, reg, v); }
  uint64_t arg(int i) const { return get(reg_arg(i)); }
  uint64_t pc() const { return get(Reg::Pc); }

  bool rd(uint64_t a, void *p, size_t n) const { return api.cpu_read(cpu, a, p, n); }
  bool wr(uint64_t a, const void *p, size_t n) { return api.cpu_write(cpu, a, p, n); }

  uint64_t alloc(uint64_t size, uint64_t align) {
    uint64_t at = (heap_top + align - 1) & ~(align - 1);
    if (size > limits.heap_bytes || at + size > kHeap + limits.heap_bytes)
      throw Error("ANEC-EMU-001",
                  "emulator heap exhausted (" + std::to_string(limits.heap_bytes) + " bytes)");
    uint64_t need_end = (at + size + 0xfffff) & ~0xfffffull;
    if (need_end > heap_end) {
      api.cpu_map(cpu, heap_end, need_end - heap_end, backend::kAll);
      heap_end = need_end;
    }
    heap_top = at + size;
    std::vector<uint8_t> zero(size, 0);
    wr(at, zero.data(), zero.size());
    return at;
  }

  std::optional<std::string> cstring(uint64_t a, size_t max = 1 << 16) const {
    std::string s;
    char c;
    for (size_t i = 0; i < max; ++i) {
      if (!rd(a + i, &c, 1)) return std::nullopt;
      if (!c) return s;
      s += c;
    }
    return std::nullopt;
  }

  void fail(const std::string &code, const std::string &msg) {
    if (pending_error_code.empty()) {
      pending_error_code = code;
      pending_error = msg;
    }
    api.cpu_stop(cpu);
  }

  bool copy(uint64_t dst, uint64_t src, uint64_t n) {
    if (n > (256ull << 20)) return false;
    std::vector<uint8_t> buf(n);
    return rd(src, buf.data(), n) && wr(dst, buf.data(), n);
  }
  bool fill(uint64_t dst, uint8_t c, uint64_t n) {
    if (n > (256ull << 20)) return false;
    std::vector<uint8_t> buf(n, c);
    return wr(dst, buf.data(), n);
  }

  // libc++ std::string stored at `self` (short form up to 22 characters, long form on the heap).
  void assign_string(uint64_t self, uint64_t cstr) {
    auto s = cstring(cstr);
    if (!s) return fail("ANEC-EMU-001", "string argument at " + hex(cstr) + " is unmapped or unterminated");
    uint8_t rep[24] = {};
    if (s->size() <= 22) {
      rep[0] = uint8_t(s->size() * 2);
      std::memcpy(rep + 1, s->data(), s->size());
    } else {
      uint64_t cap = (s->size() + 16) & ~15ull;
      uint64_t data = alloc(cap, 16);
      wr(data, s->data(), s->size());
      uint64_t words[3] = {cap | 1, s->size(), data};
      std::memcpy(rep, words, 24);
    }
    wr(self, rep, 24);
  }

  // The stand-ins, by import name (Mach-O leading underscore removed) or demangled name.
  bool stub(const Import &im) {
    const std::string &n = im.demangled;
    auto ret = [&](uint64_t v) { set(Reg::Ret, v); };
    auto bad = [&](const std::string &what) {
      fail("ANEC-EMU-001", "import " + n + ": " + what);
      return true;
    };
    if (n == "memcpy" || n == "memmove" || n == "__memcpy_chk" || n == "__memmove_chk") {
      if (!copy(arg(0), arg(1), arg(2))) return bad("cannot copy " + std::to_string(arg(2)) + " bytes");
      ret(arg(0));
    } else if (n == "memset" || n == "__memset_chk") {
      if (!fill(arg(0), uint8_t(arg(1)), arg(2)))
        return bad("cannot fill " + std::to_string(arg(2)) + " bytes");
      ret(arg(0));
    } else if (n == "bzero" || n == "__bzero") {
      if (!fill(arg(0), 0, arg(1))) return bad("cannot clear " + std::to_string(arg(1)) + " bytes");
    } else if (n == "strlen") {
      auto s = cstring(arg(0));
      if (!s) return bad("unterminated string");
      ret(s->size());
    } else if (n == "strcmp" || n == "strncmp") {
      auto a = cstring(arg(0)), b = cstring(arg(1));
      if (!a || !b) return bad("unterminated string");
      int r =
          n == "strcmp" ? std::strcmp(a->c_str(), b->c_str()) : std::strncmp(a->c_str(), b->c_str(), arg(2));
      ret(uint64_t(int64_t(r)));
    } else if (n == "operator new(unsigned long)" || n == "operator new[](unsigned long)" || n == "malloc") {
      ret(alloc(std::max<uint64_t>(arg(0), 1), 16));
    } else if (n == "calloc") {
      ret(alloc(std::max<uint64_t>(arg(0) * arg(1), 1), 16));
    } else if (n.rfind("operator delete", 0) == 0 || n == "free" || n == "__cxa_atexit") {
      ret(0);
    } else if (n.rfind(
                   "std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char> >::",
                   0) == 0 &&
               (n.ends_with("::assign(char const*)") || n.ends_with("::operator=(char const*)") ||
                n.ends_with("::basic_string(char const*)"))) {
      assign_string(arg(0), arg(1));
      ret(arg(0));
    } else {
      return false;
    }
    return true;
  }
};

namespace {

void on_code(void *user, uint64_t addr) {
  auto *s = static_cast<Emulator::State *>(user);
  if (addr == kExit) return;
  uint64_t slot = (addr - kTrampolines) / 16;
  if (addr < kTrampolines || slot >= s->imports.size()) {
    s->fail("ANEC-EMU-001", "jump into the trampoline area at " + hex(addr) + " outside any import");
    return;
  }
  const Import &im = s->imports[slot];
  s->called.push_back(im.demangled);
  if (!s->stub(im)) {
    std::string known;
    for (auto &k : Emulator::stubbed_imports()) known += (known.empty() ? "" : ", ") + k;
    s->fail("ANEC-EMU-003", "the code calls import '" + im.name + "' (slot " + hex(im.slot) +
                                "), which has no stub; stubbed imports: " + known);
  }
}

void on_unmapped(void *user, uint64_t addr, int type) {
  auto *s = static_cast<Emulator::State *>(user);
  s->fault_addr = addr;
  s->fault_type = type;
}

void on_count(void *user, uint64_t) {
  auto *s = static_cast<Emulator::State *>(user);
  if (++s->count > s->limits.max_instructions) {
    s->fail("ANEC-EMU-002", "no return within " + std::to_string(s->limits.max_instructions) +
                                " instructions (a loop that never ends?)");
    s->api.cpu_stop(s->cpu);
  }
}

} // namespace

std::vector<std::string> Emulator::stubbed_imports() {
  return {"memcpy",       "memmove",
          "memset",       "bzero",
          "strlen",       "strcmp",
          "strncmp",      "malloc",
          "calloc",       "free",
          "operator new", "operator delete",
          "__cxa_atexit", "std::string assign/operator=/constructor from char const*"};
}

Emulator::Emulator(const Binary &b, EmuLimits limits) : s_(std::make_unique<State>()) {
  s_->arch = b.arch();
  s_->limits = limits;
  std::string why;
  s_->cpu = s_->api.cpu_open(b.arch(), why);
  if (!s_->cpu)
    throw Error("ANEC-EMU-004", "unicorn: " + why);
  // Map the union of the segments' pages (ELF segments may share a page), then their bytes.
  std::vector<std::pair<uint64_t, uint64_t>> pages;
  for (const Segment &sg : b.segments()) {
    uint64_t lo = sg.vaddr & ~0xfffull, hi = (sg.vaddr + sg.vsize + 0xfff) & ~0xfffull;
    if (hi >= kTrampolines)
      throw Error("ANEC-EMU-004", "segment " + sg.name + " lies above the emulator's fixed regions");
    pages.push_back({lo, hi});
  }
  std::sort(pages.begin(), pages.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (auto &p : pages) {
    if (!merged.empty() && p.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, p.second);
    else
      merged.push_back(p);
  }
  for (auto &[lo, hi] : merged)
    if (!s_->api.cpu_map(s_->cpu, lo, hi - lo, backend::kAll))
      throw Error("ANEC-EMU-004", "cannot map " + hex(lo));
  for (const Segment &sg : b.segments()) s_->wr(sg.vaddr, sg.data.data(), sg.data.size());
  // Trampolines: each import slot points at a `ret`; the code hook performs the stand-in first.
  s_->api.cpu_map(s_->cpu, kTrampolines, kTrampolineSize, backend::kAll);
  s_->imports = b.imports();
  if (s_->imports.size() * 16 >= kExit - kTrampolines) throw Error("ANEC-EMU-004", "too many imports");
  const uint8_t ret_a64[4] = {0xc0, 0x03, 0x5f, 0xd6}, ret_x86[1] = {0xc3};
  for (size_t i = 0; i <= s_->imports.size(); ++i) {
    uint64_t at = i < s_->imports.size() ? kTrampolines + 16 * i : kExit;
    if (b.arch() == Arch::Arm64)
      s_->wr(at, ret_a64, 4);
    else
      s_->wr(at, ret_x86, 1);
    if (i < s_->imports.size()) s_->wr(s_->imports[i].slot, &at, 8);
  }
  s_->api.cpu_map(s_->cpu, kStack, kStackSize, backend::kRead | backend::kWrite);
  s_->api.cpu_hook_code(s_->cpu, kTrampolines, kTrampolines + kTrampolineSize - 1, on_code, s_.get());
  s_->api.cpu_hook_fault(s_->cpu, on_unmapped, s_.get());
  s_->api.cpu_hook_code(s_->cpu, 1, 0, on_count, s_.get());
  if (b.arch() == Arch::Arm64)
    s_->set(Reg::Cpacr, 3ull << 20); // let the code use the FP/SIMD registers
}

Emulator::~Emulator() = default;

uint64_t Emulator::alloc(uint64_t size, uint64_t align) { return s_->alloc(size, align); }
void Emulator::write(uint64_t addr, std::span<const uint8_t> bytes) {
  if (!s_->wr(addr, bytes.data(), bytes.size())) throw Error("ANEC-EMU-001", "cannot write at " + hex(addr));
}
bool Emulator::read(uint64_t addr, std::span<uint8_t> out) const {
  return s_->rd(addr, out.data(), out.size());
}
uint64_t Emulator::instructions() const { return s_->count; }
const std::vector<std::string> &Emulator::imports_called() const { return s_->called; }

uint64_t Emulator::call(uint64_t fn, std::span<const uint64_t> args, std::optional<uint64_t> sret) {
  State &s = *s_;
  int max_args = s.arch == Arch::Arm64 ? 8 : 6;
  if (int(args.size()) > max_args) throw Error("ANEC-EMU-004", "too many arguments");
  s.pending_error_code.clear();
  s.pending_error.clear();
  s.fault_addr = 0;
  s.count = 0;
  s.called.clear();
  uint64_t sp = kStack + kStackSize - 0x1000;
  for (size_t i = 0; i < args.size(); ++i) s.set(s.reg_arg(int(i)), args[i]);
  if (s.arch == Arch::Arm64) {
    s.set(Reg::Sp, sp);
    s.set(Reg::Lr, kExit);
    s.set(Reg::Fp, 0);
    if (sret)
      s.set(Reg::IndirectResult, *sret);
  } else {
    sp -= 8; // the return address a call would have pushed
    s.wr(sp, &kExit, 8);
    s.set(Reg::Sp, sp);
  }
  backend::RunResult run = s.api.cpu_run(s.cpu, fn, kExit, s.limits.timeout_ms * 1000);
  uint64_t pc = s.pc();
  if (!s.pending_error_code.empty())
    throw Error(s.pending_error_code, s.pending_error + " (pc " + hex(pc) + ")");
  if (run.stop != backend::Stop::Done) {
    if (s.fault_addr || run.stop == backend::Stop::Unmapped)
      throw Error("ANEC-EMU-001", run.message + " at " + hex(s.fault_addr) + " (pc " + hex(pc) + ")");
    throw Error("ANEC-EMU-004", run.message + " (pc " + hex(pc) + ")");
  }
  if (pc != kExit)
    throw Error("ANEC-EMU-002",
                "no return within " + std::to_string(s.limits.timeout_ms) + " ms (pc " + hex(pc) + ")");
  return s.get(Reg::Ret);
}

} // namespace anec::decode
