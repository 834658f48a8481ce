// The rest of the ONNX ecosystem (issue 29 item 4), on minimal models built here with the onnx
// protobuf API, as the real files that have these features were not found in a package registry the
// tests can reach: an IR version 1 or 2 model that declares opset imports (read without the checker,
// ANEC-ONNX-004); operators of other domains (com.microsoft contrib operators, ai.onnx.ml) unmapped
// with a reason that names the domain, never mapped through the default domain's table; a ZipMap,
// whose output is a sequence of maps, a host operation around which shapes are still inferred; the
// opset-23 operators Attention, RMSNormalization and RotaryEmbedding mapped, RMSNormalization and
// Attention evaluated against plain loops in double.
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/onnx.hpp"
#include "anec/support/error.hpp"

#include "../compiler/tables.hpp"
#include "../errors.hpp"
#include "node_attributes.hpp"
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
using anec::test::numerics;
using anec::test::registry;
using anec::test::set_integer;
using anec::test::set_ints;
using anec::test::set_real;

namespace {

class Model {
public:
  Model(int64_t ir, int64_t opset) {
    m_.set_ir_version(ir);
    m_.add_opset_import()->set_version(opset);
    m_.mutable_graph()->set_name("g");
  }
  void import(const std::string &domain, int64_t version) {
    auto *o = m_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  onnx::TypeProto_Tensor *io(bool input, const std::string &name, const std::vector<int64_t> &dims) {
    auto *v = input ? m_.mutable_graph()->add_input() : m_.mutable_graph()->add_output();
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims)
      t->mutable_shape()->add_dim()->set_dim_value(d);
    return t;
  }
  void init(const std::string &name, const std::vector<int64_t> &dims, const std::vector<float> &v) {
    auto *t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims)
      t->add_dims(d);
    for (float x : v)
      t->add_float_data(x);
  }
  onnx::NodeProto *node(const std::string &type, const std::string &name, std::vector<std::string> in,
                        std::vector<std::string> out, const std::string &domain = "") {
    auto *n = m_.mutable_graph()->add_node();
    n->set_op_type(type);
    n->set_name(name);
    n->set_domain(domain);
    for (auto &i : in)
      n->add_input(i);
    for (auto &o : out)
      n->add_output(o);
    return n;
  }
  onnx::ModelProto &proto() { return m_; }
  std::string bytes() const {
    std::string b;
    EXPECT_TRUE(m_.SerializeToString(&b));
    return b;
  }

private:
  onnx::ModelProto m_;
};

const Op *op_named(const Graph &g, const std::string &name) {
  for (const Op &op : g.ops)
    if (op.name == name)
      return &op;
  return nullptr;
}

bool note_has(const Graph &g, const std::string &text) {
  return std::any_of(g.notes.begin(), g.notes.end(),
                     [&](const std::string &n) { return n.find(text) != std::string::npos; });
}

std::vector<float> ramp(size_t n, int salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(int((i * 7 + size_t(salt) * 5) % 17) - 8) / 8.0f;
  return v;
}

void expect_close(const std::vector<float> &got, const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(double(got[i]), want[i], 1e-5 * std::max(1.0, std::fabs(want[i]))) << "element " << i;
}

} // namespace

// IR version 2 predates opset_import; the checker refuses one that declares it, onnxruntime runs it.
TEST(OnnxEcosystem, EarlyIrVersionWithOpsetImportsIsReadWithANote) {
  for (int64_t ir : {1, 2}) {
    Model m(ir, 6);
    m.io(true, "x", {1, 3, 4, 4});
    m.io(false, "y", {1, 3, 4, 4});
    m.node("Relu", "relu", {"x"}, {"y"});
    Graph g = read_onnx(m.bytes(), "old.onnx", catalog());
    ASSERT_EQ(g.ops.size(), 1u);
    EXPECT_EQ(g.ops[0].type, "relu");
    EXPECT_TRUE(
        note_has(g, "ANEC-ONNX-004 warning: IR version " + std::to_string(ir) + " with opset imports"))
        << ir;
  }
  // An IR version 3 model the checker finds wanting is still refused (a node with no op_type).
  Model bad(3, 6);
  bad.io(true, "x", {1, 3});
  bad.io(false, "y", {1, 3});
  bad.node("", "nothing", {"x"}, {"y"});
  EXPECT_EQ(code_of([&] { read_onnx(bad.bytes(), "bad.onnx", catalog()); }), "ANEC-ONNX-002");
}

