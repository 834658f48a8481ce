// The interface between anec_decode and its third-party adapters, which live in the module
// anec_decode_backends.so (decode/backends/): LIEF reads images, Capstone decodes instructions,
// Unicorn runs code. The module is loaded the first time a binary is parsed past its magic, code
// is disassembled or an emulator is made, so a command that does none of these does not load the
// three libraries (anec/support/plugin.hpp).
//
// The module translates, and decides nothing: it copies what LIEF reports into the plain records
// below, and wraps a Unicorn engine in a few primitive calls. The rules (which segments and
// symbols a Binary keeps, how ELF relocations are applied, the emulator's stand-ins) stay in
// anec_decode. Errors: the module throws std::exception (LIEF's own) or anec::Error.
#pragma once
#include "anec/decode/binary.hpp"
#include "anec/decode/disasm.hpp"
#include "anec/support/plugin.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace anec::decode::backend {

// Raised whenever a record or a function below changes.
inline constexpr uint32_t kVersion = 1;
inline constexpr const char *kModule = "anec_decode_backends";
inline constexpr const char *kEntry = "anec_decode_backends_entry";

// A thin Mach-O image as LIEF reads it (LIEF 0.9 names).
struct MachOImage {
  struct Segment {
    std::string name;
    uint64_t vaddr = 0, vsize = 0, file_size = 0;
    uint32_t init_protection = 0;
    std::vector<uint8_t> content;
    std::vector<Section> sections; // `segment` left empty
  };
  struct Symbol {
    std::string name;
    uint8_t type = 0; // nlist n_type
    uint64_t value = 0;
  };
  uint32_t cpu_type = 0;
  std::vector<Segment> segments;
  std::optional<std::vector<uint8_t>> uuid;             // LC_UUID
  std::optional<std::vector<uint64_t>> function_starts; // LC_FUNCTION_STARTS, offsets from __TEXT
  std::vector<Symbol> symbols;
};

// A 64-bit ELF image as LIEF reads it; enumerations are the ELF numbers.
struct ElfImage {
  struct Segment {
    uint32_t type = 0, flags = 0;
    uint64_t vaddr = 0, memsz = 0, filesz = 0;
    std::vector<uint8_t> content;
  };
  struct Section {
    std::string name;
    uint64_t addr = 0, size = 0;
  };
  struct Symbol {
    std::string name;
    uint32_t shndx = 0, type = 0, binding = 0;
    uint64_t value = 0, size = 0;
  };
  struct Relocation {
    uint32_t type = 0;
    uint64_t address = 0;
    int64_t addend = 0;
    std::optional<Symbol> symbol;
  };
  uint32_t machine = 0;
  std::vector<Segment> segments;
  std::vector<Section> sections;
  std::vector<Symbol> symbols;         // .symtab and .dynsym
  std::vector<Relocation> relocations; // dynamic, then PLT/GOT
};

// A CPU under emulation. Registers are named by their role in a call; Fp, Lr, IndirectResult and
// Cpacr (CPACR_EL1) exist on arm64 only, Arg6 and Arg7 on arm64 only.
struct Cpu;
enum class Reg { Arg0, Arg1, Arg2, Arg3, Arg4, Arg5, Arg6, Arg7, Ret, Pc, Sp, Fp, Lr, IndirectResult, Cpacr };
enum Prot : uint32_t { kRead = 1, kWrite = 2, kExec = 4, kAll = 7 };
enum class Stop { Done, Unmapped, Failed }; // Unmapped: a read, write or fetch of unmapped memory
struct RunResult {
  Stop stop = Stop::Done;
  std::string message; // the engine's words when not Done
};
using CodeHook = void (*)(void *user, uint64_t addr);
using FaultHook = void (*)(void *user, uint64_t addr, int type);

struct Api {
  plugin::Header header;

  // LIEF. nullopt: LIEF found no image in the bytes.
  std::optional<MachOImage> (*parse_macho)(std::span<const uint8_t> thin, const std::string &name);
  std::optional<ElfImage> (*parse_elf)(std::span<const uint8_t> image, const std::string &name);

  // Capstone, with instruction details on. open returns false and says why.
  bool (*disasm_open)(Arch arch, size_t &handle, std::string &error);
  void (*disasm_close)(size_t handle);
  // Decodes `code` (at address `addr`) up to the first undecodable word.
  std::vector<Instruction> (*disassemble)(size_t handle, Arch arch, std::span<const uint8_t> code,
                                          uint64_t addr);

  // Unicorn. cpu_open returns nullptr and says why.
  Cpu *(*cpu_open)(Arch arch, std::string &error);
  void (*cpu_close)(Cpu *cpu);
  bool (*cpu_map)(Cpu *cpu, uint64_t addr, uint64_t size, uint32_t prot);
  bool (*cpu_read)(const Cpu *cpu, uint64_t addr, void *out, size_t size);
  bool (*cpu_write)(Cpu *cpu, uint64_t addr, const void *bytes, size_t size);
  uint64_t (*cpu_get)(const Cpu *cpu, Reg reg);
  void (*cpu_set)(Cpu *cpu, Reg reg, uint64_t value);
  // `hook` runs before each instruction in [begin, end]; every instruction when end < begin.
  bool (*cpu_hook_code)(Cpu *cpu, uint64_t begin, uint64_t end, CodeHook hook, void *user);
  // `hook` runs on an access to unmapped or protected memory.
  bool (*cpu_hook_fault)(Cpu *cpu, FaultHook hook, void *user);
  // Runs from `begin` until the pc reaches `until`, a hook stops it, or timeout_us passes.
  RunResult (*cpu_run)(Cpu *cpu, uint64_t begin, uint64_t until, uint64_t timeout_us);
  void (*cpu_stop)(Cpu *cpu);
};

// The module's table, loaded on first use (ANEC-PLUGIN-* when it cannot be).
const Api &api();

} // namespace anec::decode::backend
