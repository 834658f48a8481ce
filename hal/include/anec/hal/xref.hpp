// Names table fields by their readers (guide ch.24): for every function whose demangled signature
// takes the table type by const reference, the loads whose base register holds that argument are
// table reads; the same displacement off any other base is not.
#pragma once
#include "anec/decode/binary.hpp"
#include "anec/hal/schema.hpp"

#include <string>
#include <vector>

namespace anec::hal {

struct TableRead {
  uint64_t offset = 0;
  uint32_t width = 0;
  uint64_t at = 0;      // instruction address
  std::string field;    // schema field containing the offset ("" when none but a gap)
  bool named = false;   // the read starts exactly at a named field
  std::string proposal; // a name for an unnamed offset, from the reader's name
};

struct Reader {
  std::string function;
  uint64_t address = 0;
  int argument = 0;         // index of the table argument (0-based, `this` counted for const methods)
  std::string register_name; // the register that argument arrives in
  std::vector<TableRead> reads;
};

// The table argument is found by type name in the demangled parameter list; a `const` member
// function counts `this` as argument 0. Tracking follows the argument through register copies and
// stack spills in a single pass over the function (no control-flow merge), and drops it at calls
// (caller-saved registers) and when its register is overwritten.
std::vector<Reader> find_readers(const Schema &schema, const decode::Binary &binary,
                                 const std::string &type = "ZinIrHalParameters");

// snake_case of the reader's last name component without Get/Is/Has/Can/Use/Compute/Validate.
std::string propose_name(const std::string &function);

} // namespace anec::hal
