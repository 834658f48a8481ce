// ONNX models pointed at the tool to make it misbehave (issue 33, second round), each built here with
// the onnx protobuf API: external data that names files outside the model's folder, initializers
// whose stored data does not match their shape, negative dimensions, subgraphs nested deeper than
// protobuf parses, and a model on which the ONNX library itself crashes, run through the crash
// boundary without the checks that normally keep it away.
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/onnx.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"

#include "../compiler/tables.hpp"
#include "../errors.hpp"
#include "../run_tool.hpp"
#include "onnx_model.hpp"
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
namespace fs = std::filesystem;

namespace {

const fs::path kTables = ANEC_TEST_TABLES_DIR;

// A folder of its own for each test, removed after it.
struct Scratch {
  fs::path path;
  Scratch() {
    path = fs::temp_directory_path() / ("anec-hostile-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path / "model");
  }
  ~Scratch() { fs::remove_all(path); }
};

void declare(onnx::ValueInfoProto *v, const std::string &name, std::vector<int64_t> dims,
             int type = onnx::TensorProto_DataType_FLOAT) {
  v->set_name(name);
  auto *t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  auto *shape = t->mutable_shape();
  for (int64_t d : dims)
    shape->add_dim()->set_dim_value(d);
}

void ints(onnx::NodeProto *n, const char *name, std::vector<int64_t> values) {
  onnx::AttributeProto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t v : values)
    a->add_ints(v);
}

// x [1,16,8,8] -> Conv 3x3 (weight 'w' [1,16,3,3], 144 floats, as `weight` stores it) -> y [1,1,6,6].
onnx::ModelProto conv_model(const std::function<void(onnx::TensorProto &)> &weight, int64_t stride = 1) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto *g = m.mutable_graph();
  g->set_name("conv");
  declare(g->add_input(), "x", {1, 16, 8, 8});
  int64_t out = stride > 0 ? (8 - 3) / stride + 1 : 6;
  declare(g->add_output(), "y", {1, 1, out, out});
  onnx::TensorProto *w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto_DataType_FLOAT);
  for (int64_t d : {1, 16, 3, 3})
    w->add_dims(d);
  weight(*w);
  onnx::NodeProto *n = g->add_node();
  n->set_name("c");
  n->set_op_type("Conv");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  ints(n, "kernel_shape", {3, 3});
  ints(n, "strides", {stride, stride});
  return m;
}

void floats(onnx::TensorProto &w, size_t n) {
  for (size_t k = 0; k < n; ++k)
    w.add_float_data(float(k % 7) / 8);
}

// The weight kept in external data at `location`.
onnx::ModelProto external_model(const std::string &location) {
  return conv_model([&](onnx::TensorProto &w) {
    w.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto *entry = w.add_external_data();
    entry->set_key("location");
    entry->set_value(location);
  });
}

// The reason code of loading `m` saved as `file`.
std::string load_code(const fs::path &file, const onnx::ModelProto &m, std::string *message = nullptr) {
  write_output(file, m.SerializeAsString());
  return code_of([&] { load_model(file, catalog()); }, message);
}

} // namespace

