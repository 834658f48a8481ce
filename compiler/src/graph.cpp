#include "anec/compiler/graph.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"
#include "anec/support/json_stream.hpp"
#include "anec/support/json_view.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

namespace anec::compiler {

namespace {
// The product of the dimensions, or nullopt when it does not fit in 64 bits.
std::optional<int64_t> product(const Shape &s) {
  int64_t n = 1;
  for (int64_t v : s.d) {
    auto m = checked_mul(n, v);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}
} // namespace

bool Shape::symbolic() const {
  return std::any_of(d.begin(), d.end(), [](int64_t v) { return v < 0; });
}
int64_t Shape::elements() const {
  if (symbolic()) return 0;
  if (auto n = product(*this)) return *n;
  throw Error("ANEC-GRAPH-003", "the element count of shape " + str() + " does not fit in 64 bits");
}
std::string Shape::str() const {
  std::string s = "[";
  for (int k = 0; k < 5; ++k) s += (k ? "," : "") + (d[k] < 0 ? symbol[k] : std::to_string(d[k]));
  return s + "]";
}

int64_t dtype_bytes(const std::string &t) {
  static constexpr std::pair<std::string_view, int64_t> kSizes[] = {
      {"fp16", 2},  {"fp32", 4},   {"bf16", 2},  {"int8", 1}, {"uint8", 1},
      {"int16", 2}, {"uint16", 2}, {"int32", 4}, {"fp8", 1},  {"int4", 1}};
  for (const auto &[name, size] : kSizes)
    if (name == t)
      return size;
  return 0;
}
int axis_index(const std::string &a, int fallback) {
  const char *p = a.size() == 1 && a[0] ? std::strchr(kAxisNames, a[0]) : nullptr;
  return p ? int(p - kAxisNames) : fallback;
}
int64_t Tensor::bytes() const {
  int64_t n = shape.elements(), size = std::min<int64_t>(dtype_bytes(dtype), 2);
  if (auto b = checked_mul(n, size)) return *b;
  throw Error("ANEC-GRAPH-003", "tensor '" + name + "' " + shape.str() + ": " + std::to_string(n) +
                                    " elements x " + std::to_string(size) + " bytes does not fit in 64 bits");
}

namespace {
// Empty when t is within the size limits, else why not.
std::string size_problem(const Tensor &t) {
  auto what = [&] { return "tensor '" + t.name + "' " + t.shape.str(); };
  for (int a = 0; a < 5; ++a)
    if (t.shape.d[a] > kMaxDimension)
      return what() + ": dimension " + kAxisNames[a] + " = " + std::to_string(t.shape.d[a]) +
             " exceeds the limit " + std::to_string(kMaxDimension) + " (2^40)";
  if (t.shape.symbolic())
    return "";
  auto n = product(t.shape);
  if (!n || !checked_mul(*n, std::min<int64_t>(dtype_bytes(t.dtype), 2)))
    return what() + " (" + t.dtype + "): its element count or byte size (the " +
           "product of the dimensions) does not fit in 64 bits";
  return "";
}
} // namespace

void check_size(const Tensor &t, const std::string &where) {
  if (std::string why = size_problem(t); !why.empty())
    throw Error("ANEC-GRAPH-003", where + ": " + why);
}

int64_t Op::attr(const std::string &key, int64_t fallback) const {
  const Doc *d = attrs.find(key);
  return d && d->is(Doc::Kind::Int) ? d->as_int() : fallback;
}
std::vector<int64_t> Op::attrs_of(const std::string &key, std::vector<int64_t> fallback) const {
  const Doc *d = attrs.find(key);
  if (!d || !d->is(Doc::Kind::Array)) return fallback;
  std::vector<int64_t> out;
  attrs_of(key, {}, out);
  return out;
}
void Op::attrs_of(const std::string &key, std::initializer_list<int64_t> fallback,
                  std::vector<int64_t> &out) const {
  const Doc *d = attrs.find(key);
  if (!d || !d->is(Doc::Kind::Array)) {
    out.assign(fallback);
    return;
  }
  out.clear();
  for (const Doc &x : d->items())
    out.push_back(x.is(Doc::Kind::Int) ? x.as_int() : 0);
}
std::string Op::text(const std::string &key, const std::string &fallback) const {
  const Doc *d = attrs.find(key);
  return d && d->is(Doc::Kind::String) ? d->as_string() : fallback;
}

namespace {
uint32_t name_hash(std::string_view name) {
  uint64_t h = std::hash<std::string_view>()(name);
  return uint32_t(h ^ (h >> 32));
}
} // namespace

size_t TensorIndex::probe(uint32_t hash, std::string_view name, const std::vector<Tensor> &tensors) const {
  size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot &s = slots_[i];
    if (s.position == kEmpty || (s.hash == hash && tensors[s.position].name == name))
      return i;
  }
}
size_t TensorIndex::find(std::string_view name, const std::vector<Tensor> &tensors) const {
  if (slots_.empty())
    return npos;
  const Slot &s = slots_[probe(name_hash(name), name, tensors)];
  return s.position == kEmpty ? npos : s.position;
}

void TensorIndex::rehash(size_t slots) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(slots, Slot{});
  size_t mask = slots_.size() - 1;
  for (const Slot &s : old) {
    if (s.position == kEmpty)
      continue;
    size_t i = s.hash & mask;
    while (slots_[i].position != kEmpty)
      i = (i + 1) & mask;
    slots_[i] = s;
  }
}
void TensorIndex::reserve(size_t tensors) {
  size_t slots = 16;
  while (slots < 2 * tensors)
    slots *= 2;
  if (slots > slots_.size())
    rehash(slots);
}
bool TensorIndex::insert(size_t position, const std::vector<Tensor> &tensors) {
  if (position >= kEmpty)
    throw Error("ANEC-GRAPH-003", "a graph of more than 2^32 - 1 tensors");
  if ((count_ + 1) * 2 > slots_.size())
    rehash(std::max<size_t>(16, slots_.size() * 2)); // at most half full: probes stay short
  const std::string &name = tensors[position].name;
  uint32_t hash = name_hash(name);
  Slot &s = slots_[probe(hash, name, tensors)];
  if (s.position != kEmpty)
    return false;
  s = {hash, uint32_t(position)};
  ++count_;
  return true;
}

