// Disassembly and cross references over Capstone (arm64, x86-64).
#pragma once
#include "anec/decode/binary.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace anec::decode {

// Registers are named canonically: arm64 w<n> reads as x<n>; x86 32/16/8-bit names read as the
// 64-bit register (eax -> rax). Empty when there is none.
struct MemOperand {
  std::string base, index;
  int64_t disp = 0;
  uint32_t size = 0; // bytes accessed (both halves of a pair)
  bool load = false, store = false;
};

struct Instruction {
  uint64_t addr = 0;
  uint32_t size = 0;
  std::string mnemonic, operands;
  bool is_call = false, is_return = false, is_branch = false;
  std::optional<uint64_t> target; // direct branch or call target
  std::optional<MemOperand> mem;
  std::optional<int64_t> imm;            // first immediate operand
  std::vector<std::string> reads, writes; // registers, canonical names
  std::string dest, src;                  // first and second register operands when they are registers
};

struct Reference {
  uint64_t from = 0, to = 0;
  std::string kind; // "adrp+add", "adrp+ldr", "adr", "ldr-literal", "rip-relative", "call", "branch"
};

class Disassembler {
public:
  explicit Disassembler(Arch arch);
  ~Disassembler();
  Disassembler(const Disassembler &) = delete;
  Disassembler &operator=(const Disassembler &) = delete;

  // Decodes [begin, end) read through `mem`, stopping at the first undecodable word.
  std::vector<Instruction> disassemble(const MemoryReader &mem, uint64_t begin, uint64_t end) const;
  // Addresses the code forms or loads from: adrp/add and adrp/ldr pairs, adr, ldr literal,
  // rip-relative operands, direct calls and branches.
  std::vector<Reference> references(const std::vector<Instruction> &code) const;
  Arch arch() const { return arch_; }

private:
  Arch arch_;
  size_t handle_ = 0;
};

} // namespace anec::decode
