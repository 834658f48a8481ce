// Disassembly through the Capstone adapter of the decode module (backend.hpp), and the references
// the code makes, found from the decoded instructions.
#include "anec/decode/disasm.hpp"

#include "backend.hpp"

#include "anec/support/error.hpp"

#include <map>

namespace anec::decode {

Disassembler::Disassembler(Arch arch) : arch_(arch) {
  std::string why;
  if (!backend::api().disasm_open(arch, handle_, why))
    throw Error("ANEC-DIS-001", "capstone: " + why);
}

Disassembler::~Disassembler() {
  backend::api().disasm_close(handle_);
}

std::vector<Instruction> Disassembler::disassemble(const MemoryReader &mem, uint64_t begin,
                                                   uint64_t end) const {
  std::vector<Instruction> out;
  if (end <= begin || end - begin > (64u << 20)) return out;
  std::vector<uint8_t> code(end - begin);
  if (!mem.read(begin, code)) return out;
  return backend::api().disassemble(handle_, arch_, code, begin);
}

std::vector<Reference> Disassembler::references(const std::vector<Instruction> &code) const {
  std::vector<Reference> out;
  std::map<std::string, uint64_t> page; // register -> page an adrp put in it
  for (const Instruction &i : code) {
    if (i.target) out.push_back({i.addr, *i.target, i.is_call ? "call" : "branch"});
    if (arch_ == Arch::Arm64) {
      if (i.mnemonic == "adrp" && i.imm) {
        page[i.dest] = uint64_t(*i.imm);
        continue;
      }
      if (i.mnemonic == "adr" && i.imm) out.push_back({i.addr, uint64_t(*i.imm), "adr"});
      if (i.mnemonic == "add" && i.imm && page.count(i.src))
        out.push_back({i.addr, page[i.src] + uint64_t(*i.imm), "adrp+add"});
      if (i.mem && i.mem->load && page.count(i.mem->base))
        out.push_back({i.addr, page[i.mem->base] + uint64_t(i.mem->disp), "adrp+ldr"});
      if (i.mnemonic.rfind("ldr", 0) == 0 && !i.mem && i.imm)
        out.push_back({i.addr, uint64_t(*i.imm), "ldr-literal"});
      for (auto &w : i.writes)
        if (!(i.mnemonic == "adrp" && w == i.dest)) page.erase(w);
    } else if (i.mem && i.mem->base == "rip") {
      out.push_back({i.addr, i.addr + i.size + uint64_t(i.mem->disp), "rip-relative"});
    }
  }
  return out;
}

} // namespace anec::decode
