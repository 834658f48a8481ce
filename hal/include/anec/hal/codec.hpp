// Blob <-> Target codec, driven entirely by the schema: no offset is written in code.
#pragma once
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"

#include <span>

namespace anec::hal {

// Packs every blob field of the target (little-endian). Bytes no field covers are zero unless the
// target carries them as unk_<offset>. A value that does not fit its field: ANEC-HAL-004.
Bytes encode(const Schema &schema, const Target &target);

// Unpacks a blob into a target named `name`. Values outside the blob (identity, anchors, format
// tags) and the provenance of every value equal to the donor's are taken from `donor` (the
// target's own definition); other blob values get `unmatched` provenance. Unknown regions are kept
// only when nonzero. A blob of the wrong size: ANEC-HAL-001.
Target decode(const Schema &schema, std::span<const uint8_t> blob, const std::string &name,
              const Target *donor, const Provenance &unmatched);

} // namespace anec::hal