// com.microsoft Attention is not ONNX Attention: an operator of another domain is never mapped
// through the default domain's table, and is unmapped with a reason naming its domain.
TEST(OnnxEcosystem, CustomDomainOperatorsAreUnmappedWithTheirReason) {
  Model m(8, 17);
  m.import("com.microsoft", 1);
  m.io(true, "x", {1, 8, 16});
  m.io(false, "y", {1, 8, 16});
  m.init("gamma", {16}, ramp(16, 1));
  m.init("beta", {16}, ramp(16, 2));
  m.init("qkv", {16, 48}, ramp(16 * 48, 3));
  m.node("SkipLayerNormalization", "skip_ln", {"x", "x", "gamma", "beta"}, {"s"}, "com.microsoft");
  set_integer(m.node("Attention", "attn", {"s", "qkv"}, {"a"}, "com.microsoft"), "num_heads", int64_t(2));
  m.node("Relu", "relu", {"a"}, {"y"});
  Graph g = read_onnx(m.bytes(), "contrib.onnx", catalog());
  ASSERT_EQ(g.ops.size(), 3u);
  EXPECT_EQ(op_named(g, "skip_ln")->type, "onnx:com.microsoft:SkipLayerNormalization");
  EXPECT_EQ(op_named(g, "attn")->type, "onnx:com.microsoft:Attention");
  EXPECT_EQ(op_named(g, "relu")->type, "relu");
  EXPECT_TRUE(note_has(g, "unmapped ONNX op com.microsoft:Attention x1: com.microsoft:Attention is an ONNX "
                          "Runtime contrib operator, outside the ONNX standard"));
  EXPECT_TRUE(note_has(g, "com.microsoft:SkipLayerNormalization is an ONNX Runtime contrib operator"));
  CheckResult r = check(g, catalog(), registry().get("h16"));
  EXPECT_EQ(r.verdict, Verdict::Reject);
  size_t unmapped = 0;
  for (const Finding &f : r.findings)
    unmapped += f.code == "ANEC-CHK-001";
  EXPECT_EQ(unmapped, 2u);
}

// sklearn-onnx classifiers end in ZipMap (ai.onnx.ml), whose output is a sequence of maps: a host
// operation, around which the tensors' shapes are still inferred.
TEST(OnnxEcosystem, ZipMapIsAHostOperationNotAFailedInference) {
  Model m(8, 17);
  m.import("ai.onnx.ml", 1);
  m.io(true, "x", {1, 4});
  m.init("w", {4, 3}, ramp(12, 1));
  m.node("MatMul", "fc", {"x", "w"}, {"logits"});
  m.node("Softmax", "softmax", {"logits"}, {"probabilities"});
  set_ints(m.node("ZipMap", "zipmap", {"probabilities"}, {"output_probability"}, "ai.onnx.ml"),
           "classlabels_int64s", {0, 1, 2});
  auto *out = m.proto().mutable_graph()->add_output();
  out->set_name("output_probability");
  auto *map = out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_map_type();
  map->set_key_type(onnx::TensorProto_DataType_INT64);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  Graph g = read_onnx(m.bytes(), "classifier.onnx", catalog());
  ASSERT_EQ(g.ops.size(), 3u);
  EXPECT_EQ(op_named(g, "zipmap")->type, "onnx:ai.onnx.ml:ZipMap");
  EXPECT_TRUE(note_has(g, "ai.onnx.ml:ZipMap is a classical machine-learning operator"));
  const Tensor *p = g.tensor("probabilities");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->shape.str(), "[1,1,3,1,1]") << "the shapes before the host operation are inferred";
}

// Opset 23: Attention is the catalogue's sdpa, RMSNormalization and RotaryEmbedding its rms_norm
// and rotary_embedding; their output shapes are filled where the library (opset 17) has no rule.
TEST(OnnxEcosystem, Opset23OperatorsAreMapped) {
  Model m(10, 23);
  m.io(true, "q", {1, 2, 5, 4});
  m.io(true, "k", {1, 2, 6, 4});
  m.io(true, "v", {1, 2, 6, 3});
  m.io(true, "pos", {1, 5})->set_elem_type(onnx::TensorProto_DataType_INT64);
  m.io(false, "y", {1, 2, 5, 3});
  m.io(false, "r", {1, 2, 5, 4});
  m.io(false, "n", {1, 2, 5, 4});
  m.init("scale", {4}, ramp(4, 1));
  m.init("cos", {8, 2}, ramp(16, 2));
  m.init("sin", {8, 2}, ramp(16, 3));
  set_real(m.node("Attention", "attn", {"q", "k", "v"}, {"y"}), "scale", 0.5f);
  m.node("RotaryEmbedding", "rope", {"q", "cos", "sin", "pos"}, {"r"});
  m.node("RMSNormalization", "rms", {"q", "scale"}, {"n"});
  Graph g = read_onnx(m.bytes(), "opset23.onnx", catalog());
  EXPECT_TRUE(note_has(g, "ANEC-ONNX-004 warning: IR version 10, opset 23"));
  ASSERT_EQ(g.ops.size(), 3u);
  const Op *attn = op_named(g, "attn");
  EXPECT_EQ(attn->type, "sdpa");
  ASSERT_TRUE(attn->attrs.find("scale"));
  EXPECT_EQ(attn->attrs.find("scale")->as_float(), 0.5);
  EXPECT_EQ(op_named(g, "rope")->type, "rotary_embedding");
  EXPECT_EQ(op_named(g, "rms")->type, "rms_norm");
  EXPECT_EQ(g.tensor("y")->shape.d[kW], 3);
  EXPECT_EQ(g.tensor("y")->shape.d[kH], 5);
  CheckResult r = check(g, catalog(), registry().get("h16"));
  for (const Finding &f : r.findings)
    EXPECT_NE(f.code, "ANEC-CHK-001") << f.message;
}

