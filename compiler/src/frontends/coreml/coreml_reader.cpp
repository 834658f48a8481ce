// The Core ML front-end (coreml.hpp): the module's records (coreml_model.hpp) to a graph, every
// layer mapped through tables/schema/frontend/coreml.toml or kept as "coreml:<type>".
#include "anec/compiler/frontends/coreml.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/mil.hpp"

#include "anec/compiler/ir/shapes.hpp"
#include "anec/support/error.hpp"

#include "coreml_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace anec::compiler {

namespace coreml_front {
const Api &api() {
  // Loaded once; a failed load throws and is tried again by the next caller.
  static const Api &table = plugin::load<Api>(kModule, kEntry, kVersion);
  return table;
}
} // namespace coreml_front

namespace {
using coreml_front::Feature;
using coreml_front::Layer;
using coreml_front::Model;

// A shape of rank r to [N, D, C, H, W]: 1 C, 2 N C, 3 C H W (Core ML's rank-3 array), 4 N C H W,
// 5 N C D H W (ONNX's order otherwise).
constexpr int kLayout[6][5] = {{}, {kC}, {kN, kC}, {kC, kH, kW}, {kN, kC, kH, kW}, {kN, kC, kD, kH, kW}};

std::string narrow_dtype(const std::string &t) {
  if (t == "fp64")
    return "fp32";
  if (t == "int64" || t == "uint32" || t == "uint64")
    return "int32";
  if (t == "bool" || t == "uint1" || t == "uint2" || t == "uint3" || t == "uint4" || t == "uint6")
    return "uint8";
  return dtype_bytes(t) ? t : "fp16";
}

// A tensor for a shape of any rank (-1 for an unknown dimension, symbol "NAME:AXIS").
Tensor tensor_of(const std::string &name, const std::vector<int64_t> &dims, const std::string &dtype,
                 const std::string &source) {
  Tensor t;
  t.name = name;
  t.dtype = narrow_dtype(dtype);
  t.set_source_rank(dims.size());
  if (dims.size() <= 5) {
    for (size_t k = 0; k < dims.size(); ++k) {
      int a = kLayout[dims.size()][k];
      if (dims[k] > 0) {
        t.shape.d[size_t(a)] = dims[k];
      } else {
        t.shape.d[size_t(a)] = -1;
        t.shape.symbol[size_t(a)] = name + ":" + std::to_string(k);
      }
    }
  } else { // more axes than the engine has: the leading ones fold into N
    int64_t n = 1;
    for (size_t k = 0; k + 4 < dims.size(); ++k)
      n = dims[k] > 0 && n > 0 ? std::min(n * dims[k], kMaxDimension) : -1;
    t.shape.d = {n, 1, dims[dims.size() - 4], dims[dims.size() - 2], dims[dims.size() - 1]};
    t.shape.d[kD] = dims[dims.size() - 3];
    for (int a = 0; a < 5; ++a)
      if (t.shape.d[size_t(a)] <= 0) {
        t.shape.d[size_t(a)] = -1;
        t.shape.symbol[size_t(a)] = name + ":" + std::to_string(a);
      }
  }
  check_size(t, source);
  return t;
}

Tensor feature_tensor(const Feature &f, const std::string &source) {
  if (f.kind == "multiArray" || f.kind == "image" || f.kind == "state") {
    std::vector<int64_t> dims = f.shape;
    if (dims.empty()) // flexible with no default shape: one unknown axis
      dims = {-1};
    return tensor_of(f.name, dims, f.dtype.empty() ? "fp32" : f.dtype, source);
  }
  // a scalar, string, dictionary or sequence: one element the host hands over
  Tensor t = tensor_of(f.name, {1}, f.kind == "int64" ? "int32" : "fp32", source);
  t.format = f.kind;
  return t;
}

class Reader {
public:
  Reader(const std::string &source, const OpCatalog &catalog, const MilContext &context)
      : source_(source), catalog_(catalog), context_(context) {
    g_.source = source;
  }

