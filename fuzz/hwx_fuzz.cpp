// libFuzzer target: arbitrary bytes as an hwx container, read and printed as text and as the HTML
// dump (its tree and hex view).
#include "anec/descriptors/hwx.hpp"
#include "anec/support/error.hpp"
#include "desc_html.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const anec::desc::TdSchema schema =
      anec::desc::TdSchema::load(std::filesystem::path(ANEC_FUZZ_TABLES_DIR) / "schema" / "td" / "gen7.toml");
  try {
    auto h = anec::desc::read_hwx({data, size}, schema);
    auto print = [&](anec::Printer &p) { anec::desc::print(p, h, schema, {data, size}); };
    anec::printed_text(print);
    anec::tools::desc_html(anec::printed_doc(print), {data, size}, "fuzz");
  } catch (const anec::Error &) {
  }
  return 0;
}
