// The ONNX front-end. The model comes from the ONNX module (onnx_model.hpp), checked (onnx checker)
// and its shapes inferred (onnx shape inference with data propagation); here each node is either
// folded (provably constant: every input a constant, or the shape of a tensor whose dimensions are
// all known) or mapped through the front-end map (tables/schema/frontend/onnx.toml) to a catalogue
// operation. Shape tensors carry symbolic dimensions (onnx_sym.hpp), so a reshape target computed
// from a symbolic input is known; an `If` whose condition is known is inlined, otherwise both
// branches are analysed and the `If` stays; `Loop` and `Scan` stay with their bodies. For the
// evaluator (keep_values) the weights' values are recorded, the constant operands of the
// broadcasting ops are kept as constant tensors, and what an op means beyond its map row (activation
// attributes, Clip's bounds, the normalizations' constants, Resize's mode) is passed on, or the op
// left for the evaluator to report where it would compute something else (eval_semantics).
#include "anec/compiler/frontends/load.hpp"
#include "onnx_model.hpp"
#include "onnx_sym.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace anec::compiler {

namespace {
using onnx_front::Sym;
using Syms = std::vector<Sym>;

std::string dtype_of(int t) {
  switch (t) {
  case onnx_front::kFloat16:
    return "fp16";
  case onnx_front::kBfloat16:
    return "bf16";
  case onnx_front::kInt8:
    return "int8";
  case onnx_front::kUint8:
    return "uint8";
  case onnx_front::kInt16:
    return "int16";
  case onnx_front::kInt32:
    return "int32";
  case onnx_front::kInt64:
    return "int32"; // index tensors; no 64-bit engine type
  case onnx_front::kBool:
    return "uint8";
  default:
    return "fp32";
  }
}
bool integer_type(int t) {
  return t == onnx_front::kInt64 || t == onnx_front::kInt32 || t == onnx_front::kInt16 ||
         t == onnx_front::kInt8 || t == onnx_front::kUint8 || t == onnx_front::kBool;
}

// ONNX rank r to [N, D, C, H, W]: 4-D NCHW, 3-D N C L (L as width), 2-D N F (F as channels), 1-D F,
// 5-D N C D H W.
constexpr int kLayout[6][5] = {{}, {kC}, {kN, kC}, {kN, kC, kW}, {kN, kC, kH, kW}, {kN, kC, kD, kH, kW}};
int map_axis(int64_t axis, size_t rank) {
  if (axis < 0)
    axis += int64_t(rank);
  return rank >= 1 && rank <= 5 && axis >= 0 && axis < int64_t(rank) ? kLayout[rank][axis] : kC;
}

struct Info {
  Syms dims;
  int type = 0;
  bool known = false; // the rank is known
};

const onnx_front::Attribute *attribute(const onnx_front::Node &n, const char *name) {
  for (const auto &a : n.attributes)
    if (a.name == name)
      return &a;
  return nullptr;
}
std::vector<int64_t> ints(const onnx_front::Node &n, const char *name) {
  const auto *a = attribute(n, name);
  return a ? a->ints : std::vector<int64_t>{};
}
int64_t int_attr(const onnx_front::Node &n, const char *name, int64_t fallback) {
  const auto *a = attribute(n, name);
  return a && a->i ? *a->i : fallback;
}
float float_attr(const onnx_front::Node &n, const char *name, float fallback) {
  const auto *a = attribute(n, name);
  return a && a->f ? *a->f : fallback;
}
std::string string_attr(const onnx_front::Node &n, const char *name, const std::string &fallback) {
  const auto *a = attribute(n, name);
  return a && a->s ? *a->s : fallback;
}
Doc int_array(const std::vector<int64_t> &v) {
  Doc a = Doc::array();
  for (int64_t x : v)
    a.push(Doc::integer(x));
  return a;
}

// The values the module copied of a small tensor (onnx_front::kMaxValues), as numbers.
std::optional<Syms> tensor_values(const onnx_front::TensorData &t) {
  if (!t.values)
    return std::nullopt;
  Syms out;
  for (double v : *t.values)
    out.push_back(Sym::num(v));
  return out;
}

// What is known of a tensor's value.
struct Value {
  bool constant = false;   // provably constant: no runtime input reaches it
  bool shape_data = false; // integer arithmetic on dimensions (derived from a Shape)
  std::optional<Syms>
      data;              // its elements, when known (small tensors), symbolic where they derive from symbols
  int64_t elements = -1; // its element count, when known
};

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
      if (values_.count(v.name))
        continue; // an initializer with a default value
      Tensor t = tensor(v.name);
      t.dynamic = model_.bound_inputs.count(v.name) > 0;
      g_.inputs.push_back(g_.add(std::move(t)).name);
    }
    read_nodes(gp, "");
    for (const auto &v : gp.outputs)
      if (g_.tensor(resolve(v.name)))
        g_.outputs.push_back(resolve(v.name));
    g_.source_nodes = source_nodes_;
    g_.folded_nodes = folded_;
    if (folded_)
      g_.notes.push_back(std::to_string(folded_) + " node(s) on constants folded" +
                         (inlined_ ? " (" + std::to_string(inlined_) +
                                         " of them If nodes with a constant condition, inlined)"
                                   : ""));
    if (unknown_shapes_)
      g_.notes.push_back(std::to_string(unknown_shapes_) +
                         " tensor(s) without an inferred shape (marked symbolic)");
    for (auto &[type, count] : unmapped_)
      g_.notes.push_back("unmapped ONNX op " + type + " x" + std::to_string(count));
    if (keep_values_)
      drop_ambiguous_weights();
    return std::move(g_);
  }

