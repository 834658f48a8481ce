// The operation catalogue (tables/schema/ops.toml): per operation its engine unit, family floor,
// capability gates, validator rules, cost form and code-generation floor.
#pragma once
#include "anec/support/doc.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace anec::compiler {

struct Gate {
  std::string field;     // a target-table capability field that must be nonzero
  bool reject = false;   // without it: reject (true) or decompose (false)
  std::string with;      // what it decomposes into
};

struct OpSpec {
  std::string name, unit, cost, source;
  std::optional<int> floor;          // minimum family index (F0 -> 0, F2 -> 2, F3 -> 3, F4 -> 4); none: no engine path
  std::optional<int> codegen_floor;  // below it the validator accepts and code generation rejects
  std::vector<Gate> gates;
  std::vector<std::string> rules;
  std::string decompose_with;        // below the floor
};

class OpCatalog {
public:
  // Strict (ANEC-OPS-001 with line:column): unknown keys, unknown rule or cost names, duplicates.
  static OpCatalog from_doc(const Doc &doc, const std::string &source);
  static OpCatalog load(const std::filesystem::path &path);
  const OpSpec *find(const std::string &name) const;
  const std::map<std::string, OpSpec> &ops() const { return ops_; }

private:
  std::map<std::string, OpSpec> ops_;
};

// The rule and cost names the checker and the cost model implement.
const std::vector<std::string> &known_rules();
const std::vector<std::string> &known_costs();

} // namespace anec::compiler
