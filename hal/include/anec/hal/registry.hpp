// Target lookup by canonical name or alias, case-insensitively, with suggestions for typos.
#pragma once
#include "anec/hal/reference.hpp"
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace anec::hal {

// Lower case; spaces and underscores become '-' ("M1 Pro" -> "m1-pro").
std::string normalize_name(std::string_view name);

class Registry {
public:
  explicit Registry(std::vector<Target> targets);
  // Loads tables/targets/<name>.toml for every target of the line-up, in line-up order.
  static Registry load(const Schema &schema, const Lineup &lineup, const std::filesystem::path &targets_dir);

  const Target *find(std::string_view name_or_alias) const;
  // ANEC-HAL-006 "unknown target 'x'; closest: ..." when nothing matches.
  const Target &get(std::string_view name_or_alias) const;
  std::vector<std::string> closest(std::string_view name, size_t n = 3) const;
  const std::vector<Target> &targets() const { return targets_; }

private:
  std::vector<Target> targets_;
};

// The small index `anec-hal generate` writes beside the tables (targets/index.tsv), for tools that
// need one fact of a target without loading all 28 tables: per target its name, its published hwx
// cpusubtype (none when a placeholder) and its descriptor generation.
struct IndexEntry {
  std::string name;
  std::optional<uint64_t> cpusubtype;
  uint64_t td_generation = 0;
};
std::string index_text(const std::vector<Target> &targets);
// ANEC-HAL-009 when the file is missing or malformed (regenerate with anec-hal generate).
std::vector<IndexEntry> load_index(const std::filesystem::path &targets_dir);

} // namespace anec::hal