const Tensor *Graph::tensor(std::string_view name) const {
  // The passes over an op look its few tensors up many times: the last ones found are tried first
  // (each confirmed by its name, so a stale entry, or one of another graph, is only a miss).
  struct Recent {
    const Graph *graph = nullptr;
    size_t at = 0;
  };
  thread_local std::array<Recent, 4> recent;
  thread_local size_t next = 0;
  for (const Recent &r : recent)
    if (r.graph == this && r.at < tensors.size() && tensors[r.at].name == name)
      return &tensors[r.at];
  size_t at = index.find(name, tensors);
  if (at == TensorIndex::npos)
    return nullptr;
  recent[next++ % recent.size()] = {this, at};
  return &tensors[at];
}
Tensor *Graph::tensor(std::string_view name) {
  return const_cast<Tensor *>(std::as_const(*this).tensor(name));
}
Tensor *Graph::try_add(Tensor t) {
  tensors.push_back(std::move(t));
  if (index.insert(tensors.size() - 1, tensors))
    return &tensors.back();
  tensors.pop_back();
  return nullptr;
}
Tensor &Graph::add(Tensor t) {
  std::string name = t.name;
  if (Tensor *added = try_add(std::move(t)))
    return *added;
  throw Error("ANEC-GRAPH-002", source + ": tensor '" + name + "' is defined twice");
}