  // A conv, deconv or linear layer's float weight and bias as the evaluator reads them (Graph::values
  // "<op>/weight", "<op>/bias"): the schema's layouts are the evaluator's (convolution [O, C/groups,
  // kH, kW], deconvolution [C, O/groups, kH, kW], innerProduct [out, in]).
  void record_weights(const Layer &l, const Op &op) {
    if (op.type != "conv" && op.type != "deconv" && op.type != "linear")
      return;
    auto w = l.weights.values.find("weights"), b = l.weights.values.find("bias");
    if (w == l.weights.values.end() || w->second.empty())
      return;
    g_.values[op.name + "/weight"].data = w->second;
    if (b != l.weights.values.end() && !b->second.empty())
      g_.values[op.name + "/bias"].data = b->second;
  }

  // A channel-last flatten (FlattenLayerParams CHANNEL_LAST) orders its input as [H, W, C]: a
  // transpose moving C last comes first, then the flatten.
  std::string channels_last(const std::string &input, const std::string &flatten) {
    Op t;
    t.name = flatten + "/channels_last";
    t.type = "transpose";
    t.inputs = {input};
    t.attrs.set("perm", int_array({0, 1, 3, 4, 2}));
    Tensor y;
    y.name = t.name + "_output";
    t.outputs = {g_.add(std::move(y)).name};
    std::string out = t.outputs[0];
    push(std::move(t));
    return out;
  }

  Graph read(const Model &m) {
    g_.front_end = "coreml " + m.kind + " spec " + std::to_string(m.spec_version);
    if (m.spec_version < 1 || m.spec_version > 9)
      g_.notes.push_back("ANEC-COREML-006 warning: specification version " + std::to_string(m.spec_version) +
                         " is outside 1-9, the versions this reader knows; read with its schema");
    for (const Feature &f : m.inputs)
      add_input(f);
    model(m, "");
    g_.outputs.clear(); // the description's outputs, in its order
    for (const Feature &f : m.outputs)
      if (g_.tensor(f.name))
        g_.outputs.push_back(f.name);
      else
        g_.notes.push_back("output '" + f.name + "' is produced by no layer the reader read");
    for (const auto &[type, count] : unmapped_) {
      const std::string *why = catalog_.unmapped_reason("coreml", type);
      if (!why && type.find('/') != std::string::npos)
        why = catalog_.unmapped_reason("coreml", type.substr(0, type.find('/')));
      g_.notes.push_back("unmapped Core ML layer " + type + " x" + std::to_string(count) +
                         (why ? ": " + *why : ""));
    }
    return std::move(g_);
  }

private:
  void add_input(const Feature &f) {
    if (g_.tensor(f.name))
      return;
    g_.inputs.push_back(g_.add(feature_tensor(f, source_)).name);
  }

  // A model of a pipeline, or the model itself (prefix "").
  void model(const Model &m, const std::string &prefix) {
    ++g_.source_nodes;
    if (!m.layers.empty() || m.kind.starts_with("neuralNetwork")) {
      for (const std::string &p : m.preprocessing)
        g_.notes.push_back("image preprocessing " + p + " (folded into the first layer by Core ML)");
      for (const Layer &l : m.layers)
        layer(l, prefix);
      return;
    }
    if (!m.models.empty()) {
      for (size_t i = 0; i < m.models.size(); ++i) {
        const Model &sub = m.models[i];
        std::string name = i < m.model_names.size() && !m.model_names[i].empty()
                               ? m.model_names[i]
                               : "model" + std::to_string(i);
        for (const Feature &f : sub.inputs)
          if (!g_.tensor(f.name))
            add_input(f);
        model(sub, prefix + name + "/");
      }
      return;
    }
    if (m.kind == "mlProgram") {
      program(m, prefix);
      return;
    }
    host_model(m, prefix);
  }

