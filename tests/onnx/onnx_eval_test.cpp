// ONNX initializers as the evaluator's weights (load_model / read_onnx with keep_values): small models
// built here with the onnx protobuf API evaluate to what plain loops in double compute from the same
// initializer values, with no seeded weights; an op whose operands do not map exactly stays seeded and
// is reported; the constant operands of broadcasting ops (Add, Mul, Sub, PRelu, Greater, Where) are
// kept as constant tensors laid out as ONNX broadcasts them; a real network (fetched by the
// models.fetch fixture) evaluates with its own weights.
#include "anec/compiler/eval.hpp"
#include "anec/compiler/model.hpp"

#include "../compiler/tables.hpp"
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <set>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
namespace fs = std::filesystem;

namespace {

const fs::path kTables = ANEC_TEST_TABLES_DIR;
const fs::path kCache = ANEC_TEST_MODEL_CACHE;

const Numerics &numerics() {
  static const Numerics n = Numerics::load(kTables / "schema" / "numerics.toml");
  return n;
}

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
  Builder() {
    m_.set_ir_version(8);
    m_.add_opset_import()->set_version(17);
    m_.mutable_graph()->set_name("g");
  }
  void io(bool input, const std::string &name, const std::vector<int64_t> &dims) {
    auto *v = input ? m_.mutable_graph()->add_input() : m_.mutable_graph()->add_output();
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims)
      t->mutable_shape()->add_dim()->set_dim_value(d);
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
  static void ints(onnx::NodeProto *n, const std::string &name, std::vector<int64_t> v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  static void integer(onnx::NodeProto *n, const std::string &name, int64_t v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  static void real(onnx::NodeProto *n, const std::string &name, float v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a->set_f(v);
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
  Builder::ints(conv, "pads", {1, 1, 1, 1});
  Builder::ints(conv, "kernel_shape", {K, K});
  m.node("Relu", "relu", {"c"}, "r");
  m.node("Flatten", "flatten", {"r"}, "f");
  Builder::integer(m.node("Gemm", "fc", {"f", "fc.w", "fc.b"}, "y"), "transB", 1);

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
  Builder::integer(m.node("Cast", "cast", {"W16"}, "W"), "to", onnx::TensorProto_DataType_FLOAT);
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
  Builder::real(scaled.node("Gemm", "scaled", {"x", "B"}, "y"), "alpha", 0.5f);
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
  Builder::ints(conv, "pads", {1, 1, 1, 1});
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
  using Dims = std::array<int64_t, 5>;
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
      ASSERT_GE(op.inputs.size(), 2u) << op.name;
      const std::string &s = op.name == "left"    ? op.inputs[0]
                             : op.name == "right" ? op.inputs[1]
                                                  : op.inputs[2];
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
  EXPECT_NE(seeded.outputs.begin()->second.v, a.outputs.begin()->second.v);
}
