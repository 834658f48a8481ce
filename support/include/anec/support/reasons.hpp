// The catalogue of reason codes (tables/schema/reasons.toml): every code any tool reports, once,
// with its severity, a title, what it means and what to do about it. `anec explain CODE` prints an
// entry; docs/reasons.md is rendered from the catalogue.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace anec {

struct Reason {
  std::string code, severity, title, meaning, fix;
};

struct ReasonArea {
  std::string prefix, title;
};

class ReasonCatalog {
public:
  // Strict: unknown keys, duplicate codes or prefixes, a code without its area's entry or out of
  // order, a severity outside error|verdict|finding|warning are ANEC-RSN-001.
  static ReasonCatalog load(const std::filesystem::path &file);

  const std::vector<Reason> &reasons() const { return reasons_; }
  const std::vector<ReasonArea> &areas() const { return areas_; }
  const Reason *find(const std::string &code) const;
  // The entry as text (for `explain`); ANEC-RSN-002 for a code not in the catalogue, naming the
  // closest codes.
  std::string explain(const std::string &code) const;
  // The whole catalogue as a Markdown page, one table per area.
  std::string markdown() const;

private:
  std::vector<Reason> reasons_;
  std::vector<ReasonArea> areas_;
};

} // namespace anec