  // A model with no neural network: one operation from its inputs to its outputs, on the host.
  void host_model(const Model &m, const std::string &prefix) {
    Op op;
    op.name = prefix + m.kind;
    const FrontEndOp *row = catalog_.front_end("coreml", "model:" + m.kind);
    op.type = row ? row->op : "coreml:model:" + m.kind;
    if (!row)
      ++unmapped_["model:" + m.kind];
    for (const Feature &f : m.inputs)
      if (g_.tensor(f.name))
        op.inputs.push_back(f.name);
    for (const Feature &f : m.outputs) {
      Tensor t = feature_tensor(f, source_);
      if (g_.try_add(std::move(t)))
        op.outputs.push_back(f.name);
    }
    op.attrs.set("model_bytes", Doc::integer(m.kind_bytes));
    if (m.tree_nodes)
      g_.notes.push_back(m.kind + ": " + std::to_string(m.tree_nodes) + " tree nodes");
    g_.notes.push_back("model type " + m.kind + " has no neural network: Core ML runs it on the CPU");
    if (!op.outputs.empty())
      push(std::move(op));
  }

  static std::vector<int64_t> ints(const Layer &l, const char *key, std::vector<int64_t> fallback) {
    auto it = l.params.find(key);
    if (it == l.params.end() || it->second.empty())
      return fallback;
    std::vector<int64_t> out;
    for (double v : it->second)
      out.push_back(std::isfinite(v) && std::fabs(v) < double(kMaxDimension) ? int64_t(v) : 0);
    return out;
  }
  static int64_t integer(const Layer &l, const char *key, int64_t fallback) {
    auto v = ints(l, key, {fallback});
    return v[0];
  }
  static bool flag(const Layer &l, const char *key) { return integer(l, key, 0) != 0; }

  static Doc int_array(const std::vector<int64_t> &v) {
    Doc a = Doc::array();
    for (int64_t x : v)
      a.push(Doc::integer(x));
    return a;
  }

  // Padding for "same": the total that keeps ceil(in / stride) outputs, the odd pixel at the end.
  static std::vector<int64_t> same_pad(const Shape &in, const std::vector<int64_t> &k,
                                       const std::vector<int64_t> &s, const std::vector<int64_t> &d) {
    std::vector<int64_t> pad(4, 0);
    for (int i = 0; i < 2; ++i) {
      int64_t x = in.d[i == 0 ? kH : kW];
      if (x <= 0 || s[size_t(i)] <= 0)
        continue;
      int64_t out = (x + s[size_t(i)] - 1) / s[size_t(i)];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * s[size_t(i)] + (k[size_t(i)] - 1) * d[size_t(i)] + 1 - x);
      pad[size_t(2 * i)] = total / 2;
      pad[size_t(2 * i + 1)] = total - total / 2;
    }
    return pad;
  }

  // The window attributes of a convolution or pooling layer (the conv and pool handlers).
  void window(const Layer &l, Op &op, bool conv) {
    const Shape *in = op.inputs.empty() ? nullptr : &g_.tensor(op.inputs[0])->shape;
    bool global = flag(l, "globalPooling");
    std::vector<int64_t> k =
        ints(l, "kernelSize", conv ? std::vector<int64_t>{3, 3} : std::vector<int64_t>{3, 3});
    if (global && in)
      k = {std::max<int64_t>(1, in->d[kH]), std::max<int64_t>(1, in->d[kW])};
    std::vector<int64_t> s = ints(l, "stride", {1, 1}), d = ints(l, "dilationFactor", {1, 1});
    if (global)
      s = k;
    k.resize(2, 1), s.resize(2, 1), d.resize(2, 1);
    std::vector<int64_t> pad = ints(l, "pad", {0, 0, 0, 0});
    pad.resize(4, 0);
    if (flag(l, "same") && in)
      pad = same_pad(*in, k, s, d);
    op.attrs.set("kernel", int_array(k));
    op.attrs.set("stride", int_array(s));
    op.attrs.set("pad", int_array(pad));
    if (!conv)
      return;
    op.attrs.set("dilation", int_array(d));
    op.attrs.set("out_channels", Doc::integer(integer(l, "outputChannels", 0)));
    op.attrs.set("groups", Doc::integer(std::max<int64_t>(1, integer(l, "nGroups", 1))));
  }

