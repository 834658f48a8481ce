// The ONNX front-end's reader. The model comes from the ONNX module (onnx_model.hpp), checked (onnx
// checker) and its shapes inferred (onnx shape inference with data propagation); here each node is
// either folded (provably constant: every input a constant, or the shape of a tensor whose dimensions
// are all known; onnx_fold.cpp) or mapped through the front-end map (tables/schema/frontend/onnx.toml)
// to a catalogue operation, its attributes translated (onnx_attributes.cpp) and the output shapes ONNX
// inference left unknown filled in (onnx_shapes.cpp). Shape tensors carry symbolic dimensions
// (onnx_sym.hpp), so a reshape target computed from a symbolic input is known; an `If` whose
// condition is known is inlined, otherwise both branches are analysed and the `If` stays; `Loop` and
// `Scan` stay with their bodies. For the evaluator (keep_values) the weights' values are recorded,
// the constant operands of the broadcasting ops are kept as constant tensors, and what an op means
// beyond its map row is passed on, or the op left for the evaluator to report (Translator).
#include "onnx_reader.hpp"
#include "anec/compiler/frontends/load.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>

namespace anec::compiler {

namespace onnx_front {

std::string dtype_of(int type) {
  switch (type) {
  case kFloat16:
    return "fp16";
  case kBfloat16:
    return "bf16";
  case kInt8:
    return "int8";
  case kUint8:
    return "uint8";
  case kInt16:
    return "int16";
  case kInt32:
    return "int32";
  case kInt64:
    return "int32"; // index tensors; no 64-bit engine type
  case kBool:
    return "uint8";
  default:
    return "fp32";
  }
}
bool integer_type(int type) {
  return type == kInt64 || type == kInt32 || type == kInt16 || type == kInt8 || type == kUint8 ||
         type == kBool;
}

int map_axis(int64_t axis, size_t rank) {
  if (axis < 0)
    axis += int64_t(rank);
  return rank >= 1 && rank <= 5 && axis >= 0 && axis < int64_t(rank) ? kLayout[rank][axis] : kC;
}

const Attribute *attribute(const Node &n, const char *name) {
  for (const auto &a : n.attributes)
    if (a.name == name)
      return &a;
  return nullptr;
}
std::vector<int64_t> ints(const Node &n, const char *name) {
  const auto *a = attribute(n, name);
  return a ? a->ints : std::vector<int64_t>{};
}
int64_t int_attr(const Node &n, const char *name, int64_t fallback) {
  const auto *a = attribute(n, name);
  return a && a->i ? *a->i : fallback;
}
float float_attr(const Node &n, const char *name, float fallback) {
  const auto *a = attribute(n, name);
  return a && a->f ? *a->f : fallback;
}
std::string string_attr(const Node &n, const char *name, const std::string &fallback) {
  const auto *a = attribute(n, name);
  return a && a->s ? *a->s : fallback;
}
bool given(const Node &n, int k) {
  return k < int(n.inputs.size()) && !n.inputs[size_t(k)].empty();
}

std::optional<Syms> tensor_values(const TensorData &t) {
  if (!t.values)
    return std::nullopt;
  Syms out;
  for (double v : *t.values)
    out.push_back(Sym::num(v));
  return out;
}

std::string Facts::resolve(const std::string &name) const {
  auto it = alias.find(name);
  return it == alias.end() ? name : resolve(it->second);
}
std::string Facts::input(const Node &n, int k) const {
  return given(n, k) ? resolve(n.inputs[size_t(k)]) : std::string();
}
const onnx_front::Value *Facts::value(const std::string &name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}
std::optional<Syms> Facts::data(const Node &n, int k) const {
  const onnx_front::Value *v = given(n, k) ? value(input(n, k)) : nullptr;
  return v ? v->data : std::nullopt;
}
const Full *Facts::full_of(const Node &n, int k) const {
  auto it = given(n, k) ? full.find(input(n, k)) : full.end();
  return it == full.end() ? nullptr : &it->second;
}
bool Facts::static_dims(const std::string &name) {
  const Info &i = info(name);
  return i.known &&
         std::all_of(i.dims.begin(), i.dims.end(), [](const Sym &d) { return d.positive_integer(); });
}
int64_t Facts::elements_of(const std::string &name) {
  const Info &i = info(name);
  if (!i.known)
    return -1;
  int64_t n = 1;
  for (const Sym &d : i.dims) {
    if (!d.positive_integer())
      return -1;
    auto m = checked_mul(n, int64_t(d.k));
    if (!m)
      return -1;
    n = *m;
  }
  return n;
}

std::vector<int64_t> input_ints(const Facts &facts, const Node &n, std::optional<int64_t> unknown) {
  std::vector<int64_t> out;
  if (auto d = facts.data(n, 1))
    for (const Sym &s : *d)
      if (s.is_number() || unknown)
        out.push_back(s.is_number() ? int64_t(s.k) : *unknown);
  return out;
}

const Api &api() {
  // Loaded once; a failed load throws and is tried again by the next caller.
  static const Api &table = plugin::load<Api>(kModule, kEntry, kVersion);
  return table;
}

} // namespace onnx_front

namespace {
using onnx_front::Facts;
using onnx_front::Info;
using onnx_front::kLayout;
using onnx_front::Node;
using onnx_front::Sym;
using onnx_front::Syms;
using onnx_front::Translator;

class Reader {
public:
  Reader(const onnx_front::Model &model, const std::string &source, const OpCatalog &catalog,
         bool keep_values)
      : model_(model), catalog_(catalog), keep_values_(keep_values) {
    g_.source = source;
    g_.front_end = "onnx";
  }

