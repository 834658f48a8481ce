// The command table and the wire layouts compiled once into flat rules (ARCHITECTURE.md: hot paths
// compile a schema once into flat tables, indexed by number, no string keys): the header's and the
// envelope's field offsets and widths; per command id whether it is known, whether it is a
// firmware-to-host notification and its body; per body the scalars at their offsets with their
// limits, the arrays with the scalar that counts them, and the named rules resolved to the scalars
// and record fields they read. Every check of a message is defined here once, over the raw bytes and
// in the firmware's order (length, magic, checksum, padding, then id, header fields, body size,
// field limits, named rules); validate() and validate_stream() both run them. A message without a
// finding costs no allocation and no string compare; a finding builds its message only while the
// caller keeps findings.
#pragma once
#include "anec/firmware/wire.hpp"
#include "anec/support/bytes.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace anec::fw {

// A little-endian unsigned integer of `width` bytes (4 or 8) at a fixed offset.
struct Slot {
  uint32_t offset = 0, width = 4;
  uint64_t read(std::span<const uint8_t> bytes, uint64_t base = 0) const { // the hot path's every load
    uint64_t at = base + offset;
    if (width == 4)
      return le32(bytes, at);
    return width == 8 ? le32(bytes, at) | uint64_t(le32(bytes, at + 4)) << 32 : load_le(bytes, at, width);
  }
};

class WireRules {
public:
  // From the table and the built-in layouts fw.command_header and fw.command_envelope.
  // ANEC-FWT-001 when a named rule's record lacks a field the rule reads.
  explicit WireRules(const CommandTable &t);

  struct Checked {
    uint32_t total_bytes = 0;   // header + body + envelope + padding as the header implies
    bool framed = false;        // the envelope lies inside the message: the body can be read
    bool decoded = false;       // the body matches its layout (or the channel reads no body)
    std::array<bool, 4> seen{}; // a finding of each Disposition
    bool accepted() const {     // nothing that rejects, drops or faults
      return !seen[int(Disposition::Reject)] && !seen[int(Disposition::Drop)] &&
             !seen[int(Disposition::Fault)];
    }
  };
  // Every check on one message; findings are appended to `findings` while it holds fewer than `keep`.
  Checked check(std::span<const uint8_t> message, Channel channel, std::vector<Violation> &findings,
                size_t keep = std::numeric_limits<size_t>::max()) const;
  // The bytes of the message that starts `capture`, as its header's size implies (header, body,
  // envelope, padding to the granule); nullopt when the size field is not inside `capture`.
  std::optional<uint64_t> framed_length(std::span<const uint8_t> capture) const {
    if (capture.size() < uint64_t(header_.size.offset) + header_.size.width)
      return std::nullopt;
    return align_up(header_bytes_ + header_.size.read(capture) + envelope_bytes_, kGranule);
  }
  uint32_t max_command_bytes() const { return limits_.max_command_bytes; }

private:
  // A scalar's limits folded into one range: inside [lo, hi] it passes every one of them; outside,
  // its FieldSpec says which failed.
  struct ScalarRule {
    Slot at; // in the body
    uint64_t lo = 0, hi = UINT64_MAX;
  };
  struct ArrayRule {
    int count = 0;             // the scalar holding the record count
    uint32_t record_bytes = 0; // bytes of one record
  };
  enum class Named : uint8_t { EventsNonempty, InterfaceVersion, ChainedBuffers };
  static constexpr int kAbsent = -1; // a scalar or an array the body does not have: reads as 0
  struct BodyRule {
    std::string command;
    uint32_t fixed_bytes = 0; // the scalars'
    std::vector<ScalarRule> scalars;
    std::vector<FieldSpec> fields; // the scalars' specs, for the messages
    std::vector<ArrayRule> arrays;
    std::vector<Named> rules;
    // What the named rules read: scalars and the chained-buffer array by position, and the two
    // fields of its records by offset.
    int wait_events = kAbsent, signal_events = kAbsent, major = kAbsent, minor = kAbsent;
    int output_buffer_sets = kAbsent, chained = kAbsent;
    Slot chained_set_id, chained_address;
    uint64_t scalar(std::span<const uint8_t> body, int index) const {
      return index == kAbsent ? 0 : scalars[size_t(index)].at.read(body);
    }
    uint64_t bytes_before(std::span<const uint8_t> body, size_t array) const; // scalars + earlier arrays
  };

  struct Header {
    Slot id, size, priority, program_id, process_id, procedure_id;
  } header_;
  uint32_t header_bytes_ = 0, envelope_bytes_ = 0, magic_value_ = 0;
  Slot magic_, checksum_; // from the envelope's start
  struct IdRule {
    bool known = false, notification = false; // notification: firmware-to-host only
    int body = kAbsent;
  };
  std::vector<IdRule> ids_;        // indexed by command id
  std::vector<std::string> names_; // indexed by command id, for messages
  std::vector<uint32_t> exeloop_;
  std::vector<BodyRule> bodies_;
  Limits limits_;

  static BodyRule body_rule(const BodySpec &spec);

  struct Findings;
  bool check_envelope(std::span<const uint8_t> m, uint64_t size, Findings &f) const;
  void check_header(std::span<const uint8_t> m, uint32_t id, Findings &f) const;
  bool check_body_size(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const;
  void check_fields(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const;
  void report_field(const FieldSpec &field, uint64_t x, uint64_t offset, Findings &f) const;
  void check_rules(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const;
  void check_interface_version(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const;
  void check_chained_buffers(const BodyRule &b, std::span<const uint8_t> body, Findings &f) const;
};

} // namespace anec::fw
