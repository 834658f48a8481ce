// The command wire format (docs/firmware-wire.md): the sCSneControllerCmdHdr, the body, an integrity
// envelope (magic word, CRC-32 checksum) and zero padding to the 16-byte command granule; the
// encoder, and a validator that applies every rule the sources state as a named check with a reason
// code and the firmware's disposition. Header and envelope are read and written through their
// layouts (fw.command_header, fw.command_envelope in tables/schema/layout/firmware.toml); the bodies
// are the command table's (tables/schema/firmware/commands.toml).
#pragma once
#include "anec/firmware/commands.hpp"
#include "anec/layout/layout.hpp"
#include "anec/support/diagnostic.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace anec::fw {

const layout::Struct &command_header_layout(); // fw.command_header
const layout::Struct &envelope_layout();       // fw.command_envelope

// Sizes and the envelope magic as named values, taken from the layouts.
inline const uint32_t kHeaderBytes = command_header_layout().bytes;
// "CSNE" in memory order; the project's choice (docs/firmware-wire.md).
inline const uint32_t kEnvelopeMagic = uint32_t(*envelope_layout().at("magic").value);
inline constexpr uint32_t kGranule = 16; // a message is whole granules, zero-padded

struct Command {
  uint32_t id = 0, priority = 2, procedure_id = 0;
  int32_t program_id = -1, process_id = -1;
  std::vector<std::pair<std::string, uint64_t>> scalars;            // body scalars, in layout order
  std::map<std::string, std::vector<std::vector<uint64_t>>> arrays; // records, fields in record order
  std::vector<uint8_t> raw_body;                                    // a command without a body layout
};

// From a TOML or JSON description: `command` (name or id), `priority`, `program_id`, `process_id`,
// `procedure_id`, then `[body]` with the layout's scalars (counts may be omitted: taken from the
// arrays) and arrays of records (tables of the record's fields), or `raw_body` as hex.
// ANEC-FWC-001 for a description that does not fit the table.
Command command_from_doc(const Doc &d, const CommandTable &t, const std::string &source);
// The text form: the command's id, name, subsystem and direction, its header fields, its body's
// fields and records. The document form: what command_from_doc reads back.
void print(Printer &p, const Command &c, const CommandTable &t);

// The encoded command: header, body, envelope, padding. ANEC-FWC-002 for a body the layout cannot
// hold (a count that disagrees with its array, a value past its width).
std::vector<uint8_t> encode(const Command &c, const CommandTable &t);

uint32_t crc32(std::span<const uint8_t> bytes);

enum class Disposition { Reject, Drop, Fault, Warn };
const char *disposition_name(Disposition d); // "reject", "drop", "fault-and-reset", "warn"
inline constexpr Disposition kDispositions[] = {Disposition::Reject, Disposition::Drop, Disposition::Fault,
                                                Disposition::Warn};

// A failed check: a diagnostic (code, message, offset in the message; severity error, or warning
// for the warn-and-continue disposition) with the check's name and the firmware's disposition.
struct Violation : Diagnostic {
  std::string check;
  Disposition disposition = Disposition::Reject;
  uint32_t status = 0; // the IOKit status returned for a reject (appendix C.3)
};

enum class Channel { Ring, ExeLoop };

struct Validation {
  bool decoded = false;     // header and body could be read
  Command command;          // as far as it was read
  uint32_t total_bytes = 0; // header + body + envelope + padding as the header implies
  std::vector<Violation> violations;
  bool accepted() const; // nothing that rejects, drops or faults
};

// Every check (the table's compiled rules, wire_rules.hpp), then the named fields as far as they
// could be read.
Validation validate(std::span<const uint8_t> message, const CommandTable &t, Channel channel = Channel::Ring);
// A violation: the diagnostic's line and its check, disposition and status. A verdict: the command,
// a line per violation and whether it is accepted (`anec-fw validate FILE`, the Python module).
void print(Printer &p, const Violation &v);
void print(Printer &p, const Validation &v, const CommandTable &t);

// A capture of commands laid back to back, as a ring dump holds them: each message is its header,
// body, envelope and zero padding to the 16-byte granule, as long as its header's size says. A
// message whose size puts it past the capture or the slot cannot be framed: it counts as
// `unframed` and the walk resumes at the next granule (the next 16-byte boundary). Each message
// runs the compiled checks over its raw bytes, as validate() does, without decoding named fields.
struct StreamValidation {
  uint64_t messages = 0, accepted = 0, unframed = 0;
  // 1 when the capture ends inside a message: a header whose size frames more bytes than remain (up
  // to the slot) starts the last message, cut short; what follows it is its body, not messages.
  uint64_t truncated = 0, truncated_offset = 0, truncated_length = 0;
  uint64_t by_disposition[4] = {0, 0, 0,
                                0}; // messages with a finding of each Disposition (a message may count twice)
  uint64_t bytes = 0;
  struct First { // the first findings, in capture order
    uint64_t offset = 0; // of the message in the capture
    Violation violation;
  };
  std::vector<First> first;
};
StreamValidation validate_stream(std::span<const uint8_t> capture, const CommandTable &t,
                                 Channel channel = Channel::Ring, size_t keep_findings = 20);
// "TITLE: M message(s) in B bytes, A accepted, the count of each disposition, U granule(s) unframed"
// (and where the capture cuts its last message short),
// then a line per first finding (the message's offset, the violation).
void print(Printer &p, const StreamValidation &s, const std::string &title);

} // namespace anec::fw
