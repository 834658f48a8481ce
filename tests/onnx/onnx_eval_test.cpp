// ONNX initializers as the evaluator's weights (load_model / read_onnx with keep_values): small models
// built here with the onnx protobuf API evaluate to what plain loops in double compute from the same
// initializer values, with no seeded weights; an op whose operands do not map exactly stays seeded and
// is reported; the constant operands of broadcasting ops (Add, Mul, Sub, PRelu, Greater, Where) are
// kept as constant tensors laid out as ONNX broadcasts them; activation attributes, Clip's bounds, the
// normalizations' constants and Resize's mode reach the evaluator, and what it would compute otherwise
// than ONNX is reported, not computed; a real network (fetched by the models.fetch fixture) evaluates
// with its own weights.
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/onnx.hpp"
#include "anec/compiler/ir/attrs.hpp"

#include "../compiler/tables.hpp"
#include "node_attributes.hpp"
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <onnx/onnx_pb.h>
#include <set>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::numerics;
using anec::test::set_integer;
using anec::test::set_ints;
using anec::test::set_real;
using anec::test::set_text;
namespace fs = std::filesystem;

namespace {

const fs::path kCache = ANEC_TEST_MODEL_CACHE;

// Deterministic values k/8 - 1 (exact in half and float), varied by `salt`.
std::vector<float> ramp(size_t n, int salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(int((i * 7 + size_t(salt) * 5) % 17) - 8) / 8.0f;
  return v;
}

uint16_t half_bits(float x) { // exact for the ramp's values (normal halves or zero)
  if (x == 0)
    return 0;
  int e = 0;
  float m = std::frexp(std::fabs(x), &e); // x = m 2^e, m in [0.5, 1)
  uint16_t mant = uint16_t(std::lround((m * 2 - 1) * 1024));
  return uint16_t((x < 0 ? 0x8000 : 0) | (e - 1 + 15) << 10 | mant);
}

class Builder {
public:
  explicit Builder(int64_t opset = 17) {
    m_.set_ir_version(8);
    m_.add_opset_import()->set_version(opset);
    m_.mutable_graph()->set_name("g");
  }
  void io(bool input, const std::string &name, const std::vector<int64_t> &dims) {
    auto *v = input ? m_.mutable_graph()->add_input() : m_.mutable_graph()->add_output();
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    auto *shape = t->mutable_shape(); // no dims: a scalar
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  }
  // A float initializer, in raw_data or float_data; fp16 stores the values as halves in raw_data.
  void init(const std::string &name, const std::vector<int64_t> &dims, const std::vector<float> &v,
            bool raw = false, bool fp16 = false) {
    auto *t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(fp16 ? onnx::TensorProto_DataType_FLOAT16 : onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims)
      t->add_dims(d);
    if (fp16) {
      std::string bytes;
      for (float x : v) {
        uint16_t h = half_bits(x);
        bytes.append(reinterpret_cast<const char *>(&h), sizeof h);
      }
      t->set_raw_data(bytes);
    } else if (raw) {
      t->set_raw_data(std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float)));
    } else {
      for (float x : v)
        t->add_float_data(x);
    }
  }
  onnx::NodeProto *node(const std::string &type, const std::string &name, std::vector<std::string> in,
                        const std::string &out) {
    auto *n = m_.mutable_graph()->add_node();
    n->set_op_type(type);
    n->set_name(name);
    for (auto &i : in)
      n->add_input(i);
    n->add_output(out);
    return n;
  }
  std::string bytes() const {
    std::string b;
    EXPECT_TRUE(m_.SerializeToString(&b));
    return b;
  }

private:
  onnx::ModelProto m_;
};

EvalResult run(const std::string &bytes, const std::string &input, const Values &x, bool keep_values) {
  Graph g = read_onnx(bytes, "built.onnx", catalog(), {}, keep_values);
  EvalOptions options;
  options.inputs[input] = x;
  return evaluate(g, catalog(), numerics(), options);
}

size_t seeded_weights(const EvalReport &r) {
  return size_t(std::count_if(r.seeded.begin(), r.seeded.end(),
                              [](const std::string &s) { return s.find("(weights") != std::string::npos; }));
}

// float32 against double: within 1e-5 of the larger of the value and 1 (a sum of terms of order 1).
void expect_close(const std::vector<float> &got, const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(double(got[i]), want[i], 1e-5 * std::max(1.0, std::fabs(want[i]))) << "element " << i;
}

const Op *op_named(const Graph &g, const std::string &name) {
  for (const Op &op : g.ops)
    if (op.name == name)
      return &op;
  return nullptr;
}