  Graph read() {
    const onnx_front::Graph &gp = model_.graph;
    collect_infos(gp);
    for (const auto &init : gp.initializers)
      constant_tensor(init);
    for (const auto &v : gp.inputs) {
      if (facts_.values.count(v.name))
        continue; // an initializer with a default value
      Tensor t = tensor(v.name);
      t.dynamic = model_.bound_inputs.count(v.name) > 0;
      g_.inputs.push_back(g_.add(std::move(t)).name);
    }
    read_nodes(gp, "");
    for (const auto &v : gp.outputs)
      if (g_.tensor(facts_.resolve(v.name)))
        g_.outputs.push_back(facts_.resolve(v.name));
    g_.source_nodes = source_nodes_;
    g_.folded_nodes = folded_;
    add_notes();
    if (keep_values_)
      drop_ambiguous_weights();
    return std::move(g_);
  }

private:
  const onnx_front::Model &model_;
  const OpCatalog &catalog_;
  bool keep_values_ = false; // record the weights' values for the evaluator (Graph::values)
  Graph g_;
  Facts facts_;
  std::set<std::string> input_symbols_; // the dimension symbols of the graph's inputs
  size_t source_nodes_ = 0, folded_ = 0, inlined_ = 0, unknown_shapes_ = 0;
  std::map<std::string, size_t> unmapped_;

  const std::string &src() const { return g_.source; }

  void add_notes() {
    if (folded_)
      g_.notes.push_back(std::to_string(folded_) + " node(s) on constants folded" +
                         (inlined_ ? " (" + std::to_string(inlined_) +
                                         " of them If nodes with a constant condition, inlined)"
                                   : ""));
    if (unknown_shapes_)
      g_.notes.push_back(std::to_string(unknown_shapes_) +
                         " tensor(s) without an inferred shape (marked symbolic)");
    for (auto &[type, count] : unmapped_) {
      // A row for the operator itself, or for its whole domain ("domain:op_type").
      const std::string *why = catalog_.unmapped_reason("onnx", type);
      size_t colon = type.rfind(':');
      if (!why && colon != std::string::npos)
        why = catalog_.unmapped_reason("onnx", type.substr(0, colon));
      g_.notes.push_back("unmapped ONNX op " + type + " x" + std::to_string(count) +
                         (why ? ": " + type + " is " + *why : ""));
    }
  }