  // A tensor name as the pipeline's model `prefix` sees it: its own, else the pipeline's.
  std::string resolve(const std::string &name, const std::string &prefix) const {
    if (!prefix.empty() && g_.tensor(prefix + name))
      return prefix + name;
    return name;
  }

  void layer(const Layer &l, const std::string &prefix) {
    Op op;
    op.name = prefix + (l.name.empty() ? l.type + "_" + std::to_string(g_.ops.size()) : l.name);
    ++g_.source_nodes;
    std::string type = l.type.empty() ? "unknown" : l.type;
    std::string sub = l.subtype;
    if (type == "convolution" && flag(l, "isDeconvolution"))
      sub = "deconvolution";
    if (type == "custom")
      sub = l.class_name;
    if (type == "batchnorm" && flag(l, "instanceNormalization"))
      sub = "instanceNormalization";
    if (type == "batchedMatmul" && l.inputs.size() == 1)
      sub = "weights";
    const FrontEndOp *row = sub.empty() ? nullptr : catalog_.front_end("coreml", type + "/" + sub);
    if (!row)
      row = catalog_.front_end("coreml", type);
    if (row) {
      op.type = row->op;
    } else {
      std::string full = type + (sub.empty() ? "" : "/" + sub);
      op.type = "coreml:" + full;
      ++unmapped_[full];
    }
    for (const std::string &i : l.inputs) {
      std::string n = resolve(i, prefix);
      if (!g_.tensor(n))
        throw Error("ANEC-GRAPH-002", source_ + ": layer '" + l.name + "' reads '" + i +
                                          "', which no input or earlier layer defines");
      op.inputs.push_back(n);
    }
    if (l.type == "flatten" && integer(l, "mode", 0) == 1 && op.inputs.size() == 1)
      op.inputs[0] = channels_last(op.inputs[0], op.name);
    if (row)
      attributes(l, *row, op);
    if (l.weights.elements > 0) {
      op.attrs.set("weight_elements", Doc::integer(l.weights.elements));
      op.attrs.set("weight_bytes", Doc::integer(l.weights.bytes));
      op.attrs.set("weight_storage", Doc::string(l.weights.storage));
    }
    if (l.updatable || l.weights.updatable)
      op.attrs.set("trainable", Doc::boolean(true));
    record_weights(l, op);
    for (const std::string &o : l.outputs) {
      Tensor t;
      t.name = g_.tensor(o) && prefix.empty() ? o : (g_.tensor(o) ? prefix + o : o);
      if (!g_.try_add(std::move(t)))
        throw Error("ANEC-GRAPH-002", source_ + ": layer '" + l.name + "' writes '" + o +
                                          "', which an input or earlier layer already defines");
      op.outputs.push_back(g_.tensors.back().name);
    }
    if (op.outputs.empty())
      return;
    push(std::move(op));
  }

