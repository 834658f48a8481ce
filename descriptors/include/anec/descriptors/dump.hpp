// Printers for decoded descriptor chains: text (one line per field, raw word beside the decoded
// value) and a JSON-shaped document.
#pragma once
#include "anec/descriptors/td.hpp"
#include "anec/support/doc.hpp"
#include "anec/support/text_out.hpp"

#include <optional>
#include <span>
#include <string>

namespace anec::desc {

// `only` selects one descriptor by index (ANEC-TD-005 when out of range, before anything is written).
void dump_text(TextOut &out, const Chain &chain, const TdSchema &schema,
               std::optional<size_t> only = std::nullopt);
std::string dump_text(const Chain &chain, const TdSchema &schema, std::optional<size_t> only = std::nullopt);
// The JSON form also records the file size and, as hex `regions`, every byte that no descriptor
// word holds, so that `encode_dump` can rebuild the file; a dump of one descriptor is marked
// incomplete.
Doc dump_doc(const Chain &chain, const TdSchema &schema, std::span<const uint8_t> file,
             std::optional<size_t> only = std::nullopt);

} // namespace anec::desc