// Why the evaluator did not compute `op` ("<type>: <reason>"), "" when it did.
std::string why_not(const EvalResult &r, const std::string &op) {
  for (const auto &[name, why] : r.report.unevaluated)
    if (name == op)
      return why;
  return "";
}

using Dims = std::array<int64_t, 5>;

} // namespace

// Conv (W and B initializers, pads 1) -> Relu -> Flatten -> Gemm (transB = 1, bias).
TEST(OnnxEval, ConvAndGemmReadTheirInitializers) {
  const int64_t C = 2, O = 3, H = 5, W = 4, K = 3, F = 4, L = O * H * W;
  std::vector<float> w = ramp(size_t(O * C * K * K), 1), b = ramp(size_t(O), 2), gw = ramp(size_t(F * L), 3),
                     gb = ramp(size_t(F), 4), xv = ramp(size_t(C * H * W), 5);
  Builder m;
  m.io(true, "x", {1, C, H, W});
  m.io(false, "y", {1, F});
  m.init("conv.w", {O, C, K, K}, w, true);
  m.init("conv.b", {O}, b);
  m.init("fc.w", {F, L}, gw);
  m.init("fc.b", {F}, gb, true);
  auto *conv = m.node("Conv", "conv", {"x", "conv.w", "conv.b"}, "c");
  set_ints(conv, "pads", {1, 1, 1, 1});
  set_ints(conv, "kernel_shape", {K, K});
  m.node("Relu", "relu", {"c"}, "r");
  m.node("Flatten", "flatten", {"r"}, "f");
  set_integer(m.node("Gemm", "fc", {"f", "fc.w", "fc.b"}, "y"), "transB", 1);

  // The reference: plain loops in double over the same values.
  std::vector<double> act(static_cast<size_t>(L)), want(static_cast<size_t>(F));
  for (int64_t o = 0; o < O; ++o)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t x = 0; x < W; ++x) {
        double s = b[size_t(o)];
        for (int64_t c = 0; c < C; ++c)
          for (int64_t r = 0; r < K; ++r)
            for (int64_t q = 0; q < K; ++q) {
              int64_t ih = h + r - 1, iw = x + q - 1;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                s += double(w[size_t(((o * C + c) * K + r) * K + q)]) * xv[size_t((c * H + ih) * W + iw)];
            }
        act[size_t((o * H + h) * W + x)] = std::max(s, 0.0);
      }
  for (int64_t f = 0; f < F; ++f) {
    double s = gb[size_t(f)];
    for (int64_t k = 0; k < L; ++k)
      s += double(gw[size_t(f * L + k)]) * act[size_t(k)];
    want[size_t(f)] = s;
  }

  Values x;
  x.d = {1, 1, C, H, W};
  x.v = xv;
  EvalResult r = run(m.bytes(), "x", x, true);
  EXPECT_TRUE(r.report.seeded.empty()) << testing::PrintToString(r.report.seeded);
  EXPECT_TRUE(r.report.unevaluated.empty());
  ASSERT_TRUE(r.outputs.count("y"));
  EXPECT_EQ(r.outputs["y"].d, (std::array<int64_t, 5>{1, 1, F, 1, 1}));
  expect_close(r.outputs["y"].v, want);
  // Without keep_values (check, estimate) the weights are not copied: the evaluator seeds them.
  EvalResult lean = run(m.bytes(), "x", x, false);
  EXPECT_EQ(seeded_weights(lean.report), 2u);
  Graph g = read_onnx(m.bytes(), "built.onnx", catalog());
  EXPECT_TRUE(g.values.empty());
}