// External data is found in the model's folder, whatever the working directory: the test runs in
// the build folder, the model and its data elsewhere. The checker stat()ed the location relative to
// the working directory (rejecting this model, ANEC-ONNX-002), and answered for any absolute path or
// any path climbing out with "..", telling whether a file outside the folder exists.
TEST(OnnxHostile, ExternalDataIsFoundInTheModelFolderAndOnlyThere) {
  Scratch s;
  fs::path dir = s.path / "model", file = dir / "m.onnx";
  write_output(dir / "w.bin", std::string(576, '\0'));
  write_output(s.path / "outside.bin", std::string(576, '\0'));
  ASSERT_FALSE(fs::exists(fs::current_path() / "w.bin"));
  EXPECT_EQ(load_code(file, external_model("w.bin")), "none");
  EXPECT_EQ(load_code(file, external_model("./w.bin")), "none");
  EXPECT_EQ(load_code(file, external_model("missing.bin")), "ANEC-ONNX-002"); // looked for in the folder

  std::string msg;
  EXPECT_EQ(load_code(file, external_model((s.path / "outside.bin").string()), &msg), "ANEC-ONNX-006");
  EXPECT_NE(msg.find("initializer 'w': external data location '/"), std::string::npos) << msg;
  EXPECT_NE(msg.find("' leaves the model's folder"), std::string::npos) << msg;
  EXPECT_EQ(load_code(file, external_model("../outside.bin")), "ANEC-ONNX-006");
  EXPECT_EQ(load_code(file, external_model("../model/w.bin")), "ANEC-ONNX-006"); // climbs out, even back
  EXPECT_EQ(load_code(file, external_model("sub/../../outside.bin")), "ANEC-ONNX-006");
  EXPECT_EQ(load_code(file, external_model("")), "ANEC-ONNX-006");
  EXPECT_EQ(load_code(file, external_model(".")), "ANEC-ONNX-006");
  EXPECT_EQ(load_code(file, external_model(std::string("w.bin") + '\0' + "/../../x")), "ANEC-ONNX-006");

  // Links are followed: out to a file, out to nothing (the same answer: nothing is learnt of what
  // is outside), and around in a loop; a link inside stays inside.
  fs::create_symlink(s.path / "outside.bin", dir / "out.bin");
  fs::create_symlink(s.path / "absent.bin", dir / "nowhere.bin");
  fs::create_symlink("loop.bin", dir / "loop.bin");
  fs::create_symlink("w.bin", dir / "alias.bin");
  EXPECT_EQ(load_code(file, external_model("out.bin")), "ANEC-ONNX-006");
  EXPECT_EQ(load_code(file, external_model("nowhere.bin")), "ANEC-ONNX-006");
  EXPECT_EQ(load_code(file, external_model("loop.bin")), "ANEC-ONNX-006");
  EXPECT_EQ(load_code(file, external_model("alias.bin")), "none");
  fs::create_symlink(s.path, dir / "up");
  EXPECT_EQ(load_code(file, external_model("up/outside.bin")), "ANEC-ONNX-006");

  // From memory (the Python module's bytes) there is no folder: external data is refused.
  std::string bytes = external_model("w.bin").SerializeAsString();
  EXPECT_EQ(code_of([&] { read_model(bytes, "onnx", "<bytes>", catalog()); }, &msg), "ANEC-ONNX-006");
  EXPECT_NE(msg.find("a model given as bytes has no folder"), std::string::npos) << msg;
}

// The same in a Constant node's value, a sparse initializer and a subgraph: every tensor the model
// stores is looked at, not only the main graph's initializers.
TEST(OnnxHostile, ExternalDataAnywhereInTheModelIsChecked) {
  Scratch s;
  fs::path file = s.path / "model" / "m.onnx";
  onnx::ModelProto m = conv_model([](onnx::TensorProto &w) { floats(w, 144); });
  onnx::NodeProto *c = m.mutable_graph()->add_node();
  c->set_op_type("Constant");
  c->set_name("k");
  c->add_output("k_out");
  onnx::AttributeProto *a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  *a->mutable_t() = external_model("/etc/hostname").graph().initializer(0);
  std::string msg;
  EXPECT_EQ(load_code(file, m, &msg), "ANEC-ONNX-006");
  EXPECT_NE(msg.find("attribute 'value' of node 'k'"), std::string::npos) << msg;

  onnx::ModelProto sparse = conv_model([](onnx::TensorProto &w) { floats(w, 144); });
  onnx::SparseTensorProto *sp = sparse.mutable_graph()->add_sparse_initializer();
  *sp->mutable_values() = external_model("../x").graph().initializer(0);
  EXPECT_EQ(load_code(file, sparse), "ANEC-ONNX-006");
}