  // A value's shape and type as ONNX inference gave it; nullopt for a value not a tensor. An
  // unnamed dimension of a graph input gets the symbol "<input>:<axis>" (bindable as --dim x:0=N).
  std::optional<Info> info_of(const onnx_front::ValueInfo &v, bool is_input) const {
    if (!v.tensor)
      return std::nullopt;
    Info i;
    i.type = v.elem_type;
    i.known = v.has_shape;
    for (size_t axis = 0; axis < (v.has_shape ? v.dims.size() : 0); ++axis) {
      const onnx_front::Dim &d = v.dims[axis];
      if (d.value && *d.value > kMaxDimension)
        throw Error("ANEC-GRAPH-003", src() + ": tensor '" + v.name + "' axis " + std::to_string(axis) +
                                          ": dimension " + std::to_string(*d.value) + " exceeds the limit " +
                                          std::to_string(kMaxDimension) + " (2^40)");
      if (d.value && *d.value < 0) // inferred so (declared ones are refused before inference)
        throw Error("ANEC-ONNX-005", src() + ": tensor '" + excerpt(v.name) + "' axis " +
                                         std::to_string(axis) + ": dimension " + std::to_string(*d.value) +
                                         " is negative");
      if (d.value && *d.value > 0)
        i.dims.push_back(Sym::num(double(*d.value)));
      else if (!d.param.empty())
        i.dims.push_back(Sym::sym(d.param));
      else if (is_input)
        i.dims.push_back(Sym::sym(v.name + ":" + std::to_string(axis)));
      else
        i.dims.push_back(Sym::unknown());
    }
    return i;
  }

  // Shapes and types of every value, in the main graph and every subgraph.
  void collect_infos(const onnx_front::Graph &gp) {
    bool main = &gp == &model_.graph;
    auto take = [&](const onnx_front::ValueInfo &v, bool is_input) {
      if (auto i = info_of(v, is_input))
        facts_.infos[v.name] = *i;
    };
    for (const auto &v : gp.inputs)
      take(v, main);
    if (main)
      for (const auto &[name, info] : facts_.infos)
        for (const Sym &d : info.dims)
          input_symbols_.insert(d.s.begin(), d.s.end());
    for (const auto &v : gp.value_info)
      take(v, false);
    for (const auto &v : gp.outputs)
      take(v, false);
    for (const auto &n : gp.nodes)
      for (const auto &a : n.attributes) {
        if (a.g)
          collect_infos(*a.g);
        for (const auto &sub : a.graphs)
          collect_infos(sub);
      }
  }

  void constant_tensor(const onnx_front::TensorData &t) {
    onnx_front::Value v;
    v.constant = true;
    v.data = tensor_values(t);
    Info i{{}, t.data_type, true};
    int64_t n = 1;
    for (int64_t d : t.dims) {
      i.dims.push_back(Sym::num(double(d)));
      auto m = checked_mul(n, std::max<int64_t>(d, 1));
      if (!m)
        throw Error("ANEC-GRAPH-003",
                    src() + ": tensor '" + t.name + "': its element count does not fit in 64 bits");
      n = *m;
    }
    v.elements = n;
    facts_.infos[t.name] = i;
    facts_.values[t.name] = std::move(v);
    if (keep_values_ && !t.all.empty())
      facts_.full[t.name] = {&t.all, t.dims};
  }

  Tensor tensor(const std::string &name) {
    Tensor t;
    t.name = name;
    const Info &i = facts_.info(name);
    t.set_source_rank(i.dims.size());
    t.dtype = onnx_front::dtype_of(i.type);
    if (i.dims.size() <= 5)
      for (size_t k = 0; k < i.dims.size(); ++k) {
        int a = kLayout[i.dims.size()][k];
        const Sym &d = i.dims[k];
        t.shape.d[a] = d.positive_integer() ? int64_t(d.k) : -1;
        if (t.shape.d[a] < 0)
          t.shape.symbol[a] = d.text();
      }
    if (!i.known) {
      t.shape.d[kC] = -1;
      t.shape.symbol[kC] = "?";
    }
    check_size(t, src());
    return t;
  }

