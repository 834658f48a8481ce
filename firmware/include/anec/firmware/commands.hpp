// The host-to-firmware command table (tables/schema/firmware/commands.toml): the 93 logger-index
// commands, the wire-enum families, the execution-loop ids, header limits and body layouts.
#pragma once
#include "anec/support/doc.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace anec::fw {

struct CommandSpec {
  uint32_t id = 0;
  std::string name, direction, subsystem, purpose; // direction: host-to-firmware, firmware-to-host, both
};

struct FieldSpec {
  std::string name, type; // u32, i32, u64
  std::optional<uint64_t> equals, min, max;
  bool nonzero = false;
  size_t bytes() const { return type == "u64" ? 8 : 4; }
};

// A record type of an array: event (24 bytes), bar (16), buffer (16), order (4).
struct RecordSpec {
  std::string name;
  std::vector<FieldSpec> fields;
  size_t bytes() const;
};
const RecordSpec *record_spec(const std::string &name);

struct ArraySpec {
  std::string name, count, record; // count: the scalar holding the record count
};

struct BodySpec {
  std::string command, layout, source;
  std::vector<FieldSpec> scalars;
  std::vector<ArraySpec> arrays;
  std::vector<std::string> rules; // events_nonempty, chained_buffers, interface_version
};

struct Family {
  uint32_t first = 0, last = 0;
  std::string name;
};

class WireRules; // anec/firmware/wire_rules.hpp

struct Limits {
  uint32_t priority_max = 7, program_id_max = 143, procedure_id_max = 287, max_command_bytes = 4096;
  uint32_t interface_major = 1, interface_minor = 0;
};

class CommandTable {
public:
  // Strict (ANEC-FWT-001 with line:column): unknown keys, duplicate ids or names, a body naming no
  // command, an array counted by no scalar, an unknown record type or rule.
  static CommandTable from_doc(const Doc &doc, const std::string &source);
  static CommandTable load(const std::filesystem::path &path);

  const CommandSpec *by_id(uint32_t id) const;
  const CommandSpec *by_name(const std::string &name) const;
  const BodySpec *body(const std::string &command) const;
  const BodySpec *body_by_id(uint32_t id) const; // by the index built at load: no name compare
  bool exeloop_accepts(uint32_t wire_id) const;
  const std::vector<CommandSpec> &commands() const { return commands_; }
  const std::vector<Family> &families() const { return families_; }
  const std::vector<std::pair<uint32_t, std::string>> &exeloop() const { return exeloop_; }
  const Limits &limits() const { return limits_; }
  const WireRules &rules() const { return *rules_; } // compiled at load with the wire layouts

private:
  std::vector<CommandSpec> commands_;
  std::vector<BodySpec> bodies_;
  std::vector<Family> families_;
  std::vector<std::pair<uint32_t, std::string>> exeloop_;
  Limits limits_;
  std::vector<int> by_id_, body_by_id_; // id -> command index, id -> body index (-1: none)
  std::shared_ptr<const WireRules> rules_; // holds copies of what it needs: a copied table shares it
  CommandTable() = default;
  void index();
};

} // namespace anec::fw
