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

namespace anec::tools {

class ModelContext {
public:
  std::filesystem::path tables;
  hal::Schema schema;
  compiler::OpCatalog catalog;

  explicit ModelContext(const std::filesystem::path &t)
      : tables(t), schema(hal::Schema::load(t / "schema" / "hal.toml")),
        catalog(compiler::OpCatalog::load(t / "schema" / "ops.toml")), target_tables_(schema, t) {}
  ModelContext(const ModelContext &) = delete; // the target tables refer to `schema`
  ModelContext &operator=(const ModelContext &) = delete;

  const hal::Registry &registry() const { return target_tables_.all(); }
  const hal::Target &target(const std::string &name_or_alias) const {
    return target_tables_.get(name_or_alias);
  }
  const std::vector<compiler::Chip> &chips() const {
    if (!chips_)
      chips_ = compiler::load_chips(tables / "reference" / "chips.toml",
                                    [this](std::string_view t) { return target_tables_.known(t); });
    return *chips_;
  }
  // --target: "all", a target, a chip or a model identifier (then `chip` names the chip).
  std::vector<const hal::Target *> targets(const std::string &which, std::string *chip = nullptr) const {
    std::vector<const hal::Target *> out;
    if (which == "all") {
      for (const hal::Target &t : registry().targets())
        out.push_back(&t);
    } else if (const compiler::Chip *c = compiler::find_chip(chips(), which)) {
      out.push_back(&target_tables_.get(c->target));
      if (chip)
        *chip = c->name;
    } else {
      out.push_back(&target_tables_.get(which));
    }
    return out;
  }
  // The calibration in `file`, or the shipped one when it is empty.
  compiler::Calibration calibration(const std::string &file) const {
    return compiler::Calibration::load(file.empty() ? tables / "calibration" / "fitted.toml"
                                                    : std::filesystem::path(file));
  }

  // Each target's placement, from its check and its estimate (the analytic one: only `estimate`
  // calibrates).
  std::vector<compiler::Placement> place(const compiler::Graph &g,
                                         const std::vector<const hal::Target *> &targets,
                                         const std::vector<compiler::CheckResult> &checks,
                                         const std::vector<compiler::Estimate> &estimates) const {
    std::vector<compiler::Placement> out;
    for (size_t i = 0; i < targets.size(); ++i)
      out.push_back(compiler::place(g, catalog, *targets[i], checks[i], estimates[i]));
    return out;
  }

private:
  mutable hal::TargetTables target_tables_; // loads as it is asked: a cache, not state
  mutable std::optional<std::vector<compiler::Chip>> chips_;
};

} // namespace anec::tools