  void read_nodes(const onnx_front::Graph &gp, const std::string &scope) {
    for (const auto &init : gp.initializers)
      if (!facts_.values.count(init.name))
        constant_tensor(init);
    for (const auto &n : gp.nodes)
      read_node(n, scope);
  }

  void read_node(const Node &n, const std::string &scope) {
    ++source_nodes_;
    if (!n.domain.empty()) // another domain's operator: never folded, never read as the standard's
      return map_node(n, scope, std::nullopt);
    if (n.op_type == "If")
      return read_if(n, scope);
    if (n.op_type == "Loop" || n.op_type == "Scan")
      return read_loop(n, scope);
    bool constant = provably_constant(n);
    std::optional<Syms> result = evaluate(facts_, n);
    if (constant)
      return fold(n, result);
    map_node(n, scope, result);
  }

  // Every input a constant (a node with none only if it is a Constant), not a random generator; or
  // the shape of a tensor whose dimensions are all known.
  bool provably_constant(const Node &n) {
    const std::string &type = n.op_type;
    if ((type == "Shape" || type == "Size") && n.inputs.size() == 1 &&
        facts_.static_dims(facts_.resolve(n.inputs[0])))
      return true;
    if (type.rfind("Random", 0) == 0 || type == "Multinomial" || type == "Bernoulli")
      return false;
    if (n.inputs.empty())
      return type == "Constant";
    return std::all_of(n.inputs.begin(), n.inputs.end(), [&](const std::string &i) {
      const onnx_front::Value *v = i.empty() ? nullptr : facts_.value(facts_.resolve(i));
      return i.empty() || (v && v->constant);
    });
  }

  // Folded at compile time, not an engine op.
  void fold(const Node &n, const std::optional<Syms> &result) {
    std::vector<std::optional<Syms>> parts = split_values(facts_, n);
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const std::string &o = n.outputs[k];
      onnx_front::Value &v = facts_.values[o];
      v.constant = true;
      v.data = n.op_type == "Split" ? parts[k] : result;
      v.elements = facts_.elements_of(o);
    }
    if (keep_values_)
      carry_full(facts_, n);
    ++folded_;
  }

  // Integer arithmetic on dimensions: every runtime input derived from a Shape.
  bool shape_math(const Node &n) const {
    if (n.op_type == "Shape" || n.op_type == "Size")
      return false;
    bool any_runtime = false;
    for (const auto &i : n.inputs) {
      const onnx_front::Value *v = i.empty() ? nullptr : facts_.value(facts_.resolve(i));
      if (i.empty() || (v && v->constant))
        continue;
      if (!(v && v->shape_data))
        return false;
      any_runtime = true;
    }
    return any_runtime;
  }

  void map_node(const Node &n, const std::string &scope, const std::optional<Syms> &result) {
    const std::string &type = n.op_type;
    Op op;
    op.name = scope + (n.name.empty() ? type + "_" + std::to_string(g_.ops.size()) : n.name);
    // An operator of another domain (com.microsoft, ai.onnx.ml, ...) is not the default domain's
    // operator of the same name (com.microsoft Attention is not ONNX Attention): never mapped here.
    bool standard = n.domain.empty();
    bool math = standard && shape_math(n);
    const FrontEndOp *row = standard ? catalog_.front_end("onnx", type) : nullptr;
    std::string full = standard ? type : n.domain + ":" + type;
    op.type = math ? "shape_math" : row ? row->op : "onnx:" + full;
    if (!math && !row)
      ++unmapped_[full];
    const FrontEndOp *mapped = math ? nullptr : row;
    Translator translate(facts_, g_, n, op);
    std::map<int, std::string> kept;
    if (keep_values_ && mapped)
      kept = translate.broadcast_constants(mapped->op);
    map_inputs(n, op, mapped && mapped->weights, math, kept);
    if (mapped)
      translate.map(*mapped);
    if (keep_values_ && op.type == "compare") // the evaluator's comparison (default "equal")
      op.attrs.set("mode", Doc::string(Translator::compare_mode(type)));
    bool shape_data = math || type == "Shape" || type == "Size";
    if (shape_data)
      op.attrs.set("depends_on", Doc::string(depends_on(result)));
    const OpSpec *spec = catalog_.find(op.type);
    fill_unknown_shapes(facts_, input_symbols_, n, spec && spec->shape == "same");
    add_outputs(n, op, shape_data, result);
    if (keep_values_ && mapped && mapped->weights)
      translate.record_weights();
    if (keep_values_ && mapped)
      translate.eval_semantics();
    g_.ops.push_back(std::move(op));
  }