// Gemm with transB = 0 (B [K, N] transposed to [N, K]) and a [1, N] bias, then MatMul by a float16
// initializer through Cast; a Gemm with alpha != 1 keeps seeded weights and says so.
TEST(OnnxEval, GemmLayoutsAndHalfWeights) {
  const int64_t M = 2, K = 6, N = 4, P = 3;
  std::vector<float> xv = ramp(size_t(M * K), 6), bw = ramp(size_t(K * N), 7), bc = ramp(size_t(N), 8),
                     hw = ramp(size_t(N * P), 9);
  Builder m;
  m.io(true, "x", {M, K});
  m.io(false, "y", {M, P});
  m.init("B", {K, N}, bw, true);
  m.init("C", {1, N}, bc);
  m.init("W16", {N, P}, hw, true, true);
  m.node("Gemm", "gemm", {"x", "B", "C"}, "h");
  set_integer(m.node("Cast", "cast", {"W16"}, "W"), "to", onnx::TensorProto_DataType_FLOAT);
  m.node("MatMul", "matmul", {"h", "W"}, "y");
  std::vector<double> h(size_t(M * N)), want(size_t(M * P));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = bc[size_t(j)];
      for (int64_t k = 0; k < K; ++k)
        s += double(xv[size_t(i * K + k)]) * bw[size_t(k * N + j)];
      h[size_t(i * N + j)] = s;
    }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < P; ++j) {
      double s = 0;
      for (int64_t k = 0; k < N; ++k)
        s += h[size_t(i * N + k)] * hw[size_t(k * P + j)];
      want[size_t(i * P + j)] = s;
    }
  Values x;
  x.d = {M, 1, K, 1, 1};
  x.v = xv;
  EvalResult r = run(m.bytes(), "x", x, true);
  EXPECT_TRUE(r.report.seeded.empty()) << testing::PrintToString(r.report.seeded);
  ASSERT_TRUE(r.outputs.count("y"));
  expect_close(r.outputs["y"].v, want);

  Builder scaled;
  scaled.io(true, "x", {M, K});
  scaled.io(false, "y", {M, N});
  scaled.init("B", {K, N}, bw);
  set_real(scaled.node("Gemm", "scaled", {"x", "B"}, "y"), "alpha", 0.5f);
  EvalResult s = run(scaled.bytes(), "x", x, true);
  ASSERT_EQ(s.report.seeded.size(), 1u);
  EXPECT_EQ(s.report.seeded[0], "scaled (weights, 24 values)");
}

// The constant operands of broadcasting ops: Conv -> Add (bias [O, 1, 1]) -> Mul (a scalar) -> Relu ->
// Sub (a rank-1 [W], broadcast along W). Each constant is an input of its op at its ONNX position, its
// dims left-padded to the data's rank and laid out as that rank is; without keep_values it is dropped.
TEST(OnnxEval, BroadcastConstantsAreKept) {
  const int64_t C = 2, O = 3, H = 3, W = 4, K = 3;
  std::vector<float> w = ramp(size_t(O * C * K * K), 11), bias = ramp(size_t(O), 12),
                     row = ramp(size_t(W), 13), xv = ramp(size_t(C * H * W), 14);
  const float scale = 0.75f;
  Builder m;
  m.io(true, "x", {1, C, H, W});
  m.io(false, "y", {1, O, H, W});
  m.init("conv.w", {O, C, K, K}, w, true);
  m.init("bias", {O, 1, 1}, bias);
  m.init("scale", {}, {scale});
  m.init("row", {W}, row, true);
  auto *conv = m.node("Conv", "conv", {"x", "conv.w"}, "c");
  set_ints(conv, "pads", {1, 1, 1, 1});
  m.node("Add", "add", {"c", "bias"}, "a");
  m.node("Mul", "mul", {"a", "scale"}, "s");
  m.node("Relu", "relu", {"s"}, "r");
  m.node("Sub", "sub", {"r", "row"}, "y");

  std::vector<double> want(size_t(O * H * W));
  for (int64_t o = 0; o < O; ++o)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t x = 0; x < W; ++x) {
        double s = 0;
        for (int64_t c = 0; c < C; ++c)
          for (int64_t r = 0; r < K; ++r)
            for (int64_t q = 0; q < K; ++q) {
              int64_t ih = h + r - 1, iw = x + q - 1;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                s += double(w[size_t(((o * C + c) * K + r) * K + q)]) * xv[size_t((c * H + ih) * W + iw)];
            }
        double v = std::max((s + bias[size_t(o)]) * double(scale), 0.0);
        want[size_t((o * H + h) * W + x)] = v - row[size_t(x)];
      }

  Graph g = read_onnx(m.bytes(), "built.onnx", catalog(), {}, true);
  auto operand = [&](const std::string &op, size_t k) -> const Tensor * {
    for (const Op &o : g.ops)
      if (o.name == op && k < o.inputs.size())
        return g.tensor(o.inputs[k]);
    return nullptr;
  };
  const Tensor *b = operand("add", 1), *sc = operand("mul", 1), *rw = operand("sub", 1);
  ASSERT_TRUE(b && sc && rw);
  EXPECT_TRUE(b->constant && sc->constant && rw->constant);
  EXPECT_EQ(b->shape.d, (Dims{1, 1, O, 1, 1}));
  EXPECT_EQ(sc->shape.d, (Dims{1, 1, 1, 1, 1}));
  EXPECT_EQ(rw->shape.d, (Dims{1, 1, 1, 1, W}));
  EXPECT_EQ(g.values.at(rw->name).data, row);

  Values x;
  x.d = {1, 1, C, H, W};
  x.v = xv;
  EvalResult r = run(m.bytes(), "x", x, true);
  EXPECT_TRUE(r.report.seeded.empty()) << testing::PrintToString(r.report.seeded);
  EXPECT_TRUE(r.report.unevaluated.empty()) << testing::PrintToString(r.report.unevaluated);
  ASSERT_TRUE(r.outputs.count("y"));
  EXPECT_EQ(r.outputs["y"].d, (Dims{1, 1, O, H, W}));
  expect_close(r.outputs["y"].v, want);

  // Without keep_values (check, estimate) the graph is as before: constants are not operands.
  Graph lean = read_onnx(m.bytes(), "built.onnx", catalog());
  for (const Op &op : lean.ops)
    EXPECT_EQ(op.inputs.size(), 1u) << op.name;
  EXPECT_TRUE(
      std::none_of(lean.tensors.begin(), lean.tensors.end(), [](const Tensor &t) { return t.constant; }));
}

