// The functions of the decode module, one file per library; module.cpp puts them in the table of
// decode/src/backend.hpp, which says what each does.
#pragma once
#include "backend.hpp"

namespace anec::decode::backend {

// lief.cpp
std::optional<MachOImage> parse_macho(std::span<const uint8_t> thin, const std::string &name);
std::optional<ElfImage> parse_elf(std::span<const uint8_t> image, const std::string &name);

// capstone.cpp
bool disasm_open(Arch arch, size_t &handle, std::string &error);
void disasm_close(size_t handle);
std::vector<Instruction> disassemble(size_t handle, Arch arch, std::span<const uint8_t> code, uint64_t begin);

// unicorn.cpp
Cpu *cpu_open(Arch arch, std::string &error);
void cpu_close(Cpu *cpu);
bool cpu_map(Cpu *cpu, uint64_t addr, uint64_t size, uint32_t prot);
bool cpu_read(const Cpu *cpu, uint64_t addr, void *out, size_t size);
bool cpu_write(Cpu *cpu, uint64_t addr, const void *bytes, size_t size);
uint64_t cpu_get(const Cpu *cpu, Reg reg);
void cpu_set(Cpu *cpu, Reg reg, uint64_t value);
bool cpu_hook_code(Cpu *cpu, uint64_t begin, uint64_t end, CodeHook hook, void *user);
bool cpu_hook_fault(Cpu *cpu, FaultHook hook, void *user);
RunResult cpu_run(Cpu *cpu, uint64_t begin, uint64_t until, uint64_t timeout_us);
void cpu_stop(Cpu *cpu);

} // namespace anec::decode::backend
