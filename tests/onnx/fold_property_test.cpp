// Folding never changes which outputs a runtime input reaches: on the real models and on seeded
// random graphs (static and symbolic inputs, shape arithmetic, constant-only chains, If nodes), every
// model output that depends on a runtime input through data is produced by an operation the
// front-end kept, and (random graphs) every output that does not is folded. The reference walks the
// ModelProto itself (libonnx), independently of the front-end: a node is runtime when an input or a
// name its subgraphs capture is runtime; Shape and Size cut the walk (their value is the shape).
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/onnx.hpp"
#include "anec/support/file.hpp"

#include "../compiler/tables.hpp"
#include <filesystem>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <random>
#include <set>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
namespace fs = std::filesystem;

namespace {

void walk(const onnx::GraphProto &gp, std::set<std::string> &runtime) {
  for (const auto &n : gp.node()) {
    bool rt = false;
    for (const auto &i : n.input())
      rt |= runtime.count(i) > 0;
    for (const auto &a : n.attribute())
      if (a.has_g()) {
        std::set<std::string> inner = runtime;
        walk(a.g(), inner);
        for (const auto &o : a.g().output())
          rt |= inner.count(o.name()) > 0;
        runtime.insert(inner.begin(), inner.end());
      }
    if (n.op_type() == "Shape" || n.op_type() == "Size")
      rt = false;
    if (rt)
      for (const auto &o : n.output())
        runtime.insert(o);
  }
}

// The model outputs a runtime input reaches through data.
std::set<std::string> runtime_outputs(const onnx::ModelProto &m) {
  std::set<std::string> runtime, inits, out;
  for (const auto &i : m.graph().initializer())
    inits.insert(i.name());
  for (const auto &v : m.graph().input())
    if (!inits.count(v.name()))
      runtime.insert(v.name());
  walk(m.graph(), runtime);
  for (const auto &o : m.graph().output())
    if (runtime.count(o.name()))
      out.insert(o.name());
  return out;
}

// The outputs of the graph an operation produces (not folded).
size_t produced_outputs(const Graph &g) {
  std::set<std::string> made;
  for (const Op &op : g.ops)
    made.insert(op.outputs.begin(), op.outputs.end());
  size_t n = 0;
  for (const std::string &o : g.outputs)
    n += made.count(o);
  return n;
}

// A float value of the given rank, its dimensions left to inference.
void typed(onnx::ValueInfoProto *v, int rank) {
  auto *t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  for (int k = 0; k < rank; ++k)
    t->mutable_shape()->add_dim();
}

// Seeded random models: input x [n or 4, 8], a constant [8]; nodes drawn from Relu, Add of two
// tensors, an identity Reshape whose target is Shape(t), Mul of constants, and an If whose condition
// compares a dimension with 4 (then: Relu, else: Identity).
onnx::ModelProto random_model(std::mt19937 &rng, bool symbolic) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(16);
  auto *g = m.mutable_graph();
  g->set_name("random");
  auto *x = g->add_input();
  x->set_name("x");
  auto *tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  auto *d0 = tt->mutable_shape()->add_dim();
  symbolic ? d0->set_dim_param("n") : d0->set_dim_value(4);
  tt->mutable_shape()->add_dim()->set_dim_value(8);
  auto constant = [&](const std::string &name, std::vector<int64_t> dims, std::vector<float> values) {
    auto *c = g->add_initializer();
    c->set_name(name);
    c->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims)
      c->add_dims(d);
    for (float v : values)
      c->add_float_data(v);
  };
  auto int_constant = [&](const std::string &name, std::vector<int64_t> values) {
    auto *c = g->add_initializer();
    c->set_name(name);
    c->set_data_type(onnx::TensorProto_DataType_INT64);
    c->add_dims(int64_t(values.size()));
    for (int64_t v : values)
      c->add_int64_data(v);
  };
  constant("c0", {8}, std::vector<float>(8, 1.0f));
  constant("c1", {8}, std::vector<float>(8, 2.0f));
  int_constant("zero", {0});
  int_constant("four", {4});
  std::vector<std::string> runtime = {"x"}, constants = {"c0", "c1"};
  auto node = [&](const std::string &type, std::vector<std::string> in, const std::string &out) {
    auto *n = g->add_node();
    n->set_op_type(type);
    n->set_name(out + "_node");
    for (auto &i : in)
      n->add_input(i);
    n->add_output(out);
    return n;
  };
  int steps = 3 + int(rng() % 8);
  for (int k = 0; k < steps; ++k) {
    std::string out = "t" + std::to_string(k);
    const std::string &r = runtime[rng() % runtime.size()];
    switch (rng() % 5) {
    case 0:
      node("Relu", {r}, out), runtime.push_back(out);
      break;
    case 1:
      node("Add", {r, constants[rng() % constants.size()]}, out), runtime.push_back(out);
      break;
    case 2:
      node("Shape", {r}, out + "_shape");
      node("Reshape", {r, out + "_shape"}, out);
      runtime.push_back(out);
      break;
    case 3:
      node("Mul", {constants[rng() % constants.size()], constants[rng() % constants.size()]}, out),
          constants.push_back(out);
      break;
    default: {
      node("Shape", {"x"}, out + "_s");
      node("Gather", {out + "_s", "zero"}, out + "_d");
      node("Equal", {out + "_d", "four"}, out + "_c");
      auto *n = node("If", {out + "_c"}, out);
      auto branch = [&](const char *attr, const char *type) {
        auto *a = n->add_attribute();
        a->set_name(attr);
        a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
        auto *b = a->mutable_g();
        b->set_name(std::string(attr) + out);
        auto *bn = b->add_node();
        bn->set_op_type(type);
        bn->add_input(r);
        bn->add_output(out + "_" + attr);
        auto *o = b->add_output();
        o->set_name(out + "_" + attr);
        typed(o, 2);
      };
      branch("then_branch", "Relu");
      branch("else_branch", "Identity");
      runtime.push_back(out);
    }
    }
  }
  for (const std::string &o : {runtime.back(), constants.back()}) {
    auto *v = g->add_output();
    v->set_name(o);
    typed(v, o == runtime.back() ? 2 : 1);
  }
  return m;
}
} // namespace

