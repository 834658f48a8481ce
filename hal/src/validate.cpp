#include "anec/hal/validate.hpp"

#include <algorithm>
#include <regex>

namespace anec::hal {

namespace {
std::optional<double> numeric(const Value &v) {
  if (auto *u = std::get_if<uint64_t>(&v)) return double(*u);
  if (auto *d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}
} // namespace

std::vector<Finding> validate_target(const Schema &schema, const Lineup &lineup, const Target &t) {
  std::vector<Finding> out;
  auto add = [&](const char *code, const std::string &field, const std::string &msg) {
    out.push_back(finding_about(code, t.name, field, msg, Severity::Error));
  };
  for (const Field &f : schema.fields()) {
    const Entry *e = t.find(f.name);
    if (!e) {
      if (!f.synthesized)
        add("ANEC-HAL-100", f.name, "no value (a value nobody published is written as a placeholder)");
      continue;
    }
    auto n = numeric(e->value);
    if (n && f.min && *n < *f.min)
      add("ANEC-HAL-101", f.name,
          "value " + format_value(f, e->value) + " is below the minimum " + format_value(f, *f.min));
    if (n && f.max && *n > *f.max)
      add("ANEC-HAL-101", f.name,
          "value " + format_value(f, e->value) + " is above the maximum " + format_value(f, *f.max));
  }
  auto u = [&](const char *k) -> std::optional<uint64_t> {
    const Entry *e = t.find(k);
    if (!e || !std::holds_alternative<uint64_t>(e->value)) return std::nullopt;
    return std::get<uint64_t>(e->value);
  };

  // Suffix letter vs core count, guide ch.34: base 4, g 8, s 16, c 32, d 64 on the H line.
  static const std::regex hline("^h[0-9]+([a-z]?)$");
  std::smatch m;
  if (std::regex_match(t.name, m, hline) && u("num_nes")) {
    std::string suffix = m[1].length() ? m[1].str() : "base";
    auto it = lineup.suffix_cores.find(suffix);
    if (it == lineup.suffix_cores.end())
      add("ANEC-HAL-102", "num_nes", "suffix '" + suffix + "' has no core count in the line-up");
    else if (*u("num_nes") != it->second)
      add("ANEC-HAL-102", "num_nes", "suffix '" + suffix + "' selects " + std::to_string(it->second) +
                                         " NE cores, the table says " + std::to_string(*u("num_nes")));
  }
  if (auto n = u("num_nes"); n && *n && (*n & (*n - 1)))
    add("ANEC-HAL-109", "num_nes", "core count " + std::to_string(*n) + " is not a power of two");

  // Family vs hardware version, guide ch.35 table 35.1.
  auto hw = u("hardware_version"), fam = u("family_index");
  if (hw && fam && *hw) {
    auto it = lineup.hardware_version_family.find(*hw);
    if (it == lineup.hardware_version_family.end())
      add("ANEC-HAL-103", "hardware_version",
          "hardware version " + std::to_string(*hw) + " is not in ANEFamilyToMLIR");
    else if (it->second != *fam)
      add("ANEC-HAL-103", "family_index",
          "hardware version " + std::to_string(*hw) + " maps to family " + std::to_string(it->second) +
              ", the table says " + std::to_string(*fam));
  }
  if (const Entry *fn = t.find("family"); fn && fam && std::holds_alternative<std::string>(fn->value)) {
    const std::string &name = std::get<std::string>(fn->value);
    if (*fam >= lineup.families.size() || lineup.families[*fam] != name)
      add("ANEC-HAL-103", "family",
          "family '" + name + "' does not match family index " + std::to_string(*fam));
  }

  // Capability vs family floor, guide ch.24 table 24.2.
  for (const Field &f : schema.fields()) {
    if (!f.floor || !fam) continue;
    const Entry *e = t.find(f.name);
    if (e && std::holds_alternative<uint64_t>(e->value) && (std::get<uint64_t>(e->value) & 1) &&
        int(*fam) < *f.floor)
      add("ANEC-HAL-104", f.name, "capability set on family " + std::to_string(*fam) + ", below its floor " +
                                      std::to_string(*f.floor));
  }

  // Interchange-format count (in the blob) vs the tag list (outside it), guide ch.34.
  if (const Entry *l = t.find("interchange_formats"); l && u("interchange_format_count")) {
    auto &tags = std::get<std::vector<std::string>>(l->value);
    if (tags.size() != *u("interchange_format_count"))
      add("ANEC-HAL-105", "interchange_formats",
          std::to_string(tags.size()) + " tags listed, the map holds " +
              std::to_string(*u("interchange_format_count")));
    for (auto &tag : tags)
      if (tag.size() != 4 && (tag.empty() || tag[0] != '?'))
        add("ANEC-HAL-108", "interchange_formats",
            "tag \"" + tag + "\" is not a four-character code or ?name");
    // The map keeps its keys ordered: the list is written in that (byte) order.
    if (!std::is_sorted(tags.begin(), tags.end()))
      add("ANEC-HAL-110", "interchange_formats", "tags are not in map (byte) order");
  }
  if (auto lo = u("clock_min_mhz"), hi = u("clock_max_mhz"); lo && hi && *lo > *hi)
    add("ANEC-HAL-106", "clock_min_mhz",
        "clock range " + std::to_string(*lo) + ".." + std::to_string(*hi) + " MHz is reversed");
  return out;
}

std::vector<Finding> validate_line(const Schema &schema, const std::vector<Target> &targets) {
  std::vector<const Target *> line;
  for (auto &t : targets)
    if (t.find("generation_tag") && std::get<uint64_t>(t.find("generation_tag")->value) != 0)
      line.push_back(&t);
  std::stable_sort(line.begin(), line.end(), [](auto *a, auto *b) {
    return std::get<uint64_t>(a->find("generation_tag")->value) <
           std::get<uint64_t>(b->find("generation_tag")->value);
  });
  std::vector<Finding> out;
  for (const Field &f : schema.fields()) {
    if (!f.monotone) continue;
    for (size_t i = 0; i < line.size(); ++i) {
      const Entry *later = line[i]->find(f.name);
      if (!later) continue;
      uint64_t gen = std::get<uint64_t>(line[i]->find("generation_tag")->value);
      for (size_t j = 0; j < i; ++j) {
        const Entry *earlier = line[j]->find(f.name);
        if (!earlier || std::get<uint64_t>(line[j]->find("generation_tag")->value) == gen) continue;
        auto a = numeric(earlier->value), b = numeric(later->value);
        if (a && b && *b < *a) {
          out.push_back(finding_about("ANEC-HAL-107", line[i]->name, f.name,
                                      format_value(f, later->value) + " is below " +
                                          format_value(f, earlier->value) + " on " + line[j]->name +
                                          ", an earlier generation",
                                      Severity::Error));
          break;
        }
      }
    }
  }
  return out;
}

} // namespace anec::hal