// A stored tensor whose data does not match its shape is an error naming it, with what it holds and
// what its shape needs: the evaluator gave the whole weight seeded random values, said only "seeded
// random values" and exited 0. A negative dimension is refused before the library sees it.
TEST(OnnxHostile, AMalformedInitializerIsAnErrorNotSeededWeights) {
  Scratch s;
  struct Case {
    const char *name;
    std::function<void(onnx::TensorProto &)> weight;
    const char *code, *says;
  };
  const Case cases[] = {
      {"raw7", [](onnx::TensorProto &w) { w.set_raw_data("1234567"); }, "ANEC-ONNX-007",
       "initializer 'w' holds 7 bytes of raw_data; its shape [1,16,3,3] of float needs 576 bytes"},
      {"float3", [](onnx::TensorProto &w) { floats(w, 3); }, "ANEC-ONNX-007",
       "initializer 'w' holds 3 values in float_data; its shape [1,16,3,3] of float needs 144 values"},
      {"int64", [](onnx::TensorProto &w) { w.add_int64_data(1); }, "ANEC-ONNX-007",
       "holds 1 values in int64_data, a field its type does not use"},
      {"both", [](onnx::TensorProto &w) { w.set_raw_data(std::string(576, '\0')), floats(w, 144); },
       "ANEC-ONNX-007", "holds 144 values in float_data besides raw_data"},
      {"negative", [](onnx::TensorProto &w) { w.set_dims(1, -4), floats(w, 144); }, "ANEC-ONNX-005",
       "a dimension of initializer 'w' is -4"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    fs::path file = s.path / "model" / (std::string(c.name) + ".onnx");
    write_output(file, conv_model(c.weight).SerializeAsString());
    anec::test::ToolRun r =
        anec::test::run_tool(ANEC_TEST_ANEC_TOOL, kTables.string(), "eval " + file.string());
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.err.find(std::string(c.code) + ": " + file.string() + ": "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("seeded"), std::string::npos) << r.out;
  }
}

// Seeding stays for what has no values by design, and is said in every form: a weight kept in
// external data (which the evaluator does not read) is seeded, in text and in JSON (eval has no CSV
// form; the Python dict is the JSON form's report, python/tests/test_anec.py).
TEST(OnnxHostile, SeededValuesAreSaidInEveryFormat) {
  Scratch s;
  fs::path dir = s.path / "model", file = dir / "m.onnx";
  write_output(dir / "w.bin", std::string(576, '\0'));
  write_output(file, external_model("w.bin").SerializeAsString());
  auto run = [&](const std::string &format) {
    return anec::test::run_tool(ANEC_TEST_ANEC_TOOL, kTables.string(), "eval " + file.string() + format);
  };
  anec::test::ToolRun text = run(""), json = run(" --format json");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("seeded random values: c (weights, 144 values)"), std::string::npos) << text.out;
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("\"seeded\": ["), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"c (weights, 144 values)\""), std::string::npos) << json.out;
}

// A negative dimension anywhere the model stores one is refused (ANEC-ONNX-005): in a Constant
// node's value it reached the graph as a symbolic dimension.
TEST(OnnxHostile, ANegativeDimensionInAConstantIsRefused) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto *g = m.mutable_graph();
  g->set_name("g");
  declare(g->add_input(), "x", {5});
  declare(g->add_output(), "y", {5});
  onnx::NodeProto *c = g->add_node();
  c->set_op_type("Constant");
  c->set_name("k");
  c->add_output("k_out");
  onnx::AttributeProto *a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
  a->mutable_t()->add_dims(-5);
  onnx::NodeProto *add = g->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("k_out");
  add->add_output("y");
  std::string msg;
  EXPECT_EQ(code_of([&] { read_onnx(m.SerializeAsString(), "neg.onnx", catalog()); }, &msg), "ANEC-ONNX-005");
  EXPECT_NE(msg.find("a dimension of attribute 'value' of node 'k' is -5"), std::string::npos) << msg;
}