TEST(FoldProperty, RandomGraphsKeepExactlyTheRuntimeOutputs) {
  std::mt19937 rng(20261125);
  for (int i = 0; i < 200; ++i) {
    bool symbolic = i % 2;
    onnx::ModelProto m = random_model(rng, symbolic);
    SCOPED_TRACE("model " + std::to_string(i) + (symbolic ? " (symbolic)" : " (static)"));
    std::string bytes;
    ASSERT_TRUE(m.SerializeToString(&bytes));
    Graph g = read_onnx(bytes, "random.onnx", catalog());
    EXPECT_EQ(produced_outputs(g), runtime_outputs(m).size());
    EXPECT_EQ(g.ops.size() + g.folded_nodes, g.source_nodes);
    // A symbolic input leaves the If on a dimension in the graph; a static one inlines it.
    for (const Op &op : g.ops)
      EXPECT_TRUE(symbolic || op.type != "cond") << op.name;
  }
}

TEST(FoldProperty, RealModelsFoldNothingAnInputReaches) {
  std::vector<fs::path> models;
  for (const auto &e : fs::recursive_directory_iterator(ANEC_TEST_MODEL_CACHE))
    if (e.path().extension() == ".onnx")
      models.push_back(e.path());
  ASSERT_GE(models.size(), 20u);
  for (const fs::path &p : models) {
    SCOPED_TRACE(p.filename().string());
    std::string bytes = read_text_file(p, 64ull << 20);
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(bytes));
    Graph g = read_onnx(bytes, p.string(), catalog());
    EXPECT_EQ(produced_outputs(g), runtime_outputs(m).size());
  }
}
