// What the model commands read from the tables — the schema, the operation catalogue, the target
// tables (each read when it is first asked for), the chip line-up and the calibration — shared by
// the anec tool and the Python module (python/), so that both resolve --target alike.
#pragma once
#include "anec/compiler/cost/calibration.hpp"
#include "anec/compiler/ir/ops.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/hal/registry.hpp"
#include "anec/hal/schema.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace anec::compiler {

class ModelContext {
public:
  std::filesystem::path tables;
  hal::Schema schema;
  OpCatalog catalog;

  explicit ModelContext(const std::filesystem::path &t)
      : tables(t), schema(hal::Schema::load(t / "schema" / "hal.toml")),
        catalog(OpCatalog::load(t / "schema" / "ops.toml")), target_tables_(schema, t) {}
  ModelContext(const ModelContext &) = delete; // the target tables refer to `schema`
  ModelContext &operator=(const ModelContext &) = delete;

  const hal::Registry &registry() const { return target_tables_.all(); }
  const hal::Target &target(const std::string &name_or_alias) const {
    return target_tables_.get(name_or_alias);
  }
  const std::vector<Chip> &chips() const;

  // --target: "all", a target, a chip or a model identifier (then `chip` names the chip).
  std::vector<const hal::Target *> targets(const std::string &which, std::string *chip = nullptr) const;

  // The calibration in `file`, or the shipped one when it is empty.
  Calibration calibration(const std::string &file) const;

  // Each target's placement, from its check and its estimate (the analytic one: only `estimate`
  // calibrates).
  std::vector<Placement> place(const Graph &g, const std::vector<const hal::Target *> &targets,
                               const std::vector<CheckResult> &checks,
                               const std::vector<Estimate> &estimates) const;

private:
  mutable hal::TargetTables target_tables_; // loads as it is asked: a cache, not state
  mutable std::optional<std::vector<Chip>> chips_;
};

} // namespace anec::compiler
