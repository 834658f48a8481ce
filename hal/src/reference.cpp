#include "anec/hal/reference.hpp"

#include "anec/hal/target_io.hpp"
#include "anec/support/toml.hpp"
#include "anec/support/strict.hpp"

#include <set>

namespace anec::hal {
using anec::detail::Strict;
namespace fs = std::filesystem;

namespace {
constexpr const char *kCode = "ANEC-REF-001";

uint64_t nonneg(Strict &r, const Doc &d) {
  if (!d.is(Doc::Kind::Int) || d.as_int() < 0) r.fail(d, "expected a non-negative integer");
  return uint64_t(d.as_int());
}

struct Layer {
  std::string kind, name, inherits;
  std::vector<std::string> aliases;
  std::map<std::string, Entry, std::less<>> values;
};

std::map<std::string, Entry, std::less<>> read_values(const Schema &schema, const Doc &vals,
                                                      const std::string &src);

Layer read_layer(const Schema &schema, const fs::path &path) {
  std::string src = path.string();
  Doc doc = toml::parse_file(path);
  Strict top(doc, src, kCode, "reference file");
  Layer l;
  const Doc &k = top.req("kind", Doc::Kind::String);
  l.kind = k.as_string();
  if (l.kind != "base" && l.kind != "tier" && l.kind != "target")
    top.fail(k, "kind must be base, tier or target");
  if (auto *d = top.opt("inherits", Doc::Kind::String)) l.inherits = d->as_string();
  if (l.kind != "base" && l.inherits.empty())
    top.fail(doc, "a " + l.kind + " must name the tier it inherits");
  if (l.kind == "target") {
    l.name = top.req("name", Doc::Kind::String).as_string();
    for (auto &a : top.req("aliases", Doc::Kind::Array).items()) {
      if (!a.is(Doc::Kind::String)) top.fail(a, "aliases must be strings");
      l.aliases.push_back(a.as_string());
    }
  }
  l.values = read_values(schema, top.req("values", Doc::Kind::Table), src);
  top.finish();
  return l;
}

// A table of field = { value, source, confidence } entries (a layer's `values`, a calibration's
// per-target table).
std::map<std::string, Entry, std::less<>> read_values(const Schema &schema, const Doc &vals,
                                                      const std::string &src) {
  Strict top(vals, src, kCode, "values");
  std::map<std::string, Entry, std::less<>> out;
  for (const DocMember &m : vals.members()) {
    const Field *f = schema.find(m.key);
    if (!f || f->synthesized) top.fail(m.value, "'" + m.key + "' is not a field of the schema");
    Strict e(m.value, src, kCode, "values." + m.key);
    Entry entry;
    entry.value = value_from_doc(*f, e.req_any("value"), src);
    entry.provenance.source = e.req("source", Doc::Kind::String).as_string();
    const Doc &cd = e.req("confidence", Doc::Kind::String);
    auto c = parse_confidence(cd.as_string());
    if (!c) e.fail(cd, "unknown confidence '" + cd.as_string() + "'");
    entry.provenance.confidence = *c;
    e.finish();
    out[m.key] = std::move(entry);
  }
  return out;
}

// A value inherited across a layer boundary keeps its confidence only as far as it holds:
// line-wide (base) facts hold everywhere; a tier's decoded facts hold for the tier's own targets;
// a measured value holds only on the target it was measured on, and a value carried from one tier
// into another is an inference.
void carry(Entry &e, const Layer &from, const Layer &to) {
  Confidence &c = e.provenance.confidence;
  bool downgrade = c == Confidence::Measured || (to.kind == "tier" && c == Confidence::Decoded);
  if (!downgrade) return;
  c = Confidence::Inferred;
  std::string note = "; carried from tier " + from.name;
  if (e.provenance.source.find("; carried from") == std::string::npos) e.provenance.source += note;
}

struct Resolved {
  std::map<std::string, Entry, std::less<>> values;
  std::set<std::string> line_wide; // keys whose value still comes from the base layer
};

Resolved resolve(const Schema &schema, const fs::path &dir, const Layer &layer, std::set<std::string> &seen) {
  if (layer.inherits.empty()) {
    Resolved r{layer.values, {}};
    if (layer.kind == "base")
      for (auto &[k, e] : layer.values) r.line_wide.insert(k);
    return r;
  }
  if (!seen.insert(layer.inherits).second)
    throw Error(kCode, "inheritance cycle through tier '" + layer.inherits + "'");
  fs::path parent_path = dir / "tiers" / (layer.inherits + ".toml");
  if (!fs::exists(parent_path))
    throw Error(kCode, "tier '" + layer.inherits + "' not found at " + parent_path.string());
  Layer parent = read_layer(schema, parent_path);
  parent.name = layer.inherits;
  if (parent.kind == "target") throw Error(kCode, parent_path.string() + ": cannot inherit from a target");
  Resolved r = resolve(schema, dir, parent, seen);
  for (auto &[k, e] : r.values)
    if (!r.line_wide.count(k)) carry(e, parent, layer);
  for (auto &[k, e] : layer.values) {
    r.values[k] = e;
    r.line_wide.erase(k);
  }
  return r;
}

// Guide ch.18: f = cores x 4 x eff x clock and the floor scales with the clock; the fitted anchor
// supplies the constants. The core count is left out (ch.34: num_nes is the per-die field, and
// measured rates do not follow it), so peak scales by eff x clock and bandwidth is the anchor's.
void derive_cost(Target &t, const std::vector<Target> &all, const Lineup &lineup) {
  if (t.find("peak_tflops") && t.find("bandwidth_gbps") && t.find("dispatch_floor_ms")) return;
  const Entry *anchor_name = t.find("cost_anchor");
  if (!anchor_name) throw Error(kCode, "target '" + t.name + "' has no cost parameters and no cost_anchor");
  const std::string &an = std::get<std::string>(anchor_name->value);
  const Target *a = nullptr;
  for (auto &o : all)
    if (o.name == an) a = &o;
  if (!a || !a->find("peak_tflops") || !a->find("bandwidth_gbps") || !a->find("dispatch_floor_ms"))
    throw Error(kCode,
                "target '" + t.name + "': cost anchor '" + an + "' is not a target with measured parameters");
  for (const char *need : {"clock_max_mhz", "efficiency_at_clock_max"})
    if (!t.find(need) || !a->find(need))
      throw Error(kCode, "target '" + t.name + "': cost derivation needs '" + need + "' on it and on " + an);
  double clk = double(t.uint("clock_max_mhz")), aclk = double(a->uint("clock_max_mhz"));
  double eff = t.real("efficiency_at_clock_max"), aeff = a->real("efficiency_at_clock_max");
  if (clk <= 0 || aclk <= 0 || aeff <= 0)
    throw Error(kCode, "target '" + t.name + "': zero clock or efficiency in the cost derivation");
  Provenance p = lineup.derivation;
  p.source += "; anchor " + an;
  auto put = [&](const char *k, double v) {
    if (!t.find(k)) t.values[k] = Entry{v, p};
  };
  // Scale by ratios, so a parameter equal to the anchor's stays exactly the anchor's.
  put("peak_tflops", a->real("peak_tflops") * ((eff * clk) / (aeff * aclk)));
  put("bandwidth_gbps", a->real("bandwidth_gbps"));
  put("dispatch_floor_ms", a->real("dispatch_floor_ms") * (aclk / clk));
}

// The calibrated cost parameters `anec calibrate` wrote (tables/calibration/fitted.toml): only
// its `targets` table is read here; the rest (families, chips, rules) belongs to the cost model.
void apply_calibration(const Schema &schema, const fs::path &path, std::vector<Target> &targets) {
  if (!fs::exists(path))
    return;
  Doc doc = toml::parse_file(path);
  const Doc *per_target = doc.find("targets");
  if (!per_target)
    return;
  std::string src = path.string();
  Strict top(*per_target, src, kCode, "targets");
  for (Target &t : targets)
    if (const Doc *vals = top.opt(t.name, Doc::Kind::Table))
      for (auto &[k, e] : read_values(schema, *vals, src))
        t.values[k] = e;
  top.finish();
}

} // namespace

Lineup load_lineup(const fs::path &path) {
  std::string src = path.string();
  Doc doc = toml::parse_file(path);
  Strict top(doc, src, kCode, "line-up");
  const Doc &fmt = top.req("format", Doc::Kind::String);
  if (fmt.as_string() != "anec-lineup/1") top.fail(fmt, "format must be \"anec-lineup/1\"");
  Lineup l;
  for (auto &t : top.req("targets", Doc::Kind::Array).items()) {
    if (!t.is(Doc::Kind::String)) top.fail(t, "targets must be names");
    l.targets.push_back(t.as_string());
  }
  for (auto &t : top.req("families", Doc::Kind::Array).items()) {
    if (!t.is(Doc::Kind::String)) top.fail(t, "families must be names");
    l.families.push_back(t.as_string());
  }
  for (auto &m : top.req("hardware_version_family", Doc::Kind::Table).members()) {
    uint64_t fam = nonneg(top, m.value);
    if (fam >= l.families.size()) top.fail(m.value, "family index out of range");
    try {
      l.hardware_version_family[std::stoull(m.key)] = fam;
    } catch (const std::exception &) {
      top.fail(m.value, "hardware version key '" + m.key + "' is not a number");
    }
  }
  for (auto &m : top.req("suffix_cores", Doc::Kind::Table).members())
    l.suffix_cores[m.key] = nonneg(top, m.value);
  const Doc &cd = top.req("cost_derivation", Doc::Kind::Table);
  Strict c(cd, src, kCode, "cost_derivation");
  l.derivation.source = c.req("source", Doc::Kind::String).as_string();
  auto conf = parse_confidence(c.req("confidence", Doc::Kind::String).as_string());
  if (!conf) c.fail(cd, "unknown confidence");
  l.derivation.confidence = *conf;
  c.finish();
  top.finish();
  return l;
}

std::vector<Target> load_reference(const Schema &schema, const Lineup &lineup, const fs::path &dir) {
  std::vector<Target> out;
  std::set<std::string> listed(lineup.targets.begin(), lineup.targets.end());
  if (listed.size() != lineup.targets.size()) throw Error(kCode, "the line-up names a target twice");
  for (auto &entry : fs::directory_iterator(dir / "targets")) {
    std::string stem = entry.path().stem().string();
    if (entry.path().extension() == ".toml" && !listed.count(stem))
      throw Error(kCode, entry.path().string() + " is not in the line-up (lineup.toml targets)");
  }
  for (const std::string &name : lineup.targets) {
    fs::path p = dir / "targets" / (name + ".toml");
    if (!fs::exists(p)) throw Error(kCode, "target '" + name + "' of the line-up has no file " + p.string());
    Layer l = read_layer(schema, p);
    if (l.kind != "target" || l.name != name)
      throw Error(kCode, p.string() + ": expected kind = \"target\" and name = \"" + name + "\"");
    std::set<std::string> seen;
    Target t;
    t.name = name;
    t.aliases = l.aliases;
    t.values = resolve(schema, dir, l, seen).values;
    out.push_back(std::move(t));
  }
  apply_calibration(schema, dir.parent_path() / "calibration" / "fitted.toml", out);
  for (auto &t : out) derive_cost(t, out, lineup);
  for (auto &t : out)
    for (const Field &f : schema.fields())
      if (!f.synthesized && !t.find(f.name))
        t.values[f.name] = Entry{zero_value(f), {"not published; zero-filled", Confidence::Placeholder}};
  return out;
}

} // namespace anec::hal
