// Target lookup by canonical name or alias, case-insensitively, with suggestions for typos.
#pragma once
#include "anec/hal/reference.hpp"
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"

#include <filesystem>
#include <memory>
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
  // The n names nearest `name` by edit distance; none for a name longer than kLongestName.
  std::vector<std::string> closest(std::string_view name, size_t n = 3) const;
  static constexpr size_t kLongestName = 64; // a longer name is quoted as an excerpt
  const std::vector<Target> &targets() const { return targets_; }

private:
  std::vector<Target> targets_;
};

// The small index `anec-hal generate` writes beside the tables (targets/index.tsv), for tools that
// need one fact of a target, or one target, without loading all 28 tables: per target its name, its
// published hwx cpusubtype (none when a placeholder), its descriptor generation and its aliases.
struct IndexEntry {
  std::string name;
  std::optional<uint64_t> cpusubtype;
  uint64_t td_generation = 0;
  std::vector<std::string> aliases;
};
std::string index_text(const std::vector<Target> &targets);
// ANEC-HAL-009 when the file is missing or malformed (regenerate with anec-hal generate).
std::vector<IndexEntry> load_index(const std::filesystem::path &targets_dir);
// The descriptor generation of the targets whose hwx cpusubtype is `subtype`, from the index alone.
// ANEC-DESC-003 when no target has it or targets of several generations share it.
int generation_of_subtype(const std::filesystem::path &targets_dir, uint64_t subtype);
// The entry whose name or alias is `name_or_alias`, matched as Registry::find matches, or null.
const IndexEntry *find_indexed(const std::vector<IndexEntry> &index, std::string_view name_or_alias);

// The target tables a tool asks for, each loaded on first use: a name or alias the index knows
// loads that one table; `all()` (and a name the index does not know, for the error and its
// suggestions) loads the line-up. Without an index every lookup loads the line-up. Not safe to
// call from several threads while it loads.
class TargetTables {
public:
  TargetTables(const Schema &schema, std::filesystem::path tables_dir);
  const Target &get(std::string_view name_or_alias); // ANEC-HAL-006 as Registry::get
  bool known(std::string_view name_or_alias);
  const Registry &all();

private:
  const Schema &schema_;
  std::filesystem::path tables_;
  std::optional<std::vector<IndexEntry>> index_; // empty when the index cannot be read
  std::vector<std::unique_ptr<Target>> loaded_;
  std::optional<Registry> all_;
};

} // namespace anec::hal
