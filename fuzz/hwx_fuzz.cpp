// libFuzzer target: arbitrary bytes as an hwx container, read and printed.
#include "anec/descriptors/hwx.hpp"
#include "anec/support/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const anec::desc::TdSchema schema =
      anec::desc::TdSchema::load(std::filesystem::path(ANEC_FUZZ_TABLES_DIR) / "schema" / "td" / "gen7.toml");
  try {
    auto h = anec::desc::read_hwx({data, size}, schema);
    anec::desc::hwx_text(h, schema);
  } catch (const anec::Error &) {
  }
  return 0;
}