  void attributes(const Layer &l, const FrontEndOp &row, Op &op) {
    if (row.attrs == "conv" || row.attrs == "pool")
      window(l, op, row.attrs == "conv");
    if (row.attrs == "linear") {
      int64_t of = integer(l, "outputChannels", 0);
      if (!of)
        of = integer(l, "weightMatrixSecondDimension", 0);
      if (!of)
        of = integer(l, "outputVectorSize", 0);
      op.attrs.set("out_features", Doc::integer(of));
    }
    for (const auto &[key, attr] : row.params) {
      auto it = l.params.find(key);
      if (it == l.params.end() || it->second.empty())
        continue;
      const OpSpec *spec = catalog_.find(row.op);
      const AttrDecl *decl = spec ? find_attr(spec->attrs, attr) : nullptr;
      AttrType kind = decl ? decl->type : AttrType::number;
      if (kind == AttrType::integer)
        op.attrs.set(attr, Doc::integer(int64_t(it->second[0])));
      else if (kind == AttrType::ints)
        op.attrs.set(attr, int_array(ints(l, key.c_str(), {})));
      else if (kind == AttrType::flag)
        op.attrs.set(attr, Doc::boolean(it->second[0] != 0));
      else
        op.attrs.set(attr, Doc::number(it->second[0]));
    }
    shape_attributes(l, op);
    if (op.type == "reshape" && op.inputs.size() == 1) { // flatten: everything but N into channels
      const Shape &in = g_.tensor(op.inputs[0])->shape;
      int64_t c = in.d[kD] * in.d[kC] * in.d[kH] * in.d[kW];
      if (!in.symbolic() && c > 0 && l.type.starts_with("flatten"))
        op.attrs.set("shape", int_array({in.d[kN], c, 1, 1}));
    }
  }

  // Where axis `axis` of a rank-`rank` array lands in [N, D, C, H, W] (the layout of tensor_of); C
  // when the rank is not 1-5 or the axis is outside it.
  static int nd_axis(int64_t axis, int rank) {
    if (rank < 1 || rank > 5)
      return kC;
    int64_t a = axis < 0 ? axis + rank : axis;
    return a < 0 || a >= rank ? kC : kLayout[rank][a];
  }
  static Doc letter(int axis) { return Doc::string(std::string(1, kAxisNames[axis])); }

