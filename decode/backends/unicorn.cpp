// The Unicorn adapter: the only file that includes Unicorn. A Cpu is an engine, its register
// numbering and the hooks it calls back through; the emulator built on it is decode/src/emulator.cpp.
#include "backends.hpp"

#include <iterator>
#include <memory>
#include <unicorn/unicorn.h>

namespace anec::decode::backend {

struct Cpu {
  uc_engine *uc = nullptr;
  Arch arch = Arch::Arm64;
  // Unicorn keeps a pointer to each: they live as long as the engine.
  struct Code {
    CodeHook fn;
    void *user;
  };
  struct Fault {
    FaultHook fn;
    void *user;
  };
  std::vector<std::unique_ptr<Code>> code_hooks;
  std::vector<std::unique_ptr<Fault>> fault_hooks;

  ~Cpu() {
    if (uc)
      uc_close(uc);
  }
};

namespace {

// Unicorn's number for a register; 0 (UC_*_REG_INVALID) where the architecture has none.
int uc_reg(const Cpu *cpu, Reg r) {
  static constexpr int kArm64Args[] = {UC_ARM64_REG_X0, UC_ARM64_REG_X1, UC_ARM64_REG_X2, UC_ARM64_REG_X3,
                                       UC_ARM64_REG_X4, UC_ARM64_REG_X5, UC_ARM64_REG_X6, UC_ARM64_REG_X7};
  static constexpr int kX86Args[] = {UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX,
                                     UC_X86_REG_RCX, UC_X86_REG_R8,  UC_X86_REG_R9};
  bool a64 = cpu->arch == Arch::Arm64;
  if (r <= Reg::Arg7) {
    size_t i = size_t(r);
    return a64 ? kArm64Args[i] : i < std::size(kX86Args) ? kX86Args[i] : 0;
  }
  switch (r) {
  case Reg::Ret:
    return a64 ? int(UC_ARM64_REG_X0) : int(UC_X86_REG_RAX);
  case Reg::Pc:
    return a64 ? int(UC_ARM64_REG_PC) : int(UC_X86_REG_RIP);
  case Reg::Sp:
    return a64 ? int(UC_ARM64_REG_SP) : int(UC_X86_REG_RSP);
  case Reg::Fp:
    return a64 ? UC_ARM64_REG_X29 : 0;
  case Reg::Lr:
    return a64 ? UC_ARM64_REG_X30 : 0;
  case Reg::IndirectResult:
    return a64 ? UC_ARM64_REG_X8 : 0;
  case Reg::Cpacr:
    return a64 ? UC_ARM64_REG_CPACR_EL1 : 0;
  default:
    return 0;
  }
}

void on_code(uc_engine *, uint64_t addr, uint32_t, void *user) {
  auto *h = static_cast<Cpu::Code *>(user);
  h->fn(h->user, addr);
}

bool on_fault(uc_engine *, uc_mem_type type, uint64_t addr, int, int64_t, void *user) {
  auto *h = static_cast<Cpu::Fault *>(user);
  h->fn(h->user, addr, int(type));
  return false;
}

} // namespace

Cpu *cpu_open(Arch arch, std::string &error) {
  auto cpu = std::make_unique<Cpu>();
  cpu->arch = arch;
  uc_err err = arch == Arch::Arm64 ? uc_open(UC_ARCH_ARM64, UC_MODE_ARM, &cpu->uc)
                                   : uc_open(UC_ARCH_X86, UC_MODE_64, &cpu->uc);
  if (err) {
    error = uc_strerror(err);
    return nullptr;
  }
  return cpu.release();
}

void cpu_close(Cpu *cpu) {
  delete cpu;
}

bool cpu_map(Cpu *cpu, uint64_t addr, uint64_t size, uint32_t prot) {
  return uc_mem_map(cpu->uc, addr, size, prot) == UC_ERR_OK;
}

bool cpu_read(const Cpu *cpu, uint64_t addr, void *out, size_t size) {
  return uc_mem_read(cpu->uc, addr, out, size) == UC_ERR_OK;
}

bool cpu_write(Cpu *cpu, uint64_t addr, const void *bytes, size_t size) {
  return uc_mem_write(cpu->uc, addr, bytes, size) == UC_ERR_OK;
}

uint64_t cpu_get(const Cpu *cpu, Reg reg) {
  uint64_t v = 0;
  uc_reg_read(cpu->uc, uc_reg(cpu, reg), &v);
  return v;
}

void cpu_set(Cpu *cpu, Reg reg, uint64_t value) {
  uc_reg_write(cpu->uc, uc_reg(cpu, reg), &value);
}

bool cpu_hook_code(Cpu *cpu, uint64_t begin, uint64_t end, CodeHook hook, void *user) {
  cpu->code_hooks.push_back(std::make_unique<Cpu::Code>(Cpu::Code{hook, user}));
  uc_hook h;
  return uc_hook_add(cpu->uc, &h, UC_HOOK_CODE, reinterpret_cast<void *>(&on_code),
                     cpu->code_hooks.back().get(), begin, end) == UC_ERR_OK;
}

bool cpu_hook_fault(Cpu *cpu, FaultHook hook, void *user) {
  cpu->fault_hooks.push_back(std::make_unique<Cpu::Fault>(Cpu::Fault{hook, user}));
  uc_hook h;
  return uc_hook_add(cpu->uc, &h, UC_HOOK_MEM_UNMAPPED | UC_HOOK_MEM_PROT,
                     reinterpret_cast<void *>(&on_fault), cpu->fault_hooks.back().get(), 1, 0) == UC_ERR_OK;
}

RunResult cpu_run(Cpu *cpu, uint64_t begin, uint64_t until, uint64_t timeout_us) {
  uc_err err = uc_emu_start(cpu->uc, begin, until, timeout_us, 0);
  if (err == UC_ERR_OK)
    return {};
  bool unmapped = err == UC_ERR_READ_UNMAPPED || err == UC_ERR_WRITE_UNMAPPED || err == UC_ERR_FETCH_UNMAPPED;
  return {unmapped ? Stop::Unmapped : Stop::Failed, uc_strerror(err)};
}

void cpu_stop(Cpu *cpu) {
  uc_emu_stop(cpu->uc);
}

} // namespace anec::decode::backend
