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
  const std::vector<Chip> &chips() const {
    if (!chips_)
      chips_ = load_chips(tables / "reference" / "chips.toml",
                          [this](std::string_view t) { return target_tables_.known(t); });
    return *chips_;
  }
  // --target: "all", a target, a chip or a model identifier (then `chip` names the chip).
  std::vector<const hal::Target *> targets(const std::string &which, std::string *chip = nullptr) const {
    std::vector<const hal::Target *> out;
    if (which == "all") {
      for (const hal::Target &t : registry().targets())
        out.push_back(&t);
    } else if (const Chip *c = find_chip(chips(), which)) {
      out.push_back(&target_tables_.get(c->target));
      if (chip)
        *chip = c->name;
    } else {
      out.push_back(&target_tables_.get(which));
    }
    return out;
  }
  // The calibration in `file`, or the shipped one when it is empty.
  Calibration calibration(const std::string &file) const {
    return Calibration::load(file.empty() ? tables / "calibration" / "fitted.toml"
                                          : std::filesystem::path(file));
  }

  // Each target's placement, from its check and its estimate (the analytic one: only `estimate`
  // calibrates).
  std::vector<Placement> place(const Graph &g, const std::vector<const hal::Target *> &targets,
                               const std::vector<CheckResult> &checks,
                               const std::vector<Estimate> &estimates) const {
    std::vector<Placement> out;
    for (size_t i = 0; i < targets.size(); ++i)
      out.push_back(compiler::place(g, catalog, *targets[i], checks[i], estimates[i]));
    return out;
  }

private:
  mutable hal::TargetTables target_tables_; // loads as it is asked: a cache, not state
  mutable std::optional<std::vector<Chip>> chips_;
};

} // namespace anec::compiler