  // The symbols a shape computation's values derive from, "?" where none is known.
  static std::string depends_on(const std::optional<Syms> &result) {
    std::string symbols;
    if (result)
      for (const Sym &s : *result)
        if (!s.is_number())
          symbols += (symbols.empty() ? "" : ", ") + s.text();
    return symbols.empty() ? "?" : symbols;
  }

  // Inputs: runtime tensors. Constants are weights (where the map row streams them) or attributes; a
  // shape computed at run time beside a data input (a reshape's target) is kept as `shape_inputs`.
  // With keep_values, a broadcasting op's constant operands are inputs too (`kept`, by position).
  void map_inputs(const Node &n, Op &op, bool streams_weights, bool math,
                  const std::map<int, std::string> &kept) {
    int64_t weights = 0;
    Doc shape_inputs = Doc::array();
    bool has_data = std::any_of(n.inputs.begin(), n.inputs.end(), [&](const std::string &i) {
      const onnx_front::Value *v = i.empty() ? nullptr : facts_.value(facts_.resolve(i));
      return !i.empty() && !(v && (v->constant || v->shape_data));
    });
    for (int k = 0; k < int(n.inputs.size()); ++k) {
      const std::string i = facts_.input(n, k);
      if (i.empty())
        continue;
      const onnx_front::Value *v = facts_.value(i);
      if (auto it = kept.find(k); it != kept.end()) {
        op.inputs.push_back(it->second);
      } else if (v && v->constant) {
        if (streams_weights && v->elements > 0)
          weights = add_or_throw(weights, v->elements, "ANEC-GRAPH-003",
                                 src() + ": node '" + op.name + "' weight elements");
      } else if (!g_.tensor(i)) {
        throw Error("ANEC-GRAPH-002",
                    src() + ": node '" + op.name + "' reads '" + i + "', which nothing defines before it");
      } else if (has_data && !math && v && v->shape_data) {
        shape_inputs.push(Doc::string(i));
      } else if (std::find(op.inputs.begin(), op.inputs.end(), i) == op.inputs.end()) {
        op.inputs.push_back(i);
      }
    }
    if (!shape_inputs.items().empty())
      op.attrs.set("shape_inputs", std::move(shape_inputs));
    if (weights)
      op.attrs.set("weight_elements", Doc::integer(weights));
  }

  void add_outputs(const Node &n, Op &op, bool shape_data, const std::optional<Syms> &result) {
    for (const auto &o : n.outputs) {
      if (o.empty())
        continue;
      onnx_front::Value &v = facts_.values[o];
      v.shape_data = shape_data;
      v.data = result;
      add_output(o, op);
    }
  }
  void add_output(const std::string &name, Op &op) {
    if (!facts_.info(name).known)
      ++unknown_shapes_;
    op.outputs.push_back(g_.add(tensor(name)).name);
  }

  // The evaluator finds an op's weights by its name: where two ops share one, neither reads any.
  void drop_ambiguous_weights() {
    std::set<std::string> seen;
    for (const Op &op : g_.ops)
      if (!seen.insert(op.name).second) {
        g_.values.erase(op.name + "/weight");
        g_.values.erase(op.name + "/bias");
      }
  }