namespace {
using json::View;

// One JSON object of the graph, read key by key: a key the format does not define, or one given
// twice, is ANEC-GRAPH-001 naming the object.
class Members {
public:
  Members(const View &object, const std::string &source, std::string what)
      : source_(source), what_(std::move(what)) {
    if (object.kind() != Doc::Kind::Table)
      fail("must be an object");
    members_ = object.members();
  }
  // The value of `key` if it is given, with the kind checked.
  std::optional<View> opt(std::string_view key, Doc::Kind kind) {
    asked_.push_back(key);
    std::optional<View> found;
    for (const auto &[k, v] : members_) {
      if (k != key)
        continue;
      if (found)
        fail("gives '" + std::string(key) + "' twice");
      if (v.kind() != kind)
        fail("'" + std::string(key) + "' must be " + Doc::kind_name(kind) + ", found " +
             Doc::kind_name(v.kind()));
      found = v;
    }
    return found;
  }
  View req(std::string_view key, Doc::Kind kind) {
    std::optional<View> v = opt(key, kind);
    if (!v)
      fail("lacks required key '" + std::string(key) + "'");
    return *v;
  }
  std::string text(std::string_view key) { return std::string(req(key, Doc::Kind::String).string()); }
  // Every key given was asked for.
  void finish() const {
    for (const auto &[k, v] : members_)
      if (std::find(asked_.begin(), asked_.end(), k) == asked_.end())
        fail("has unknown key '" + std::string(k) + "'");
  }
  [[noreturn]] void fail(const std::string &message) const {
    throw Error("ANEC-GRAPH-001", source_ + ": " + what_ + " " + message);
  }

private:
  const std::string &source_;
  std::string what_;
  std::vector<std::pair<std::string_view, View>> members_;
  std::vector<std::string_view> asked_;
};

Shape shape_of(const View &d, const std::string &where, const std::string &what) {
  std::vector<View> it = d.items();
  if (d.kind() != Doc::Kind::Array || (it.size() != 4 && it.size() != 5))
    throw Error("ANEC-GRAPH-003",
                where + ": " + what + " shape must list 4 (N,C,H,W) or 5 (N,D,C,H,W) dimensions");
  Shape s;
  size_t skip = it.size() == 4 ? 1 : 0; // 4-D: no depth axis
  for (size_t k = 0; k < it.size(); ++k) {
    size_t axis = k == 0 ? 0 : k + skip;
    if (it[k].kind() == Doc::Kind::String) {
      s.d[axis] = -1;
      s.symbol[axis] = it[k].string();
    } else if (it[k].kind() == Doc::Kind::Int && it[k].integer() >= 1 && it[k].integer() <= kMaxDimension) {
      s.d[axis] = it[k].integer();
    } else {
      throw Error("ANEC-GRAPH-003",
                  where + ": " + what + " dimension must be a positive integer up to 2^40 or a symbol name");
    }
  }
  return s;
}

// A constant's "file" (an .npy file beside the graph) or inline "data" (numbers, C order), one of
// the two at most.
std::optional<ConstantValues> values_of(Members &r, const std::string &name) {
  auto file = r.opt("file", Doc::Kind::String);
  auto data = r.opt("data", Doc::Kind::Array);
  if (!file && !data)
    return std::nullopt;
  if (file && data)
    r.fail("'" + name + "' gives both 'file' and 'data'");
  ConstantValues v;
  if (file)
    v.file = file->string();
  for (const View &x : data ? data->items() : std::vector<View>{}) {
    if (x.kind() != Doc::Kind::Int && x.kind() != Doc::Kind::Float)
      r.fail("'" + name + "': data holds numbers only");
    v.data.push_back(float(x.kind() == Doc::Kind::Int ? double(x.integer()) : x.doc().as_float()));
  }
  return v;
}

Tensor tensor_of(const View &d, Graph &g, bool constant) {
  const std::string &source = g.source;
  Members r(d, source, constant ? "constant" : "input");
  Tensor t;
  t.name = r.text("name");
  View shape = r.req("shape", Doc::Kind::Array);
  t.shape = shape_of(shape, source, "tensor '" + t.name + "'");
  t.source_rank = int(shape.items().size());
  if (auto x = r.opt("dtype", Doc::Kind::String))
    t.dtype = x->string();
  if (!dtype_bytes(t.dtype))
    r.fail("'" + t.name + "' has unknown dtype '" + t.dtype + "'");
  if (auto x = r.opt("format", Doc::Kind::String))
    t.format = x->string();
  t.constant = constant;
  std::optional<ConstantValues> values = constant ? values_of(r, t.name) : std::nullopt;
  r.finish();
  check_size(t, source);
  if (values && values->file.empty() && int64_t(values->data.size()) != t.shape.elements())
    r.fail("'" + t.name + "': data holds " + std::to_string(values->data.size()) + " values, its shape " +
           t.shape.str() + " " + std::to_string(t.shape.elements()));
  if (values)
    g.values[t.name] = std::move(*values);
  return t;
}

// The tensor names an op lists under `key`.
std::vector<std::string> names_of(Members &r, std::string_view key, const std::string &op) {
  std::vector<std::string> out;
  for (const View &v : r.req(key, Doc::Kind::Array).items()) {
    if (v.kind() != Doc::Kind::String)
      r.fail("'" + op + "': " + std::string(key) + " are tensor names");
    out.emplace_back(v.string());
  }
  return out;
}

Op op_of(const View &d, const std::string &source, Graph &g) {
  Members r(d, source, "op");
  Op op;
  op.name = r.text("name");
  op.type = r.text("op");
  op.inputs = names_of(r, "inputs", op.name);
  op.outputs = names_of(r, "outputs", op.name);
  for (const std::string &i : op.inputs)
    if (!g.tensor(i))
      throw Error("ANEC-GRAPH-002", source + ": op '" + op.name + "' reads '" + i +
                                        "', which no input, constant or earlier op defines");
  if (op.outputs.empty())
    r.fail("'" + op.name + "' has no outputs");
  for (const std::string &o : op.outputs) {
    Tensor t;
    t.name = o;
    if (!g.try_add(std::move(t)))
      throw Error("ANEC-GRAPH-002",
                  source + ": op '" + op.name + "' writes '" + o + "', which is already defined");
  }
  if (auto a = r.opt("attrs", Doc::Kind::Table))
    op.attrs = a->doc();
  r.finish();
  return op;
}

int axis_of(const Op &op, const std::string &key, int fallback) { return axis_index(op.text(key), fallback); }

// Shape arithmetic on the attribute values a model supplies: an overflow is a bad model, reported
// with the op and both operands (ANEC-GRAPH-003), never a wrapped, negative extent.
struct Arith {
  const std::string &source;
  const Op &op;
  std::string context() const { return source + ": op '" + op.name + "' (" + op.type + ")"; }
  int64_t add(int64_t a, int64_t b) const {
    auto r = checked_add(a, b);
    return r ? *r : add_or_throw(a, b, "ANEC-GRAPH-003", context());
  }
  int64_t sub(int64_t a, int64_t b) const {
    auto r = checked_sub(a, b);
    return r ? *r : sub_or_throw(a, b, "ANEC-GRAPH-003", context());
  }
  int64_t mul(int64_t a, int64_t b) const {
    auto r = checked_mul(a, b);
    return r ? *r : mul_or_throw(a, b, "ANEC-GRAPH-003", context());
  }
};

int64_t window_out(const Arith &m, int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t dil) {
  int64_t span = m.add(m.mul(dil, m.sub(k, 1)), 1), padded = m.add(m.add(in, p0), p1);
  return padded < span || s < 1 ? 0 : m.sub(padded, span) / s + 1;
}
// The transposed window: (in - 1) * s - p0 - p1 + dil * (k - 1) + 1.
int64_t deconv_out(const Arith &m, int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t dil) {
  int64_t grown = m.sub(m.sub(m.mul(m.sub(in, 1), s), p0), p1);
  return m.add(grown, m.add(m.mul(dil, m.sub(k, 1)), 1));
}

// Inputs and constants (after --dim bindings) within the size limits before any arithmetic on them.
void check_sources(const Graph &g) {
  for (const Tensor &t : g.tensors) {
    bool input = std::find(g.inputs.begin(), g.inputs.end(), t.name) != g.inputs.end();
    if (t.constant || input) check_size(t, g.source);
  }
}
} // namespace

