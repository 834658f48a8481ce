// Runs a function of a loaded binary under Unicorn, with the binary mapped at its link addresses,
// a stack, a heap, and C++ stand-ins for the imports such code calls. Bounded: an instruction
// budget and a wall-clock timeout, so nothing hangs.
#pragma once
#include "anec/decode/binary.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace anec::decode {

struct EmuLimits {
  uint64_t max_instructions = 5'000'000;
  uint64_t timeout_ms = 20'000;
  uint64_t heap_bytes = 64ull << 20;
};

class Emulator : public MemoryReader {
public:
  explicit Emulator(const Binary &binary, EmuLimits limits = {});
  ~Emulator() override;
  Emulator(const Emulator &) = delete;
  Emulator &operator=(const Emulator &) = delete;

  // Allocates zeroed memory on the emulator heap.
  uint64_t alloc(uint64_t size, uint64_t align = 16);
  void write(uint64_t addr, std::span<const uint8_t> bytes);
  bool read(uint64_t addr, std::span<uint8_t> out) const override;

  // Calls fn with integer arguments in the argument registers (x0.. / rdi..) and, on arm64, the
  // indirect-result register x8 set to `sret` (x86-64 passes the sret pointer as the first
  // argument, which the caller puts in args). Returns x0 / rax.
  // Errors: ANEC-EMU-001 memory fault, ANEC-EMU-002 instruction budget or timeout exhausted,
  // ANEC-EMU-003 call to an import with no stub, ANEC-EMU-004 other emulator failure.
  uint64_t call(uint64_t fn, std::span<const uint64_t> args, std::optional<uint64_t> sret = std::nullopt);

  uint64_t instructions() const;
  // Names of the imports the last call reached, in call order.
  const std::vector<std::string> &imports_called() const;
  // Names of the imports this emulator has stand-ins for.
  static std::vector<std::string> stubbed_imports();

  struct State;

private:
  std::unique_ptr<State> s_;
};

} // namespace anec::decode
