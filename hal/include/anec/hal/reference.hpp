// The published per-target facts (tables/reference): tiers and targets with inheritance, the
// line-up (target order, family map, suffix rule) and the cost-model derivation for targets that
// were not measured (guide ch.18).
#pragma once
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace anec::hal {

struct Lineup {
  std::vector<std::string> targets;  // canonical order of the 28 targets
  std::vector<std::string> families; // family enum names by index
  std::map<uint64_t, uint64_t> hardware_version_family;
  std::map<std::string, uint64_t> suffix_cores; // "base", "g", "s", ...
  Provenance derivation;                        // provenance given to derived cost parameters
};

Lineup load_lineup(const std::filesystem::path &path);

// Resolves every target of the line-up from reference_dir/targets/<name>.toml and its tiers, adds
// the calibrated cost-model rates `anec calibrate` wrote (the `targets` table of
// reference_dir/../calibration/fitted.toml, when it exists), derives the analytic cost parameters of
// unmeasured targets from their anchor, and completes every field the reference does not publish
// with a zero placeholder. Errors: ANEC-REF-001.
std::vector<Target> load_reference(const Schema &schema, const Lineup &lineup,
                                   const std::filesystem::path &reference_dir);

} // namespace anec::hal