// RMSNormalization over the last axis and Attention of rank 4 against plain loops in double;
// RotaryEmbedding has no evaluator kernel and is reported, not computed.
TEST(OnnxEcosystem, RmsNormalizationAndAttentionEvaluate) {
  const int64_t H = 2, S = 3, T = 4, E = 4, F = 2;
  Model m(10, 23);
  m.io(true, "x", {1, H, S, E});
  m.io(true, "k", {1, H, T, E});
  m.io(true, "v", {1, H, T, F});
  m.io(false, "n", {1, H, S, E});
  m.io(false, "y", {1, H, S, F});
  std::vector<float> scale = ramp(size_t(E), 1);
  m.init("scale", {E}, scale);
  set_real(m.node("RMSNormalization", "rms", {"x", "scale"}, {"n"}), "epsilon", 1e-3f);
  m.node("Attention", "attn", {"n", "k", "v"}, {"y"});
  Graph g = read_onnx(m.bytes(), "eval.onnx", catalog(), {}, true);
  EvalOptions options;
  Values x, k, v;
  x.d = {1, 1, H, S, E};
  k.d = {1, 1, H, T, E};
  v.d = {1, 1, H, T, F};
  x.v = ramp(size_t(H * S * E), 2);
  k.v = ramp(size_t(H * T * E), 3);
  v.v = ramp(size_t(H * T * F), 4);
  options.inputs["x"] = x;
  options.inputs["k"] = k;
  options.inputs["v"] = v;
  EvalResult r = evaluate(g, catalog(), numerics(), options);
  EXPECT_TRUE(r.report.unevaluated.empty());

  std::vector<double> n(x.v.size()), y(size_t(H * S * F));
  for (int64_t row = 0; row < H * S; ++row) {
    double ss = 0;
    for (int64_t e = 0; e < E; ++e)
      ss += double(x.v[size_t(row * E + e)]) * x.v[size_t(row * E + e)];
    double inv = 1 / std::sqrt(ss / double(E) + double(1e-3f));
    for (int64_t e = 0; e < E; ++e)
      n[size_t(row * E + e)] = double(x.v[size_t(row * E + e)]) * inv * scale[size_t(e)];
  }
  for (int64_t h = 0; h < H; ++h)
    for (int64_t s = 0; s < S; ++s) {
      std::vector<double> w(static_cast<size_t>(T));
      double top = -1e300, sum = 0;
      for (int64_t t = 0; t < T; ++t) {
        double d = 0;
        for (int64_t e = 0; e < E; ++e)
          d += n[size_t((h * S + s) * E + e)] * k.v[size_t((h * T + t) * E + e)];
        w[size_t(t)] = d / std::sqrt(double(E));
        top = std::max(top, w[size_t(t)]);
      }
      for (double &a : w)
        sum += (a = std::exp(a - top));
      for (int64_t f = 0; f < F; ++f) {
        double acc = 0;
        for (int64_t t = 0; t < T; ++t)
          acc += w[size_t(t)] / sum * v.v[size_t((h * T + t) * F + f)];
        y[size_t((h * S + s) * F + f)] = acc;
      }
    }
  expect_close(r.outputs.at("n").v, n);
  expect_close(r.outputs.at("y").v, y);

  // Rank 3 with q_num_heads splits heads the evaluator's sdpa does not: reported, not computed.
  Model split(10, 23);
  split.io(true, "q", {1, S, 4});
  split.io(false, "y", {1, S, 4});
  auto *a = split.node("Attention", "attn", {"q", "q", "q"}, {"y"});
  set_integer(a, "q_num_heads", int64_t(2));
  set_integer(a, "kv_num_heads", int64_t(2));
  Graph sg = read_onnx(split.bytes(), "split.onnx", catalog(), {}, true);
  EXPECT_EQ(op_named(sg, "attn")->type, "onnx:Attention");
  Graph lean = read_onnx(split.bytes(), "split.onnx", catalog());
  EXPECT_EQ(op_named(lean, "attn")->type, "sdpa");
  EXPECT_EQ(lean.tensor("y")->shape.d[kW], 4);
}
