// Binary loader over LIEF: Mach-O (thin or fat/universal) and ELF, arm64 and x86-64. The loaded
// image is the file's segments at their link addresses with ELF relocations applied, so data
// pointers read as the linker meant them (Mach-O files already hold unslid pointers).
#pragma once
#include "anec/decode/memory.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace anec::decode {

enum class Format { MachO, Elf };
enum class Arch { Arm64, X86_64 };
const char *format_name(Format f);
const char *arch_name(Arch a);

struct Segment {
  std::string name;
  uint64_t vaddr = 0, vsize = 0;
  bool executable = false;
  std::vector<uint8_t> data; // file bytes (relocated), zero-extended to vsize on read
};

struct Section {
  std::string segment, name;
  uint64_t addr = 0, size = 0;
};

struct Symbol {
  std::string name, demangled; // demangled equals name when it is not a C++ name
  uint64_t addr = 0;
  uint64_t size = 0; // 0 when the format does not record it (Mach-O)
  bool local = false;
};

// A symbol the binary imports, and the pointer slot its code calls or loads it through
// (Mach-O: the bound lazy or non-lazy pointer; ELF: the GOT slot of a JUMP_SLOT/GLOB_DAT/64 relocation).
struct Import {
  std::string name, demangled;
  uint64_t slot = 0;
};

class Binary : public MemoryReader {
public:
  // Errors (anec::Error): ANEC-BIN-001 truncated or malformed, ANEC-BIN-002 not Mach-O or ELF,
  // ANEC-BIN-003 unsupported architecture, ANEC-IO-* file errors.
  static Binary load(const std::filesystem::path &path);
  static Binary parse(std::span<const uint8_t> bytes, const std::string &name);

  bool read(uint64_t addr, std::span<uint8_t> out) const override;

  Format format() const { return format_; }
  Arch arch() const { return arch_; }
  const std::string &name() const { return name_; }
  const std::string &sha256() const { return sha256_; }
  const std::string &uuid() const { return uuid_; } // Mach-O LC_UUID, else empty
  const std::vector<Segment> &segments() const { return segments_; }
  const std::vector<Section> &sections() const { return sections_; }
  const std::vector<Symbol> &symbols() const { return symbols_; }
  const std::vector<Import> &imports() const { return imports_; }
  // Sorted function start addresses (LC_FUNCTION_STARTS, function symbols).
  const std::vector<uint64_t> &function_starts() const { return function_starts_; }
  // End of the function starting at addr: its symbol size, else the next function start or the
  // end of its segment.
  uint64_t function_end(uint64_t addr) const;
  bool is_executable(uint64_t addr) const;

private:
  Format format_ = Format::MachO;
  Arch arch_ = Arch::Arm64;
  std::string name_, sha256_, uuid_;
  std::vector<Segment> segments_;
  std::vector<Section> sections_;
  std::vector<Symbol> symbols_;
  std::vector<Import> imports_;
  std::vector<uint64_t> function_starts_;
  friend struct BinaryBuilder;
};

std::string demangle(const std::string &name);

} // namespace anec::decode
