// libFuzzer target: arbitrary bytes as an anec container, read, printed and audited.
#include "anec/descriptors/anec_container.hpp"
#include "anec/support/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const anec::desc::TdSchema schema =
      anec::desc::TdSchema::load(std::filesystem::path(ANEC_FUZZ_TABLES_DIR) / "schema" / "td" / "gen7.toml");
  try {
    auto a = anec::desc::read_anec({data, size}, schema);
    anec::printed_text([&](anec::Printer &p) { anec::desc::print(p, a, schema, {data, size}); });
    anec::desc::audit_anec(a);
  } catch (const anec::Error &) {
  }
  return 0;
}
