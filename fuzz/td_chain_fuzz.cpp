// libFuzzer target: arbitrary bytes as a raw task-descriptor chain, decoded and printed.
#include "anec/descriptors/dump.hpp"
#include "anec/support/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const anec::desc::TdSchema schema =
      anec::desc::TdSchema::load(std::filesystem::path(ANEC_FUZZ_TABLES_DIR) / "schema" / "td" / "gen7.toml");
  try {
    auto chain = anec::desc::decode_raw_chain({data, size}, schema);
    anec::printed_text([&](anec::Printer &p) { anec::desc::print(p, chain, schema, {data, size}); });
  } catch (const anec::Error &) {
  }
  return 0;
}