  // An `If`: a known condition inlines the branch it selects; otherwise both branches are read (their
  // operations named "<if>/then/..." and "<if>/else/...") and the If stays as a host `cond` that
  // selects between the branches' results.
  void read_if(const Node &n, const std::string &scope) {
    const auto *then_g = attribute(n, "then_branch"), *else_g = attribute(n, "else_branch");
    if (!then_g || !else_g || !then_g->g || !else_g->g)
      throw Error("ANEC-ONNX-002", src() + ": If node '" + n.name + "' lacks a then or else branch");
    std::string name = scope + (n.name.empty() ? "If_" + std::to_string(g_.ops.size()) : n.name);
    auto cond = facts_.data(n, 0);
    if (cond && cond->size() == 1 && (*cond)[0].is_number()) {
      bool then = (*cond)[0].k != 0;
      const onnx_front::Graph &branch = then ? *then_g->g : *else_g->g;
      read_nodes(branch, name + "/" + (then ? "then/" : "else/"));
      for (size_t k = 0; k < n.outputs.size() && k < branch.outputs.size(); ++k)
        facts_.alias[n.outputs[k]] = branch.outputs[k].name;
      ++inlined_;
      ++folded_; // the If itself: decided at compile time
      return;
    }
    read_nodes(*then_g->g, name + "/then/");
    read_nodes(*else_g->g, name + "/else/");
    std::vector<std::string> results = {n.inputs[0]};
    for (const auto *b : {then_g, else_g})
      for (const auto &o : b->g->outputs)
        results.push_back(o.name);
    keep_control(n, name, "cond", results, {});
  }

  // A `Loop` or `Scan` stays as a host `while_loop`; its body is read after it, the body's inputs
  // (iteration count, condition, carried state, scanned slices) being the loop op's outputs.
  void read_loop(const Node &n, const std::string &scope) {
    const auto *body = attribute(n, "body");
    if (!body || !body->g)
      throw Error("ANEC-ONNX-002", src() + ": " + n.op_type + " node '" + n.name + "' has no body");
    std::string name = scope + (n.name.empty() ? n.op_type + "_" + std::to_string(g_.ops.size()) : n.name);
    std::vector<std::string> used(n.inputs.begin(), n.inputs.end());
    captured(*body->g, used);
    std::vector<std::string> state;
    for (const auto &v : body->g->inputs)
      state.push_back(v.name);
    keep_control(n, name, "while_loop", used, state);
    read_nodes(*body->g, name + "/body/");
  }
  // The outer names a subgraph reads (recursively), in order.
  static void captured(const onnx_front::Graph &gp, std::vector<std::string> &out) {
    std::set<std::string> defined;
    for (const auto &v : gp.inputs)
      defined.insert(v.name);
    for (const auto &v : gp.initializers)
      defined.insert(v.name);
    for (const auto &node : gp.nodes) {
      for (const auto &i : node.inputs)
        if (!i.empty() && !defined.count(i))
          out.push_back(i);
      for (const auto &a : node.attributes)
        if (a.g)
          captured(*a.g, out);
      for (const auto &o : node.outputs)
        defined.insert(o);
    }
  }

  void keep_control(const Node &n, const std::string &name, const std::string &type,
                    const std::vector<std::string> &reads, const std::vector<std::string> &state) {
    Op op;
    op.name = name;
    op.type = type;
    for (const std::string &r : reads) {
      std::string i = facts_.resolve(r);
      const onnx_front::Value *v = facts_.value(i);
      if (i.empty() || (v && v->constant) || !g_.tensor(i))
        continue;
      if (std::find(op.inputs.begin(), op.inputs.end(), i) == op.inputs.end())
        op.inputs.push_back(i);
    }
    for (const std::string &s : state) {
      if (g_.tensor(s))
        continue;
      facts_.values[s];
      op.outputs.push_back(g_.add(tensor(s)).name);
    }
    for (const auto &o : n.outputs) {
      if (o.empty())
        continue;
      facts_.values[o];
      add_output(o, op);
    }
    g_.ops.push_back(std::move(op));
  }
};
} // namespace

