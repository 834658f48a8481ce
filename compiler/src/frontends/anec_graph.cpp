#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/attrs.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/huge_pages.hpp"
#include "anec/support/inside.hpp"
#include "anec/support/json_stream.hpp"
#include "anec/support/json_view.hpp"
#include "anec/support/made_ahead.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

namespace anec::compiler {

namespace {
using json::View;

// One JSON object of the graph, read key by key: a key the format does not define, or one given
// twice, is ANEC-GRAPH-001 naming the object.
class Members {
public:
  Members(const View &object, const std::string &source, std::string what)
      : Members(source, std::move(what)) {
    read(object);
  }
  // One to read objects of a kind with, one after another (read()), reusing its storage.
  Members(const std::string &source, std::string what) : source_(source), what_(std::move(what)) {}
  void read(const View &object) {
    if (object.kind() != Doc::Kind::Table)
      fail("must be an object");
    object.members(members_);
    asked_.assign(members_.size(), false);
  }
  // The value of `key` if it is given, with the kind checked.
  std::optional<View> opt(std::string_view key, Doc::Kind kind) {
    std::optional<View> found;
    for (size_t i = 0; i < members_.size(); ++i) {
      const auto &[k, v] = members_[i];
      if (!same_text(k, key))
        continue;
      if (found)
        fail("gives '" + std::string(key) + "' twice");
      if (v.kind() != kind)
        fail("'" + std::string(key) + "' must be " + Doc::kind_name(kind) + ", found " +
             Doc::kind_name(v.kind()));
      found = v;
      asked_[i] = true;
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
  // The items of the array under `key`, valid until the next call.
  const std::vector<View> &items(std::string_view key) {
    req(key, Doc::Kind::Array).items(items_);
    return items_;
  }
  // Every key given was asked for.
  void finish() const {
    for (size_t i = 0; i < members_.size(); ++i)
      if (!asked_[i])
        fail("has unknown key '" + std::string(members_[i].first) + "'");
  }
  [[noreturn]] void fail(const std::string &message) const {
    throw Error("ANEC-GRAPH-001", source_ + ": " + what_ + " " + message);
  }

private:
  const std::string &source_;
  std::string what_;
  std::vector<std::pair<std::string_view, View>> members_;
  std::vector<char> asked_; // each member's key, asked for (bytes: read for every op)
  std::vector<View> items_;
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
  if (file && !names_inside(v.file))
    r.fail("'" + name + "': file '" + excerpt(v.file) +
           "' leaves the graph's folder (a constant's file is "
           "named relative to it, without '..')");
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
  t.set_source_rank(shape.items().size());
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

// The tensor names an op lists under `key`, into `out`.
void names_of(Members &r, std::string_view key, const std::string &op, std::vector<std::string> &out) {
  out.clear();
  for (const View &v : r.items(key)) {
    if (v.kind() != Doc::Kind::String)
      r.fail("'" + op + "': " + std::string(key) + " are tensor names");
    out.emplace_back(v.string());
  }
}

// The op `d` into `op`, read with `r` (an op's Members); both reuse their storage. Every key is
// checked (ANEC-GRAPH-001); the tensors it names are not looked up (bind_op).
void parse_op(const View &d, Members &r, Op &op) {
  r.read(d);
  op.name = r.req("name", Doc::Kind::String).string();
  op.type = r.req("op", Doc::Kind::String).string();
  names_of(r, "inputs", op.name, op.inputs);
  names_of(r, "outputs", op.name, op.outputs);
  if (op.outputs.empty())
    r.fail("'" + op.name + "' has no outputs");
  if (auto a = r.opt("attrs", Doc::Kind::Table))
    a->doc_into(op.attrs);
  else
    op.attrs.refill_members(0);
  op.optimized = op.runtime_skippable = false;
  r.finish();
}

// `op`'s inputs looked up in `g`, and its outputs added to it (shapes not inferred), their positions
// into `tensors` (what find_tensors then gives): ANEC-GRAPH-002 for an input no earlier tensor
// defines, or an output one does.
void bind_op(Graph &g, const Op &op, OpTensors &tensors) {
  tensors.ins.clear();
  tensors.outs.clear();
  for (const std::string &i : op.inputs) {
    const Tensor *t = std::as_const(g).tensor(i);
    if (!t)
      throw Error("ANEC-GRAPH-002", g.source + ": op '" + op.name + "' reads '" + i +
                                        "', which no input, constant or earlier op defines");
    tensors.ins.push_back(size_t(t - g.tensors.data()));
  }
  for (const std::string &o : op.outputs) {
    Tensor t;
    t.name = o;
    if (!g.try_add(std::move(t)))
      throw Error("ANEC-GRAPH-002",
                  g.source + ": op '" + op.name + "' writes '" + o + "', which is already defined");
    tensors.outs.push_back(g.tensors.size() - 1);
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
  Members members(g.source, "op");
  OpTensors tensors;
  for (const View &d : ops) {
    parse_op(d, members, g.ops.emplace_back());
    bind_op(g, g.ops.back(), tensors);
  }
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

namespace {
// The ops array read a run at a time (tens of kilobytes of text, hundreds of small ops, one parser
// call) into a batch of parsed ops (parse_op).
class OpRuns {
public:
  OpRuns(json::ArrayStream &ops, const std::string &source, const OpCatalog &catalog)
      : ops_(ops), source_(source), catalog_(catalog) {}
  // False after the last op.
  bool parse(std::vector<Op> &batch);
  // The storage the graph's tensors will take, from its next tensor on: as each batch is parsed, the
  // pages its ops' outputs will be written to are made present (populate), so that the thread that
  // adds the tensors takes no page fault. Set before the first batch. Advice only: should the
  // tensors outgrow that storage and move, advising the old pages changes nothing.
  void populate_ahead(const void *storage, size_t bytes) {
    storage_ = static_cast<const char *>(storage);
    storage_left_ = bytes;
  }

private:
  json::ArrayStream &ops_;
  const std::string &source_;
  const OpCatalog &catalog_;
  const char *storage_ = nullptr;
  size_t storage_left_ = 0;
  std::string run_; // a run of op elements, as the text of one array
  json::Document doc_;
  std::vector<View> views_;
  Members members_{source_, "op"};
};

bool OpRuns::parse(std::vector<Op> &batch) {
  constexpr size_t kRunBytes = 64 << 10;
  run_ = "[";
  while (run_.size() < kRunBytes)
    if (auto text = ops_.next())
      run_.append(*text) += ',';
    else
      break;
  if (run_.size() == 1)
    return false;
  run_.back() = ']';
  doc_.parse(run_, source_, 1); // the run stands for the ops array, inside the top-level object
  doc_.root().items(views_);
  batch.resize(views_.size());
  size_t outputs = 0;
  for (size_t k = 0; k < views_.size(); ++k) {
    parse_op(views_[k], members_, batch[k]);
    check_attribute_bounds(batch[k], catalog_, source_);
    outputs += batch[k].outputs.size();
  }
  size_t bytes = std::min(outputs * sizeof(Tensor), storage_left_);
  populate(storage_, bytes);
  storage_ += bytes;
  storage_left_ -= bytes;
  return true;
}

// An ops array this long is parsed on a thread of its own, ahead of the ops' use; a shorter one
// costs less than the thread.
constexpr size_t kOpsParsedAhead = 4096;
} // namespace

struct GraphReader::State {
  State(json::ArrayStream stream, const std::string &source, const OpCatalog &catalog)
      : ops(std::move(stream)), head(ops.rest(), source), runs(ops, graph.source, catalog),
        batches([this](std::vector<Op> &b) { return runs.parse(b); }, ops.elements() >= kOpsParsedAhead) {
    graph.source = source;
  }

  json::ArrayStream ops;
  json::Document head; // the document with the ops array emptied
  Graph graph;
  std::optional<Members> top;
  OpRuns runs; // on the batches' thread, once that is started
  MadeAhead<std::vector<Op>> batches;
  std::vector<Op> *batch = nullptr; // the batch in use
  size_t next_in_batch = 0;
};

GraphReader::GraphReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
GraphReader::GraphReader(GraphReader &&) noexcept = default;
GraphReader::~GraphReader() = default;

std::optional<GraphReader> GraphReader::open(const std::filesystem::path &path, const OpCatalog &catalog) {
  auto ops = json::ArrayStream::open(path, "ops");
  if (!ops)
    return std::nullopt;
  auto s = std::make_unique<State>(std::move(*ops), path.string(), catalog);
  Graph &g = s->graph;
  Members &top = s->top.emplace(s->head.root(), g.source, "graph");
  read_head(top, g);
  top.req("ops", Doc::Kind::Array); // emptied: its elements come from next()
  g.tensors.reserve(g.tensors.size() + s->ops.elements());
  g.index.reserve(g.tensors.capacity());
  s->runs.populate_ahead(g.tensors.data() + g.tensors.size(),
                         (g.tensors.capacity() - g.tensors.size()) * sizeof(Tensor));
  // The outputs' names, for the estimate's program boundary; they are checked after the last op.
  if (auto outs = top.opt("outputs", Doc::Kind::Array))
    for (const View &o : outs->items())
      g.outputs.emplace_back(o.string());
  return GraphReader(std::move(s));
}

Graph &GraphReader::graph() {
  return state_->graph;
}

void GraphReader::parse_on(JobThread &jobs) {
  state_->batches.share(jobs);
}

Op *GraphReader::next(OpTensors &tensors) {
  State &s = *state_;
  if (!s.batch || s.next_in_batch == s.batch->size()) {
    s.batch = s.batches.next();
    s.next_in_batch = 0;
  }
  if (s.batch) {
    constexpr size_t kAhead = 8; // ops whose outputs' slots are fetched ahead of their insertion
    if (s.next_in_batch + kAhead < s.batch->size())
      for (const std::string &o : (*s.batch)[s.next_in_batch + kAhead].outputs)
        s.graph.index.prefetch(o);
    Op &op = (*s.batch)[s.next_in_batch++];
    bind_op(s.graph, op, tensors);
    return &op;
  }
  read_outputs(*s.top, s.graph);
  s.top->finish();
  return nullptr;
}

} // namespace anec::compiler
