// The dump of a decoded descriptor chain (`anec-desc dump`, the document anec-desc.dump): in text
// a line per field, the raw word beside the decoded value; in a document every word with its fields.
#pragma once
#include "anec/descriptors/td.hpp"
#include "anec/support/printer.hpp"

#include <optional>
#include <span>
#include <vector>

namespace anec::desc {

// The indexes of the descriptors a dump shows: every one, or the one `only` selects (ANEC-TD-005
// when out of range).
std::vector<size_t> selected_tds(const Chain &chain, std::optional<size_t> only);

// The members of a dump that describe the chain, whatever container holds it (the "container"
// member comes before them). `only` selects one descriptor (ANEC-TD-005, before anything is
// printed); the document of one descriptor is marked incomplete. The document also records the
// file's size and, as hex `regions`, every byte that no descriptor word holds, so that
// `encode_dump` can rebuild the file.
void print_chain(Printer &p, const Chain &chain, const TdSchema &schema, std::span<const uint8_t> file,
                 std::optional<size_t> only = std::nullopt);

// The dump of a raw chain (`file` holds it).
void print(Printer &p, const Chain &chain, const TdSchema &schema, std::span<const uint8_t> file,
           std::optional<size_t> only = std::nullopt);
// The same, the chain walked here: once in flat form for what comes before the descriptors (their
// count, the findings, the kernel data) and the bytes their words hold, then again, each descriptor
// made a tree, printed and dropped. Memory is that of one descriptor, whatever the chain's length.
void print_raw_chain(Printer &p, const TdSchema &schema, std::span<const uint8_t> file,
                     std::optional<size_t> only = std::nullopt);

} // namespace anec::desc
