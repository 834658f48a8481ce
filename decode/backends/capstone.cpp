// The Capstone adapter: the only file that includes Capstone (version 4 names: CS_ARCH_ARM64).
#include "backends.hpp"

#include <capstone/capstone.h>
#include <cctype>
#include <map>

namespace anec::decode::backend {

namespace {

csh H(size_t h) {
  return static_cast<csh>(h);
}

// w<n> -> x<n>; eax/ax/al -> rax; r8d -> r8.
std::string canonical(csh h, unsigned reg, Arch arch) {
  if (reg == 0)
    return {};
  const char *n = cs_reg_name(h, reg);
  if (!n)
    return {};
  std::string s = n;
  if (arch == Arch::Arm64) {
    if (s.size() >= 2 && s[0] == 'w' && std::isdigit(static_cast<unsigned char>(s[1])))
      return "x" + s.substr(1);
    if (s == "wzr")
      return "xzr";
    return s;
  }
  static const std::map<std::string, std::string> x86 = {
      {"eax", "rax"}, {"ax", "rax"}, {"al", "rax"},  {"ebx", "rbx"}, {"bx", "rbx"}, {"bl", "rbx"},
      {"ecx", "rcx"}, {"cx", "rcx"}, {"cl", "rcx"},  {"edx", "rdx"}, {"dx", "rdx"}, {"dl", "rdx"},
      {"esi", "rsi"}, {"si", "rsi"}, {"sil", "rsi"}, {"edi", "rdi"}, {"di", "rdi"}, {"dil", "rdi"},
      {"ebp", "rbp"}, {"bp", "rbp"}, {"bpl", "rbp"}, {"esp", "rsp"}, {"sp", "rsp"}, {"spl", "rsp"}};
  if (auto it = x86.find(s); it != x86.end())
    return it->second;
  if (s.size() > 2 && s[0] == 'r' && std::isdigit(static_cast<unsigned char>(s[1])) &&
      (s.back() == 'd' || s.back() == 'w' || s.back() == 'b'))
    return s.substr(0, s.size() - 1);
  return s;
}

uint32_t arm64_access_size(const std::string &mn, const std::string &reg0) {
  uint32_t unit;
  if (mn.find("b") == mn.size() - 1 &&
      (mn.rfind("ldr", 0) == 0 || mn.rfind("str", 0) == 0 || mn.rfind("ldur", 0) == 0 ||
       mn.rfind("stur", 0) == 0 || mn == "ldrsb" || mn == "ldursb"))
    unit = 1;
  else if (mn.back() == 'h' && (mn.rfind("ld", 0) == 0 || mn.rfind("st", 0) == 0))
    unit = 2;
  else if (mn == "ldrsw" || mn == "ldursw")
    unit = 4;
  else if (!reg0.empty() && (reg0[0] == 'w' || reg0[0] == 's'))
    unit = 4;
  else if (!reg0.empty() && reg0[0] == 'q')
    unit = 16;
  else if (!reg0.empty() && reg0[0] == 'h')
    unit = 2;
  else if (!reg0.empty() && reg0[0] == 'b')
    unit = 1;
  else
    unit = 8;
  bool pair = mn.rfind("ldp", 0) == 0 || mn.rfind("stp", 0) == 0 || mn.rfind("ldnp", 0) == 0 ||
              mn.rfind("stnp", 0) == 0;
  return pair ? 2 * unit : unit;
}

// The first two register operands, in operand order (Intel syntax for x86: destination first).
void note_register(Instruction &i, int &regs, const std::string &r) {
  if (regs == 0)
    i.dest = r;
  else if (regs == 1)
    i.src = r;
  ++regs;
}

} // namespace

bool disasm_open(Arch arch, size_t &handle, std::string &error) {
  csh h;
  cs_err err =
      arch == Arch::Arm64 ? cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &h) : cs_open(CS_ARCH_X86, CS_MODE_64, &h);
  if (err != CS_ERR_OK) {
    error = cs_strerror(err);
    return false;
  }
  cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  handle = static_cast<size_t>(h);
  return true;
}

void disasm_close(size_t handle) {
  csh h = H(handle);
  cs_close(&h);
}