  // The layer parameters that set the output's shape, as the catalogue op's attributes
  // (NeuralNetwork.proto: the legacy layers work on [Seq, Batch, C, H, W], the ND layers on the
  // array's own rank).
  void shape_attributes(const Layer &l, Op &op) {
    const Tensor *x = op.inputs.empty() ? nullptr : g_.tensor(op.inputs[0]);
    int rank = x ? (x->source_rank > 0 ? x->source_rank : 5) : 5;
    const std::string &t = l.type;
    if (t == "concat")
      op.attrs.set("axis", letter(flag(l, "sequenceConcat") ? kN : kC));
    if (t == "softmax")
      op.attrs.set("axis", letter(kC));
    if (t == "concatND" || t == "softmaxND")
      op.attrs.set("axis", letter(nd_axis(integer(l, "axis", -1), rank)));
    if (t == "reshape" || t == "reshapeStatic") {
      std::vector<int64_t> target = ints(l, "targetShape", {});
      std::vector<int64_t> v(5, 1);
      if (t == "reshape" && (target.size() == 3 || target.size() == 4)) {
        // [C, H, W] keeps the batch; [Seq, C, H, W] sets it
        v[kN] = target.size() == 3 && x ? x->shape.d[kN] : target[0];
        for (size_t k = 0; k < 3; ++k)
          v[size_t(kC + int(k))] = target[target.size() - 3 + k];
      } else if (t == "reshapeStatic" && !target.empty() && target.size() <= 5) {
        int64_t known = 1, total = x && !x->shape.symbolic() ? x->shape.elements() : -1;
        int free = -1;
        for (size_t k = 0; k < target.size(); ++k) {
          int a = kLayout[target.size()][k];
          if (target[k] > 0) {
            v[size_t(a)] = target[k];
            known = known * target[k];
          } else {
            free = a;
          }
        }
        if (free >= 0)
          v[size_t(free)] = total > 0 && known > 0 ? total / known : -1;
      } else {
        v.clear();
      }
      if (!v.empty() && std::all_of(v.begin(), v.end(), [](int64_t d) { return d > 0; }))
        op.attrs.set("shape", int_array(v));
    }
    if (t == "permute" || t == "transpose") {
      // permute: 4 axes over [Seq, C, H, W] (Seq as N); transpose: the array's own axes
      std::vector<int64_t> axes = ints(l, t == "permute" ? "axis" : "axes", {});
      std::vector<int64_t> p5 = {0, 1, 2, 3, 4};
      const int seq[4] = {kN, kC, kH, kW};
      int r = t == "permute" ? 4 : int(axes.size());
      bool ok = (t == "permute" ? axes.size() == 4 : r >= 1 && r <= 5);
      for (size_t i = 0; ok && i < axes.size(); ++i) {
        if (axes[i] < 0 || axes[i] >= r) {
          ok = false;
          break;
        }
        int to = t == "permute" ? seq[i] : kLayout[r][i];
        int from = t == "permute" ? seq[axes[i]] : kLayout[r][axes[i]];
        p5[size_t(to)] = from;
      }
      if (ok)
        op.attrs.set("perm", int_array(p5));
    }
    if (t == "padding") { // [top, bottom, left, right] from the H and W border amounts
      std::vector<int64_t> pad = ints(l, "pad", {0, 0, 0, 0});
      pad.resize(4, 0);
      op.attrs.set("pad", int_array(pad));
      op.attrs.set("mode", Doc::string(l.subtype.empty() ? "constant" : l.subtype));
      op.attrs.set("value", Doc::number(l.params.count("value") ? l.params.at("value")[0] : 0.0));
    }
    if (t == "constantPad") { // a start and an end amount per axis of the array
      std::vector<int64_t> amounts = ints(l, "padAmounts", {});
      std::vector<int64_t> pad(4, 0), channel(2, 0);
      if (amounts.size() == size_t(2 * rank) && !flag(l, "padToGivenOutputSizeMode"))
        for (int k = 0; k < rank; ++k) {
          int a = kLayout[rank][k];
          int64_t *dst = a == kH ? &pad[0] : a == kW ? &pad[2] : a == kC ? &channel[0] : nullptr;
          if (dst) {
            dst[0] = amounts[size_t(2 * k)];
            dst[1] = amounts[size_t(2 * k + 1)];
          }
        }
      op.attrs.set("pad", int_array(pad));
      op.attrs.set("channel_pad", int_array(channel));
      op.attrs.set("value", Doc::number(l.params.count("value") ? l.params.at("value")[0] : 0.0));
    }
    if (t == "upsample") {
      std::vector<int64_t> scale = ints(l, "scalingFactor", {});
      auto frac = l.params.find("fractionalScalingFactor");
      if (scale.size() == 2 && scale[0] > 0 && scale[1] > 0) {
        op.attrs.set("scale", int_array(scale));
      } else if (frac != l.params.end() && frac->second.size() == 2 && x && x->shape.d[kH] > 0 &&
                 x->shape.d[kW] > 0) {
        op.attrs.set("size", int_array({int64_t(std::floor(double(x->shape.d[kH]) * frac->second[0])),
                                        int64_t(std::floor(double(x->shape.d[kW]) * frac->second[1]))}));
      } else {
        op.attrs.set("scale", int_array({1, 1}));
      }
      op.attrs.set("mode", Doc::string(integer(l, "mode", 0) == 1 ? "bilinear" : "nearest"));
    }
  }

