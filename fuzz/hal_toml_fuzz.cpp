// libFuzzer target: arbitrary text as a target definition, through the strict reader, the writer,
// the codec and the validator.
#include "anec/hal/codec.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/target_io.hpp"
#include "anec/hal/validate.hpp"
#include "anec/support/error.hpp"
#include "anec/support/toml.hpp"

using namespace anec::hal;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path root = ANEC_FUZZ_TABLES_DIR;
  static const Schema schema = Schema::load(root / "schema" / "hal.toml");
  static const Lineup lineup = load_lineup(root / "reference" / "lineup.toml");
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    Target t = from_doc(schema, anec::toml::parse(text, "fuzz"), "fuzz");
    validate_target(schema, lineup, t);
    Bytes b = encode(schema, t);
    decode(schema, b, t.name, &t, {"fuzz", Confidence::Decoded});
    to_toml(schema, t);
  } catch (const anec::Error &) {
  }
  return 0;
}