// One initializer under two layouts (a rank-2 and a rank-4 operand) is two tensors; a constant left
// operand keeps its place (s - x); PRelu's slope, a scalar threshold of Greater (mode "greater") and
// a constant third operand of Where.
TEST(OnnxEval, SharedConstantsAndOperandOrder) {
  const int64_t M = 2, F = 4, C = 2, H = 3;
  std::vector<float> sv = ramp(size_t(F), 21), slope = ramp(size_t(C), 22), xv = ramp(size_t(M * F), 23),
                     zv = ramp(size_t(C * H * F), 24);
  const float t = 0.125f;
  Builder m;
  m.io(true, "x", {M, F});
  m.io(true, "z", {1, C, H, F});
  for (const char *o : {"a", "w"})
    m.io(false, o, {M, F});
  for (const char *o : {"b", "p"})
    m.io(false, o, {1, C, H, F});
  m.init("s", {F}, sv);
  m.init("slope", {C, 1, 1}, slope);
  m.init("t", {}, {t});
  m.node("Sub", "left", {"s", "x"}, "a");
  m.node("Add", "right", {"z", "s"}, "b");
  m.node("PRelu", "prelu", {"z", "slope"}, "p");
  m.node("Greater", "greater", {"x", "t"}, "cond");
  m.node("Where", "where", {"cond", "x", "s"}, "w");

  Graph g = read_onnx(m.bytes(), "built.onnx", catalog(), {}, true);
  std::set<std::string> names;
  for (const Op &op : g.ops)
    if (op.name == "left" || op.name == "right" || op.name == "where") {
      ASSERT_GE(op.inputs.size(), op.name == "where" ? 3u : 2u) << op.name;
      const std::string &s = op.name == "left"    ? op.inputs[0]
                             : op.name == "right" ? op.inputs[1]
                                                  : op.inputs[2];
      ASSERT_NE(g.tensor(s), nullptr) << op.name;
      EXPECT_TRUE(g.tensor(s)->constant) << op.name;
      names.insert(s);
    }
  EXPECT_EQ(names.size(), 2u) << testing::PrintToString(names); // [1,1,F,1,1] (twice) and [1,1,1,1,F]

  Values x, z;
  x.d = {M, 1, F, 1, 1};
  x.v = xv;
  z.d = {1, 1, C, H, F};
  z.v = zv;
  EvalOptions options;
  options.inputs["x"] = x;
  options.inputs["z"] = z;
  EvalResult r = evaluate(g, catalog(), numerics(), options);
  EXPECT_TRUE(r.report.seeded.empty()) << testing::PrintToString(r.report.seeded);
  EXPECT_TRUE(r.report.unevaluated.empty()) << testing::PrintToString(r.report.unevaluated);
  std::vector<double> a, w, b, p;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t f = 0; f < F; ++f) {
      double xi = xv[size_t(i * F + f)];
      a.push_back(sv[size_t(f)] - xi);
      w.push_back(xi > t ? xi : sv[size_t(f)]);
    }
  for (int64_t c = 0; c < C; ++c)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t f = 0; f < F; ++f) {
        double zi = zv[size_t((c * H + h) * F + f)];
        b.push_back(zi + sv[size_t(f)]);
        p.push_back(zi > 0 ? zi : zi * slope[size_t(c)]);
      }
  for (const auto &[name, want] : {std::pair{"a", &a}, {"w", &w}, {"b", &b}, {"p", &p}}) {
    ASSERT_TRUE(r.outputs.count(name)) << name;
    expect_close(r.outputs[name].v, *want);
  }
}

