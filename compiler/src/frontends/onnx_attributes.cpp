// Attribute translation: a node's ONNX attributes as the attributes of the catalogue operation it
// maps onto (the handlers the front-end map names, tables/schema/frontend/onnx.toml), and for the
// evaluator (keep_values) its weights, its constant operands and what it means beyond its map row.
#include "onnx_reader.hpp"

#include "anec/support/checked.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace anec::compiler::onnx_front {

namespace {

Doc int_array(const std::vector<int64_t> &v) {
  Doc a = Doc::array();
  for (int64_t x : v)
    a.push(Doc::integer(x));
  return a;
}

// The attributes the evaluator reads of a parametric activation, with ONNX's defaults, in order.
struct Parameter {
  const char *name;
  float fallback;
};
const std::map<std::string, std::vector<Parameter>> kActivations = {
    {"LeakyRelu", {{"alpha", 0.01f}}},
    {"Elu", {{"alpha", 1.0f}}},
    {"ThresholdedRelu", {{"alpha", 1.0f}}},
    {"Celu", {{"alpha", 1.0f}}},
    {"Selu", {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}}},
    {"HardSigmoid", {{"alpha", 0.2f}, {"beta", 0.5f}}},
    {"LRN", {{"alpha", 1e-4f}, {"beta", 0.75f}, {"bias", 1.0f}}},
};

// The ops mapped onto a kernel of other semantics (a sum, a softmax, an average, instance_norm,
// quantize): the evaluator would compute something else.
const std::set<std::string> kOtherSemantics = {"Mean",
                                               "LogSoftmax",
                                               "LpPool",
                                               "GroupNormalization",
                                               "MeanVarianceNormalization",
                                               "DynamicQuantizeLinear"};

