// libFuzzer target: arbitrary text as a schema database.
#include "anec/hal/schema.hpp"
#include "anec/support/error.hpp"
#include "anec/support/toml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    anec::hal::Schema::from_doc(anec::toml::parse(text, "fuzz"), "fuzz");
  } catch (const anec::Error &) {
  }
  return 0;
}