// Activation attributes reach the evaluator with ONNX's defaults (LeakyRelu, Elu, Selu, HardSigmoid,
// ThresholdedRelu, Celu of alpha 1); a Celu of another alpha and a LogSoftmax, which no kernel
// computes, are reported as not evaluated. Without keep_values the graph is as before.
TEST(OnnxEval, ActivationAttributes) {
  const int64_t C = 2, H = 3, W = 4;
  std::vector<float> xv = ramp(size_t(C * H * W), 31);
  for (float &v : xv)
    v *= 2; // [-2, 2]
  Builder m;
  m.io(true, "x", {1, C, H, W});
  for (const char *o : {"leaky", "leaky_default", "elu", "selu", "hard_sigmoid", "thresholded", "celu",
                        "celu2", "log_softmax"})
    m.io(false, o, {1, C, H, W});
  set_real(m.node("LeakyRelu", "leaky", {"x"}, "leaky"), "alpha", 0.25f);
  m.node("LeakyRelu", "leaky_default", {"x"}, "leaky_default");
  set_real(m.node("Elu", "elu", {"x"}, "elu"), "alpha", 0.5f);
  m.node("Selu", "selu", {"x"}, "selu");
  set_real(m.node("HardSigmoid", "hard_sigmoid", {"x"}, "hard_sigmoid"), "alpha", 1.0f / 6);
  set_real(m.node("ThresholdedRelu", "thresholded", {"x"}, "thresholded"), "alpha", 0.25f);
  m.node("Celu", "celu", {"x"}, "celu");
  set_real(m.node("Celu", "celu2", {"x"}, "celu2"), "alpha", 2.0f);
  m.node("LogSoftmax", "log_softmax", {"x"}, "log_softmax");

  // ONNX's Selu defaults are these floats
  const double selu_alpha = 1.67326319217681884765625, selu_gamma = 1.05070102214813232421875;
  std::map<std::string, std::vector<double>> want;
  for (float f : xv) {
    double v = f;
    want["leaky"].push_back(v > 0 ? v : 0.25 * v);
    want["leaky_default"].push_back(v > 0 ? v : double(0.01f) * v);
    want["elu"].push_back(v > 0 ? v : 0.5 * std::expm1(v));
    want["selu"].push_back(selu_gamma * (v > 0 ? v : selu_alpha * std::expm1(v)));
    want["hard_sigmoid"].push_back(std::clamp(double(1.0f / 6) * v + 0.5, 0.0, 1.0));
    want["thresholded"].push_back(v > 0.25 ? v : 0);
    want["celu"].push_back(std::max(v, 0.0) + std::min(0.0, std::expm1(v)));
  }
  Values x;
  x.d = {1, 1, C, H, W};
  x.v = xv;
  EvalResult r = run(m.bytes(), "x", x, true);
  for (const auto &[name, v] : want) {
    ASSERT_TRUE(r.outputs.count(name)) << name;
    expect_close(r.outputs[name].v, v);
  }
  for (const char *name : {"celu2", "log_softmax"})
    EXPECT_FALSE(r.outputs.count(name)) << name;
  EXPECT_EQ(why_not(r, "celu2").rfind("onnx:Celu: ", 0), 0u) << why_not(r, "celu2");
  EXPECT_EQ(why_not(r, "log_softmax").rfind("onnx:LogSoftmax: ", 0), 0u) << why_not(r, "log_softmax");

  // Without keep_values (check, estimate) the ops are as the map gives them, without attributes.
  Graph lean = read_onnx(m.bytes(), "built.onnx", catalog());
  ASSERT_TRUE(op_named(lean, "leaky") && op_named(lean, "celu2") && op_named(lean, "log_softmax"));
  EXPECT_EQ(op_named(lean, "leaky")->attrs.find("alpha"), nullptr);
  EXPECT_EQ(op_named(lean, "celu2")->type, "elu");
  EXPECT_EQ(op_named(lean, "log_softmax")->type, "softmax");
}

