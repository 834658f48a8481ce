// The ONNX front-end: the only place that includes libonnx. The model is checked (onnx checker),
// its shapes inferred (onnx shape inference), constant subgraphs folded, and each node mapped to a
// catalogue operation; a node with no mapping is kept as "onnx:<OpType>" and reported unmapped.
#include "anec/compiler/model.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <set>

namespace anec::compiler {

namespace {
using onnx::TensorProto_DataType;

std::string dtype_of(int t) {
  switch (t) {
  case TensorProto_DataType::TensorProto_DataType_FLOAT16: return "fp16";
  case TensorProto_DataType::TensorProto_DataType_BFLOAT16: return "bf16";
  case TensorProto_DataType::TensorProto_DataType_INT8: return "int8";
  case TensorProto_DataType::TensorProto_DataType_UINT8: return "uint8";
  case TensorProto_DataType::TensorProto_DataType_INT16: return "int16";
  case TensorProto_DataType::TensorProto_DataType_INT32: return "int32";
  case TensorProto_DataType::TensorProto_DataType_INT64: return "int32"; // index tensors; no 64-bit engine type
  case TensorProto_DataType::TensorProto_DataType_BOOL: return "uint8";
  default: return "fp32";
  }
}

// ONNX rank-r dims to [N, D, C, H, W]: 4-D NCHW, 3-D N C L (L as width), 2-D N F (F as channels),
// 1-D F, 5-D N C D H W. Unknown dims become symbolic.
Shape map_dims(const std::vector<std::pair<int64_t, std::string>> &dims) {
  Shape s;
  static const int layout[6][5] = {{}, {kC}, {kN, kC}, {kN, kC, kW}, {kN, kC, kH, kW}, {kN, kC, kD, kH, kW}};
  if (dims.size() > 5) return s;
  for (size_t i = 0; i < dims.size(); ++i) {
    int a = layout[dims.size()][i];
    s.d[a] = dims[i].first > 0 ? dims[i].first : -1;
    if (s.d[a] < 0) s.symbol[a] = dims[i].second.empty() ? "?" : dims[i].second;
  }
  return s;
}
int map_axis(int64_t axis, size_t rank) {
  static const int layout[6][5] = {{}, {kC}, {kN, kC}, {kN, kC, kW}, {kN, kC, kH, kW}, {kN, kC, kD, kH, kW}};
  if (axis < 0) axis += int64_t(rank);
  return rank >= 1 && rank <= 5 && axis >= 0 && axis < int64_t(rank) ? layout[rank][axis] : kC;
}

struct Info {
  std::vector<std::pair<int64_t, std::string>> dims;
  int type = 0;
  bool known = false;
};
Info info_of(const onnx::TypeProto &t) {
  Info i;
  if (!t.has_tensor_type()) return i;
  i.type = t.tensor_type().elem_type();
  if (!t.tensor_type().has_shape()) return i;
  i.known = true;
  for (const auto &d : t.tensor_type().shape().dim()) i.dims.push_back({d.has_dim_value() ? d.dim_value() : -1, d.has_dim_param() ? d.dim_param() : ""});
  return i;
}

const onnx::AttributeProto *attribute(const onnx::NodeProto &n, const char *name) {
  for (const auto &a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::vector<int64_t> ints(const onnx::NodeProto &n, const char *name) {
  const auto *a = attribute(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}
int64_t int_attr(const onnx::NodeProto &n, const char *name, int64_t fallback) {
  const auto *a = attribute(n, name);
  return a && a->has_i() ? a->i() : fallback;
}
Doc int_array(std::vector<int64_t> v) {
  Doc a = Doc::array();
  for (int64_t x : v) a.push(Doc::integer(x));
  return a;
}
using Dims = std::vector<std::pair<int64_t, std::string>>;
std::string dims_text(const Dims &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + (dims[i].first > 0 ? std::to_string(dims[i].first) : "?" + dims[i].second);
  return s + "]";
}
// The element count of an ONNX tensor (unknown dims as 1); ANEC-GRAPH-003 naming the tensor and its
// dims when the count does not fit in 64 bits.
int64_t product(const Dims &dims, const std::string &source, const std::string &name) {
  int64_t n = 1;
  for (auto &d : dims) {
    auto m = checked_mul(n, std::max<int64_t>(d.first, 1));
    if (!m) throw Error("ANEC-GRAPH-003", source + ": tensor '" + name + "' " + dims_text(dims) +
                                              ": its element count does not fit in 64 bits");
    n = *m;
  }
  return n;
}
} // namespace

Graph read_onnx(std::string_view bytes, const std::string &source, const DimBindings &bind) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    throw Error("ANEC-ONNX-001", source + ": not an ONNX model (protobuf parse failed)");
  for (const auto &[name, value] : bind) {
    bool used = false;
    for (auto &in : *model.mutable_graph()->mutable_input())
      if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
        for (auto &d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
          if (d.has_dim_param() && d.dim_param() == name) {
            d.set_dim_value(value);
            used = true;
          }
    if (!used) throw Error("ANEC-MODEL-003", source + ": no input dimension is named '" + name + "'");
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    throw Error("ANEC-ONNX-002", source + ": the ONNX checker rejects the model: " + std::string(e.what()).substr(0, 400));
  }
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception &e) {
    throw Error("ANEC-ONNX-003", source + ": ONNX shape inference fails: " + std::string(e.what()).substr(0, 400));
  }
  const onnx::GraphProto &gp = model.graph();
  Graph g;
  g.source = source;
  g.front_end = "onnx";
  std::map<std::string, Info> infos;
  for (const auto &v : gp.input()) infos[v.name()] = info_of(v.type());
  for (const auto &v : gp.value_info()) infos[v.name()] = info_of(v.type());
  for (const auto &v : gp.output()) infos[v.name()] = info_of(v.type());
  std::set<std::string> constants;
  std::map<std::string, int64_t> constant_elements;
  auto tensor = [&](const std::string &name, bool constant) {
    Tensor t;
    t.name = name;
    const Info &i = infos[name];
    t.shape = map_dims(i.dims);
    t.source_rank = int(i.dims.size());
    t.dtype = dtype_of(i.type);
    t.constant = constant;
    if (!i.known && !constant) {
      t.shape.d[kC] = -1;
      t.shape.symbol[kC] = "?";
    }
    check_size(t, source);
    return t;
  };
  for (const auto &init : gp.initializer()) {
    constants.insert(init.name());
    std::vector<std::pair<int64_t, std::string>> dims;
    for (int64_t d : init.dims()) dims.push_back({d, ""});
    infos[init.name()] = {dims, init.data_type(), true};
    constant_elements[init.name()] = product(dims, source, init.name());
  }
  for (const auto &v : gp.input())
    if (!constants.count(v.name())) g.inputs.push_back(g.add(tensor(v.name(), false)).name);
  static const std::map<std::string, std::string> direct = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Max", "max"}, {"Min", "min"}, {"Relu", "relu"}, {"Sigmoid", "sigmoid"},
      {"Tanh", "tanh"}, {"Gelu", "gelu"}, {"Exp", "exp"}, {"Abs", "abs"}, {"Clip", "clamp"}, {"LeakyRelu", "leaky_relu"}, {"PRelu", "prelu"},
      {"Sqrt", "sqrt"}, {"Erf", "erf"}, {"Sin", "sin"}, {"Cos", "cos"}, {"Tan", "tan"}, {"Softmax", "softmax"}, {"LayerNormalization", "layer_norm"},
      {"InstanceNormalization", "instance_norm"}, {"BatchNormalization", "batch_norm"}, {"Reshape", "reshape"}, {"Flatten", "reshape"},
      {"Squeeze", "reshape"}, {"Unsqueeze", "reshape"}, {"Transpose", "transpose"}, {"Concat", "concat"}, {"Slice", "slice"}, {"Pad", "pad"},
      {"Resize", "resize"}, {"Upsample", "resize"}, {"Tile", "tile"}, {"TopK", "topk"}, {"ArgMax", "argmax"}, {"ArgMin", "argmin"},
      {"Identity", "identity"}, {"Dropout", "identity"}, {"Cast", "cast"}, {"LSTM", "lstm"}, {"GRU", "lstm"}, {"RNN", "lstm"},
      {"ReduceSum", "reduce_sum"}, {"ReduceMean", "reduce_mean"}, {"ReduceMax", "reduce_max"}, {"GlobalAveragePool", "reduce_mean"},
      {"GlobalMaxPool", "reduce_max"}, {"MaxPool", "max_pool"}, {"AveragePool", "avg_pool"}, {"Conv", "conv"}, {"ConvTranspose", "deconv"},
      {"Gemm", "linear"}, {"MatMul", "matmul"}, {"Pow", "pow"}, {"Log", "log"}, {"Reciprocal", "reciprocal"}, {"Ceil", "ceil"}, {"Sign", "sign"}, {"Greater", "compare"},
      {"Less", "compare"}, {"Equal", "compare"}, {"GreaterOrEqual", "compare"}, {"LessOrEqual", "compare"}, {"ScatterND", "scatter"}};
  size_t folded = 0, unknown_shapes = 0;
  std::map<std::string, size_t> unmapped;
  for (const auto &n : gp.node()) {
    bool all_constant = n.input_size() > 0 || n.op_type() == "Constant";
    for (const auto &i : n.input())
      if (!i.empty() && !constants.count(i)) all_constant = false;
    if (n.op_type() == "Shape") all_constant = true; // static shapes: the shape tensor is a constant
    if (all_constant) { // a constant subgraph: folded at compile time, not an engine op
      for (const auto &o : n.output()) constants.insert(o);
      ++folded;
      continue;
    }
    Op op;
    op.name = n.name().empty() ? n.op_type() + "_" + std::to_string(g.ops.size()) : n.name();
    auto it = direct.find(n.op_type());
    op.type = it == direct.end() ? "onnx:" + n.op_type() : it->second;
    if (it == direct.end()) ++unmapped[n.op_type()];
    // Activations in, constants (weights, biases, shape tensors) out of the op's inputs.
    int64_t weights = 0;
    for (int k = 0; k < n.input_size(); ++k) {
      const std::string &i = n.input(k);
      if (i.empty()) continue;
      if (constants.count(i)) {
        if (constant_elements.count(i) && (op.type == "conv" || op.type == "deconv" || op.type == "linear" || op.type == "matmul" || op.type == "prelu"))
          weights = add_or_throw(weights, constant_elements[i], "ANEC-GRAPH-003",
                                 source + ": node '" + op.name + "' weight elements");
        continue;
      }
      if (!g.tensor(i)) throw Error("ANEC-GRAPH-002", source + ": node '" + op.name + "' reads '" + i + "', which nothing defines before it");
      op.inputs.push_back(i);
    }
    if (op.inputs.empty()) { // e.g. a node on constants through an unknown op: fold
      for (const auto &o : n.output()) constants.insert(o);
      ++folded;
      continue;
    }
    if (weights) op.attrs.set("weight_elements", Doc::integer(weights));
    size_t rank = infos[op.inputs[0]].dims.size();
    const Info &out = infos[n.output(0)];
    if (op.type == "conv" || op.type == "deconv" || op.type == "max_pool" || op.type == "avg_pool") {
      auto k = ints(n, "kernel_shape"), s = ints(n, "strides"), p = ints(n, "pads"), d = ints(n, "dilations");
      if (k.size() == 1) { // 1-D along width
        k = {1, k[0]};
        s = s.empty() ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{1, s[0]};
        p = p.size() == 2 ? std::vector<int64_t>{0, 0, p[0], p[1]} : std::vector<int64_t>{0, 0, 0, 0};
        d = d.empty() ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{1, d[0]};
      } else if (p.size() == 4) {
        p = {p[0], p[2], p[1], p[3]}; // ONNX begins then ends -> top, bottom, left, right
      }
      if (!k.empty()) op.attrs.set("kernel", int_array(k));
      if (s.size() == 2) op.attrs.set("stride", int_array(s));
      if (p.size() == 4) op.attrs.set("pad", int_array(p));
      if (d.size() == 2) op.attrs.set("dilation", int_array(d));
      op.attrs.set("groups", Doc::integer(int_attr(n, "group", 1)));
      if (out.dims.size() >= 2) op.attrs.set("out_channels", Doc::integer(out.dims[1].first));
    } else if (op.type == "matmul" && op.inputs.size() == 1) { // x @ W with a constant W: a linear layer
      op.type = "linear";
    } else if (op.type == "matmul") {
      op.attrs.set("contraction_checked", Doc::boolean(true)); // the ONNX checker and shape inference did it
    } else if (op.type == "reduce_sum" || op.type == "reduce_mean" || op.type == "reduce_max") {
      std::string axes;
      auto a = ints(n, "axes");
      if (n.op_type().rfind("Global", 0) == 0) a = {2, 3};
      for (int64_t x : a) axes += kAxisNames[map_axis(x, rank)];
      op.attrs.set("axes", Doc::string(axes.empty() ? "NDCHW" : axes));
    } else if (op.type == "concat" || op.type == "argmax" || op.type == "argmin" || op.type == "softmax" || op.type == "topk") {
      op.attrs.set("axis", Doc::string(std::string(1, kAxisNames[map_axis(int_attr(n, "axis", op.type == "topk" || op.type == "softmax" ? -1 : 0), rank)])));
    }
    if ((op.type == "linear" || op.type == "matmul") && out.known && !infos[op.inputs[0]].dims.empty()) {
      int64_t k = std::max<int64_t>(infos[op.inputs[0]].dims.back().first, 1);
      if (n.op_type() == "Gemm" && int_attr(n, "transA", 0) && infos[op.inputs[0]].dims.size() == 2) k = std::max<int64_t>(infos[op.inputs[0]].dims[0].first, 1);
      std::string what = source + ": node '" + op.name + "' FLOPs (2 x K x output elements)";
      int64_t twice_k = mul_or_throw(2, k, "ANEC-GRAPH-003", what);
      int64_t flops = mul_or_throw(twice_k, product(out.dims, source, n.output(0)), "ANEC-GRAPH-003", what);
      op.attrs.set("flops", Doc::integer(flops));
      if (op.type == "linear") op.attrs.set("out_features", Doc::integer(out.dims.back().first));
    }
    for (const auto &o : n.output()) {
      if (o.empty()) continue;
      if (!infos[o].known) ++unknown_shapes;
      op.outputs.push_back(g.add(tensor(o, false)).name);
    }
    g.ops.push_back(std::move(op));
  }
  for (const auto &v : gp.output())
    if (g.tensor(v.name())) g.outputs.push_back(v.name());
  g.source_nodes = size_t(gp.node_size());
  g.folded_nodes = folded;
  if (folded) g.notes.push_back(std::to_string(folded) + " node(s) on constants folded");
  if (unknown_shapes) g.notes.push_back(std::to_string(unknown_shapes) + " tensor(s) without an inferred shape (marked symbolic)");
  for (auto &[type, count] : unmapped) g.notes.push_back("unmapped ONNX op " + type + " x" + std::to_string(count));
  return g;
}

} // namespace anec::compiler