private:
  const onnx_front::Model &model_;
  const OpCatalog &catalog_;
  bool keep_values_ = false; // record the weights' values for the evaluator (Graph::values)
  Graph g_;
  std::map<std::string, Info> infos_;
  std::map<std::string, Value> values_;
  std::map<std::string, std::string> alias_; // an inlined If's output -> the branch tensor it is
  std::set<std::string> input_symbols_;      // the dimension symbols of the graph's inputs
  // With keep_values_: the constants whose every element the module copied, by name (an initializer,
  // a Constant node's value, or one of those through Identity, Cast to a float type or a reshape).
  struct Full {
    const std::vector<float> *values = nullptr;
    std::vector<int64_t> dims;
  };
  std::map<std::string, Full> full_;
  size_t source_nodes_ = 0, folded_ = 0, inlined_ = 0, unknown_shapes_ = 0;
  std::map<std::string, size_t> unmapped_;

  std::string resolve(const std::string &name) const {
    auto it = alias_.find(name);
    return it == alias_.end() ? name : resolve(it->second);
  }
  const std::string &src() const { return g_.source; }

  // Shapes and types of every value, in the main graph and every subgraph.
  void collect_infos(const onnx_front::Graph &gp) {
    auto take = [&](const onnx_front::ValueInfo &v, bool is_input) {
      Info i;
      if (!v.tensor)
        return;
      i.type = v.elem_type;
      if (v.has_shape) {
        i.known = true;
        int axis = 0;
        for (const onnx_front::Dim &d : v.dims) {
          if (d.value && *d.value > kMaxDimension)
            throw Error("ANEC-GRAPH-003", src() + ": tensor '" + v.name + "' axis " + std::to_string(axis) +
                                              ": dimension " + std::to_string(*d.value) +
                                              " exceeds the limit " + std::to_string(kMaxDimension) +
                                              " (2^40)");
          if (d.value && *d.value > 0)
            i.dims.push_back(Sym::num(double(*d.value)));
          else if (!d.param.empty())
            i.dims.push_back(Sym::sym(d.param));
          else if (is_input)
            i.dims.push_back(Sym::sym(v.name + ":" + std::to_string(axis))); // bindable as --dim x:0=N
          else
            i.dims.push_back(Sym::unknown());
          ++axis;
        }
      }
      infos_[v.name] = i;
    };
    for (const auto &v : gp.inputs)
      take(v, &gp == &model_.graph);
    if (&gp == &model_.graph)
      for (const auto &[name, info] : infos_)
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
    Value v;
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
    infos_[t.name] = i;
    values_[t.name] = std::move(v);
    if (keep_values_ && !t.all.empty())
      full_[t.name] = {&t.all, t.dims};
  }

  Tensor tensor(const std::string &name) {
    Tensor t;
    t.name = name;
    const Info &i = infos_[name];
    t.source_rank = int(i.dims.size());
    t.dtype = dtype_of(i.type);
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

  bool static_dims(const std::string &name) {
    const Info &i = infos_[name];
    return i.known &&
           std::all_of(i.dims.begin(), i.dims.end(), [](const Sym &d) { return d.positive_integer(); });
  }
  const Value *value(const std::string &name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  std::optional<Syms> data(const onnx_front::Node &n, int k) const {
    if (k >= int(n.inputs.size()) || n.inputs[size_t(k)].empty())
      return std::nullopt;
    const Value *v = value(resolve(n.inputs[size_t(k)]));
    return v ? v->data : std::nullopt;
  }

  void read_nodes(const onnx_front::Graph &gp, const std::string &scope) {
    for (const auto &init : gp.initializers)
      if (!values_.count(init.name))
        constant_tensor(init);
    for (const auto &n : gp.nodes)
      read_node(n, scope);
  }

  void read_node(const onnx_front::Node &n, const std::string &scope) {
    ++source_nodes_;
    const std::string &type = n.op_type;
    if (type == "If")
      return read_if(n, scope);
    if (type == "Loop" || type == "Scan")
      return read_loop(n, scope);
    bool constant = int(n.inputs.size()) > 0 || type == "Constant";
    bool shape_of_static =
        (type == "Shape" || type == "Size") && int(n.inputs.size()) == 1 && static_dims(resolve(n.inputs[0]));
    for (const auto &i : n.inputs) {
      const Value *v = i.empty() ? nullptr : value(resolve(i));
      if (!i.empty() && !(v && v->constant))
        constant = false;
    }
    if (type.rfind("Random", 0) == 0 || type == "Multinomial" || type == "Bernoulli")
      constant = false;
    constant = constant || shape_of_static;
    std::optional<Syms> result = evaluate(n);
    if (constant) { // provably constant: folded at compile time, not an engine op
      std::vector<std::optional<Syms>> parts = split_values(n);
      for (int k = 0; k < int(n.outputs.size()); ++k) {
        const std::string &o = n.outputs[size_t(k)];
        Value &v = values_[o];
        v.constant = true;
        v.data = type == "Split" ? parts[size_t(k)] : result;
        v.elements = elements_of(o);
      }
      if (keep_values_)
        carry_full(n);
      ++folded_;
      return;
    }
    Op op;
    op.name = scope + (n.name.empty() ? type + "_" + std::to_string(g_.ops.size()) : n.name);
    bool shape_math = type != "Shape" && type != "Size";
    bool any_runtime = false;
    for (const auto &i : n.inputs) {
      if (i.empty())
        continue;
      const Value *v = value(resolve(i));
      if (v && v->constant)
        continue;
      any_runtime = true;
      shape_math = shape_math && v && v->shape_data;
    }
    shape_math = shape_math && any_runtime;
    const FrontEndOp *row = catalog_.front_end("onnx", type);
    op.type = shape_math ? "shape_math" : row ? row->op : "onnx:" + type;
    if (!shape_math && !row)
      ++unmapped_[type];
    // Inputs: runtime tensors. Constants are weights (where the map says so) or attributes; a shape
    // computed at run time beside a data input (a reshape's target) is kept as `shape_inputs`. With
    // keep_values_, a broadcasting op's constant operands are inputs too (broadcast_constants).
    std::map<int, std::string> kept;
    if (keep_values_ && row && !shape_math)
      kept = broadcast_constants(n, row->op);
    int64_t weights = 0;
    Doc shape_inputs = Doc::array();
    bool has_data = false;
    for (const auto &i : n.inputs)
      if (const Value *v = i.empty() ? nullptr : value(resolve(i));
          !i.empty() && !(v && (v->constant || v->shape_data)))
        has_data = true;
    for (int k = 0; k < int(n.inputs.size()); ++k) {
      const std::string i = resolve(n.inputs[size_t(k)]);
      if (i.empty())
        continue;
      const Value *v = value(i);
      if (auto it = kept.find(k); it != kept.end()) {
        op.inputs.push_back(it->second);
        continue;
      }
      if (v && v->constant) {
        if (row && row->weights && !shape_math && v->elements > 0)
          weights = add_or_throw(weights, v->elements, "ANEC-GRAPH-003",
                                 src() + ": node '" + op.name + "' weight elements");
        continue;
      }
      if (!g_.tensor(i))
        throw Error("ANEC-GRAPH-002",
                    src() + ": node '" + op.name + "' reads '" + i + "', which nothing defines before it");
      if (has_data && !shape_math && v && v->shape_data)
        shape_inputs.push(Doc::string(i));
      else if (std::find(op.inputs.begin(), op.inputs.end(), i) == op.inputs.end())
        op.inputs.push_back(i);
    }
    if (!shape_inputs.items().empty())
      op.attrs.set("shape_inputs", std::move(shape_inputs));
    if (weights)
      op.attrs.set("weight_elements", Doc::integer(weights));
    if (row && !shape_math)
      attributes(n, *row, op);
    if (keep_values_ && op.type == "compare") // the evaluator's comparison (default "equal")
      op.attrs.set("mode", Doc::string(compare_mode(type)));
    if (shape_math || type == "Shape" || type == "Size") {
      std::string symbols;
      if (result)
        for (const Sym &s : *result)
          if (!s.is_number())
            symbols += (symbols.empty() ? "" : ", ") + s.text();
      op.attrs.set("depends_on", Doc::string(symbols.empty() ? "?" : symbols));
    }
    fill_unknown_shapes(n, op);
    for (const auto &o : n.outputs) {
      if (o.empty())
        continue;
      Value &v = values_[o];
      v.shape_data = shape_math || type == "Shape" || type == "Size";
      v.data = result;
      if (!infos_[o].known)
        ++unknown_shapes_;
      op.outputs.push_back(g_.add(tensor(o)).name);
    }
    if (keep_values_ && row && row->weights && !shape_math)
      record_weights(n, op);
    if (keep_values_ && row && !shape_math)
      eval_semantics(n, op);
    g_.ops.push_back(std::move(op));
  }

  int64_t elements_of(const std::string &name) {
    const Info &i = infos_[name];
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

  // ---- the values the evaluator reads (keep_values_) ----

  // A folded node that passes a wholly copied constant on unchanged (a Constant's value, Identity, a
  // Cast to float or double, a reshape): its output's values are that constant's.
  void carry_full(const onnx_front::Node &n) {
    if (n.outputs.empty() || n.outputs[0].empty())
      return;
    const std::string &t = n.op_type, &o = n.outputs[0];
    if (t == "Constant") {
      const auto *a = attribute(n, "value");
      if (a && a->t && !a->t->all.empty())
        full_[o] = {&a->t->all, a->t->dims};
      return;
    }
    int64_t to = int_attr(n, "to", 0);
    bool same = t == "Identity" || t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" ||
                (t == "Cast" && (to == onnx_front::kFloat || to == onnx_front::kDouble));
    const Full *in = full(n, 0);
    if (!same || !in || !static_dims(o))
      return;
    Full out{in->values, {}};
    size_t count = 1;
    for (const Sym &d : infos_[o].dims) {
      out.dims.push_back(int64_t(d.k));
      count *= size_t(d.k);
    }
    if (count == in->values->size())
      full_[o] = std::move(out);
  }

  const Full *full(const onnx_front::Node &n, int k) const {
    if (k >= int(n.inputs.size()) || n.inputs[size_t(k)].empty())
      return nullptr;
    auto it = full_.find(resolve(n.inputs[size_t(k)]));
    return it == full_.end() ? nullptr : &it->second;
  }

  // The weights of a conv, deconv or linear layer whose constant operands were copied whole, as the
  // evaluator reads them (Graph::values "<op>/weight" and "<op>/bias", docs/graph-format.md
  // "Evaluation"): conv [O, C/groups, kh, kw], deconv [C_in, O/groups, kh, kw], linear
  // [out_features, C_in], the bias [O]. An op whose operands do not map exactly onto those is left
  // out: the evaluator gives it seeded weights and says so.
  void record_weights(const onnx_front::Node &n, const Op &op) {
    const std::string &t = n.op_type;
    if (op.inputs.size() != 1 || n.inputs.size() < 2 || n.inputs.size() > 3 ||
        resolve(n.inputs[0]) != op.inputs[0])
      return; // the data input is not ONNX input 0 (a constant left operand), or a runtime operand
    const Full *w = full(n, 1), *b = full(n, 2);
    if (!w || (n.inputs.size() > 2 && !n.inputs[2].empty() && !b))
      return;
    size_t rank = infos_[op.inputs[0]].dims.size();
    std::vector<float> weight, bias;
    if (t == "Conv" || t == "ConvTranspose") {
      // 1-D (N C L, the kernel along W: [O, C, k] is [O, C, 1, k]) or 2-D (N C H W); the ONNX
      // weight layouts are the evaluator's.
      if ((rank != 3 && rank != 4) || w->dims.size() != rank)
        return;
      int64_t out = t == "Conv" ? w->dims[0] : w->dims[1] * int_attr(n, "group", 1);
      if (b && (b->dims.size() != 1 || int64_t(b->values->size()) != out))
        return;
      weight = *w->values;
      if (b)
        bias = *b->values;
    } else if (t == "Gemm" || t == "MatMul") {
      // x [M, K] is [M, 1, K, 1, 1] (and a MatMul's x [K] is [1, 1, K, 1, 1]), contracted over C as
      // linear does; a rank-3 or higher x holds K along W, which linear does not contract.
      bool gemm = t == "Gemm", trans_b = gemm && int_attr(n, "transB", 0);
      if (op.type != "linear" || w->dims.size() != 2 || (rank != 2 && (gemm || rank != 1)))
        return;
      if (gemm && (int_attr(n, "transA", 0) || float_attr(n, "alpha", 1) != 1 ||
                   (b && float_attr(n, "beta", 1) != 1)))
        return;
      size_t k = size_t(trans_b ? w->dims[1] : w->dims[0]), m = size_t(trans_b ? w->dims[0] : w->dims[1]);
      const std::vector<float> &v = *w->values;
      if (trans_b) {
        weight = v;
      } else { // B [K, N] to [N, K]
        weight.resize(v.size());
        for (size_t i = 0; i < k; ++i)
          for (size_t j = 0; j < m; ++j)
            weight[j * k + i] = v[i * m + j];
      }
      if (b) { // C broadcast to [M, N]: one value per output feature ([N] or [1, N]), or one for all
        size_t count = b->values->size();
        bool per_feature = count == m && (b->dims.size() == 1 || (b->dims.size() == 2 && b->dims[0] == 1));
        if (!per_feature && count != 1)
          return;
        bias = per_feature ? *b->values : std::vector<float>(m, (*b->values)[0]);
      }
    } else {
      return;
    }
    g_.values[op.name + "/weight"].data = std::move(weight);
    if (b)
      g_.values[op.name + "/bias"].data = std::move(bias);
  }

  // With keep_values_: the constant operands of an op the evaluator computes by broadcasting (add,
  // sub, mul, div, max, min, pow, prelu, select, compare, floor_div; docs/graph-format.md
  // "Evaluation"), each as a constant tensor with its values, by ONNX input position. ONNX broadcasting
  // is right-aligned: a constant's dims are left-padded with 1s to the rank of the op's runtime
  // operands, then laid out as a tensor of that rank is (kLayout), so that broadcasting over the five
  // axes is ONNX's. Empty (the op as without keep_values_) unless every constant operand was copied
  // whole and the layout is unambiguous: the runtime operands all of one known rank, the output's,
  // no wider than 5, and no constant of a higher rank. Not for Mean (a sum then a scale) nor an
  // integer Div (ONNX truncates).
  std::map<int, std::string> broadcast_constants(const onnx_front::Node &n, const std::string &op) {
    static const std::set<std::string> kBroadcast = {"add", "sub",   "mul",    "div",     "max",      "min",
                                                     "pow", "prelu", "select", "compare", "floor_div"};
    const std::string &t = n.op_type;
    if (!kBroadcast.count(op) || t == "Mean" || n.outputs.empty() || n.outputs[0].empty())
      return {};
    const Info &y = infos_[n.outputs[0]];
    if (t == "Div" && integer_type(y.type))
      return {};
    std::optional<size_t> rank;
    std::vector<std::pair<int, const Full *>> constants;
    for (int k = 0; k < int(n.inputs.size()); ++k) {
      const std::string i = resolve(n.inputs[size_t(k)]);
      if (i.empty())
        continue;
      const Value *v = value(i);
      if (v && v->constant) {
        const Full *f = full(n, k);
        if (!f)
          return {};
        constants.emplace_back(k, f);
        continue;
      }
      const Info &x = infos_[i];
      if ((v && v->shape_data) || !x.known || (rank && *rank != x.dims.size()))
        return {};
      rank = x.dims.size();
    }
    if (!rank || *rank > 5 || (y.known && y.dims.size() != *rank))
      return {};
    for (const auto &[k, f] : constants)
      if (f->dims.size() > *rank)
        return {};
    std::map<int, std::string> out;
    for (const auto &[k, f] : constants)
      out[k] = constant_operand(resolve(n.inputs[size_t(k)]), *f, *rank);
    return out;
  }

  // A constant operand as a graph constant with its values (Graph::values), its dims left-padded with
  // 1s to `rank` and laid out as a tensor of that rank. Named as the constant, or, where the graph
  // holds that name with another shape (or the name ends as the evaluator's keys of embedded weights
  // do, "/weight" or "/bias"), with its 5-D shape appended ("w@1x1x8x1x1").
  std::string constant_operand(const std::string &name, const Full &f, size_t rank) {
    Tensor t;
    t.constant = true;
    t.source_rank = int(rank);
    t.dtype = dtype_of(infos_[name].type);
    for (size_t k = 0; k < f.dims.size(); ++k)
      t.shape.d[size_t(kLayout[rank][rank - f.dims.size() + k])] = f.dims[k];
    check_size(t, src());
    std::string shape;
    for (int64_t d : t.shape.d)
      shape += (shape.empty() ? "@" : "x") + std::to_string(d);
    bool reserved = name.ends_with("/weight") || name.ends_with("/bias");
    for (int k = reserved ? 1 : 0;; ++k) {
      t.name = k == 0 ? name : name + shape + (k > 1 ? "#" + std::to_string(k) : "");
      const Tensor *o = g_.tensor(t.name);
      if (!o)
        break;
      if (o->constant && o->shape.d == t.shape.d && g_.values.count(t.name))
        return t.name; // the same constant, laid out the same way
    }
    g_.values[t.name].data = *f.values;
    return g_.add(std::move(t)).name;
  }

  static const char *compare_mode(const std::string &type) {
    return type == "Greater"          ? "greater"
           : type == "Less"           ? "less"
           : type == "GreaterOrEqual" ? "greater_equal"
           : type == "LessOrEqual"    ? "less_equal"
                                      : "equal";
  }

  // ---- what an op means to the evaluator (keep_values_) ----

  // With keep_values_: what an ONNX op means beyond its map row, passed on as the evaluator reads it
  // (docs/graph-format.md "Evaluation"): the parametric activations' attributes with ONNX's defaults,
  // Clip's bounds, the normalizations' constants as inputs in the evaluator's order, LRN's
  // parameters, Pad's value, the quantizers' scale and zero point, Resize's mode. Where the evaluator
  // would compute something else (an attribute value it does not implement, a parameter known only
  // at run time, an op mapped onto a kernel of other semantics), the op becomes "onnx:<type>", which
  // the evaluator reports as not evaluated, rather than computing a wrong value; a Resize keeps its
  // type and takes a mode the evaluator reports (resize_mode).
  void eval_semantics(const onnx_front::Node &n, Op &op) {
    const std::string &t = n.op_type;
    auto set = [&](const char *key, float fallback) {
      op.attrs.set(key, Doc::number(double(float_attr(n, key, fallback))));
    };
    // mapped onto a kernel of other semantics (a sum, a softmax, an average, instance_norm, quantize)
    bool evaluable = t != "Mean" && t != "LogSoftmax" && t != "LpPool" && t != "GroupNormalization" &&
                     t != "MeanVarianceNormalization" && t != "DynamicQuantizeLinear";
    if (t == "LeakyRelu") {
      set("alpha", 0.01f);
    } else if (t == "Elu" || t == "ThresholdedRelu") {
      set("alpha", 1.0f);
    } else if (t == "Celu") { // elu where alpha is 1
      evaluable = float_attr(n, "alpha", 1.0f) == 1.0f;
      set("alpha", 1.0f);
    } else if (t == "Selu") {
      set("alpha", 1.67326319217681884765625f);
      set("gamma", 1.05070102214813232421875f);
    } else if (t == "HardSigmoid") {
      set("alpha", 0.2f);
      set("beta", 0.5f);
    } else if (t == "Gelu") { // the evaluator's is the erf form
      evaluable = string_attr(n, "approximate", "none") == "none";
    } else if (t == "LRN") {
      op.attrs.set("size", Doc::integer(int_attr(n, "size", 5)));
      set("alpha", 1e-4f);
      set("beta", 0.75f);
      set("bias", 1.0f);
    } else if (t == "Clip") {
      evaluable = clip(n, op);
    } else if (t == "BatchNormalization" || t == "InstanceNormalization" || t == "LayerNormalization") {
      evaluable = normalization(n, op);
    } else if (t == "Pad") {
      evaluable = pad_value(n, op);
    } else if (t == "QuantizeLinear" || t == "DequantizeLinear") {
      evaluable = quantization(n, op);
    } else if (t == "Resize" || t == "Upsample") {
      resize_mode(n, op);
    }
    if (!evaluable)
      op.type = "onnx:" + t;
  }

  static bool given(const onnx_front::Node &n, int k) {
    return k < int(n.inputs.size()) && !n.inputs[size_t(k)].empty();
  }
  // The value of input k where it is a constant of one element.
  std::optional<double> scalar(const onnx_front::Node &n, int k) const {
    if (const Full *f = full(n, k))
      return f->values->size() == 1 ? std::optional<double>((*f->values)[0]) : std::nullopt;
    const Value *v = given(n, k) ? value(resolve(n.inputs[size_t(k)])) : nullptr;
    auto d = data(n, k);
    if (!v || !v->constant || !d || d->size() != 1 || !(*d)[0].is_number())
      return std::nullopt;
    return (*d)[0].k;
  }

  // Clip's "min" and "max": attributes (opset 6) or constant scalar inputs 1 and 2 (opset 11 on). An
  // absent bound is the type's lowest or highest value, as ONNX has it (an infinite input is clipped
  // to it); a min above max makes every value max. False where a bound is not a constant scalar.
  bool clip(const onnx_front::Node &n, Op &op) {
    int type = n.outputs.empty() ? 0 : infos_[n.outputs[0]].type;
    double top = type == onnx_front::kFloat16    ? 65504.0
                 : type == onnx_front::kBfloat16 ? 0x1.fep127
                 : type == onnx_front::kDouble   ? std::numeric_limits<double>::max()
                                                 : double(std::numeric_limits<float>::max());
    double lo = -top, hi = top;
    if (const auto *a = attribute(n, "min"); a && a->f)
      lo = double(*a->f);
    if (const auto *a = attribute(n, "max"); a && a->f)
      hi = double(*a->f);
    for (int k : {1, 2}) {
      if (!given(n, k))
        continue;
      auto v = scalar(n, k);
      if (!v)
        return false;
      (k == 1 ? lo : hi) = *v;
    }
    op.attrs.set("min", Doc::number(std::min(lo, hi)));
    op.attrs.set("max", Doc::number(hi));
    return true;
  }

  // The normalizations' constants as the evaluator's inputs after x, each a constant tensor with its
  // values: batch_norm mean, variance, scale, bias (ONNX orders them scale, B, mean, var) and
  // instance_norm scale, bias, one value per channel (laid out along C); layer_norm scale and bias
  // over the normalized axes (from `axis` on, as `axes`), broadcast as ONNX does. And `epsilon`.
  // False unless x is the only runtime input, each parameter a wholly copied constant of that
  // shape, and only the normalized output is read (not training statistics); instance_norm only at
  // rank 3 or 4 (the evaluator normalizes over H and W).
  bool normalization(const onnx_front::Node &n, Op &op) {
    const std::string &t = n.op_type;
    if (n.inputs.empty() || op.inputs.size() != 1 || op.inputs[0] != resolve(n.inputs[0]))
      return false;
    for (size_t k = 1; k < n.outputs.size(); ++k)
      if (!n.outputs[k].empty())
        return false;
    const Info &x = infos_[op.inputs[0]];
    size_t rank = x.dims.size();
    if (!x.known || rank < 2 || rank > 5 || !x.dims[1].positive_integer())
      return false;
    std::vector<int> order = {1, 2};
    size_t layout = 1; // the parameters' rank: per channel, or as ONNX broadcasts them
    if (t == "BatchNormalization") {
      order = {3, 4, 1, 2};
      if (int_attr(n, "training_mode", 0))
        return false;
    } else if (t == "InstanceNormalization") {
      if (rank != 3 && rank != 4)
        return false;
    } else {
      int64_t axis = int_attr(n, "axis", -1);
      axis = axis < 0 ? axis + int64_t(rank) : axis;
      if (axis < 0 || axis >= int64_t(rank))
        return false;
      std::string axes;
      for (size_t a = size_t(axis); a < rank; ++a)
        axes += kAxisNames[kLayout[rank][a]];
      op.attrs.set("axes", Doc::string(axes));
      layout = rank;
    }
    std::vector<std::string> params;
    for (int k : order) {
      if (!given(n, k) && t == "LayerNormalization" && k == 2)
        continue; // no bias
      const Full *f = full(n, k);
      if (!f || (layout == 1 && (f->dims.size() != 1 || f->dims[0] != int64_t(x.dims[1].k))) ||
          f->dims.size() > layout)
        return false;
      params.push_back(constant_operand(resolve(n.inputs[size_t(k)]), *f, layout));
    }
    op.inputs.insert(op.inputs.end(), params.begin(), params.end());
    op.attrs.set("epsilon", Doc::number(double(float_attr(n, "epsilon", 1e-5f))));
    return true;
  }

  // Pad's constant value: the attribute (opset 2) or a constant scalar input 2 (opset 11 on). False
  // where it is not a constant scalar, where the pads are not all known (the handler's `pad`), or
  // where input 3 (axes, opset 18) names the padded axes.
  bool pad_value(const onnx_front::Node &n, Op &op) {
    std::vector<int64_t> pads = ints(n, "pads");
    auto d = data(n, 1);
    bool known =
        !pads.empty() || (d && std::all_of(d->begin(), d->end(), [](const Sym &s) { return s.is_number(); }));
    if (!known || !op.attrs.find("pad") || given(n, 3))
      return false;
    double v = double(float_attr(n, "value", 0));
    if (given(n, 2)) {
      auto s = scalar(n, 2);
      if (!s)
        return false;
      v = *s;
    }
    op.attrs.set("value", Doc::number(v));
    return true;
  }

  // QuantizeLinear and DequantizeLinear with one scale and zero point (per tensor), as the
  // evaluator's `scale` and `zero_point`; it quantizes to int8's range, so a QuantizeLinear's zero
  // point must be int8 (absent, it is uint8).
  bool quantization(const onnx_front::Node &n, Op &op) {
    auto scale = scalar(n, 1);
    std::optional<double> zero = given(n, 2) ? scalar(n, 2) : 0.0;
    int type = given(n, 2) ? infos_[resolve(n.inputs[2])].type : onnx_front::kUint8;
    if (!scale || !zero || (n.op_type == "QuantizeLinear" && type != onnx_front::kInt8))
      return false;
    op.attrs.set("scale", Doc::number(*scale));
    op.attrs.set("zero_point", Doc::number(*zero));
    return true;
  }

  // Resize and Upsample: the evaluator's nearest reads floor((i + 0.5) in / out) and its linear
  // samples at (i + 0.5) in / out - 0.5, clamped to the edges (half-pixel centres). ONNX's
  // coordinate transformation, nearest rounding and scale are compared with those at every output
  // position of every axis (the shapes are known); where they agree the mode is "nearest" or
  // "linear", otherwise a mode the evaluator does not know and reports, naming what differs
  // ("nearest (asymmetric, round_prefer_ceil)"). Upsample and Resize-10 (two inputs) transform
  // asymmetrically and round down (up when downsampling), as onnxruntime does.
  void resize_mode(const onnx_front::Node &n, Op &op) {
    bool legacy = n.op_type == "Upsample" || n.inputs.size() == 2;
    std::string mode = string_attr(n, "mode", "nearest");
    mode = mode == "bilinear" ? "linear" : mode;
    std::string ctm = legacy ? "asymmetric" : string_attr(n, "coordinate_transformation_mode", "half_pixel");
    std::string rounding = legacy ? "simple" : string_attr(n, "nearest_mode", "round_prefer_floor");
    std::string why = resize_differs(n, mode, ctm, rounding, legacy);
    op.attrs.set("mode", Doc::string(why.empty() ? mode : mode + " (" + why + ")"));
  }

  // What makes ONNX's resize differ from the evaluator's, "" where nothing does.
  std::string resize_differs(const onnx_front::Node &n, const std::string &mode, const std::string &ctm,
                             const std::string &rounding, bool legacy) {
    bool nearest = mode == "nearest";
    if (!nearest && mode != "linear")
      return "the evaluator has nearest and linear";
    if (n.inputs.empty() || n.outputs.empty() || !static_dims(resolve(n.inputs[0])) ||
        !static_dims(n.outputs[0]))
      return "shapes not known";
    const Syms &in = infos_[resolve(n.inputs[0])].dims, &out = infos_[n.outputs[0]].dims;
    size_t rank = in.size();
    if (rank == 0 || rank > 5 || out.size() != rank)
      return "rank " + std::to_string(rank);
    // The scale per axis: the scales input (at the `axes` given, opset 18), or out / in from sizes.
    std::vector<int64_t> axes = ints(n, "axes");
    if (axes.empty())
      for (size_t a = 0; a < rank; ++a)
        axes.push_back(int64_t(a));
    auto scales = data(n, legacy ? 1 : 2), sizes = legacy ? std::nullopt : data(n, 3);
    bool by_size = sizes && sizes->size() == axes.size();
    if (!by_size && !(scales && scales->size() == axes.size()))
      return "scales not known";
    if (by_size && string_attr(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
      return "keep_aspect_ratio_policy";
    std::vector<double> scale(rank, 1);
    std::vector<bool> scaled(rank, false);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k] < 0 ? axes[k] + int64_t(rank) : axes[k];
      if (a < 0 || a >= int64_t(rank))
        return "axes";
      scaled[size_t(a)] = true;
      if (!by_size && !(*scales)[k].is_number())
        return "scales not known";
      scale[size_t(a)] = by_size ? 0 : (*scales)[k].k;
    }
    for (size_t a = 0; a < rank; ++a) {
      int64_t from = int64_t(in[a].k), to = int64_t(out[a].k);
      if (scaled[a] && scale[a] == 0) // from sizes: out / in, in float as onnxruntime computes it
        scale[a] = double(float(to) / float(from));
      if (!nearest && int_attr(n, "antialias", 0) && scale[a] < 1)
        return "antialias";
      int axis = kLayout[rank][a];
      bool spatial = axis == kH || axis == kW;
      if (!spatial && from != to)
        continue; // the evaluator keeps N, D and C and reports it
      double ratio = spatial ? double(from) / double(to) : 1;
      for (int64_t i = 0; i < to; ++i) {
        auto xd = source<double>(ctm, i, scale[a], from, to);
        auto xf = source<float>(ctm, i, float(scale[a]), from, to);
        if (!xd || !xf)
          return ctm;
        if (nearest) {
          int64_t want = std::clamp<int64_t>(int64_t(std::floor((double(i) + 0.5) * ratio)), 0, from - 1);
          auto d = round_nearest<double>(rounding, *xd, scale[a] < 1),
               f = round_nearest<float>(rounding, *xf, scale[a] < 1);
          if (!d || !f)
            return rounding;
          if (std::clamp<int64_t>(*d, 0, from - 1) != want || std::clamp<int64_t>(*f, 0, from - 1) != want)
            return ctm + ", " + rounding;
        } else {
          double want = std::clamp((double(i) + 0.5) * ratio - 0.5, 0.0, double(from - 1));
          if (std::fabs(std::clamp(*xd, 0.0, double(from - 1)) - want) > 1e-6)
            return ctm;
        }
      }
    }
    return "";
  }

  // ONNX's source coordinate of output position i (Resize, coordinate_transformation_mode), in T as
  // onnxruntime computes it in float; nullopt for a transformation not listed (tf_crop_and_resize).
  template <class T>
  static std::optional<T> source(const std::string &ctm, int64_t i, T scale, int64_t in, int64_t out) {
    T x = T(i), length = T(in), resized = T(out);
    if (ctm == "half_pixel")
      return (x + T(0.5)) / scale - T(0.5);
    if (ctm == "pytorch_half_pixel")
      return out > 1 ? (x + T(0.5)) / scale - T(0.5) : T(0);
    if (ctm == "align_corners")
      return out == 1 ? T(0) : x * (length - 1) / (resized - 1);
    if (ctm == "asymmetric")
      return x / scale;
    if (ctm == "tf_half_pixel_for_nn")
      return (x + T(0.5)) / scale;
    if (ctm == "half_pixel_symmetric") {
      T adjustment = resized / (scale * length), center = length / 2;
      return center * (1 - adjustment) + (x + T(0.5)) / scale - T(0.5);
    }
    return std::nullopt;
  }
  // ONNX's nearest_mode (Resize), "simple" for Upsample and Resize-10: down when upsampling, up when
  // downsampling.
  template <class T> static std::optional<int64_t> round_nearest(const std::string &mode, T x, bool down) {
    T f = std::floor(x);
    if (mode == "round_prefer_floor")
      return int64_t(x == f + T(0.5) ? f : std::round(x));
    if (mode == "round_prefer_ceil")
      return int64_t(x == f + T(0.5) ? std::ceil(x) : std::round(x));
    if (mode == "floor")
      return int64_t(f);
    if (mode == "ceil" || (mode == "simple" && down))
      return int64_t(std::ceil(x));
    if (mode == "simple")
      return int64_t(f);
    return std::nullopt;
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

  // A 1-D Split's parts (sizes from the `split` attribute or input, else equal), one per output.
  std::vector<std::optional<Syms>> split_values(const onnx_front::Node &n) const {
    std::vector<std::optional<Syms>> parts(size_t(int(n.outputs.size())));
    auto d = data(n, 0);
    if (n.op_type != "Split" || !d || int_attr(n, "axis", 0) != 0)
      return parts;
    std::vector<int64_t> sizes = ints(n, "split");
    if (auto s = data(n, 1); sizes.empty() && s)
      for (const Sym &x : *s)
        sizes.push_back(x.is_number() ? int64_t(x.k) : -1);
    if (sizes.empty())
      sizes.assign(parts.size(), int64_t(d->size() / std::max<size_t>(1, parts.size())));
    size_t at = 0;
    for (size_t k = 0; k < parts.size() && k < sizes.size(); ++k) {
      if (sizes[k] < 0 || at + size_t(sizes[k]) > d->size())
        break;
      parts[k] = Syms(d->begin() + int64_t(at), d->begin() + int64_t(at + size_t(sizes[k])));
      at += size_t(sizes[k]);
    }
    return parts;
  }

  // The values of shape arithmetic, symbolic where they derive from a symbolic dimension.
  std::optional<Syms> evaluate(const onnx_front::Node &n) {
    const std::string &t = n.op_type;
    auto in = [&](int k) { return data(n, k); };
    if (t == "Constant") {
      const auto *a = attribute(n, "value");
      if (a && a->t)
        return tensor_values(*a->t);
      if ((a = attribute(n, "value_int")))
        return Syms{Sym::num(double(a->i.value_or(0)))};
      if ((a = attribute(n, "value_ints"))) {
        Syms out;
        for (int64_t v : a->ints)
          out.push_back(Sym::num(double(v)));
        return out;
      }
      if ((a = attribute(n, "value_float")))
        return Syms{Sym::num(double(a->f.value_or(0)))};
      return std::nullopt;
    }
    if (t == "Shape" && int(n.inputs.size()) == 1) {
      const Info &i = infos_[resolve(n.inputs[0])];
      if (!i.known)
        return std::nullopt;
      int64_t r = int64_t(i.dims.size()), b = int_attr(n, "start", 0), e = int_attr(n, "end", r);
      b = std::clamp<int64_t>(b < 0 ? b + r : b, 0, r);
      e = std::clamp<int64_t>(e < 0 ? e + r : e, 0, r);
      return b <= e ? Syms(i.dims.begin() + b, i.dims.begin() + e) : Syms{};
    }
    if (t == "Size" && int(n.inputs.size()) == 1) {
      const Info &i = infos_[resolve(n.inputs[0])];
      if (!i.known)
        return std::nullopt;
      Sym p = Sym::num(1);
      for (const Sym &d : i.dims)
        p = onnx_front::mul(p, d);
      return Syms{p};
    }
    if (t == "Identity" || t == "Cast" || t == "Squeeze" || t == "Unsqueeze" || t == "Flatten" ||
        t == "Reshape")
      return in(0);
    if (t == "Gather") {
      auto d = in(0), idx = in(1);
      if (!d || !idx || int_attr(n, "axis", 0) != 0)
        return std::nullopt;
      Syms out;
      for (const Sym &i : *idx) {
        if (!i.is_number())
          return std::nullopt;
        int64_t k = int64_t(i.k) < 0 ? int64_t(i.k) + int64_t(d->size()) : int64_t(i.k);
        if (k < 0 || k >= int64_t(d->size()))
          return std::nullopt;
        out.push_back((*d)[size_t(k)]);
      }
      return out;
    }
    if (t == "Concat") {
      Syms out;
      for (int k = 0; k < int(n.inputs.size()); ++k) {
        auto d = in(k);
        if (!d)
          return std::nullopt;
        out.insert(out.end(), d->begin(), d->end());
      }
      return out;
    }
    if (t == "Slice") {
      auto d = in(0), starts = in(1), ends = in(2), axes = in(3), steps = in(4);
      if (int(n.inputs.size()) == 1) { // opset 1-9: attributes
        auto s = ints(n, "starts"), e = ints(n, "ends");
        if (s.size() != 1 || e.size() != 1)
          return std::nullopt;
        starts = Syms{Sym::num(double(s[0]))};
        ends = Syms{Sym::num(double(e[0]))};
      }
      if (!d || !starts || !ends || starts->size() != 1 || ends->size() != 1)
        return std::nullopt;
      if (axes && (axes->size() != 1 || !(*axes)[0].is_number() || (*axes)[0].k != 0))
        return std::nullopt;
      int64_t step = steps && steps->size() == 1 && (*steps)[0].is_number() ? int64_t((*steps)[0].k) : 1;
      if (step != 1 || !(*starts)[0].is_number() || !(*ends)[0].is_number())
        return std::nullopt;
      int64_t r = int64_t(d->size());
      auto clamp = [&](double v) {
        return std::clamp<int64_t>(v < 0 ? int64_t(v) + r : v > double(r) ? r : int64_t(v), 0, r);
      };
      int64_t b = clamp((*starts)[0].k), e = clamp((*ends)[0].k);
      return b <= e ? Syms(d->begin() + b, d->begin() + e) : Syms{};
    }
    if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") {
      auto a = in(0), b = in(1);
      if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1))
        return std::nullopt;
      bool integer = integer_type(infos_[resolve(n.inputs[0])].type);
      Syms out;
      for (size_t k = 0; k < std::max(a->size(), b->size()); ++k) {
        const Sym &x = (*a)[a->size() == 1 ? 0 : k], &y = (*b)[b->size() == 1 ? 0 : k];
        out.push_back(t == "Mul"   ? onnx_front::mul(x, y)
                      : t == "Div" ? onnx_front::div(x, y, integer)
                                   : onnx_front::add(x, y, t == "Add" ? 1 : -1));
      }
      return out;
    }
    if (t == "Equal" || t == "Less" || t == "Greater" || t == "Not") {
      auto a = in(0), b = t == "Not" ? in(0) : in(1);
      if (!a || !b || a->size() != 1 || b->size() != 1)
        return std::nullopt;
      const Sym &x = (*a)[0], &y = (*b)[0];
      if (t == "Not")
        return x.is_number() ? std::optional<Syms>(Syms{Sym::num(x.k == 0)}) : std::nullopt;
      if (!x.is_number() || !y.is_number())
        return t == "Equal" && x == y ? std::optional<Syms>(Syms{Sym::num(1)}) : std::nullopt;
      return Syms{Sym::num(t == "Equal" ? x.k == y.k : t == "Less" ? x.k < y.k : x.k > y.k)};
    }
    return std::nullopt;
  }

  // ONNX shape inference leaves some outputs without a shape (a reshape whose target is computed
  // at run time, an op it does not know): a reshape target known symbolically, or the input's shape
  // for a shape-preserving operation, fills them in.
  void fill_unknown_shapes(const onnx_front::Node &n, const Op &op) {
    if (int(n.outputs.size()) < 1 || int(n.inputs.size()) < 1)
      return;
    Info &out = infos_[n.outputs[0]];
    // Complete: every dimension a number or a product of input dimensions (a name the file gives an
    // intermediate tensor, "Squeeze175_dim_0", binds nothing and is recomputed where possible).
    bool complete = out.known && std::all_of(out.dims.begin(), out.dims.end(), [&](const Sym &d) {
                      return d.known && std::all_of(d.s.begin(), d.s.end(), [&](const std::string &x) {
                               return input_symbols_.count(x) > 0;
                             });
                    });
    if (complete)
      return;
    const Info &x = infos_[resolve(n.inputs[0])];
    if (n.op_type == "Reshape") {
      if (auto target = data(n, 1); target && x.known)
        out = reshaped(x, *target, int_attr(n, "allowzero", 0));
      return;
    }
    if (auto dims = fallback_dims(n, x); dims) {
      out.dims = *dims;
      out.known = true;
      if (!out.type)
        out.type = x.type;
      return;
    }
    const OpSpec *spec = catalog_.find(op.type);
    if (spec && spec->shape == "same" && x.known)
      out = {x.dims, x.type ? x.type : out.type, true};
  }

  // The common shape-changing operators, where ONNX inference left the output without a shape (it
  // does not see constants inside subgraphs): in the ONNX rank, symbolic where the inputs are.
  std::optional<Syms> fallback_dims(const onnx_front::Node &n, const Info &x) {
    if (!x.known)
      return std::nullopt;
    const std::string &t = n.op_type;
    int64_t r = int64_t(x.dims.size());
    auto axes_of = [&](int64_t rank) {
      std::vector<int64_t> a = ints(n, "axes");
      if (a.empty())
        if (auto d = data(n, 1))
          for (const Sym &v : *d)
            a.push_back(v.is_number() ? int64_t(v.k) : 0);
      for (int64_t &v : a)
        v = v < 0 ? v + rank : v;
      return a;
    };
    auto info = [&](int k) -> const Info & { return infos_[resolve(n.inputs[size_t(k)])]; };
    if (t == "Unsqueeze") {
      auto a = axes_of(r + int64_t(ints(n, "axes").size() + (data(n, 1) ? data(n, 1)->size() : 0)));
      Syms out = x.dims;
      std::sort(a.begin(), a.end());
      for (int64_t v : a) {
        if (v < 0 || v > int64_t(out.size()))
          return std::nullopt;
        out.insert(out.begin() + v, Sym::num(1));
      }
      return out;
    }
    if (t == "Squeeze") {
      auto a = axes_of(r);
      Syms out;
      for (int64_t k = 0; k < r; ++k) {
        bool drop =
            a.empty() ? x.dims[size_t(k)] == Sym::num(1) : std::find(a.begin(), a.end(), k) != a.end();
        if (!drop)
          out.push_back(x.dims[size_t(k)]);
      }
      return out;
    }
    if (t == "Transpose") {
      auto perm = ints(n, "perm");
      Syms out;
      for (int64_t k = 0; k < r; ++k) {
        int64_t p = perm.empty() ? r - 1 - k : perm[size_t(k)];
        if (p < 0 || p >= r)
          return std::nullopt;
        out.push_back(x.dims[size_t(p)]);
      }
      return out;
    }
    if (t == "Concat") {
      int64_t axis = int_attr(n, "axis", 0);
      axis = axis < 0 ? axis + r : axis;
      if (axis < 0 || axis >= r)
        return std::nullopt;
      Syms out = x.dims;
      for (int k = 1; k < int(n.inputs.size()); ++k) {
        const Info &y = info(k);
        if (!y.known || int64_t(y.dims.size()) != r)
          return std::nullopt;
        const Sym &a = out[size_t(axis)], &b = y.dims[size_t(axis)];
        out[size_t(axis)] = a.s == b.s ? onnx_front::add(a, b, 1) : Sym::unknown();
      }
      return out;
    }
    if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Pow" || t == "Where" || t == "Max" ||
        t == "Min" || t == "Equal" || t == "Less" || t == "Greater" || t == "And" || t == "Or" ||
        t == "PRelu") {
      Syms out;
      for (int k = 0; k < int(n.inputs.size()); ++k) {
        const Info &y = info(k);
        if (!y.known)
          return std::nullopt;
        Syms padded(std::max(out.size(), y.dims.size()), Sym::num(1));
        for (size_t i = 0; i < out.size(); ++i)
          padded[padded.size() - out.size() + i] = out[i];
        for (size_t i = 0; i < y.dims.size(); ++i) {
          Sym &o = padded[padded.size() - y.dims.size() + i];
          if (o == Sym::num(1))
            o = y.dims[i];
        }
        out = padded;
      }
      return out;
    }
    if (t == "Conv" || t == "MaxPool" || t == "AveragePool") {
      auto k = ints(n, "kernel_shape"), s = ints(n, "strides"), p = ints(n, "pads"), d = ints(n, "dilations");
      const Info &w = t == "Conv" && int(n.inputs.size()) > 1 ? info(1) : x;
      if (k.empty() && t == "Conv" && w.known)
        for (size_t i = 2; i < w.dims.size(); ++i)
          k.push_back(w.dims[i].positive_integer() ? int64_t(w.dims[i].k) : 0);
      size_t spatial = k.size();
      if (r < 3 || size_t(r) != spatial + 2)
        return std::nullopt;
      Syms out = {x.dims[0],
                  t == "Conv" ? (w.known && !w.dims.empty() ? w.dims[0] : Sym::unknown()) : x.dims[1]};
      for (size_t i = 0; i < spatial; ++i) {
        const Sym &in = x.dims[2 + i];
        int64_t stride = i < s.size() ? s[i] : 1, dil = i < d.size() ? d[i] : 1;
        int64_t pads = p.size() == 2 * spatial ? p[i] + p[i + spatial] : 0;
        if (!in.positive_integer() || k[i] < 1 || stride < 1) {
          out.push_back(Sym::unknown());
          continue;
        }
        int64_t span = dil * (k[i] - 1) + 1, padded = int64_t(in.k) + pads;
        out.push_back(Sym::num(double(padded < span ? 0 : (padded - span) / stride + 1)));
      }
      return out;
    }
    if (t == "ReduceMean" || t == "ReduceSum" || t == "ReduceMax" || t == "ReduceMin" || t == "ReduceProd" ||
        t == "ReduceL2") {
      auto a = axes_of(r);
      bool keep = int_attr(n, "keepdims", 1) != 0;
      Syms out;
      for (int64_t k = 0; k < r; ++k) {
        bool reduced = a.empty() || std::find(a.begin(), a.end(), k) != a.end();
        if (!reduced)
          out.push_back(x.dims[size_t(k)]);
        else if (keep)
          out.push_back(Sym::num(1));
      }
      return out;
    }
    if (t == "Pad") {
      std::vector<int64_t> p = ints(n, "pads");
      if (p.empty())
        if (auto d = data(n, 1))
          for (const Sym &v : *d)
            p.push_back(v.is_number() ? int64_t(v.k) : 0);
      if (p.size() != 2 * size_t(r))
        return std::nullopt;
      Syms out = x.dims;
      for (int64_t k = 0; k < r; ++k)
        out[size_t(k)] =
            onnx_front::add(out[size_t(k)], Sym::num(double(p[size_t(k)] + p[size_t(k + r)])), 1);
      return out;
    }
    if (t == "Slice") {
      auto starts = data(n, 1), ends = data(n, 2), axes = data(n, 3), steps = data(n, 4);
      if (!starts || !ends || starts->size() != ends->size())
        return std::nullopt;
      Syms out = x.dims;
      for (size_t i = 0; i < starts->size(); ++i) {
        int64_t axis =
            axes && i < axes->size() && (*axes)[i].is_number() ? int64_t((*axes)[i].k) : int64_t(i);
        axis = axis < 0 ? axis + r : axis;
        int64_t step = steps && i < steps->size() && (*steps)[i].is_number() ? int64_t((*steps)[i].k) : 1;
        if (axis < 0 || axis >= r || step != 1 || !(*starts)[i].is_number() || !(*ends)[i].is_number())
          return std::nullopt;
        const Sym &dim = x.dims[size_t(axis)];
        if (!dim.positive_integer()) {
          out[size_t(axis)] = Sym::unknown();
          continue;
        }
        int64_t size = int64_t(dim.k);
        auto clamp = [&](double v) {
          return std::clamp<int64_t>(v < 0              ? int64_t(v) + size
                                     : v > double(size) ? size
                                                        : int64_t(v),
                                     0, size);
        };
        out[size_t(axis)] =
            Sym::num(double(std::max<int64_t>(0, clamp((*ends)[i].k) - clamp((*starts)[i].k))));
      }
      return out;
    }
    if ((t == "MatMul" || t == "Gemm") && int(n.inputs.size()) >= 2) {
      const Info &w = info(1);
      if (!w.known || w.dims.empty() || r < 1)
        return std::nullopt;
      Syms out = x.dims;
      bool trans_b = t == "Gemm" && int_attr(n, "transB", 0);
      out.back() = trans_b ? w.dims.front() : w.dims.back();
      if (r == 1)
        out.pop_back();
      return out;
    }
    if (t == "Resize" || t == "Upsample") { // sizes (input 3), else scales (input 2, or 1 for Upsample)
      auto sizes = data(n, 3), scales = data(n, t == "Upsample" ? 1 : 2);
      if (sizes && int64_t(sizes->size()) == r)
        return *sizes;
      if (!scales || int64_t(scales->size()) != r)
        return std::nullopt;
      Syms out;
      for (int64_t k = 0; k < r; ++k) {
        const Sym &d = x.dims[size_t(k)], &f = (*scales)[size_t(k)];
        out.push_back(d.positive_integer() && f.is_number() ? Sym::num(std::floor(d.k * f.k))
                                                            : Sym::unknown());
      }
      return out;
    }
    if (t == "Flatten") {
      int64_t axis = int_attr(n, "axis", 1);
      axis = axis < 0 ? axis + r : axis;
      Sym a = Sym::num(1), b = Sym::num(1);
      for (int64_t k = 0; k < r; ++k)
        (k < axis ? a : b) = onnx_front::mul(k < axis ? a : b, x.dims[size_t(k)]);
      return Syms{a, b};
    }
    if (t == "Gather") {
      const Info &idx = info(1);
      int64_t axis = int_attr(n, "axis", 0);
      axis = axis < 0 ? axis + r : axis;
      if (!idx.known || axis < 0 || axis >= r)
        return std::nullopt;
      Syms out(x.dims.begin(), x.dims.begin() + axis);
      out.insert(out.end(), idx.dims.begin(), idx.dims.end());
      out.insert(out.end(), x.dims.begin() + axis + 1, x.dims.end());
      return out;
    }
    return std::nullopt;
  }
  static Info reshaped(const Info &x, const Syms &target, int64_t allowzero) {
    Info out{{}, x.type, true};
    Sym total = Sym::num(1), known = Sym::num(1);
    for (const Sym &d : x.dims)
      total = onnx_front::mul(total, d);
    int infer = -1;
    for (size_t k = 0; k < target.size(); ++k) {
      Sym d = target[k];
      if (d.is_number() && d.k == 0 && !allowzero)
        d = k < x.dims.size() ? x.dims[k] : Sym::unknown();
      if (d.is_number() && d.k == -1) {
        infer = int(k);
        out.dims.push_back(Sym::unknown());
        continue;
      }
      known = onnx_front::mul(known, d);
      out.dims.push_back(d);
    }
    if (infer >= 0)
      out.dims[size_t(infer)] = onnx_front::div(total, known, true);
    return out;
  }

  // The attribute handlers the front-end map names.
  void attributes(const onnx_front::Node &n, const FrontEndOp &row, Op &op) {
    size_t rank = op.inputs.empty() ? 0 : infos_[op.inputs[0]].dims.size();
    const Info &out = infos_[n.outputs[0]];
    const std::string &h = row.attrs;
    if (h == "window") {
      auto k = ints(n, "kernel_shape"), s = ints(n, "strides"), p = ints(n, "pads"), d = ints(n, "dilations");
      if (k.empty() && int(n.inputs.size()) > 1)
        if (const Info &w = infos_[resolve(n.inputs[1])]; w.known && w.dims.size() >= 3)
          for (size_t i = 2; i < w.dims.size(); ++i)
            k.push_back(w.dims[i].positive_integer() ? int64_t(w.dims[i].k) : 1);
      if (k.size() == 1) { // 1-D along width
        k = {1, k[0]};
        s = s.empty() ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{1, s[0]};
        p = p.size() == 2 ? std::vector<int64_t>{0, 0, p[0], p[1]} : std::vector<int64_t>{0, 0, 0, 0};
        d = d.empty() ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{1, d[0]};
      } else if (p.size() == 4) {
        p = {p[0], p[2], p[1], p[3]}; // ONNX begins then ends -> top, bottom, left, right
      }
      if (!k.empty())
        op.attrs.set("kernel", int_array(k));
      if (s.size() == 2)
        op.attrs.set("stride", int_array(s));
      if (p.size() == 4)
        op.attrs.set("pad", int_array(p));
      if (d.size() == 2)
        op.attrs.set("dilation", int_array(d));
      op.attrs.set("groups", Doc::integer(int_attr(n, "group", 1)));
      if (out.dims.size() >= 2 && out.dims[1].positive_integer())
        op.attrs.set("out_channels", Doc::integer(int64_t(out.dims[1].k)));
    } else if (h == "gemm") {
      gemm(n, op);
    } else if (h == "axis" || h == "axis_last") {
      int64_t axis = int_attr(n, "axis", h == "axis_last" ? -1 : 0);
      op.attrs.set("axis", Doc::string(std::string(1, kAxisNames[map_axis(axis, rank)])));
    } else if (h == "reduce" || h == "global") {
      std::vector<int64_t> a = ints(n, "axes");
      if (a.empty())
        if (auto d = data(n, 1))
          for (const Sym &s : *d)
            if (s.is_number())
              a.push_back(int64_t(s.k));
      if (h == "global")
        a = {2, 3};
      std::string axes;
      for (int64_t x : a)
        axes += kAxisNames[map_axis(x, rank)];
      op.attrs.set("axes", Doc::string(axes.empty() ? "NDCHW" : axes));
    } else if (h == "perm") {
      auto perm = ints(n, "perm");
      if (rank >= 1 && rank <= 5 && (perm.empty() || perm.size() == rank)) {
        std::vector<int64_t> p5 = {0, 1, 2, 3, 4};
        for (size_t i = 0; i < rank; ++i)
          p5[size_t(kLayout[rank][i])] = kLayout[rank][perm.empty() ? rank - 1 - i : size_t(perm[i]) % rank];
        op.attrs.set("perm", int_array(p5));
      }
    } else if (h == "slice") {
      auto starts = data(n, 1), axes = data(n, 3);
      std::vector<int64_t> begin(5, 0);
      if (starts)
        for (size_t i = 0; i < starts->size(); ++i) {
          int64_t axis =
              axes && i < axes->size() && (*axes)[i].is_number() ? int64_t((*axes)[i].k) : int64_t(i);
          if ((*starts)[i].is_number())
            begin[size_t(map_axis(axis, rank))] = int64_t((*starts)[i].k);
        }
      op.attrs.set("begin", int_array(begin));
    } else if (h == "pad") {
      std::vector<int64_t> p = ints(n, "pads");
      if (p.empty())
        if (auto d = data(n, 1))
          for (const Sym &s : *d)
            p.push_back(s.is_number() ? int64_t(s.k) : 0);
      const auto *mode = attribute(n, "mode");
      if (mode && mode->s)
        op.attrs.set("mode", Doc::string(*mode->s));
      if (p.size() == 2 * rank && rank >= 2) { // begins then ends, per axis
        std::vector<int64_t> hw = {0, 0, 0, 0}, channel = {p[1], p[1 + rank]};
        for (size_t i = 0; i < rank; ++i) {
          int a = map_axis(int64_t(i), rank);
          if (a == kH)
            hw[0] = p[i], hw[1] = p[i + rank];
          if (a == kW)
            hw[2] = p[i], hw[3] = p[i + rank];
        }
        op.attrs.set("pad", int_array(hw));
        if (channel[0] || channel[1])
          op.attrs.set("channel_pad", int_array(channel));
      }
    }
  }

  void gemm(const onnx_front::Node &n, Op &op) {
    const Info &out = infos_[n.outputs[0]];
    if (op.type == "matmul" && op.inputs.size() == 1)
      op.type = "linear"; // x @ W with a constant W
    else if (op.type == "matmul")
      op.attrs.set("contraction_checked", Doc::boolean(true)); // the ONNX checker and shape inference did it
    if (!out.known || op.inputs.empty() || infos_[op.inputs[0]].dims.empty())
      return;
    const Info &a = infos_[op.inputs[0]];
    Sym k = a.dims.back();
    if (n.op_type == "Gemm" && int_attr(n, "transA", 0) && a.dims.size() == 2)
      k = a.dims[0];
    Sym flops = onnx_front::mul(Sym::num(2), k);
    for (const Sym &d : out.dims)
      flops = onnx_front::mul(flops, d);
    if (flops.positive_integer())
      op.attrs.set("flops", Doc::integer(int64_t(flops.k)));
    if (op.type == "linear" && out.dims.back().positive_integer())
      op.attrs.set("out_features", Doc::integer(int64_t(out.dims.back().k)));
  }

  // An `If`: a known condition inlines the branch it selects; otherwise both branches are read (their
  // operations named "<if>/then/..." and "<if>/else/...") and the If stays as a host `cond` that
  // selects between the branches' results.
  void read_if(const onnx_front::Node &n, const std::string &scope) {
    const auto *then_g = attribute(n, "then_branch"), *else_g = attribute(n, "else_branch");
    if (!then_g || !else_g || !then_g->g || !else_g->g)
      throw Error("ANEC-ONNX-002", src() + ": If node '" + n.name + "' lacks a then or else branch");
    std::string name = scope + (n.name.empty() ? "If_" + std::to_string(g_.ops.size()) : n.name);
    auto cond = data(n, 0);
    if (cond && cond->size() == 1 && (*cond)[0].is_number()) {
      const onnx_front::Graph &branch = (*cond)[0].k != 0 ? *then_g->g : *else_g->g;
      read_nodes(branch, name + "/" + ((*cond)[0].k != 0 ? "then/" : "else/"));
      for (int k = 0; k < int(n.outputs.size()) && k < int(branch.outputs.size()); ++k)
        alias_[n.outputs[size_t(k)]] = branch.outputs[size_t(k)].name;
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
  void read_loop(const onnx_front::Node &n, const std::string &scope) {
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

  void keep_control(const onnx_front::Node &n, const std::string &name, const std::string &type,
                    const std::vector<std::string> &reads, const std::vector<std::string> &state) {
    Op op;
    op.name = name;
    op.type = type;
    for (const std::string &r : reads) {
      std::string i = resolve(r);
      const Value *v = value(i);
      if (i.empty() || (v && v->constant) || !g_.tensor(i))
        continue;
      if (std::find(op.inputs.begin(), op.inputs.end(), i) == op.inputs.end())
        op.inputs.push_back(i);
    }
    for (const std::string &s : state) {
      if (g_.tensor(s))
        continue;
      values_[s];
      op.outputs.push_back(g_.add(tensor(s)).name);
    }
    for (const auto &o : n.outputs) {
      if (o.empty())
        continue;
      values_[o];
      if (!infos_[o].known)
        ++unknown_shapes_;
      op.outputs.push_back(g_.add(tensor(o)).name);
    }
    g_.ops.push_back(std::move(op));
  }
};
} // namespace

namespace onnx_front {

const Api &api() {
  // Loaded once; a failed load throws and is tried again by the next caller.
  static const Api &table = plugin::load<Api>(kModule, kEntry, kVersion);
  return table;
}

} // namespace onnx_front

Graph read_onnx(std::string_view bytes, const std::string &source, const OpCatalog &catalog,
                const DimBindings &bind, bool keep_values) {
  onnx_front::Model model = onnx_front::api().read(bytes, source, bind, keep_values);
  Graph g = Reader(model, source, catalog, keep_values).read();
  g.notes.insert(g.notes.begin(), model.notes.begin(), model.notes.end());
  return g;
}

} // namespace anec::compiler