namespace {
// The top level before the ops: format, version, inputs and constants.
void read_head(Members &top, Graph &g) {
  if (top.text("format") != "anec-graph")
    top.fail("format must be \"anec-graph\"");
  int64_t version = top.req("version", Doc::Kind::Int).integer();
  if (version != 1)
    top.fail("version " + std::to_string(version) + " is not supported (this build reads version 1)");
  g.front_end = "anec-graph 1";
  for (const View &d : top.req("inputs", Doc::Kind::Array).items())
    g.inputs.push_back(g.add(tensor_of(d, g, false)).name);
  if (auto cs = top.opt("constants", Doc::Kind::Array))
    for (const View &d : cs->items())
      g.add(tensor_of(d, g, true));
}

// The graph's outputs, each a tensor the inputs, constants or ops define.
void read_outputs(Members &top, Graph &g) {
  g.outputs.clear();
  for (const View &o : top.req("outputs", Doc::Kind::Array).items()) {
    if (o.kind() != Doc::Kind::String || !g.tensor(std::string(o.string())))
      throw Error("ANEC-GRAPH-002", g.source + ": graph output is not a defined tensor");
    g.outputs.emplace_back(o.string());
  }
}
} // namespace

Graph read_graph_json(std::string text, const std::string &source) {
  json::Document doc(std::move(text), source);
  Graph g;
  g.source = source;
  Members top(doc.root(), g.source, "graph");
  read_head(top, g);
  std::vector<View> ops = top.req("ops", Doc::Kind::Array).items();
  g.ops.reserve(ops.size());
  g.tensors.reserve(g.tensors.size() + ops.size());
  for (const View &d : ops)
    g.ops.push_back(op_of(d, source, g));
  read_outputs(top, g);
  top.finish();
  return g;
}