// Clip's bounds as opset 13 gives them, constant scalar inputs (either may be absent; a min above max
// makes every value max), and as opset 6 attributes; a bound known only at run time is reported.
TEST(OnnxEval, ClipBoundsFromInputs) {
  const int64_t C = 2, H = 3, W = 4;
  std::vector<float> xv = ramp(size_t(C * H * W), 32);
  Builder m;
  m.io(true, "x", {1, C, H, W});
  m.io(true, "bound", {});
  for (const char *o : {"both", "upper", "crossed", "runtime"})
    m.io(false, o, {1, C, H, W});
  m.init("lo", {}, {-0.25f});
  m.init("hi", {}, {0.5f}, true);
  m.node("Clip", "both", {"x", "lo", "hi"}, "both");
  m.node("Clip", "upper", {"x", "", "hi"}, "upper");
  m.node("Clip", "crossed", {"x", "hi", "lo"}, "crossed");
  m.node("Clip", "runtime", {"x", "bound"}, "runtime");
  Builder old(10);
  old.io(true, "x", {1, C, H, W});
  old.io(false, "y", {1, C, H, W});
  auto *clip6 = old.node("Clip", "clip6", {"x"}, "y");
  set_real(clip6, "min", -0.5f);
  set_real(clip6, "max", 0.25f);

  std::map<std::string, std::vector<double>> want;
  for (float f : xv) {
    double v = f;
    want["both"].push_back(std::clamp(v, -0.25, 0.5));
    want["upper"].push_back(std::min(v, 0.5));
    want["crossed"].push_back(-0.25);
    want["y"].push_back(std::clamp(v, -0.5, 0.25));
  }
  Values x;
  x.d = {1, 1, C, H, W};
  x.v = xv;
  EvalResult r = run(m.bytes(), "x", x, true), r6 = run(old.bytes(), "x", x, true);
  r.outputs.merge(r6.outputs);
  for (const auto &[name, v] : want) {
    ASSERT_TRUE(r.outputs.count(name)) << name;
    expect_close(r.outputs[name].v, v);
  }
  EXPECT_FALSE(r.outputs.count("runtime"));
  EXPECT_EQ(why_not(r, "runtime").rfind("onnx:Clip: ", 0), 0u) << why_not(r, "runtime");
  Graph g = read_onnx(m.bytes(), "built.onnx", catalog(), {}, true);
  ASSERT_TRUE(op_named(g, "upper"));
  EXPECT_EQ(op_named(g, "upper")->inputs, std::vector<std::string>{"x"});
  const Doc *lowest = op_named(g, "upper")->attrs.find("min"); // float's lowest, as ONNX has it
  ASSERT_TRUE(lowest);
  EXPECT_EQ(lowest->as_float(), -double(std::numeric_limits<float>::max()));
}

// BatchNormalization's four constants (scale, B, mean, var in ONNX's order) are the evaluator's mean,
// variance, scale and bias inputs, one value per channel laid out along C, with the node's epsilon;
// without keep_values the op reads x alone.
TEST(OnnxEval, BatchNormalizationReadsItsConstants) {
  const int64_t C = 3, H = 2, W = 4;
  std::vector<float> xv = ramp(size_t(C * H * W), 33), scale = {0.5f, -1.25f, 2}, bias = {0.125f, 0, -0.75f},
                     mean = {0.25f, -0.5f, 0}, var = {0.5f, 1.5f, 0.25f};
  const float eps = 1e-3f;
  Builder m;
  m.io(true, "x", {1, C, H, W});
  m.io(false, "y", {1, C, H, W});
  m.init("scale", {C}, scale);
  m.init("B", {C}, bias, true);
  m.init("mean", {C}, mean);
  m.init("var", {C}, var, true);
  set_real(m.node("BatchNormalization", "bn", {"x", "scale", "B", "mean", "var"}, "y"), "epsilon", eps);

  Graph g = read_onnx(m.bytes(), "built.onnx", catalog(), {}, true);
  const Op *bn = op_named(g, "bn");
  ASSERT_TRUE(bn);
  ASSERT_EQ(bn->inputs.size(), 5u);
  for (size_t k = 1; k < 5; ++k) {
    const Tensor *t = g.tensor(bn->inputs[k]);
    ASSERT_TRUE(t && t->constant) << k;
    EXPECT_EQ(t->shape.d, (Dims{1, 1, C, 1, 1})) << k;
  }
  EXPECT_EQ(g.values.at(bn->inputs[1]).data, mean);
  EXPECT_EQ(g.values.at(bn->inputs[2]).data, var);
  EXPECT_EQ(g.values.at(bn->inputs[3]).data, scale);
  EXPECT_EQ(g.values.at(bn->inputs[4]).data, bias);

  std::vector<double> want;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < H * W; ++i) {
      double v = xv[size_t(c * H * W + i)];
      want.push_back((v - mean[size_t(c)]) / std::sqrt(double(var[size_t(c)]) + double(eps)) *
                         scale[size_t(c)] +
                     bias[size_t(c)]);
    }
  Values x;
  x.d = {1, 1, C, H, W};
  x.v = xv;
  EvalOptions options;
  options.inputs["x"] = x;
  EvalResult r = evaluate(g, catalog(), numerics(), options);
  EXPECT_TRUE(r.report.seeded.empty()) << testing::PrintToString(r.report.seeded);
  EXPECT_TRUE(r.report.unevaluated.empty()) << testing::PrintToString(r.report.unevaluated);
  ASSERT_TRUE(r.outputs.count("y"));
  expect_close(r.outputs["y"].v, want);

  Graph lean = read_onnx(m.bytes(), "built.onnx", catalog());
  ASSERT_TRUE(op_named(lean, "bn"));
  EXPECT_EQ(op_named(lean, "bn")->inputs, std::vector<std::string>{"x"});
}

