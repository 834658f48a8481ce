// libFuzzer target: arbitrary bytes as a firmware program package, read and audited.
#include "anec/firmware/container.hpp"
#include "anec/support/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const anec::desc::TdSchema schema =
      anec::desc::TdSchema::load(std::filesystem::path(ANEC_FUZZ_TABLES_DIR) / "schema" / "td" / "gen7.toml");
  try {
    anec::fw::audit_package({data, size}, schema);
  } catch (const anec::Error &) {
  }
  return 0;
}
