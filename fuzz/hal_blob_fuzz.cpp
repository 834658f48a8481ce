// libFuzzer target: arbitrary bytes as a HAL blob (and as a too-short or too-long one).
#include "anec/hal/codec.hpp"
#include "anec/hal/schema.hpp"
#include "anec/support/error.hpp"

#include <cstdlib>

using namespace anec::hal;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Schema schema =
      Schema::load(std::filesystem::path(ANEC_FUZZ_TABLES_DIR) / "schema" / "hal.toml");
  Bytes blob(data, data + size);
  if (size >= 2 && data[0] == 0xff) blob.resize(schema.blob_size(), data[1]); // reach the full decoder often
  try {
    Target t = decode(schema, blob, "fuzz", nullptr, {"fuzz", Confidence::Decoded});
    // Whatever decodes must re-encode to the same bytes.
    if (encode(schema, t) != blob) std::abort();
  } catch (const anec::Error &) {
  }
  return 0;
}