  // A pipeline's mlProgram model: its program read as MIL (mil_to_graph), its tensors and operations
  // named under the model's prefix, its inputs the pipeline's tensors of those names.
  void program(const Model &m, const std::string &prefix) {
    Graph sub = program_graph(m, source_, catalog_, {}, context_);
    std::map<std::string, std::string> rename;
    for (const std::string &in : sub.inputs)
      if (std::string r = resolve(in, prefix); g_.tensor(r))
        rename[in] = r;
    for (Tensor t : sub.tensors) {
      if (rename.count(t.name))
        continue;
      rename[t.name] = prefix + t.name;
      t.name = prefix + t.name;
      g_.try_add(std::move(t));
    }
    for (Op op : sub.ops) {
      op.name = prefix + op.name;
      for (auto *list : {&op.inputs, &op.outputs})
        for (std::string &x : *list)
          if (auto it = rename.find(x); it != rename.end())
            x = it->second;
      g_.ops.push_back(std::move(op));
    }
    for (const std::string &n : sub.notes)
      g_.notes.push_back(prefix + ": " + n);
    g_.source_nodes += sub.source_nodes;
    g_.folded_nodes += sub.folded_nodes;
  }

public:
  // An mlProgram: its program read as its MIL text would be (mil_to_graph: shapes from the declared
  // types, const and constexpr ops as weights, BLOBFILEs under `context.model_path`), then what the
  // model description adds (images, flexible shapes, the outputs' order).
  static Graph program_graph(const Model &m, const std::string &source, const OpCatalog &catalog,
                             const DimBindings &dims, const MilContext &context) {
    if (m.program.functions.empty())
      throw Error("ANEC-MIL-005", source + ": the mlProgram holds no function");
    Graph g = mil_to_graph(m.program, source, catalog, dims, context);
    g.front_end = "coreml mlProgram spec " + std::to_string(m.spec_version) + " (" + g.front_end + ")";
    g.notes.insert(g.notes.begin(), "MIL program version " + std::to_string(m.program_version) +
                                        " in the spec, read as MIL text would be");
    if (m.nested_ops)
      g.notes.push_back(std::to_string(m.nested_ops) +
                        " operations in nested blocks (cond, while_loop) not read; their op stays unmapped");
    for (const Feature &f : m.inputs)
      if (f.kind == "image")
        g.notes.push_back("input '" + f.name + "' is an image [" + std::to_string(f.shape[1]) + "x" +
                          std::to_string(f.shape[2]) + "x" + std::to_string(f.shape[3]) +
                          "] in the description; Core ML hands the program its pixels as the typed input");
    std::vector<std::string> described;
    for (const Feature &f : m.outputs)
      if (std::find(g.outputs.begin(), g.outputs.end(), f.name) != g.outputs.end())
        described.push_back(f.name);
    if (described.size() == g.outputs.size())
      g.outputs = described;
    return g;
  }

private:
  // Adds an operation and infers its outputs' shapes at once, so that a later layer's attributes
  // (global pooling, "same" padding, flatten) can read its input's shape.
  void push(Op op) {
    bool known = true;
    for (const std::string &i : op.inputs)
      known = known && !g_.tensor(i)->shape.symbolic();
    g_.ops.push_back(std::move(op));
    if (known && !op_inputs_empty(g_.ops.back())) {
      try {
        infer_shapes(g_, g_.ops.back(), catalog_);
      } catch (const Error &) {
        // the pipeline's inference reports it with its reason
      }
    }
  }
  static bool op_inputs_empty(const Op &op) { return op.inputs.empty(); }

  const std::string &source_;
  const OpCatalog &catalog_;
  const MilContext &context_;
  Graph g_;
  std::map<std::string, size_t> unmapped_;
};
} // namespace

Graph read_coreml(std::string_view bytes, const std::string &source, const OpCatalog &catalog,
                  const DimBindings &dims, const std::filesystem::path &model_path, bool keep_values) {
  Model m = coreml_front::api().read(bytes, source, keep_values);
  MilContext context;
  context.model_path = model_path;
  context.keep_values = keep_values;
  if (m.kind == "mlProgram") {
    Graph g = Reader::program_graph(m, source, catalog, dims, context);
    if (m.spec_version < 1 || m.spec_version > 9)
      g.notes.push_back("ANEC-COREML-006 warning: specification version " + std::to_string(m.spec_version) +
                        " is outside 1-9, the versions this reader knows; read with its schema");
    return g;
  }
  Graph g = Reader(source, catalog, context).read(m);
  bind_dimensions(g, dims);
  infer_shapes(g, catalog);
  // The outputs' types are the ones the description declares (inference carries the input's along).
  for (const Feature &f : m.outputs)
    if (Tensor *t = g.tensor(f.name); t && f.kind == "multiArray" && !f.dtype.empty())
      t->dtype = f.dtype;
  return g;
}

} // namespace anec::compiler
