#include "anec/compiler/pipeline/context.hpp"

namespace anec::compiler {

const std::vector<Chip> &ModelContext::chips() const {
  if (!chips_)
    chips_ = load_chips(tables / "reference" / "chips.toml",
                        [this](std::string_view t) { return target_tables_.known(t); });
  return *chips_;
}

std::vector<const hal::Target *> ModelContext::targets(const std::string &which, std::string *chip) const {
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

Calibration ModelContext::calibration(const std::string &file) const {
  return Calibration::load(file.empty() ? tables / "calibration" / "fitted.toml"
                                        : std::filesystem::path(file));
}

std::vector<Placement> ModelContext::place(const Graph &g, const std::vector<const hal::Target *> &targets,
                                           const std::vector<CheckResult> &checks,
                                           const std::vector<Estimate> &estimates) const {
  std::vector<Placement> out;
  for (size_t i = 0; i < targets.size(); ++i)
    out.push_back(compiler::place(g, catalog, *targets[i], checks[i], estimates[i]));
  return out;
}

} // namespace anec::compiler