// ONNX's source coordinate of output position i (Resize, coordinate_transformation_mode), in T as
// onnxruntime computes it in float; nullopt for a transformation not listed (tf_crop_and_resize).
template <class T>
std::optional<T> source(const std::string &ctm, int64_t i, T scale, int64_t in, int64_t out) {
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
template <class T> std::optional<int64_t> round_nearest(const std::string &mode, T x, bool down) {
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

} // namespace

size_t Translator::rank() const {
  return op_.inputs.empty() ? 0 : facts_.info(op_.inputs[0]).dims.size();
}

void Translator::map(const FrontEndOp &row) {
  const std::string &h = row.attrs;
  if (h == "window")
    window();
  else if (h == "gemm")
    gemm();
  else if (h == "axis" || h == "axis_last")
    axis(h == "axis_last");
  else if (h == "reduce" || h == "global")
    reduce(h == "global");
  else if (h == "perm")
    perm();
  else if (h == "slice")
    slice();
  else if (h == "pad")
    pad();
  else if (h == "attention")
    attention();
}

// ONNX Attention (opset 23): its scale when the node gives one; the catalogue's default is the
// standard's, 1 / sqrt(the key width).
void Translator::attention() {
  if (const auto *a = attribute(n_, "scale"); a && a->f)
    op_.attrs.set("scale", Doc::number(double(*a->f)));
}

// The evaluator's sdpa is softmax(q k^T * scale + mask) v over Q, K, V of rank 4 ([B, heads, S, E],
// the heads along C): ONNX Attention computes that when it has no causal mask, no past key or value,
// no softcap, the plain QK output mode, an additive (float) mask if any, and K, V with Q's heads or
// one head. Otherwise (rank 3 inputs that split heads by q_num_heads, grouped heads, ...) it is left
// to the evaluator to report.
bool Translator::attention_evaluable() {
  if (int_attr(n_, "is_causal", 0) || float_attr(n_, "softcap", 0) != 0 ||
      int_attr(n_, "qk_matmul_output_mode", 0) != 0 || given(n_, 4) || given(n_, 5))
    return false;
  for (size_t k = 1; k < n_.outputs.size(); ++k)
    if (!n_.outputs[k].empty())
      return false;
  if (op_.inputs.size() != (given(n_, 3) ? 4u : 3u))
    return false; // a constant Q, K, V or mask is not an input the evaluator reads
  std::vector<Info> x;
  for (const std::string &i : op_.inputs)
    x.push_back(facts_.info(i));
  for (size_t k = 0; k < 3; ++k)
    if (!x[k].known || x[k].dims.size() != 4 || !x[k].dims[1].positive_integer())
      return false;
  double heads = x[0].dims[1].k;
  for (size_t k = 1; k < 3; ++k)
    if (x[k].dims[1].k != heads && x[k].dims[1].k != 1)
      return false;
  return x.size() == 3 || (x[3].type != kBool && x[3].dims.size() <= 4);
}

void Translator::window() {
  const Info &out = facts_.info(n_.outputs[0]);
  auto k = ints(n_, "kernel_shape"), s = ints(n_, "strides"), p = ints(n_, "pads"), d = ints(n_, "dilations");
  if (k.empty() && int(n_.inputs.size()) > 1)
    if (const Info &w = facts_.info(facts_.input(n_, 1)); w.known && w.dims.size() >= 3)
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
    op_.attrs.set("kernel", int_array(k));
  if (s.size() == 2)
    op_.attrs.set("stride", int_array(s));
  if (p.size() == 4)
    op_.attrs.set("pad", int_array(p));
  if (d.size() == 2)
    op_.attrs.set("dilation", int_array(d));
  op_.attrs.set("groups", Doc::integer(int_attr(n_, "group", 1)));
  if (out.dims.size() >= 2 && out.dims[1].positive_integer())
    op_.attrs.set("out_channels", Doc::integer(int64_t(out.dims[1].k)));
}

void Translator::gemm() {
  const Info &out = facts_.info(n_.outputs[0]);
  if (op_.type == "matmul" && op_.inputs.size() == 1)
    op_.type = "linear"; // x @ W with a constant W
  else if (op_.type == "matmul")
    op_.attrs.set("contraction_checked", Doc::boolean(true)); // the ONNX checker and shape inference did it
  if (!out.known || op_.inputs.empty() || facts_.info(op_.inputs[0]).dims.empty())
    return;
  const Info &a = facts_.info(op_.inputs[0]);
  Sym k = a.dims.back();
  if (n_.op_type == "Gemm" && int_attr(n_, "transA", 0) && a.dims.size() == 2)
    k = a.dims[0];
  Sym flops = mul(Sym::num(2), k);
  for (const Sym &d : out.dims)
    flops = mul(flops, d);
  if (flops.positive_integer())
    op_.attrs.set("flops", Doc::integer(int64_t(flops.k)));
  if (op_.type == "linear" && out.dims.back().positive_integer())
    op_.attrs.set("out_features", Doc::integer(int64_t(out.dims.back().k)));
}

void Translator::axis(bool last) {
  int64_t axis = int_attr(n_, "axis", last ? -1 : 0);
  op_.attrs.set("axis", Doc::string(std::string(1, kAxisNames[map_axis(axis, rank())])));
}

void Translator::reduce(bool global) {
  std::vector<int64_t> a = ints(n_, "axes");
  if (a.empty())
    a = input_ints(facts_, n_, std::nullopt);
  if (global)
    a = {2, 3};
  std::string axes;
  for (int64_t x : a)
    axes += kAxisNames[map_axis(x, rank())];
  op_.attrs.set("axes", Doc::string(axes.empty() ? "NDCHW" : axes));
}

void Translator::perm() {
  auto perm = ints(n_, "perm");
  size_t r = rank();
  if (r < 1 || r > 5 || (!perm.empty() && perm.size() != r))
    return;
  std::vector<int64_t> p5 = {0, 1, 2, 3, 4};
  for (size_t i = 0; i < r; ++i)
    p5[size_t(kLayout[r][i])] = kLayout[r][perm.empty() ? r - 1 - i : size_t(perm[i]) % r];
  op_.attrs.set("perm", int_array(p5));
}

void Translator::slice() {
  auto starts = facts_.data(n_, 1), axes = facts_.data(n_, 3);
  std::vector<int64_t> begin(5, 0);
  if (starts)
    for (size_t i = 0; i < starts->size(); ++i) {
      int64_t axis = axes && i < axes->size() && (*axes)[i].is_number() ? int64_t((*axes)[i].k) : int64_t(i);
      if ((*starts)[i].is_number())
        begin[size_t(map_axis(axis, rank()))] = int64_t((*starts)[i].k);
    }
  op_.attrs.set("begin", int_array(begin));
}

void Translator::pad() {
  size_t r = rank();
  std::vector<int64_t> p = ints(n_, "pads");
  if (p.empty())
    p = input_ints(facts_, n_, 0);
  const auto *mode = attribute(n_, "mode");
  if (mode && mode->s)
    op_.attrs.set("mode", Doc::string(*mode->s));
  if (p.size() != 2 * r || r < 2)
    return;
  std::vector<int64_t> hw = {0, 0, 0, 0}, channel = {p[1], p[1 + r]}; // begins then ends, per axis
  for (size_t i = 0; i < r; ++i) {
    int a = map_axis(int64_t(i), r);
    if (a == kH)
      hw[0] = p[i], hw[1] = p[i + r];
    if (a == kW)
      hw[2] = p[i], hw[3] = p[i + r];
  }
  op_.attrs.set("pad", int_array(hw));
  if (channel[0] || channel[1])
    op_.attrs.set("channel_pad", int_array(channel));
}

// ---- the values the evaluator reads (keep_values) ----

// The weights of a conv, deconv or linear layer whose constant operands were copied whole, as the
// evaluator reads them (Graph::values "<op>/weight" and "<op>/bias", docs/graph-format.md
// "Evaluation"): conv [O, C/groups, kh, kw], deconv [C_in, O/groups, kh, kw], linear
// [out_features, C_in], the bias [O]. An op whose operands do not map exactly onto those is left
// out: the evaluator gives it seeded weights and says so.
void Translator::record_weights() {
  const std::string &t = n_.op_type;
  if (op_.inputs.size() != 1 || n_.inputs.size() < 2 || n_.inputs.size() > 3 ||
      facts_.input(n_, 0) != op_.inputs[0])
    return; // the data input is not ONNX input 0 (a constant left operand), or a runtime operand
  const Full *w = facts_.full_of(n_, 1), *b = facts_.full_of(n_, 2);
  if (!w || (given(n_, 2) && !b))
    return;
  size_t rank = facts_.info(op_.inputs[0]).dims.size();
  std::vector<float> weight, bias;
  bool conv = t == "Conv" || t == "ConvTranspose", linear = t == "Gemm" || t == "MatMul";
  if (!(conv ? conv_weights(*w, b, rank, weight, bias) : linear && linear_weights(*w, b, rank, weight, bias)))
    return;
  g_.values[op_.name + "/weight"].data = std::move(weight);
  if (b)
    g_.values[op_.name + "/bias"].data = std::move(bias);
}

// 1-D (N C L, the kernel along W: [O, C, k] is [O, C, 1, k]) or 2-D (N C H W); the ONNX weight
// layouts are the evaluator's.
bool Translator::conv_weights(const Full &w, const Full *b, size_t rank, std::vector<float> &weight,
                              std::vector<float> &bias) const {
  if ((rank != 3 && rank != 4) || w.dims.size() != rank)
    return false;
  int64_t out = n_.op_type == "Conv" ? w.dims[0] : w.dims[1] * int_attr(n_, "group", 1);
  if (b && (b->dims.size() != 1 || int64_t(b->values->size()) != out))
    return false;
  weight = *w.values;
  if (b)
    bias = *b->values;
  return true;
}

// x [M, K] is [M, 1, K, 1, 1] (and a MatMul's x [K] is [1, 1, K, 1, 1]), contracted over C as linear
// does; a rank-3 or higher x holds K along W, which linear does not contract.
bool Translator::linear_weights(const Full &w, const Full *b, size_t rank, std::vector<float> &weight,
                                std::vector<float> &bias) const {
  bool gemm = n_.op_type == "Gemm", trans_b = gemm && int_attr(n_, "transB", 0);
  if (op_.type != "linear" || w.dims.size() != 2 || (rank != 2 && (gemm || rank != 1)))
    return false;
  if (gemm &&
      (int_attr(n_, "transA", 0) || float_attr(n_, "alpha", 1) != 1 || (b && float_attr(n_, "beta", 1) != 1)))
    return false;
  size_t k = size_t(trans_b ? w.dims[1] : w.dims[0]), m = size_t(trans_b ? w.dims[0] : w.dims[1]);
  const std::vector<float> &v = *w.values;
  if (trans_b) {
    weight = v;
  } else { // B [K, N] to [N, K]
    weight.resize(v.size());
    for (size_t i = 0; i < k; ++i)
      for (size_t j = 0; j < m; ++j)
        weight[j * k + i] = v[i * m + j];
  }
  if (!b)
    return true;
  // C broadcast to [M, N]: one value per output feature ([N] or [1, N]), or one for all
  size_t count = b->values->size();
  bool per_feature = count == m && (b->dims.size() == 1 || (b->dims.size() == 2 && b->dims[0] == 1));
  if (!per_feature && count != 1)
    return false;
  bias = per_feature ? *b->values : std::vector<float>(m, (*b->values)[0]);
  return true;
}

// The constant operands of an op the evaluator computes by broadcasting (add, sub, mul, div, max,
// min, pow, prelu, select, compare, floor_div; docs/graph-format.md "Evaluation"), each as a constant
// tensor with its values, by ONNX input position. ONNX broadcasting is right-aligned: a constant's
// dims are left-padded with 1s to the rank of the op's runtime operands, then laid out as a tensor of
// that rank is (kLayout), so that broadcasting over the five axes is ONNX's. Empty (the op as without
// keep_values) unless every constant operand was copied whole and the layout is unambiguous: the
// runtime operands all of one known rank, the output's, no wider than 5, and no constant of a higher
// rank. Not for Mean (a sum then a scale) nor an integer Div (ONNX truncates).
std::map<int, std::string> Translator::broadcast_constants(const std::string &op_type) {
  static const std::set<std::string> kBroadcast = {"add", "sub",   "mul",    "div",     "max",      "min",
                                                   "pow", "prelu", "select", "compare", "floor_div"};
  const std::string &t = n_.op_type;
  if (!kBroadcast.count(op_type) || t == "Mean" || n_.outputs.empty() || n_.outputs[0].empty())
    return {};
  const Info &y = facts_.info(n_.outputs[0]);
  if (t == "Div" && integer_type(y.type))
    return {};
  std::optional<size_t> rank;
  std::vector<std::pair<int, const Full *>> constants;
  for (int k = 0; k < int(n_.inputs.size()); ++k) {
    const std::string i = facts_.input(n_, k);
    if (i.empty())
      continue;
    const Value *v = facts_.value(i);
    if (v && v->constant) {
      const Full *f = facts_.full_of(n_, k);
      if (!f)
        return {};
      constants.emplace_back(k, f);
      continue;
    }
    const Info &x = facts_.info(i);
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
    out[k] = constant_operand(facts_.input(n_, k), *f, *rank);
  return out;
}

// A constant operand as a graph constant with its values (Graph::values), its dims left-padded with
// 1s to `rank` and laid out as a tensor of that rank. Named as the constant, or, where the graph
// holds that name with another shape (or the name ends as the evaluator's keys of embedded weights
// do, "/weight" or "/bias"), with its 5-D shape appended ("w@1x1x8x1x1").
std::string Translator::constant_operand(const std::string &name, const Full &f, size_t rank) {
  Tensor t;
  t.constant = true;
  t.set_source_rank(rank);
  t.dtype = dtype_of(facts_.info(name).type);
  for (size_t k = 0; k < f.dims.size(); ++k)
    t.shape.d[size_t(kLayout[rank][rank - f.dims.size() + k])] = f.dims[k];
  check_size(t, g_.source);
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

const char *Translator::compare_mode(const std::string &type) {
  return type == "Greater"          ? "greater"
         : type == "Less"           ? "less"
         : type == "GreaterOrEqual" ? "greater_equal"
         : type == "LessOrEqual"    ? "less_equal"
                                    : "equal";
}

// ---- what an op means to the evaluator (keep_values) ----

// What an ONNX op means beyond its map row, passed on as the evaluator reads it (docs/graph-format.md
// "Evaluation"): the parametric activations' attributes with ONNX's defaults, Clip's bounds, the
// normalizations' constants as inputs in the evaluator's order, LRN's parameters, Pad's value, the
// quantizers' scale and zero point, Resize's mode. Where the evaluator would compute something else
// (an attribute value it does not implement, a parameter known only at run time, an op mapped onto a
// kernel of other semantics), the op becomes "onnx:<type>", which the evaluator reports as not
// evaluated, rather than computing a wrong value; a Resize keeps its type and takes a mode the
// evaluator reports (resize_mode).
void Translator::eval_semantics() {
  const std::string &t = n_.op_type;
  bool evaluable = !kOtherSemantics.count(t);
  if (t == "Celu") // elu where alpha is 1
    evaluable = float_attr(n_, "alpha", 1.0f) == 1.0f;
  else if (t == "Gelu") // the evaluator's is the erf form
    evaluable = string_attr(n_, "approximate", "none") == "none";
  else if (t == "LRN")
    op_.attrs.set("size", Doc::integer(int_attr(n_, "size", 5)));
  else if (t == "Clip")
    evaluable = clip();
  else if (t == "BatchNormalization" || t == "InstanceNormalization" || t == "LayerNormalization" ||
           t == "RMSNormalization")
    evaluable = normalization();
  else if (t == "Attention")
    evaluable = attention_evaluable();
  else if (t == "Pad")
    evaluable = pad_value();
  else if (t == "QuantizeLinear" || t == "DequantizeLinear")
    evaluable = quantization();
  else if (t == "Resize" || t == "Upsample")
    resize_mode();
  if (auto it = kActivations.find(t); it != kActivations.end())
    for (const Parameter &p : it->second)
      op_.attrs.set(p.name, Doc::number(double(float_attr(n_, p.name, p.fallback))));
  if (!evaluable)
    op_.type = "onnx:" + t;
}

// The value of input k where it is a constant of one element.
std::optional<double> Translator::scalar(int k) const {
  if (const Full *f = facts_.full_of(n_, k))
    return f->values->size() == 1 ? std::optional<double>((*f->values)[0]) : std::nullopt;
  const Value *v = given(n_, k) ? facts_.value(facts_.input(n_, k)) : nullptr;
  auto d = facts_.data(n_, k);
  if (!v || !v->constant || !d || d->size() != 1 || !(*d)[0].is_number())
    return std::nullopt;
  return (*d)[0].k;
}

// Clip's "min" and "max": attributes (opset 6) or constant scalar inputs 1 and 2 (opset 11 on). An
// absent bound is the type's lowest or highest value, as ONNX has it (an infinite input is clipped to
// it); a min above max makes every value max. False where a bound is not a constant scalar.
bool Translator::clip() {
  int type = n_.outputs.empty() ? 0 : facts_.info(n_.outputs[0]).type;
  double top = type == kFloat16    ? 65504.0
               : type == kBfloat16 ? 0x1.fep127
               : type == kDouble   ? std::numeric_limits<double>::max()
                                   : double(std::numeric_limits<float>::max());
  double lo = -top, hi = top;
  if (const auto *a = attribute(n_, "min"); a && a->f)
    lo = double(*a->f);
  if (const auto *a = attribute(n_, "max"); a && a->f)
    hi = double(*a->f);
  for (int k : {1, 2}) {
    if (!given(n_, k))
      continue;
    auto v = scalar(k);
    if (!v)
      return false;
    (k == 1 ? lo : hi) = *v;
  }
  op_.attrs.set("min", Doc::number(std::min(lo, hi)));
  op_.attrs.set("max", Doc::number(hi));
  return true;
}

// The normalizations' constants as the evaluator's inputs after x, each a constant tensor with its
// values: batch_norm mean, variance, scale, bias (ONNX orders them scale, B, mean, var) and
// instance_norm scale, bias, one value per channel (laid out along C); layer_norm scale and bias over
// the normalized axes (from `axis` on, as `axes`), broadcast as ONNX does. And `epsilon`. False
// unless x is the only runtime input, each parameter a wholly copied constant of that shape, and only
// the normalized output is read (not training statistics); instance_norm only at rank 3 or 4 (the
// evaluator normalizes over H and W).
bool Translator::normalization() {
  const std::string &t = n_.op_type;
  if (n_.inputs.empty() || op_.inputs.size() != 1 || op_.inputs[0] != facts_.resolve(n_.inputs[0]))
    return false;
  for (size_t k = 1; k < n_.outputs.size(); ++k)
    if (!n_.outputs[k].empty())
      return false;
  const Info &x = facts_.info(op_.inputs[0]);
  size_t rank = x.dims.size();
  if (!x.known || rank < 2 || rank > 5 || !x.dims[1].positive_integer())
    return false;
  std::vector<int> order = {1, 2};
  size_t layout = 1; // the parameters' rank: per channel, or as ONNX broadcasts them
  if (t == "BatchNormalization") {
    order = {3, 4, 1, 2};
    if (int_attr(n_, "training_mode", 0))
      return false;
  } else if (t == "InstanceNormalization") {
    if (rank != 3 && rank != 4)
      return false;
  } else {
    int64_t axis = int_attr(n_, "axis", -1);
    axis = axis < 0 ? axis + int64_t(rank) : axis;
    if (axis < 0 || axis >= int64_t(rank))
      return false;
    std::string axes;
    for (size_t a = size_t(axis); a < rank; ++a)
      axes += kAxisNames[kLayout[rank][a]];
    op_.attrs.set("axes", Doc::string(axes));
    layout = rank;
  }
  std::vector<std::string> params;
  for (int k : order) {
    if (!given(n_, k) && (t == "LayerNormalization" || t == "RMSNormalization") && k == 2)
      continue; // no bias (RMSNormalization has none)
    const Full *f = facts_.full_of(n_, k);
    if (!f || (layout == 1 && (f->dims.size() != 1 || f->dims[0] != int64_t(x.dims[1].k))) ||
        f->dims.size() > layout)
      return false;
    params.push_back(constant_operand(facts_.input(n_, k), *f, layout));
  }
  op_.inputs.insert(op_.inputs.end(), params.begin(), params.end());
  op_.attrs.set("epsilon", Doc::number(double(float_attr(n_, "epsilon", 1e-5f))));
  return true;
}

// Pad's constant value: the attribute (opset 2) or a constant scalar input 2 (opset 11 on). False
// where it is not a constant scalar, where the pads are not all known (the handler's `pad`), or where
// input 3 (axes, opset 18) names the padded axes.
bool Translator::pad_value() {
  auto d = facts_.data(n_, 1);
  bool known = !ints(n_, "pads").empty() ||
               (d && std::all_of(d->begin(), d->end(), [](const Sym &s) { return s.is_number(); }));
  if (!known || !op_.attrs.find("pad") || given(n_, 3))
    return false;
  double v = double(float_attr(n_, "value", 0));
  if (given(n_, 2)) {
    auto s = scalar(2);
    if (!s)
      return false;
    v = *s;
  }
  op_.attrs.set("value", Doc::number(v));
  return true;
}

// QuantizeLinear and DequantizeLinear with one scale and zero point (per tensor), as the evaluator's
// `scale` and `zero_point`; it quantizes to int8's range, so a QuantizeLinear's zero point must be
// int8 (absent, it is uint8).
bool Translator::quantization() {
  auto scale = scalar(1);
  std::optional<double> zero = given(n_, 2) ? scalar(2) : 0.0;
  int type = given(n_, 2) ? facts_.info(facts_.input(n_, 2)).type : kUint8;
  if (!scale || !zero || (n_.op_type == "QuantizeLinear" && type != kInt8))
    return false;
  op_.attrs.set("scale", Doc::number(*scale));
  op_.attrs.set("zero_point", Doc::number(*zero));
  return true;
}

// Resize and Upsample: the evaluator's nearest reads floor((i + 0.5) in / out) and its linear samples
// at (i + 0.5) in / out - 0.5, clamped to the edges (half-pixel centres). ONNX's coordinate
// transformation, nearest rounding and scale are compared with those at every output position of
// every axis (the shapes are known); where they agree the mode is "nearest" or "linear", otherwise a
// mode the evaluator does not know and reports, naming what differs ("nearest (asymmetric,
// round_prefer_ceil)"). Upsample and Resize-10 (two inputs) transform asymmetrically and round down
// (up when downsampling), as onnxruntime does.
void Translator::resize_mode() {
  bool legacy = n_.op_type == "Upsample" || n_.inputs.size() == 2;
  std::string mode = string_attr(n_, "mode", "nearest");
  mode = mode == "bilinear" ? "linear" : mode;
  std::string ctm = legacy ? "asymmetric" : string_attr(n_, "coordinate_transformation_mode", "half_pixel");
  std::string rounding = legacy ? "simple" : string_attr(n_, "nearest_mode", "round_prefer_floor");
  std::string why = resize_differs(mode, ctm, rounding, legacy);
  op_.attrs.set("mode", Doc::string(why.empty() ? mode : mode + " (" + why + ")"));
}

// What makes ONNX's resize differ from the evaluator's, "" where nothing does.
std::string Translator::resize_differs(const std::string &mode, const std::string &ctm,
                                       const std::string &rounding, bool legacy) {
  if (mode != "nearest" && mode != "linear")
    return "the evaluator has nearest and linear";
  if (n_.inputs.empty() || n_.outputs.empty() || !facts_.static_dims(facts_.input(n_, 0)) ||
      !facts_.static_dims(n_.outputs[0]))
    return "shapes not known";
  const Syms &in = facts_.info(facts_.input(n_, 0)).dims, &out = facts_.info(n_.outputs[0]).dims;
  size_t rank = in.size();
  if (rank == 0 || rank > 5 || out.size() != rank)
    return "rank " + std::to_string(rank);
  // The scale per axis: the scales input (at the `axes` given, opset 18), or out / in from sizes.
  std::vector<int64_t> axes = ints(n_, "axes");
  if (axes.empty())
    for (size_t a = 0; a < rank; ++a)
      axes.push_back(int64_t(a));
  auto scales = facts_.data(n_, legacy ? 1 : 2), sizes = legacy ? std::nullopt : facts_.data(n_, 3);
  bool by_size = sizes && sizes->size() == axes.size();
  if (!by_size && !(scales && scales->size() == axes.size()))
    return "scales not known";
  if (by_size && string_attr(n_, "keep_aspect_ratio_policy", "stretch") != "stretch")
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
    std::string why = resize_axis(mode, ctm, rounding, from, to, scale[a], kLayout[rank][a]);
    if (!why.empty())
      return why;
  }
  return "";
}

// One axis of a resize from `from` to `to` elements: what differs from the evaluator's, or "".
std::string Translator::resize_axis(const std::string &mode, const std::string &ctm,
                                    const std::string &rounding, int64_t from, int64_t to, double scale,
                                    int axis) {
  bool nearest = mode == "nearest";
  if (!nearest && int_attr(n_, "antialias", 0) && scale < 1)
    return "antialias";
  bool spatial = axis == kH || axis == kW;
  if (!spatial && from != to)
    return ""; // the evaluator keeps N, D and C and reports it
  double ratio = spatial ? double(from) / double(to) : 1;
  for (int64_t i = 0; i < to; ++i) {
    auto xd = source<double>(ctm, i, scale, from, to);
    auto xf = source<float>(ctm, i, float(scale), from, to);
    if (!xd || !xf)
      return ctm;
    if (nearest) {
      int64_t want = std::clamp<int64_t>(int64_t(std::floor((double(i) + 0.5) * ratio)), 0, from - 1);
      auto d = round_nearest<double>(rounding, *xd, scale < 1),
           f = round_nearest<float>(rounding, *xf, scale < 1);
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
  return "";
}

} // namespace anec::compiler::onnx_front
