// Validation of a graph against one target's tables: every op native, decomposed (with what) or
// rejected, each finding with a reason code, the offending value, the limit, where the limit
// comes from and a fix where one exists; padding, group/core and working-set warnings; the
// direct-path pitfall scan (seed ch.19). Everything is keyed on target-table fields.
#pragma once
#include "anec/compiler/graph.hpp"
#include "anec/hal/target.hpp"

#include <string>
#include <vector>

namespace anec::compiler {

enum class Verdict { Native, Decompose, Reject };
const char *verdict_name(Verdict v); // "native", "decompose", "reject"

enum class Severity { Reject, Decompose, Warn };
const char *severity_name(Severity s); // "reject", "decompose", "warn"

struct Finding {
  std::string op;      // op name, or "" for a graph-level finding
  std::string code;    // ANEC-CHK-nnn
  Severity severity = Severity::Warn;
  std::string message; // what is wrong
  std::string value;   // the offending value
  std::string limit;   // the limit it breaks, "" when none
  std::string limit_field, confidence; // the target-table field and its provenance
  std::string fix;     // what to change, "" when nothing helps
};

struct OpVerdict {
  std::string op, type;
  Verdict verdict = Verdict::Native;
  std::string decompose_with;
};

struct CheckResult {
  std::string target;
  Verdict verdict = Verdict::Native; // reject if any op rejects, decompose if any decomposes
  std::vector<OpVerdict> ops;
  std::vector<Finding> findings;
  size_t count(Severity s) const;
};

CheckResult check(const Graph &g, const OpCatalog &catalog, const hal::Target &target);

} // namespace anec::compiler