namespace {
Doc tensor_doc(const Tensor &t) {
  Doc d = Doc::table();
  d.set("name", Doc::string(t.name));
  Doc shape = Doc::array();
  for (int a = 0; a < 5; ++a)
    shape.push(t.shape.d[a] < 0 ? Doc::string(t.shape.symbol[a]) : Doc::integer(t.shape.d[a]));
  d.set("shape", std::move(shape));
  d.set("dtype", Doc::string(t.dtype));
  if (!t.format.empty())
    d.set("format", Doc::string(t.format));
  return d;
}
Doc names_doc(const std::vector<std::string> &names) {
  Doc a = Doc::array();
  for (const std::string &n : names)
    a.push(Doc::string(n));
  return a;
}
} // namespace

Doc graph_doc(const Graph &g, const std::filesystem::path &source_dir, const std::filesystem::path &base) {
  Doc d = Doc::table();
  d.set("format", Doc::string("anec-graph"));
  d.set("version", Doc::integer(1));
  Doc inputs = Doc::array(), constants = Doc::array(), ops = Doc::array();
  for (const std::string &n : g.inputs)
    inputs.push(tensor_doc(*g.tensor(n)));
  for (const Tensor &t : g.tensors) {
    if (!t.constant)
      continue;
    Doc c = tensor_doc(t);
    if (auto v = g.values.find(t.name); v != g.values.end() && !v->second.file.empty()) {
      std::filesystem::path file = std::filesystem::absolute(source_dir / v->second.file).lexically_normal();
      c.set("file", Doc::string(file.lexically_relative(std::filesystem::absolute(base)).string()));
    } else if (v != g.values.end()) {
      Doc data = Doc::array();
      for (float x : v->second.data)
        data.push(Doc::number(double(x)));
      c.set("data", std::move(data));
    }
    constants.push(std::move(c));
  }
  for (const Op &op : g.ops) {
    Doc o = Doc::table();
    o.set("name", Doc::string(op.name));
    o.set("op", Doc::string(op.type));
    o.set("inputs", names_doc(op.inputs));
    o.set("outputs", names_doc(op.outputs));
    Doc attrs = op.attrs;
    if (op.type == "reshape" && !attrs.find("shape") && !g.tensor(op.outputs[0])->shape.symbolic()) {
      Doc shape = Doc::array(); // a target a front-end took from a shape input, made explicit
      for (int64_t x : g.tensor(op.outputs[0])->shape.d)
        shape.push(Doc::integer(x));
      attrs.set("shape", std::move(shape));
    }
    o.set("attrs", std::move(attrs));
    ops.push(std::move(o));
  }
  d.set("inputs", std::move(inputs));
  d.set("constants", std::move(constants));
  d.set("ops", std::move(ops));
  d.set("outputs", names_doc(g.outputs));
  return d;
}

struct GraphReader::State {
  explicit State(json::ArrayStream stream) : ops(std::move(stream)) {}
  json::ArrayStream ops;
  Graph graph;
  json::Document head, op_doc;
  std::optional<Members> top;
  Op op;
};

GraphReader::GraphReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
GraphReader::GraphReader(GraphReader &&) noexcept = default;
GraphReader::~GraphReader() = default;

std::optional<GraphReader> GraphReader::open(const std::filesystem::path &path) {
  auto ops = json::ArrayStream::open(path, "ops");
  if (!ops)
    return std::nullopt;
  auto s = std::make_unique<State>(std::move(*ops));
  Graph &g = s->graph;
  g.source = path.string();
  s->head.parse(s->ops.rest(), g.source);
  Members &top = s->top.emplace(s->head.root(), g.source, "graph");
  read_head(top, g);
  top.req("ops", Doc::Kind::Array); // emptied: its elements come from next()
  g.tensors.reserve(g.tensors.size() + s->ops.elements());
  g.index.reserve(g.tensors.capacity());
  // The outputs' names, for the estimate's program boundary; they are checked after the last op.
  if (auto outs = top.opt("outputs", Doc::Kind::Array))
    for (const View &o : outs->items())
      g.outputs.emplace_back(o.string());
  return GraphReader(std::move(s));
}

Graph &GraphReader::graph() {
  return state_->graph;
}

Op *GraphReader::next() {
  State &s = *state_;
  if (auto text = s.ops.next()) {
    s.op_doc.parse(*text, s.graph.source, 2); // inside the top-level object and the ops array
    s.op = op_of(s.op_doc.root(), s.graph.source, s.graph);
    return &s.op;
  }
  read_outputs(*s.top, s.graph);
  s.top->finish();
  return nullptr;
}