namespace {
// Protobuf's wire format, read only as far as counting the nodes a model holds, before a parser
// allocates for them: a varint, and each length-delimited field of a message.
bool wire_varint(std::string_view &s, uint64_t &v) {
  v = 0;
  for (int shift = 0; shift < 64 && !s.empty(); shift += 7) {
    auto byte = uint8_t(s.front());
    s.remove_prefix(1);
    v |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

// `on(field, payload)` for each length-delimited field of a message, in order; stops at bytes that
// are not a message (the parser says what is wrong with them).
template <class On> void each_wire_field(std::string_view s, On on) {
  uint64_t key = 0, n = 0;
  while (!s.empty() && wire_varint(s, key) && key >> 3 != 0) { // field 0: not protobuf
    switch (key & 7) {
    case 0: // a varint
      if (!wire_varint(s, n))
        return;
      continue;
    case 1: // 64 bits
      n = 8;
      break;
    case 5: // 32 bits
      n = 4;
      break;
    case 2:
      if (!wire_varint(s, n) || n > s.size())
        return;
      on(key >> 3, s.substr(0, n));
      break;
    default: // groups, or not protobuf
      return;
    }
    if (n > s.size())
      return;
    s.remove_prefix(n);
  }
}

// The nodes of a graph (onnx.proto: GraphProto.node = 1) and of the subgraphs its nodes' attributes
// hold (NodeProto.attribute = 5; AttributeProto.g = 6, graphs = 11), as deep as protobuf parses.
uint64_t graph_nodes(std::string_view graph, int depth = 100) {
  uint64_t n = 0;
  if (depth > 0)
    each_wire_field(graph, [&](uint64_t field, std::string_view node) {
      if (field != 1)
        return;
      ++n;
      each_wire_field(node, [&](uint64_t f, std::string_view attribute) {
        if (f == 5)
          each_wire_field(attribute, [&](uint64_t a, std::string_view sub) {
            if (a == 6 || a == 11)
              n += graph_nodes(sub, depth - 1);
          });
      });
    });
  return n;
}

// A model's nodes: its graph's (ModelProto.graph = 7) and its functions' (ModelProto.functions = 25,
// FunctionProto.node = 7).
uint64_t model_nodes(std::string_view model) {
  uint64_t n = 0;
  each_wire_field(model, [&](uint64_t field, std::string_view m) {
    if (field == 7)
      n += graph_nodes(m);
    else if (field == 25)
      each_wire_field(m, [&](uint64_t f, std::string_view) { n += f == 7; });
  });
  return n;
}

// What reading an ONNX model holds at its peak (the parsed model, the library's inference, the graph):
// per node and per byte of the file. Measured: 300,000 Relu nodes in 12.9 MB peaked at 630 MB
// (2.07 KB a node); a 26 MB initializer at 116 MB (4.4 bytes a byte).
constexpr double kOnnxBytesPerNode = 2150, kOnnxBytesPerFileByte = 4.5;

void check_read_budget(std::string_view bytes, const std::string &source, double budget) {
  uint64_t nodes = model_nodes(bytes);
  double need = double(nodes) * kOnnxBytesPerNode + double(bytes.size()) * kOnnxBytesPerFileByte;
  if (need > budget)
    throw Error("ANEC-MEM-001", source + ": reading the model needs about " + size_text(need) + " (" +
                                    std::to_string(nodes) + " node(s) at " + size_text(kOnnxBytesPerNode) +
                                    " and " + size_text(double(bytes.size())) + " of file at " +
                                    fixed(kOnnxBytesPerFileByte, 1) +
                                    " bytes a byte), more than the memory budget of " + size_text(budget) +
                                    " (--max-memory)");
}
} // namespace

Graph read_onnx(std::string_view bytes, const std::string &source, const OpCatalog &catalog,
                const DimBindings &bind, bool keep_values, const std::filesystem::path &folder,
                double max_memory) {
  check_read_budget(bytes, source, max_memory);
  onnx_front::Model model = onnx_front::api().read(bytes, source, bind, keep_values, folder.string());
  Graph g = Reader(model, source, catalog, keep_values).read();
  g.notes.insert(g.notes.begin(), model.notes.begin(), model.notes.end());
  return g;
}

} // namespace anec::compiler
