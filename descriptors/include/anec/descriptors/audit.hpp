// Audits of a decoded program: each a named check returning findings with a reason code, the file
// offset and the values involved. The decoder's own findings (ANEC-TD-1xx) are included.
#pragma once
#include "anec/descriptors/hwx.hpp"
#include "anec/descriptors/td.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace anec::desc {

// check_eon (ANEC-AUD-001): EON on the last descriptor and no other.
// check_tid (ANEC-AUD-002): descriptor TIDs count 0, 1, 2, ...
// check_next_pointer (ANEC-AUD-003): each NextPointer is the next descriptor's offset from the
//   chain start, and the last one's is 0.
// check_relocations (ANEC-AUD-004): every __text relocation lies inside __text and lands on a
//   decoded base-address register (a field named ...BaseAddr...).
// check_kernel_bounds (ANEC-AUD-005): a base address relocated against a section, plus the buffer
//   size of the same index (CoeffBaseAddr[i] with CoeffBfrSize[i], in 64-byte units), stays
//   inside that section.
// check_tensor_states (ANEC-AUD-006): each per-tensor thread state agrees with the stabs layout of
//   the same name (n, c, h, w extents and byte strides), and every layout has a state.
std::vector<Finding> audit_chain(const Chain &chain);
// The same checks on a flat chain (either FlatDetail): the tree is never built.
std::vector<Finding> audit_chain(const FlatChain &chain, const TdSchema &schema);
std::vector<Finding> audit_hwx(const Hwx &hwx);

// The descriptor header's buffer-slot fields (role "slot") whose enable (their pair) is set.
std::vector<FieldValue> enabled_slots(const Td &td);

// What lies at a byte offset: the header field, load command, section, symbol, relocation or
// descriptor register word (with its decoded fields), one line each.
std::string explain(std::span<const uint8_t> file, const Chain &chain, const Hwx *hwx, uint64_t offset);

} // namespace anec::desc
