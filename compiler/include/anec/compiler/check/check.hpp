// Validation of a graph against one target's tables: every op native, decomposed (with what) or
// rejected, each finding with a reason code, the offending value, the limit, where the limit
// comes from and a fix where one exists; padding, group/core and working-set warnings; the
// direct-path pitfall scan (seed ch.19). Everything is keyed on target-table fields.
#pragma once
#include "anec/compiler/check/wire.hpp"
#include "anec/compiler/ir/detail.hpp"
#include "anec/compiler/ir/graph.hpp"
#include "anec/hal/target.hpp"
#include "anec/support/diagnostic.hpp"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace anec::compiler {

enum class Verdict { Native, Decompose, Reject };
const char *verdict_name(Verdict v); // "native", "decompose", "reject"

// A check's finding (support/diagnostic.hpp): severity reject, decompose or warn; the operation's
// name as the object ("" for a graph-level finding); the offending value, the limit, the target-table
// field the limit comes from and its confidence, and the fix.
using Finding = Diagnostic;

struct OpVerdict {
  std::string op, type;
  Verdict verdict = Verdict::Native;
  std::string decompose_with;
};

struct CheckResult {
  std::string target;
  Verdict verdict = Verdict::Native; // reject if any op rejects, decompose if any decomposes
  std::vector<OpVerdict> ops;        // empty in a summary
  std::vector<Finding> findings;     // empty in a summary
  std::array<size_t, 5> counts{};    // findings by severity, in a summary too
  Wire wire;                         // the inputs and outputs on the engine; empty in a summary
  size_t count(Severity s) const { return counts[size_t(s)]; }
};

CheckResult check(const Graph &g, const OpCatalog &catalog, const hal::Target &target);
// The same on several targets at once (--target all): what does not depend on the target (operand
// lookups, catalogue entries, rule lists) is worked out once per op for all of them.
std::vector<CheckResult> check(const Graph &g, const OpCatalog &catalog,
                               const std::vector<const hal::Target *> &targets, Detail detail = Detail::Full);

// The same one op at a time, for a graph read op by op (GraphReader): add() each op once the graph
// holds its tensors with their shapes; finish() gives the results.
class GraphCheck {
public:
  GraphCheck(const Graph &g, const OpCatalog &catalog, const std::vector<const hal::Target *> &targets,
             Detail detail = Detail::Full);
  ~GraphCheck();
  // `weight`: the op's embedded weight bytes when the caller has worked them out (its cost row's),
  // else they are worked out here (weight_bytes).
  void add(const Op &op, const OpTensors &tensors, std::optional<double> weight = std::nullopt);
  // The result on targets[k] so far: its rows (ops, findings) a caller that prints them as they come
  // may take and clear.
  CheckResult &partial(size_t k);
  std::vector<CheckResult> finish();

private:
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace anec::compiler