std::vector<Instruction> disassemble(size_t handle, Arch arch, std::span<const uint8_t> code,
                                     uint64_t begin) {
  std::vector<Instruction> out;
  csh h = H(handle);
  cs_insn *insn = cs_malloc(h);
  const uint8_t *p = code.data();
  size_t left = code.size();
  uint64_t addr = begin;
  while (cs_disasm_iter(h, &p, &left, &addr, insn)) {
    Instruction i;
    i.addr = insn->address;
    i.size = insn->size;
    i.mnemonic = insn->mnemonic;
    i.operands = insn->op_str;
    cs_regs rr, rw;
    uint8_t nr = 0, nw = 0;
    if (cs_regs_access(h, insn, rr, &nr, rw, &nw) == CS_ERR_OK) {
      for (int k = 0; k < nr; ++k)
        i.reads.push_back(canonical(h, rr[k], arch));
      for (int k = 0; k < nw; ++k)
        i.writes.push_back(canonical(h, rw[k], arch));
    }
    i.is_call = cs_insn_group(h, insn, CS_GRP_CALL);
    i.is_return = cs_insn_group(h, insn, CS_GRP_RET);
    i.is_branch = cs_insn_group(h, insn, CS_GRP_JUMP);
    if (arch == Arch::Arm64) {
      const cs_arm64 &a = insn->detail->arm64;
      if (i.mnemonic == "ret")
        i.is_return = true;
      if (i.mnemonic == "bl")
        i.is_call = true;
      std::string reg0;
      int regs = 0;
      for (int k = 0; k < a.op_count; ++k) {
        const cs_arm64_op &op = a.operands[k];
        if (op.type == ARM64_OP_REG) {
          if (regs == 0)
            reg0 = cs_reg_name(h, op.reg);
          note_register(i, regs, canonical(h, op.reg, arch));
        } else if (op.type == ARM64_OP_IMM && !i.imm) {
          i.imm = op.imm;
        } else if (op.type == ARM64_OP_MEM) {
          MemOperand m;
          m.base = canonical(h, op.mem.base, arch);
          m.index = canonical(h, op.mem.index, arch);
          m.disp = op.mem.disp;
          m.size = arm64_access_size(i.mnemonic, reg0);
          m.load = i.mnemonic.rfind("ld", 0) == 0;
          m.store = i.mnemonic.rfind("st", 0) == 0;
          i.mem = m;
        }
      }
      if (i.mnemonic.rfind("b.", 0) == 0 || i.mnemonic == "cbz" || i.mnemonic == "cbnz" ||
          i.mnemonic == "tbz" || i.mnemonic == "tbnz") {
        i.is_branch = true;
        for (int k = a.op_count - 1; k >= 0; --k)
          if (a.operands[k].type == ARM64_OP_IMM) {
            i.target = uint64_t(a.operands[k].imm);
            break;
          }
      }
    } else {
      const cs_x86 &x = insn->detail->x86;
      int regs = 0;
      for (int k = 0; k < x.op_count; ++k) {
        const cs_x86_op &op = x.operands[k];
        if (op.type == X86_OP_REG) {
          note_register(i, regs, canonical(h, op.reg, arch));
        } else if (op.type == X86_OP_IMM && !i.imm) {
          i.imm = op.imm;
        } else if (op.type == X86_OP_MEM) {
          MemOperand m;
          m.base = canonical(h, op.mem.base, arch);
          m.index = canonical(h, op.mem.index, arch);
          m.disp = op.mem.disp;
          m.size = op.size;
          bool lea = i.mnemonic == "lea";
          m.load = !lea && (op.access & CS_AC_READ);
          m.store = !lea && (op.access & CS_AC_WRITE);
          i.mem = m;
        }
      }
    }
    // A call or jump whose only operand is an immediate goes to that address; compare-and-branch
    // forms (cbz, tbz) take the last immediate, set above.
    if ((i.is_call || i.is_branch) && i.imm && !i.mem && i.dest.empty() && !i.target)
      i.target = uint64_t(*i.imm);
    out.push_back(std::move(i));
  }
  cs_free(insn, 1);
  return out;
}

} // namespace anec::decode::backend