namespace {
// `depth` If nodes, each the then-branch of the one before; the innermost passes x on.
onnx::ModelProto nested_ifs(int depth) {
  auto branch = [](const std::string &out, onnx::NodeProto node) {
    onnx::GraphProto b;
    b.set_name(out);
    *b.add_node() = std::move(node);
    declare(b.add_output(), out, {1});
    return b;
  };
  auto identity = [](const std::string &out) {
    onnx::NodeProto n;
    n.set_op_type("Identity");
    n.add_input("x");
    n.add_output(out);
    return n;
  };
  onnx::GraphProto body = branch("t" + std::to_string(depth), identity("t" + std::to_string(depth)));
  for (int k = depth - 1; k >= 0; --k) {
    std::string out = "t" + std::to_string(k), other = "e" + std::to_string(k);
    onnx::NodeProto n;
    n.set_op_type("If");
    n.add_input("c");
    n.add_output(out);
    onnx::AttributeProto *then = n.add_attribute(), *otherwise = n.add_attribute();
    then->set_name("then_branch");
    then->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    *then->mutable_g() = std::move(body);
    otherwise->set_name("else_branch");
    otherwise->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    *otherwise->mutable_g() = branch(other, identity(other));
    body = branch(out, std::move(n));
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  *m.mutable_graph() = std::move(body);
  declare(m.mutable_graph()->add_input(), "c", {}, onnx::TensorProto_DataType_BOOL);
  declare(m.mutable_graph()->add_input(), "x", {1});
  return m;
}
} // namespace

// Subgraphs nested deeper than protobuf parses (100 nested messages, 3 a level) are refused with what
// they are, not as "not an ONNX model"; a model nested less deeply is read.
TEST(OnnxHostile, DeepNestingIsSaidNotCalledNotAModel) {
  EXPECT_NO_THROW(read_onnx(nested_ifs(20).SerializeAsString(), "n20.onnx", catalog()));
  std::string msg;
  EXPECT_EQ(code_of([&] { read_onnx(nested_ifs(40).SerializeAsString(), "n40.onnx", catalog()); }, &msg),
            "ANEC-ONNX-008");
  EXPECT_NE(msg.find("n40.onnx: subgraphs (If, Loop, Scan bodies) nested 40 levels deep"), std::string::npos)
      << msg;
  EXPECT_EQ(code_of([&] { read_onnx(std::string("\x0a\xff\xff", 3), "junk.onnx", catalog()); }),
            "ANEC-ONNX-001");
}

// Reading a model is planned from its nodes, counted on the wire format before protobuf parses it
// (the subgraphs' nodes included), and its size: over the budget it is refused (ANEC-MEM-001) with
// the count; under it the model is read.
TEST(OnnxHostile, AModelThatWouldExpandPastTheBudgetIsRefusedBeforeItIsParsed) {
  onnx::ModelProto m = nested_ifs(20);
  std::function<int(const onnx::GraphProto &)> nodes = [&](const onnx::GraphProto &g) {
    int n = g.node_size();
    for (const onnx::NodeProto &node : g.node())
      for (const onnx::AttributeProto &a : node.attribute())
        n += a.has_g() ? nodes(a.g()) : 0;
    return n;
  };
  std::string bytes = m.SerializeAsString(), msg;
  EXPECT_EQ(code_of([&] { read_onnx(bytes, "n20.onnx", catalog(), {}, false, {}, 20000); }, &msg),
            "ANEC-MEM-001");
  EXPECT_NE(msg.find("n20.onnx: reading the model needs about "), std::string::npos) << msg;
  EXPECT_NE(msg.find(" (" + std::to_string(nodes(m.graph())) + " node(s) at "), std::string::npos) << msg;
  EXPECT_NE(msg.find("more than the memory budget of 19.5 KiB (--max-memory)"), std::string::npos) << msg;
  EXPECT_NO_THROW(read_onnx(bytes, "n20.onnx", catalog(), {}, false, {}, 1 << 20));
}

// The crash boundary: the ONNX library's checker and shape inference run in a child process, so a
// crash there is a reason code and the caller (this test process) lives on. A Conv with strides 0,
// which the reader refuses before the library sees it (ANEC-ONNX-005), is handed to the boundary
// directly: Debian's libonnx 1.12 divides by the stride in Conv's shape inference. Integer division
// by zero traps (SIGFPE) on x86; elsewhere (AArch64) it yields 0 and the library returns normally.
TEST(OnnxHostile, ALibraryCrashIsAReasonCodeNotADeadProcess) {
  std::string bytes = conv_model([](onnx::TensorProto &w) { floats(w, 144); }, 0).SerializeAsString();
  EXPECT_EQ(code_of([&] { read_onnx(bytes, "s0.onnx", catalog()); }), "ANEC-ONNX-005");
  std::vector<std::string> notes;
  std::string msg;
  std::string code = code_of([&] { onnx_front::api().infer_isolated(bytes, "s0.onnx", notes); }, &msg);
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_EQ(code, "ANEC-ONNX-009");
  EXPECT_NE(msg.find("s0.onnx: the ONNX library crashed (SIGFPE) in ONNX shape inference"), std::string::npos)
      << msg;
#else
  EXPECT_TRUE(code == "ANEC-ONNX-009" || code == "none") << msg;
#endif
  // The boundary passes a result back whole: the inferred shapes and the notes.
  std::string ok = conv_model([](onnx::TensorProto &w) { floats(w, 144); }).SerializeAsString();
  onnx::ModelProto inferred;
  ASSERT_TRUE(inferred.ParseFromString(onnx_front::api().infer_isolated(ok, "ok.onnx", notes)));
  EXPECT_EQ(inferred.graph().output(0).type().tensor_type().shape().dim(3).dim_value(), 6);
  EXPECT_EQ(inferred.graph().initializer(0).float_data_size(), 144);
  onnx::ModelProto newer;
  ASSERT_TRUE(newer.ParseFromString(ok));
  newer.set_ir_version(99);
  notes.clear();
  onnx_front::api().infer_isolated(newer.SerializeAsString(), "new.onnx", notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("ANEC-ONNX-004 warning: IR version 99", 0), 0u) << notes[0];
}

// A corpus run gives each hostile file its row with its reason code, and goes on to the next.
TEST(OnnxHostile, ACorpusRunGivesEachHostileFileARow) {
  Scratch s;
  fs::path dir = s.path / "model";
  write_output(dir / "a_outside.onnx", external_model("/etc/hostname").SerializeAsString());
  write_output(dir / "b_raw7.onnx",
               conv_model([](onnx::TensorProto &w) { w.set_raw_data("1234567"); }).SerializeAsString());
  write_output(dir / "c_deep.onnx", nested_ifs(40).SerializeAsString());
  write_output(dir / "d_good.onnx",
               conv_model([](onnx::TensorProto &w) { floats(w, 144); }).SerializeAsString());
  anec::test::ToolRun r =
      anec::test::run_tool(ANEC_TEST_ANEC_TOOL, kTables.string(), "check " + dir.string() + " --target h16");
  for (const char *code : {"ANEC-ONNX-006", "ANEC-ONNX-007", "ANEC-ONNX-008"})
    EXPECT_NE(r.out.find(code), std::string::npos) << code << "\n" << r.out << r.err;
  EXPECT_NE(r.out.find("d_good.onnx"), std::string::npos) << r.out;
}

// `check`, `estimate` and `place` take the budget (--max-memory): one model, and each of a corpus.
TEST(OnnxHostile, TheToolsPlanReadingAModelUnderTheBudgetGiven) {
  Scratch s;
  fs::path dir = s.path / "model", file = dir / "n20.onnx";
  write_output(file, nested_ifs(20).SerializeAsString());
  for (const char *cmd : {"check ", "estimate ", "place "}) {
    anec::test::ToolRun r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, kTables.string(),
                                                 cmd + file.string() + " --target h16 --max-memory 20K");
    EXPECT_EQ(r.status, 2) << cmd << r.err;
    EXPECT_NE(r.err.find("ANEC-MEM-001"), std::string::npos) << cmd << r.err;
  }
  anec::test::ToolRun corpus = anec::test::run_tool(
      ANEC_TEST_ANEC_TOOL, kTables.string(), "check " + dir.string() + " --target h16 --max-memory 20K");
  EXPECT_NE(corpus.out.find("ANEC-MEM-001"), std::string::npos) << corpus.out << corpus.err;
  EXPECT_EQ(
      anec::test::run_tool(ANEC_TEST_ANEC_TOOL, kTables.string(), "check " + file.string() + " --target h16")
          .err.find("ANEC-MEM-001"),
      std::string::npos);
}
