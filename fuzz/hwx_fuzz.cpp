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
    std::string page;
    anec::TextOut out(page);
    anec::tools::desc_html(print, {data, size}, "fuzz", out);
  } catch (const anec::Error &) {
  }
  return 0;
}
