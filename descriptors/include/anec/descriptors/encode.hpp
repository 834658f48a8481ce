// Rebuilds a descriptor program from the JSON `anec-desc dump --format json` prints: the regions
// outside the descriptors byte for byte, every stream header as written, and every register word
// packed from its decoded fields (so an edited field value takes effect) plus its reserved bits;
// a word with no known field is written from its raw value.
#pragma once
#include "anec/descriptors/td_schema.hpp"
#include "anec/support/doc.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace anec::desc {

// Errors: ANEC-ENC-001 not a complete dump (a single-descriptor dump, a missing key), ANEC-ENC-002
// a field the database does not have at that word, ANEC-ENC-003 a value that does not fit its
// field, ANEC-ENC-004 a word or region outside the file.
std::vector<uint8_t> encode_dump(const Doc &dump, const TdSchema &schema, const std::string &source);

} // namespace anec::desc