// InstanceNormalization's scale and B per channel; LayerNormalization's scale and bias over the last
// axis of a rank-3 input (its features along W, normalized over "W").
TEST(OnnxEval, InstanceAndLayerNormalization) {
  const int64_t C = 2, H = 3, W = 4, T = 3, F = 5;
  std::vector<float> xv = ramp(size_t(C * H * W), 34), zv = ramp(size_t(T * F), 35), s = {0.5f, -2},
                     b = {0.25f, 1}, g = ramp(size_t(F), 36), beta = ramp(size_t(F), 37);
  Builder m;
  m.io(true, "x", {1, C, H, W});
  m.io(true, "z", {1, T, F});
  m.io(false, "y", {1, C, H, W});
  m.io(false, "u", {1, T, F});
  m.init("s", {C}, s);
  m.init("b", {C}, b);
  m.init("g", {F}, g);
  m.init("beta", {F}, beta);
  m.node("InstanceNormalization", "in", {"x", "s", "b"}, "y");
  m.node("LayerNormalization", "ln", {"z", "g", "beta"}, "u");

  const double eps = double(1e-5f);
  auto normalize = [&](const std::vector<float> &v, int64_t groups, int64_t n, auto scale, auto shift) {
    std::vector<double> out;
    for (int64_t k = 0; k < groups; ++k) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < n; ++i)
        mean += v[size_t(k * n + i)] / double(n);
      for (int64_t i = 0; i < n; ++i)
        var += (v[size_t(k * n + i)] - mean) * (v[size_t(k * n + i)] - mean) / double(n);
      for (int64_t i = 0; i < n; ++i)
        out.push_back((v[size_t(k * n + i)] - mean) / std::sqrt(var + eps) * scale(k, i) + shift(k, i));
    }
    return out;
  };
  std::vector<double> y = normalize(
      xv, C, H * W, [&](int64_t c, int64_t) { return double(s[size_t(c)]); },
      [&](int64_t c, int64_t) { return double(b[size_t(c)]); });
  std::vector<double> u = normalize(
      zv, T, F, [&](int64_t, int64_t f) { return double(g[size_t(f)]); },
      [&](int64_t, int64_t f) { return double(beta[size_t(f)]); });

  Graph graph = read_onnx(m.bytes(), "built.onnx", catalog(), {}, true);
  ASSERT_TRUE(op_named(graph, "ln") && op_named(graph, "in"));
  EXPECT_EQ(OpAttrs(*op_named(graph, "ln"), catalog()).text("axes"), "W");
  EXPECT_EQ(op_named(graph, "in")->inputs.size(), 3u);
  Values x, z;
  x.d = {1, 1, C, H, W};
  x.v = xv;
  z.d = {1, 1, T, 1, F};
  z.v = zv;
  EvalOptions options;
  options.inputs["x"] = x;
  options.inputs["z"] = z;
  EvalResult r = evaluate(graph, catalog(), numerics(), options);
  EXPECT_TRUE(r.report.unevaluated.empty()) << testing::PrintToString(r.report.unevaluated);
  ASSERT_TRUE(r.outputs.count("y") && r.outputs.count("u"));
  expect_close(r.outputs["y"].v, y);
  expect_close(r.outputs["u"].v, u);
}

