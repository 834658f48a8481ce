#include "anec/hal/registry.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"

#include "anec/hal/target_io.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace anec::hal {

std::string normalize_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ' ' || c == '_')
      out += '-';
    else
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

namespace {
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
} // namespace

Registry::Registry(std::vector<Target> targets) : targets_(std::move(targets)) {}

namespace {
// tables/targets/<name>.toml, which must define `name` (ANEC-HAL-008).
Target load_named(const Schema &schema, const std::filesystem::path &dir, const std::string &name) {
  auto p = dir / (name + ".toml");
  if (!std::filesystem::exists(p))
    throw Error("ANEC-HAL-008", "target table " + p.string() + " is missing; run `anec-hal generate`");
  Target t = load_target(schema, p);
  if (t.name != name)
    throw Error("ANEC-HAL-008", p.string() + " defines '" + t.name + "', expected '" + name + "'");
  return t;
}
} // namespace

Registry Registry::load(const Schema &schema, const Lineup &lineup, const std::filesystem::path &dir) {
  std::vector<Target> ts;
  for (const std::string &name : lineup.targets)
    ts.push_back(load_named(schema, dir, name));
  return Registry(std::move(ts));
}

const Target *Registry::find(std::string_view name) const {
  if (name.size() > kLongestName) // no target or alias is that long
    return nullptr;
  std::string n = normalize_name(name);
  for (auto &t : targets_) {
    if (t.name == n) return &t;
    for (auto &a : t.aliases)
      if (normalize_name(a) == n) return &t;
  }
  return nullptr;
}

std::vector<std::string> Registry::closest(std::string_view name, size_t n) const {
  if (name.size() > kLongestName) // none is near it, and the distance would cost its length squared
    return {};
  std::string q = normalize_name(name);
  std::vector<std::pair<size_t, std::string>> scored;
  for (auto &t : targets_) {
    size_t d = edit_distance(q, t.name);
    for (auto &a : t.aliases) d = std::min(d, edit_distance(q, normalize_name(a)));
    scored.push_back({d, t.name});
  }
  std::stable_sort(scored.begin(), scored.end(), [](auto &a, auto &b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(scored[i].second);
  return out;
}

const Target &Registry::get(std::string_view name) const {
  if (const Target *t = find(name)) return *t;
  std::string msg = "unknown target '" + excerpt(name, kLongestName) + "'";
  std::vector<std::string> near = closest(name);
  if (!near.empty())
    msg += "; closest:";
  for (auto &c : near)
    msg += " " + c;
  throw Error("ANEC-HAL-006", msg);
}

std::string index_text(const std::vector<Target> &targets) {
  std::string out = "# Written by anec-hal generate: target, hwx cpusubtype (- when not published), "
                    "descriptor generation, aliases (comma-separated, - when none).\n";
  for (const Target &t : targets) {
    const Entry *sub = t.find("cpusubtype");
    bool known = sub && sub->provenance.confidence != Confidence::Placeholder;
    std::string aliases;
    for (const std::string &a : t.aliases)
      aliases += (aliases.empty() ? "" : ",") + a;
    out += t.name + "\t" + (known ? std::to_string(t.uint("cpusubtype")) : "-") + "\t" +
           std::to_string(t.uint("td_generation")) + "\t" + (aliases.empty() ? "-" : aliases) + "\n";
  }
  return out;
}

std::vector<IndexEntry> load_index(const std::filesystem::path &targets_dir) {
  std::filesystem::path path = targets_dir / "index.tsv";
  std::string text;
  try {
    text = read_text_file(path, 1 << 20);
  } catch (const Error &e) {
    throw Error("ANEC-HAL-009", path.string() + ": " + e.what() + " (regenerate it with anec-hal generate)");
  }
  std::vector<IndexEntry> out;
  size_t line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> f = split(line, '\t');
    auto bad = [&] {
      return Error("ANEC-HAL-009",
                   path.string() + ":" + std::to_string(line_no) +
                       ": not 'name<TAB>cpusubtype<TAB>generation<TAB>aliases': " + std::string(line));
    };
    if (f.size() != 4)
      throw bad();
    IndexEntry e;
    e.name = f[0];
    if (f[3] != "-")
      for (std::string_view a : split(f[3], ','))
        e.aliases.emplace_back(a);
    try {
      if (f[1] != "-") e.cpusubtype = std::stoull(std::string(f[1]));
      e.td_generation = std::stoull(std::string(f[2]));
    } catch (const std::exception &) {
      throw bad();
    }
    out.push_back(std::move(e));
  }
  return out;
}

int generation_of_subtype(const std::filesystem::path &targets_dir, uint64_t subtype) {
  std::set<uint64_t> generations;
  std::string names;
  for (const IndexEntry &t : hal::load_index(targets_dir)) {
    if (t.cpusubtype != subtype)
      continue;
    generations.insert(t.td_generation);
    names += (names.empty() ? "" : ", ") + t.name;
  }
  if (generations.size() != 1)
    throw Error("ANEC-DESC-003",
                "cpusubtype " + hex(subtype) +
                    (names.empty() ? " is no target's"
                                   : " is shared by targets of several generations (" + names + ")") +
                    "; pass --generation N");
  return int(*generations.begin());
}

const IndexEntry *find_indexed(const std::vector<IndexEntry> &index, std::string_view name) {
  std::string n = normalize_name(name);
  for (const IndexEntry &e : index) {
    if (e.name == n)
      return &e;
    for (const std::string &a : e.aliases)
      if (normalize_name(a) == n)
        return &e;
  }
  return nullptr;
}

TargetTables::TargetTables(const Schema &schema, std::filesystem::path tables_dir)
    : schema_(schema), tables_(std::move(tables_dir)) {
  try {
    index_ = load_index(tables_ / "targets");
  } catch (const Error &) {
    index_.reset(); // no index: every lookup loads the line-up, which says what is wrong with the tables
  }
}

const Registry &TargetTables::all() {
  if (!all_)
    all_ = Registry::load(schema_, load_lineup(tables_ / "reference" / "lineup.toml"), tables_ / "targets");
  return *all_;
}

bool TargetTables::known(std::string_view name) {
  return index_ ? find_indexed(*index_, name) != nullptr : all().find(name) != nullptr;
}

const Target &TargetTables::get(std::string_view name) {
  const IndexEntry *e = index_ && !all_ ? find_indexed(*index_, name) : nullptr;
  if (!e)
    return all().get(name);
  for (const auto &t : loaded_)
    if (t->name == e->name)
      return *t;
  loaded_.push_back(std::make_unique<Target>(load_named(schema_, tables_ / "targets", e->name)));
  return *loaded_.back();
}

} // namespace anec::hal