double weight_bytes(const Graph &g, const Op &op) {
  if (int64_t n = op.attr("weight_elements", -1); n >= 0) return double(n) * 2;
  bool conv = op.type == "conv" || op.type == "deconv";
  if (op.inputs.empty() || !(conv || op.type == "linear"))
    return 0;
  const Shape &in = g.tensor(op.inputs[0])->shape, &out = g.tensor(op.outputs[0])->shape;
  bool runtime = op.text("weight") == "runtime" || (op.inputs.size() >= 2 && !g.tensor(op.inputs[1])->constant);
  if (conv && !runtime && op.inputs.size() == 1) {
    auto k = op.attrs_of("kernel", {1, 1});
    double groups = double(std::max<int64_t>(1, op.attr("groups", 1)));
    return double(in.d[kC]) / groups * double(out.d[kC]) * double(k[0]) * double(k[1]) * 2;
  }
  if (op.type == "linear" && op.inputs.size() == 1) return double(in.d[kC]) * double(out.d[kC]) * 2;
  return 0;
}

std::string binding_hint(const Graph &g, const std::string &symbol) {
  std::set<std::string> bindable; // the symbols of the graph's inputs: what --dim can bind
  for (const std::string &n : g.inputs)
    for (const std::string &s : g.tensor(n)->shape.symbol) bindable.insert(s);
  std::string out, name;
  bool derived = false;
  auto flush = [&] {
    bool number = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
    if (bindable.count(name)) out += (out.empty() ? "" : " ") + ("--dim " + name + "=N");
    else if (!number) derived = true;
    name.clear();
  };
  for (char c : symbol) c == '*' ? flush() : void(name += c);
  flush();
  if (derived) out += std::string(out.empty() ? "" : ", and ") + "bind the input dimensions it derives from";
  return out;
}

std::vector<std::string> unbound_dimensions(const Graph &g) {
  std::vector<std::string> out;
  for (const std::string &n : g.inputs) {
    const Shape &s = g.tensor(n)->shape;
    for (int a = 0; a < 5; ++a) {
      if (s.d[a] >= 0) continue;
      std::string line = "input '" + n + "' " + s.str() + " " + kAxisNames[a] + " = " + s.symbol[a] + ": " +
                         binding_hint(g, s.symbol[a]);
      if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
    }
  }
  return out;
}

namespace {
// One op's shape function (ops.toml `shape`): the output shape from the input shapes and the
// attributes. Products and sums of attribute values go through Arith (ANEC-GRAPH-003 on overflow).
struct ShapeFn {
  const Op &op;
  const std::vector<Shape> &in;
  const Arith &m;
  Shape out;

  Error bad(const std::string &why) const { return Error("ANEC-GRAPH-003", m.context() + ": " + why); }
  void need(size_t n) const {
    if (in.size() < n)
      throw bad("needs " + std::to_string(n) + " input(s), has " + std::to_string(in.size()));
  }
  void set(const std::vector<int64_t> &v) {
    if (v.size() != 5) throw bad("shape attribute of the wrong length");
    for (int64_t x : v)
      if (x < 1) throw bad("produces an empty or negative extent " + Shape{}.str());
    std::copy(v.begin(), v.end(), out.d.begin());
  }