// Resize: linear with half-pixel centres (scales 2 and 1.5) and nearest asymmetric/floor upsampling
// by 2 (which reads what the evaluator's half-pixel nearest reads, checked at every position) pass;
// nearest asymmetric/floor downsampling, which reads other pixels, and linear align_corners are left
// with a mode the evaluator reports. Resize-10 (two inputs: asymmetric) upsampling by 2 passes.
TEST(OnnxEval, ResizeModes) {
  const int64_t C = 2, H = 3, W = 4;
  std::vector<float> xv = ramp(size_t(C * H * W), 38);
  Builder m;
  m.io(true, "x", {1, C, H, W});
  m.io(false, "lin", {1, C, 2 * H, 6});
  m.io(false, "near", {1, C, 2 * H, 2 * W});
  m.io(false, "down", {1, C, 1, 2});
  m.io(false, "corners", {1, C, 2 * H, 2 * W});
  m.init("lin_scales", {4}, {1, 1, 2, 1.5f});
  m.init("up", {4}, {1, 1, 2, 2});
  m.init("half", {4}, {1, 1, 0.5f, 0.5f});
  set_text(m.node("Resize", "lin", {"x", "", "lin_scales"}, "lin"), "mode", "linear");
  for (const char *name : {"near", "down"}) {
    auto *n = m.node("Resize", name, {"x", "", name == std::string("near") ? "up" : "half"}, name);
    set_text(n, "coordinate_transformation_mode", "asymmetric");
    set_text(n, "nearest_mode", "floor");
  }
  auto *corners = m.node("Resize", "corners", {"x", "", "up"}, "corners");
  set_text(corners, "mode", "linear");
  set_text(corners, "coordinate_transformation_mode", "align_corners");
  Builder old(10);
  old.io(true, "x", {1, C, H, W});
  old.io(false, "r10", {1, C, 2 * H, 2 * W});
  old.init("up", {4}, {1, 1, 2, 2});
  old.node("Resize", "r10", {"x", "up"}, "r10");

  auto at = [&](int64_t c, int64_t h, int64_t w) { return double(xv[size_t((c * H + h) * W + w)]); };
  // ONNX half_pixel: source (i + 0.5) / scale - 0.5, clamped to the edges
  auto source = [](int64_t i, double scale, int64_t in, int64_t &i0, int64_t &i1) {
    double s = std::clamp((double(i) + 0.5) / scale - 0.5, 0.0, double(in - 1));
    i0 = int64_t(std::floor(s));
    i1 = std::min(i0 + 1, in - 1);
    return s - double(i0);
  };
  std::vector<double> lin, near;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t h = 0; h < 2 * H; ++h)
      for (int64_t w = 0; w < 6; ++w) {
        int64_t h0, h1, w0, w1;
        double a = source(h, 2, H, h0, h1), b = source(w, 1.5, W, w0, w1);
        lin.push_back((1 - a) * ((1 - b) * at(c, h0, w0) + b * at(c, h0, w1)) +
                      a * ((1 - b) * at(c, h1, w0) + b * at(c, h1, w1)));
      }
    for (int64_t h = 0; h < 2 * H; ++h)
      for (int64_t w = 0; w < 2 * W; ++w)
        near.push_back(at(c, h / 2, w / 2)); // asymmetric floor: floor(i / 2)
  }
  Values x;
  x.d = {1, 1, C, H, W};
  x.v = xv;
  EvalResult r = run(m.bytes(), "x", x, true), r10 = run(old.bytes(), "x", x, true);
  ASSERT_TRUE(r.outputs.count("lin") && r.outputs.count("near") && r10.outputs.count("r10"));
  expect_close(r.outputs["lin"].v, lin);
  expect_close(r.outputs["near"].v, near);
  expect_close(r10.outputs["r10"].v, near);
  EXPECT_EQ(why_not(r, "down"), "resize: unknown resize mode 'nearest (asymmetric, floor)'");
  EXPECT_EQ(why_not(r, "corners"), "resize: unknown resize mode 'linear (align_corners)'");
  EXPECT_FALSE(r.outputs.count("down") || r.outputs.count("corners"));

  // Without keep_values the mode is not read.
  Graph lean = read_onnx(m.bytes(), "built.onnx", catalog());
  ASSERT_TRUE(op_named(lean, "lin"));
  EXPECT_EQ(op_named(lean, "lin")->attrs.find("mode"), nullptr);
}

// A real network (BlazeFace, 37 convolutions) evaluates with its own weights: every conv reads its
// initializers (no seeded weights), every op is computed, and the outputs are the same twice.
TEST(OnnxReal, EvaluatesWithItsInitializers) {
  const fs::path model = kCache / "blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx";
  Graph g = load_model(model, catalog(), {}, true);
  size_t convs = 0, recorded = 0;
  for (const Op &op : g.ops) {
    convs += op.type == "conv";
    recorded += op.type == "conv" && g.values.count(op.name + "/weight");
  }
  EXPECT_GT(convs, 30u);
  EXPECT_EQ(recorded, convs);
  EvalResult a = evaluate(g, catalog(), numerics(), {}), b = evaluate(g, catalog(), numerics(), {});
  EXPECT_EQ(seeded_weights(a.report), 0u) << testing::PrintToString(a.report.seeded);
  EXPECT_TRUE(a.report.unevaluated.empty()) << testing::PrintToString(a.report.unevaluated);
  ASSERT_EQ(a.outputs.size(), g.outputs.size());
  for (const auto &[name, v] : a.outputs) {
    EXPECT_EQ(v.v, b.outputs.at(name).v) << name;
    EXPECT_TRUE(std::all_of(v.v.begin(), v.v.end(), [](float f) { return std::isfinite(f); })) << name;
  }
  // Without keep_values the same model evaluates on seeded weights, to another answer.
  EvalResult seeded = evaluate(load_model(model, catalog()), catalog(), numerics(), {});
  EXPECT_EQ(seeded_weights(seeded.report), convs);
  ASSERT_TRUE(!seeded.outputs.empty() && !a.outputs.empty());
  EXPECT_NE(seeded.outputs.begin()->second.v, a.outputs.begin()->second.v);
}
