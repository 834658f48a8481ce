// libFuzzer target: arbitrary bytes through the binary loader (Mach-O thin/fat, ELF), then the
// disassembler over the first function it reports.
#include "anec/decode/binary.hpp"
#include "anec/decode/disasm.hpp"
#include "anec/support/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    auto b = anec::decode::Binary::parse({data, size}, "fuzz");
    if (!b.function_starts().empty()) {
      uint64_t f = b.function_starts().front();
      anec::decode::Disassembler d(b.arch());
      uint64_t end = std::min(b.function_end(f), f + 4096);
      d.references(d.disassemble(b, f, end));
    }
  } catch (const anec::Error &) {
  }
  return 0;
}