  void same() {}
  void window() {
    need(1);
    const std::string &t = op.type;
    bool conv = t == "conv" || t == "deconv";
    auto k = op.attrs_of("kernel", {1, 1});
    auto s = op.attrs_of("stride", conv ? std::vector<int64_t>{1, 1} : k);
    auto p = op.attrs_of("pad", {0, 0, 0, 0});
    auto dil = op.attrs_of("dilation", {1, 1});
    if (k.size() != 2 || s.size() != 2 || p.size() != 4 || dil.size() != 2)
      throw bad("kernel, stride, dilation take 2 values and pad 4 (top, bottom, left, right)");
    auto extent = t == "deconv" ? deconv_out : window_out;
    out.d[kH] = extent(m, in[0].d[kH], k[0], s[0], p[0], p[1], dil[0]);
    out.d[kW] = extent(m, in[0].d[kW], k[1], s[1], p[2], p[3], dil[1]);
    if (!conv) return;
    int64_t oc = op.attr("out_channels", 0);
    if (oc < 1) throw bad("needs out_channels");
    out.d[kC] = oc;
  }
  void linear() {
    need(1);
    int64_t of = op.attr("out_features", 0);
    if (of < 1) throw bad("needs out_features");
    out.d[kC] = of;
  }
  void matmul() {
    need(2);
    out.d[kN] = std::max(in[0].d[kN], in[1].d[kN]);
    out.d[kD] = std::max(in[0].d[kD], in[1].d[kD]);
    out.d[kW] = in[1].d[kW];
  }
  void broadcast() {
    for (const Shape &o : in)
      for (int a = 0; a < 5; ++a) out.d[a] = std::max(out.d[a], o.d[a]);
  }
  void reduce() {
    for (char c : op.text("axes", "C"))
      if (int a = axis_index(std::string(1, c), -1); a >= 0) out.d[a] = 1;
  }
  void argreduce() { out.d[axis_of(op, "axis", kC)] = 1; }
  void global_reduce() { out.d = {out.d[kN], 1, 1, 1, 1}; }
  void reshape() {
    need(1);
    auto v = op.attrs_of("shape", {});
    if (v.size() == 4) v.insert(v.begin() + 1, 1);
    if (v.size() == 5) set(v);
  }
  void tile() {
    need(1);
    auto r = op.attrs_of("reps", {1, 1, 1, 1, 1});
    if (r.size() != 5) throw bad("reps takes 5 values");
    std::vector<int64_t> v;
    for (int a = 0; a < 5; ++a) v.push_back(m.mul(in[0].d[a], r[a]));
    set(v);
  }
  void transpose() {
    need(1);
    auto perm = op.attrs_of("perm", {0, 1, 2, 3, 4});
    if (perm.size() != 5) throw bad("perm takes 5 axis indices");
    for (int a = 0; a < 5; ++a) {
      if (perm[a] < 0 || perm[a] > 4)
        throw bad("perm holds axis " + std::to_string(perm[a]) + ", not 0 to 4");
      out.d[a] = in[0].d[perm[a]]; // a symbolic dimension moves with its name
      out.symbol[a] = in[0].symbol[perm[a]];
    }
  }
  void slice() {
    need(1);
    auto b = op.attrs_of("begin", {0, 0, 0, 0, 0}), e = op.attrs_of("end", {-1, -1, -1, -1, -1});
    if (b.size() != 5 || e.size() != 5) throw bad("begin and end take 5 values (-1 in end: to the end)");
    std::vector<int64_t> v;
    for (int a = 0; a < 5; ++a) v.push_back(m.sub(e[a] < 0 ? in[0].d[a] : std::min(e[a], in[0].d[a]), b[a]));
    set(v);
  }
  void dynamic_slice() {
    need(1);
    set(op.attrs_of("size", std::vector<int64_t>(in[0].d.begin(), in[0].d.end())));
  }
  void concat() {
    need(2);
    int a = axis_of(op, "axis", kC);
    out.d[a] = 0;
    for (const Shape &o : in) out.d[a] = m.add(out.d[a], o.d[a]);
  }
  void pad() {
    need(1);
    auto p = op.attrs_of("pad", {0, 0, 0, 0});
    if (p.size() != 4) throw bad("pad takes 4 values (top, bottom, left, right)");
    out.d[kH] = m.add(out.d[kH], m.add(p[0], p[1]));
    out.d[kW] = m.add(out.d[kW], m.add(p[2], p[3]));
    auto cp = op.attrs_of("channel_pad", {0, 0});
    if (cp.size() == 2) out.d[kC] = m.add(out.d[kC], m.add(cp[0], cp[1]));
  }
  void resize() {
    auto sz = op.attrs_of("size", {});
    auto sc = op.attrs_of("scale", {});
    if (sz.size() == 2) {
      out.d[kH] = sz[0];
      out.d[kW] = sz[1];
    } else if (sc.size() == 2) {
      out.d[kH] = m.mul(out.d[kH], sc[0]);
      out.d[kW] = m.mul(out.d[kW], sc[1]);
    } else {
      throw bad("needs size [H, W] or scale [sH, sW]");
    }
  }
  void sdpa() {
    need(3);
    out.d[kW] = in[2].d[kW];
  }
  void topk() { out.d[axis_of(op, "axis", kW)] = op.attr("k", 1); }
  // A view of `size` elements along one axis (appendix B InputView); a split's first part.
  void input_view() {
    int a = axis_of(op, "axis", kC);
    if (int64_t size = op.attr("size", 0); size > 0) out.d[a] = size;
  }
  void split() {
    int a = axis_of(op, "axis", kC);
    int64_t parts = std::max<int64_t>(1, int64_t(op.outputs.size()));
    if (out.d[a] > 0) out.d[a] = out.d[a] / parts;
  }
  void broadcast_to() {
    int a = axis_of(op, "axis", kC);
    if (int64_t size = op.attr("size", 0); size > 0) out.d[a] = size;
  }
  void gather() {}
  void gather_elements() {}
  void depth_to_space() { rearrange(true); }
  void space_to_depth() { rearrange(false); }
  // Pixel shuffle (channels to space) and its inverse, factors factor_x (W) and factor_y (H).
  void rearrange(bool to_space) {
    int64_t fx = op.attr("factor_x", op.attr("factor", 2)), fy = op.attr("factor_y", op.attr("factor", 2));
    if (fx < 1 || fy < 1) throw bad("factors must be positive");
    int64_t f = m.mul(fx, fy);
    if (to_space) {
      out.d[kC] = out.d[kC] > 0 ? out.d[kC] / f : out.d[kC];
      out.d[kH] = out.d[kH] > 0 ? m.mul(out.d[kH], fy) : out.d[kH];
      out.d[kW] = out.d[kW] > 0 ? m.mul(out.d[kW], fx) : out.d[kW];
    } else {
      out.d[kC] = out.d[kC] > 0 ? m.mul(out.d[kC], f) : out.d[kC];
      out.d[kH] = out.d[kH] > 0 ? out.d[kH] / fy : out.d[kH];
      out.d[kW] = out.d[kW] > 0 ? out.d[kW] / fx : out.d[kW];
    }
  }
};

const std::map<std::string, void (ShapeFn::*)()> &shape_table() {
  static const std::map<std::string, void (ShapeFn::*)()> fns = {
      {"same", &ShapeFn::same},           {"window", &ShapeFn::window},
      {"linear", &ShapeFn::linear},       {"matmul", &ShapeFn::matmul},
      {"broadcast", &ShapeFn::broadcast}, {"reduce", &ShapeFn::reduce},
      {"argreduce", &ShapeFn::argreduce}, {"global_reduce", &ShapeFn::global_reduce},
      {"reshape", &ShapeFn::reshape},     {"tile", &ShapeFn::tile},
      {"transpose", &ShapeFn::transpose}, {"slice", &ShapeFn::slice},
      {"dynamic_slice", &ShapeFn::dynamic_slice}, {"concat", &ShapeFn::concat},
      {"pad", &ShapeFn::pad},             {"resize", &ShapeFn::resize},
      {"sdpa", &ShapeFn::sdpa},           {"topk", &ShapeFn::topk},
      {"input_view", &ShapeFn::input_view}, {"split", &ShapeFn::split},
      {"broadcast_to", &ShapeFn::broadcast_to}, {"gather", &ShapeFn::gather},
      {"gather_elements", &ShapeFn::gather_elements}, {"depth_to_space", &ShapeFn::depth_to_space},
      {"space_to_depth", &ShapeFn::space_to_depth},
  };
  return fns;
}
} // namespace

