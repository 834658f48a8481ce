// libFuzzer target: arbitrary bytes as a host-to-firmware command on both channels; anything that
// validates must re-encode to the same message (the buffer may hold further zero granules).
#include "anec/firmware/wire.hpp"
#include "anec/support/error.hpp"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const anec::fw::CommandTable table = anec::fw::CommandTable::load(
      std::filesystem::path(ANEC_FUZZ_TABLES_DIR) / "schema" / "firmware" / "commands.toml");
  std::span<const uint8_t> bytes(data, size);
  anec::fw::validate(bytes, table, anec::fw::Channel::ExeLoop);
  auto v = anec::fw::validate(bytes, table);
  if (v.accepted() && v.decoded) {
    auto again = anec::fw::encode(v.command, table);
    if (again.size() != v.total_bytes || again.size() > size || !std::equal(again.begin(), again.end(), data))
      std::abort();
  }
  return 0;
}
