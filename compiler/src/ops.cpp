#include "anec/compiler/ops.hpp"

#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>

namespace anec::compiler {
using anec::detail::Strict;

const std::vector<std::string> &known_rules() {
  static const std::vector<std::string> r = {"io",   "extent",  "conv_kernel", "groups",    "dynamic_weight_batch", "single_input",
                                             "linear_rank", "matmul", "pool",  "broadcast", "reshape",  "transpose",
                                             "concat", "slice_saturation", "pad", "reduction", "argminmax"};
  return r;
}
const std::vector<std::string> &known_costs() {
  static const std::vector<std::string> c = {"conv", "deconv", "matmul", "elementwise", "pool", "reduction", "softmax", "norm", "data", "attention", "none"};
  return c;
}

namespace {
std::optional<int> floor_of(Strict &r, const Doc &d) {
  static const std::map<std::string, int> floors = {{"F0", 0}, {"F2", 2}, {"F3", 3}, {"F4", 4}};
  if (d.as_string() == "none") return std::nullopt;
  auto it = floors.find(d.as_string());
  if (it == floors.end()) r.fail(d, "floor '" + d.as_string() + "' is not one of F0, F2, F3, F4, none");
  return it->second;
}
bool known(const std::vector<std::string> &list, const std::string &s) { return std::find(list.begin(), list.end(), s) != list.end(); }
} // namespace

OpCatalog OpCatalog::from_doc(const Doc &doc, const std::string &source) {
  Strict top(doc, source, "ANEC-OPS-001", "operation catalogue");
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-ops") top.fail(doc, "not an anec-ops catalogue");
  top.req("version", Doc::Kind::String);
  OpCatalog c;
  for (const Doc &od : top.req("op", Doc::Kind::Array).items()) {
    Strict r(od, source, "ANEC-OPS-001", "op");
    OpSpec o;
    o.name = r.req("name", Doc::Kind::String).as_string();
    o.unit = r.req("unit", Doc::Kind::String).as_string();
    o.floor = floor_of(r, r.req("floor", Doc::Kind::String));
    if (const Doc *f = r.opt("codegen_floor", Doc::Kind::String)) o.codegen_floor = floor_of(r, *f);
    o.cost = r.req("cost", Doc::Kind::String).as_string();
    if (!known(known_costs(), o.cost)) r.fail(od, "op " + o.name + ": unknown cost form '" + o.cost + "'");
    for (const Doc &rd : r.req("rules", Doc::Kind::Array).items()) {
      if (!rd.is(Doc::Kind::String) || !known(known_rules(), rd.as_string())) r.fail(rd, "op " + o.name + ": unknown rule");
      o.rules.push_back(rd.as_string());
    }
    if (const Doc *gs = r.opt("gates", Doc::Kind::Array))
      for (const Doc &gd : gs->items()) {
        Strict g(gd, source, "ANEC-OPS-001", "gate");
        Gate x;
        x.field = g.req("field", Doc::Kind::String).as_string();
        const std::string &otherwise = g.req("otherwise", Doc::Kind::String).as_string();
        if (otherwise != "reject" && otherwise != "decompose") g.fail(gd, "otherwise must be reject or decompose");
        x.reject = otherwise == "reject";
        x.with = g.req("with", Doc::Kind::String).as_string();
        g.finish();
        o.gates.push_back(std::move(x));
      }
    if (const Doc *d = r.opt("decompose_with", Doc::Kind::String)) o.decompose_with = d->as_string();
    o.source = r.req("source", Doc::Kind::String).as_string();
    r.finish();
    if (c.ops_.count(o.name)) r.fail(od, "duplicate op " + o.name);
    std::string name = o.name;
    c.ops_.emplace(name, std::move(o));
  }
  top.finish();
  return c;
}

OpCatalog OpCatalog::load(const std::filesystem::path &path) { return from_doc(toml::parse_file(path), path.string()); }

const OpSpec *OpCatalog::find(const std::string &name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

} // namespace anec::compiler