const std::vector<std::string> &known_shapes() {
  static const std::vector<std::string> names = keys_of(shape_table());
  return names;
}

void infer_shapes(Graph &g, const Op &op, const OpCatalog &catalog) {
  std::vector<Shape> in;
  std::string dtype = "fp16";
  for (const std::string &n : op.inputs)
    in.push_back(g.tensor(n)->shape);
  if (!op.inputs.empty())
    dtype = g.tensor(op.inputs[0])->dtype;
  const Arith m{g.source, op};
  ShapeFn fn{op, in, m, in.empty() ? Shape{} : in[0]};
  if (const OpSpec *spec = catalog.find(op.type))
    (fn.*shape_table().at(spec->shape))();
  for (const std::string &name : op.outputs) {
    Tensor &o = *g.tensor(name);
    o.shape = fn.out;
    // a symbolic dimension stays symbolic
    for (int a = 0; a < 5; ++a)
      if (!in.empty() && in[0].d[a] < 0 && o.shape.d[a] <= 0) {
        o.shape.d[a] = -1;
        if (o.shape.symbol[a].empty())
          o.shape.symbol[a] = in[0].symbol[a];
      }
    o.dtype = dtype;
    if (std::string why = size_problem(o); !why.empty())
      throw Error("ANEC-GRAPH-003", m.context() + ": " + why);
  }
}

void infer_shapes(Graph &g, const OpCatalog &catalog) {
  check_sources(g);
  for (const Op &op : g.ops)
    infer_shapes(g, op, catalog);
}

} // namespace anec::compiler
