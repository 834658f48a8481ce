#include "anec/compiler/ir/ops.hpp"

#include "anec/support/format.hpp"
#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <string_view>

namespace anec::compiler {
using anec::detail::Strict;

const std::vector<std::string> &known_attr_handlers() {
  static const std::vector<std::string> h = {"none",   "window", "gemm",   "axis",     "axis_last",
                                             "reduce", "global", "perm",   "slice",    "pad",
                                             "conv",   "pool",   "linear", "attention"};
  return h;
}
const std::vector<std::string> &known_costs() {
  static const std::vector<std::string> c = {"conv", "deconv",    "matmul",  "elementwise",
                                             "pool", "reduction", "softmax", "norm",
                                             "data", "attention", "none"};
  return c;
}

namespace {
std::optional<int> floor_of(Strict &r, const Doc &d) {
  static const std::map<std::string, int> floors = {{"F0", 0}, {"F2", 2}, {"F3", 3}, {"F4", 4}};
  if (d.as_string() == "none")
    return std::nullopt;
  auto it = floors.find(d.as_string());
  if (it == floors.end())
    r.fail(d, "floor '" + d.as_string() + "' is not one of F0, F2, F3, F4, none");
  return it->second;
}
bool known(const std::vector<std::string> &list, const std::string &s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

const std::map<std::string, AttrType> &attr_types() {
  static const std::map<std::string, AttrType> t = {{"int", AttrType::integer},
                                                    {"float", AttrType::number},
                                                    {"ints", AttrType::ints},
                                                    {"string", AttrType::text},
                                                    {"bool", AttrType::flag}};
  return t;
}

// A declared default: a value of the declared type, every item an integer for `ints`.
bool well_typed(const Doc &d, AttrType type) {
  if (!holds(d, type))
    return false;
  if (type != AttrType::ints)
    return true;
  return std::all_of(d.items().begin(), d.items().end(), [](const Doc &x) { return x.is(Doc::Kind::Int); });
}

AttrDecl attr_decl(const DocMember &m, const std::string &source) {
  Strict r(m.value, source, "ANEC-OPS-001", "attribute " + m.key);
  AttrDecl a;
  a.name = m.key;
  const Doc &type = r.req("type", Doc::Kind::String);
  auto it = attr_types().find(type.as_string());
  if (it == attr_types().end())
    r.fail(type, "attribute " + m.key + ": type '" + type.as_string() + "' is not one of " +
                     "int, float, ints, string, bool");
  a.type = it->second;
  if (m.value.find("default")) {
    const Doc &d = r.req_any("default");
    if (!well_typed(d, a.type))
      r.fail(d, "attribute " + m.key + ": the default is not of type " + it->first);
    a.fallback = d;
  }
  if (const Doc *from = r.opt("default_from", Doc::Kind::String)) {
    if (a.fallback)
      r.fail(*from, "attribute " + m.key + ": give default or default_from, not both");
    a.fallback_from = from->as_string();
  }
  if (const Doc *min = r.opt("min", Doc::Kind::Int)) {
    if (a.type != AttrType::integer && a.type != AttrType::ints)
      r.fail(*min, "attribute " + m.key + ": min applies to int and ints only");
    a.min = min->as_int();
  }
  r.finish();
  return a;
}

// default_from names another attribute of the same type that has a default value.
void check_default_from(const AttrDecls &decls, const AttrDecl &a, const Doc &at, const std::string &source) {
  if (a.fallback_from.empty())
    return;
  const AttrDecl *from = find_attr(decls, a.fallback_from);
  if (!from || from == &a || from->type != a.type || !from->fallback)
    throw Error("ANEC-OPS-001", anec::detail::where(source, at) + ": attribute " + a.name +
                                    ": default_from '" + a.fallback_from +
                                    "' is not an attribute of the same type with a default");
}

AttrDecls attr_decls(const Doc &table, const std::string &source) {
  Strict r(table, source, "ANEC-OPS-001", "attrs");
  AttrDecls decls;
  for (const DocMember &m : table.members())
    decls.push_back(attr_decl(m, source));
  for (size_t i = 0; i < decls.size(); ++i)
    check_default_from(decls, decls[i], table.members()[i].value, source);
  return decls;
}
} // namespace

bool holds(const Doc &value, AttrType type) {
  switch (type) {
  case AttrType::integer:
    return value.is(Doc::Kind::Int);
  case AttrType::number:
    return value.is(Doc::Kind::Int) || value.is(Doc::Kind::Float);
  case AttrType::ints:
    return value.is(Doc::Kind::Array);
  case AttrType::text:
    return value.is(Doc::Kind::String);
  case AttrType::flag:
    return value.is(Doc::Kind::Bool);
  }
  return false;
}

const AttrDecl *find_attr(const AttrDecls &decls, std::string_view name) {
  auto it =
      std::find_if(decls.begin(), decls.end(), [&](const AttrDecl &a) { return same_text(a.name, name); });
  return it == decls.end() ? nullptr : &*it;
}

OpCatalog OpCatalog::from_doc(const Doc &doc, const std::string &source) {
  Strict top(doc, source, "ANEC-OPS-001", "operation catalogue");
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-ops")
    top.fail(doc, "not an anec-ops catalogue");
  top.req("version", Doc::Kind::String);
  OpCatalog c;
  if (const Doc *every = top.opt("every_op", Doc::Kind::Table)) {
    Strict e(*every, source, "ANEC-OPS-001", "every_op");
    c.common_attrs_ = attr_decls(e.req("attrs", Doc::Kind::Table), source);
    e.finish();
  }
  for (const Doc &od : top.req("op", Doc::Kind::Array).items()) {
    Strict r(od, source, "ANEC-OPS-001", "op");
    OpSpec o;
    o.name = r.req("name", Doc::Kind::String).as_string();
    o.unit = r.req("unit", Doc::Kind::String).as_string();
    o.floor = floor_of(r, r.req("floor", Doc::Kind::String));
    if (const Doc *f = r.opt("codegen_floor", Doc::Kind::String))
      o.codegen_floor = floor_of(r, *f);
    if (const Doc *k = r.opt("skip", Doc::Kind::String)) {
      o.skip = k->as_string();
      if (!known(known_skips(), o.skip))
        r.fail(*k, "op " + o.name + ": unknown skip rule '" + o.skip + "'");
    }
    o.cost = r.req("cost", Doc::Kind::String).as_string();
    if (!known(known_costs(), o.cost))
      r.fail(od, "op " + o.name + ": unknown cost form '" + o.cost + "'");
    for (const Doc &rd : r.req("rules", Doc::Kind::Array).items()) {
      if (!rd.is(Doc::Kind::String) || !known(known_rules(), rd.as_string()))
        r.fail(rd, "op " + o.name + ": unknown rule");
      o.rules.push_back(rd.as_string());
    }
    if (const Doc *gs = r.opt("gates", Doc::Kind::Array))
      for (const Doc &gd : gs->items()) {
        Strict g(gd, source, "ANEC-OPS-001", "gate");
        Gate x;
        x.field = g.req("field", Doc::Kind::String).as_string();
        const std::string &otherwise = g.req("otherwise", Doc::Kind::String).as_string();
        if (otherwise != "reject" && otherwise != "decompose")
          g.fail(gd, "otherwise must be reject or decompose");
        x.reject = otherwise == "reject";
        x.with = g.req("with", Doc::Kind::String).as_string();
        g.finish();
        o.gates.push_back(std::move(x));
      }
    if (const Doc *d = r.opt("decompose_with", Doc::Kind::String))
      o.decompose_with = d->as_string();
    if (const Doc *d = r.opt("shape", Doc::Kind::String))
      o.shape = d->as_string();
    auto shape = std::find(known_shapes().begin(), known_shapes().end(), o.shape);
    if (shape == known_shapes().end())
      r.fail(od, "op " + o.name + ": unknown shape function '" + o.shape + "'");
    o.shape_index = size_t(shape - known_shapes().begin());
    if (const Doc *d = r.opt("lowered_as", Doc::Kind::String))
      o.lowered_as = d->as_string();
    o.source = r.req("source", Doc::Kind::String).as_string();
    if (const Doc *a = r.opt("attrs", Doc::Kind::Table))
      o.attrs = attr_decls(*a, source);
    r.finish();
    if (c.ops_.count(o.name))
      r.fail(od, "duplicate op " + o.name);
    std::string name = o.name;
    c.ops_.emplace(name, std::move(o));
  }
  top.finish();
  c.reindex();
  return c;
}

namespace {
// Operator names match without regard to case or underscores ("Neuron/ReLU" = "neuron/relu").
std::string folded(const std::string &name) {
  std::string out;
  for (char c : name)
    if (c != '_')
      out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
} // namespace

void OpCatalog::add_front_end(const Doc &doc, const std::string &source) {
  Strict top(doc, source, "ANEC-OPS-001", "front-end map");
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-frontend")
    top.fail(doc, "not an anec-frontend map");
  top.req("version", Doc::Kind::String);
  std::string format = top.req("front_end", Doc::Kind::String).as_string();
  auto &map = front_ends_[format];
  for (const Doc &md : top.req("map", Doc::Kind::Array).items()) {
    Strict r(md, source, "ANEC-OPS-001", "map");
    FrontEndOp row;
    row.op = r.req("op", Doc::Kind::String).as_string();
    if (!find(row.op))
      r.fail(md, "'" + row.op + "' is not a catalogue operation");
    if (const Doc *a = r.opt("attrs", Doc::Kind::String))
      row.attrs = a->as_string();
    if (!known(known_attr_handlers(), row.attrs))
      r.fail(md, "unknown attribute handler '" + row.attrs + "'");
    if (const Doc *w = r.opt("weights", Doc::Kind::Bool))
      row.weights = w->as_bool();
    if (const Doc *p = r.opt("params", Doc::Kind::Table))
      for (const auto &[key, value] : p->members()) {
        if (!value.is(Doc::Kind::String))
          r.fail(value, "params map a Params key to an attribute name");
        row.params[key] = value.as_string();
      }
    if (const Doc *s = r.opt("source", Doc::Kind::String))
      row.source = s->as_string();
    for (const Doc &name : r.req("from", Doc::Kind::Array).items()) {
      if (!name.is(Doc::Kind::String))
        r.fail(name, "from lists operator names");
      if (!map.emplace(folded(name.as_string()), row).second)
        r.fail(name, "'" + name.as_string() + "' is mapped twice");
    }
    r.finish();
  }
  // Names the front-end knows and maps to nothing, each with the reason.
  if (const Doc *un = top.opt("unmapped", Doc::Kind::Array))
    for (const Doc &ud : un->items()) {
      Strict r(ud, source, "ANEC-OPS-001", "unmapped");
      std::string reason = r.req("reason", Doc::Kind::String).as_string();
      for (const Doc &name : r.req("from", Doc::Kind::Array).items()) {
        if (!name.is(Doc::Kind::String))
          r.fail(name, "from lists operator names");
        if (map.count(folded(name.as_string())) ||
            !unmapped_[format].emplace(folded(name.as_string()), reason).second)
          r.fail(name, "'" + name.as_string() + "' is mapped twice");
      }
      r.finish();
    }
  top.finish();
}

const std::string *OpCatalog::unmapped_reason(const std::string &format, const std::string &name) const {
  auto f = unmapped_.find(format);
  if (f == unmapped_.end())
    return nullptr;
  auto it = f->second.find(folded(name));
  return it == f->second.end() ? nullptr : &it->second;
}

const FrontEndOp *OpCatalog::front_end(const std::string &format, const std::string &name) const {
  auto f = front_ends_.find(format);
  if (f == front_ends_.end())
    return nullptr;
  auto it = f->second.find(folded(name));
  return it == f->second.end() ? nullptr : &it->second;
}

void OpCatalog::set_backends(const Doc &doc, const std::string &source) {
  Strict top(doc, source, "ANEC-OPS-001", "placement model");
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-placement")
    top.fail(doc, "not an anec-placement table");
  top.req("version", Doc::Kind::String);
  backends_.clear();
  auto number = [](Strict &r, const char *key) {
    const Doc &d = r.req_any(key);
    if (!d.is(Doc::Kind::Int) && !d.is(Doc::Kind::Float))
      r.fail(d, std::string(key) + " must be a number");
    return d.is(Doc::Kind::Int) ? double(d.as_int()) : d.as_float();
  };
  for (const Doc &bd : top.req("backend", Doc::Kind::Array).items()) {
    Strict r(bd, source, "ANEC-OPS-001", "backend");
    Backend b;
    b.name = r.req("name", Doc::Kind::String).as_string();
    b.gflops = number(r, "gflops");
    b.gbps = number(r, "gbps");
    b.launch_units = number(r, "launch_units");
    b.transfer_units = number(r, "transfer_units");
    b.source = r.req("source", Doc::Kind::String).as_string();
    if (b.gflops <= 0 || b.gbps <= 0)
      r.fail(bd, "gflops and gbps must be positive");
    r.finish();
    backends_.push_back(std::move(b));
  }
  top.finish();
  if (backends_.empty() || backends_[0].name != "engine")
    top.fail(doc, "the first backend must be the engine");
}

OpCatalog OpCatalog::load(const std::filesystem::path &path) {
  OpCatalog c = from_doc(toml::parse_file(path), path.string());
  std::filesystem::path dir = path.parent_path() / "frontend";
  // Every front-end map in the folder, in name order (coreml.toml, onnx.toml, plist.toml, ...).
  std::vector<std::filesystem::path> maps;
  if (std::filesystem::is_directory(dir))
    for (const auto &e : std::filesystem::directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".toml")
        maps.push_back(e.path());
  std::sort(maps.begin(), maps.end());
  for (const std::filesystem::path &m : maps)
    c.add_front_end(toml::parse_file(m), m.string());
  if (std::filesystem::path p = path.parent_path() / "placement.toml"; std::filesystem::exists(p))
    c.set_backends(toml::parse_file(p), p.string());
  return c;
}

OpCatalog::OpCatalog(const OpCatalog &other)
    : ops_(other.ops_), common_attrs_(other.common_attrs_), front_ends_(other.front_ends_),
      unmapped_(other.unmapped_), backends_(other.backends_) {
  reindex();
}

OpCatalog &OpCatalog::operator=(const OpCatalog &other) {
  OpCatalog copy(other);
  return *this = std::move(copy);
}

uint64_t Identity::next() {
  static std::atomic<uint64_t> count{1};
  return count++;
}

void OpCatalog::reindex() {
  index_.clear();
  for (const auto &[name, spec] : ops_)
    index_.emplace(name, &spec);
}

const OpSpec *OpCatalog::find_by_hash(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end())
    return nullptr;
  last_found_ = {identity(), name.data(), it->second};
  return it->second;
}

} // namespace anec::compiler
