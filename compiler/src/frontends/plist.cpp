#include "anec/compiler/frontends/load.hpp"

#include "anec/support/error.hpp"

#include <cctype>
#include <map>

namespace anec::compiler {

namespace {
const Doc *member(const Doc &d, const char *key, Doc::Kind kind) {
  const Doc *x = d.is(Doc::Kind::Table) ? d.find(key) : nullptr;
  return x && x->is(kind) ? x : nullptr;
}
int64_t integer(const Doc &d, const char *key, int64_t fallback) {
  const Doc *x = member(d, key, Doc::Kind::Int);
  return x ? x->as_int() : fallback;
}
std::string text(const Doc &d, const char *key) {
  const Doc *x = member(d, key, Doc::Kind::String);
  return x ? x->as_string() : "";
}
std::string dtype_of(const std::string &t) {
  static const std::map<std::string, std::string> types = {
      {"Float16", "fp16"}, {"Float32", "fp32"}, {"Int8", "int8"}, {"UInt8", "uint8"}};
  auto it = types.find(t);
  return it == types.end() ? "fp16" : it->second;
}
Doc int_pair(const Doc &p, const char *a, const char *b) {
  Doc k = Doc::array();
  k.push(Doc::integer(integer(p, a, 1)));
  k.push(Doc::integer(integer(p, b, 1)));
  return k;
}
// An axis named in Params ("Channel", "Width", ...) as its axis letter; any other value unchanged.
Doc axis_value(const Doc &v) {
  static const std::map<std::string, std::string> axes = {
      {"batch", "N"}, {"depth", "D"}, {"channel", "C"}, {"channels", "C"}, {"height", "H"}, {"width", "W"}};
  if (!v.is(Doc::Kind::String))
    return v;
  std::string s = v.as_string();
  for (char &c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  auto it = axes.find(s);
  return it == axes.end() ? v : Doc::string(it->second);
}

// The unit's catalogue operation and attributes, from the front-end map (tables/schema/frontend/
// plist.toml): the row for "Type/Params.Type" if there is one, else for "Type"; unmapped types
// stay as "plist:Type[/Params.Type]" for the checker to report.
void map_unit(const OpCatalog &catalog, const std::string &type, const std::string &sub, const Doc &p,
              const Doc &unit, Op &op) {
  const FrontEndOp *row = sub.empty() ? nullptr : catalog.front_end("plist", type + "/" + sub);
  if (!row)
    row = catalog.front_end("plist", type);
  if (!row) {
    op.type = "plist:" + type + (sub.empty() ? "" : "/" + sub);
    return;
  }
  op.type = row->op;
  for (const auto &[key, attr] : row->params)
    if (const Doc *v = p.find(key))
      op.attrs.set(attr, attr == "axis" || attr == "axes" ? axis_value(*v) : *v);
  if (int64_t oc = integer(unit, "OutputChannels", 0); oc > 0)
    op.attrs.set("out_channels", Doc::integer(oc));
  if (row->attrs == "conv" || row->attrs == "pool") {
    op.attrs.set("kernel", int_pair(p, "KernelHeight", "KernelWidth"));
    if (const Doc *s = member(p, "Step", Doc::Kind::Array))
      op.attrs.set("stride", *s);
    Doc pad = Doc::array();
    for (const char *key : {"PadTop", "PadBot", "PadLeft", "PadRight"})
      pad.push(Doc::integer(integer(p, key, 0)));
    op.attrs.set("pad", std::move(pad));
  }
  if (row->attrs == "conv")
    op.attrs.set("groups", Doc::integer(integer(p, "GroupCount", 1)));
  if (row->attrs == "linear")
    op.attrs.set("out_features", Doc::integer(integer(unit, "OutputChannels", 0)));
  if (op.type == "concat" && !op.attrs.find("axis"))
    op.attrs.set("axis", Doc::string("C"));
}
} // namespace

Graph read_network_plist(const Doc &root, const std::string &source, const OpCatalog &catalog) {
  auto fail = [&](const std::string &m) { return Error("ANEC-MODEL-002", source + ": " + m); };
  const Doc *networks = member(root, "Networks", Doc::Kind::Array);
  if (!networks || networks->items().empty() || !networks->items()[0].is(Doc::Kind::String))
    throw fail("no Networks list: not a network plist");
  std::string name = networks->items()[0].as_string();
  const Doc *net = member(root, name.c_str(), Doc::Kind::Table);
  if (!net)
    throw fail("network '" + name + "' has no description");
  Graph g;
  g.source = source;
  g.front_end = "plist";
  auto names = [&](const char *key) {
    std::vector<std::string> out;
    if (const Doc *a = member(*net, key, Doc::Kind::Array))
      for (const Doc &x : a->items())
        if (x.is(Doc::Kind::String))
          out.push_back(x.as_string());
    return out;
  };
  for (const std::string &in : names("Inputs")) {
    const Doc *d = member(*net, in.c_str(), Doc::Kind::Table);
    if (!d)
      throw fail("input '" + in + "' has no description");
    Tensor t;
    t.name = in;
    t.shape.d = {integer(*d, "BatchSize", 1), integer(*d, "InputDepth", 1), integer(*d, "InputChannels", 0),
                 integer(*d, "InputHeight", 0), integer(*d, "InputWidth", 0)};
    for (int64_t v : t.shape.d)
      if (v < 1)
        throw fail("input '" + in + "' lacks a positive BatchSize, InputChannels, InputHeight or InputWidth");
    t.dtype = dtype_of(text(*d, "InputType"));
    int64_t interleave = integer(*d, "InputInterleave", 0);
    if (interleave != int32_t(interleave))
      throw fail("input '" + in + "' declares InputInterleave " + std::to_string(interleave) +
                 ", beyond 32 bits");
    t.interleave = int32_t(interleave);
    check_size(t, source); // the same 2^40 dimension cap as the JSON and ONNX readers
    g.inputs.push_back(g.add(std::move(t)).name);
  }
  if (g.inputs.empty())
    throw fail("network '" + name + "' has no Inputs");
  for (const std::string &u : names("Units")) {
    const Doc *d = member(*net, u.c_str(), Doc::Kind::Table);
    if (!d)
      throw fail("unit '" + u + "' has no description");
    Op op;
    op.name = u;
    std::string type = text(*d, "Type");
    const Doc *params = member(*d, "Params", Doc::Kind::Table);
    Doc none = Doc::table();
    const Doc &p = params ? *params : none;
    if (const Doc *b = d->find("Bottom")) {
      if (b->is(Doc::Kind::String))
        op.inputs.push_back(b->as_string());
      if (b->is(Doc::Kind::Array))
        for (const Doc &x : b->items())
          if (x.is(Doc::Kind::String))
            op.inputs.push_back(x.as_string());
    }
    for (const std::string &i : op.inputs)
      if (!g.tensor(i))
        throw Error("ANEC-GRAPH-002",
                    source + ": unit '" + u + "' reads '" + i + "', which no input or earlier unit defines");
    map_unit(catalog, type, text(p, "Type"), p, *d, op);
    Tensor t;
    t.name = u;
    t.interleave =
        op.inputs.empty() ? 0 : g.tensor(op.inputs[0])->interleave; // the port's packing flows through
    g.add(std::move(t));
    op.outputs.push_back(u);
    g.ops.push_back(std::move(op));
  }
  for (const std::string &o : names("Outputs")) {
    const Doc *d = member(*net, o.c_str(), Doc::Kind::Table);
    std::string bottom = d ? text(*d, "Bottom") : o;
    if (!g.tensor(bottom))
      throw Error("ANEC-GRAPH-002",
                  source + ": output '" + o + "' names '" + bottom + "', which nothing defines");
    g.outputs.push_back(bottom);
  }
  return g;
}

} // namespace anec::compiler
