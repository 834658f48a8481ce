// The Core ML front-end on the real files of ../shared/testdata/coreml (SOURCES.tsv gives each
// file's facts, derived without anec): every .mlmodel, .mlpackage and .mlmodelc is read, its inputs,
// outputs, shapes and layer or operation counts by type checked; protoc --decode over the reference
// schema is an independent oracle for the layer counts; malformed files and bundles give their
// reason codes; check and estimate run on each model through the tool, bundles included in corpus
// mode.
#include "anec/compiler/frontends/coreml.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/mil.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"

#include "../../compiler/src/frontends/coreml/coreml_model.hpp"
#include "../errors.hpp"
#include "../run_tool.hpp"
#include "tables.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
namespace fs = std::filesystem;

namespace {
const fs::path kData = fs::path(ANEC_TEST_SHARED_DIR) / "testdata" / "coreml";
const fs::path kFormat = fs::path(ANEC_TEST_SHARED_DIR) / "reference" / "coreml" / "format";

coreml_front::Model spec(const fs::path &p) {
  return coreml_front::api().read(read_text_file(p, 1ull << 30), p.string(), false);
}

// Layer types and their counts, as SOURCES.tsv writes them ("activation:4,convolution:3").
std::map<std::string, int> histogram(const std::vector<coreml_front::Layer> &layers) {
  std::map<std::string, int> h;
  for (const coreml_front::Layer &l : layers)
    ++h[l.type];
  return h;
}
std::map<std::string, int> mil_histogram(const MilFunction &f) {
  std::map<std::string, int> h;
  for (const MilOp &o : f.ops)
    ++h[o.type];
  return h;
}
// The BLOBFILE values among an operation's inputs and attributes, by path.
void blob_files(const MilValue &v, std::map<std::string, int> &out) {
  if (v.kind == MilValue::Kind::Blob)
    ++out[v.text];
  for (const MilValue &x : v.items)
    blob_files(x, out);
}
std::map<std::string, int> blob_files(const MilFunction &f) {
  std::map<std::string, int> out;
  for (const MilOp &o : f.ops)
    for (const auto *list : {&o.inputs, &o.attributes})
      for (const MilNamed &n : *list)
        blob_files(n.value, out);
  return out;
}
std::map<std::string, int> op_types(const Graph &g) {
  std::map<std::string, int> h;
  for (const Op &op : g.ops)
    ++h[op.type];
  return h;
}
std::string shape(const Graph &g, const std::string &tensor) {
  return g.tensor(tensor)->shape.str();
}

fs::path scratch(const std::string &name) {
  fs::path d = fs::temp_directory_path() / ("anec-coreml-" + std::to_string(::getpid())) / name;
  fs::create_directories(d.parent_path());
  return d;
}
void write(const fs::path &p, const std::string &bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

// protoc --decode over the reference schema (an oracle that shares no code with anec): how many
// times `needle` starts a line of the decoded text.
int decoded_count(const fs::path &model, const std::string &needle) {
  std::string cmd = "protoc --decode=CoreML.Specification.Model -I " + kFormat.string() + " " +
                    (kFormat / "Model.proto").string() + " < " + model.string() + " 2>/dev/null";
  FILE *p = ::popen(cmd.c_str(), "r");
  if (!p)
    return -1;
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    text.append(buf, n);
  if (::pclose(p) != 0)
    return -1;
  int count = 0;
  for (size_t at = 0; (at = text.find(needle, at)) != std::string::npos; at += needle.size())
    if (at == 0 || text[at - 1] == ' ' || text[at - 1] == '\n')
      ++count;
  return count;
}
} // namespace

// A NeuralNetwork spec written as protobuf text and encoded by protoc against the reference schema
// (an encoder that shares no code with anec): the layer parameters that set a shape are read as
// their ops' attributes, and every shape follows. x [8, 4, 4] (C, H, W); padding H by (1, 2) and W
// by (3, 4): [8, 7, 11]; upsample H x2, W x3: [8, 14, 33]; concat of two along C: [16, 14, 33];
// permute (Seq, C, W, H): [16, 33, 14]; reshape (1, 32, 33, 7); softmax over C.
TEST(CoreML, NeuralNetworkLayerParametersAreTheirOpsAttributes) {
  const std::string text = R"(specificationVersion: 4
description {
  input { name: "x" type { multiArrayType { shape: 8 shape: 4 shape: 4 dataType: FLOAT32 } } }
  output { name: "y" type { multiArrayType { dataType: FLOAT32 } } }
}
neuralNetwork {
  layers { name: "pad" input: "x" output: "p" padding { constant { value: 0 } paddingAmounts {
    borderAmounts { startEdgeSize: 1 endEdgeSize: 2 } borderAmounts { startEdgeSize: 3 endEdgeSize: 4 } } } }
  layers { name: "up" input: "p" output: "u" upsample { scalingFactor: 2 scalingFactor: 3 } }
  layers { name: "cat" input: "u" input: "u" output: "c" concat { } }
  layers { name: "perm" input: "c" output: "t" permute { axis: 0 axis: 1 axis: 3 axis: 2 } }
  layers { name: "shape" input: "t" output: "r"
    reshape { targetShape: 1 targetShape: 32 targetShape: 33 targetShape: 7 } }
  layers { name: "soft" input: "r" output: "y" softmax { } }
})";
  fs::path txt = scratch("attrs.txt"), model = scratch("attrs.mlmodel");
  write(txt, text);
  std::string cmd = "protoc --encode=CoreML.Specification.Model -I " + kFormat.string() + " " +
                    (kFormat / "Model.proto").string() + " < " + txt.string() + " > " + model.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Graph g = load_model(model, catalog());
  EXPECT_EQ(shape(g, "p"), "[1,1,8,7,11]");
  EXPECT_EQ(shape(g, "u"), "[1,1,8,14,33]");
  EXPECT_EQ(shape(g, "c"), "[1,1,16,14,33]");
  EXPECT_EQ(shape(g, "t"), "[1,1,16,33,14]");
  EXPECT_EQ(shape(g, "r"), "[1,1,32,33,7]");
  EXPECT_EQ(shape(g, "y"), "[1,1,32,33,7]");
  std::map<std::string, std::string> attrs;
  for (const Op &op : g.ops) {
    std::string a = json::write(op.attrs);
    std::erase_if(a, [](char c) { return c == ' ' || c == '\n'; });
    attrs[op.name] = op.type + " " + a;
  }
  EXPECT_EQ(attrs["pad"],
            R"(pad {"pad":[1,2,3,4],"mode":"constant","value":0.0})"); // top, bottom, left, right
  EXPECT_EQ(attrs["up"], R"(resize {"scale":[2,3],"mode":"nearest"})");
  EXPECT_EQ(attrs["cat"], R"(concat {"axis":"C"})");
  EXPECT_EQ(attrs["perm"], R"(transpose {"perm":[0,1,2,4,3]})"); // [N, D, C, H, W]: H and W swap
  EXPECT_EQ(attrs["shape"], R"(reshape {"shape":[1,1,32,33,7]})");
  EXPECT_EQ(attrs["soft"], R"(softmax {"axis":"C"})");
  fs::remove_all(txt.parent_path());
}

TEST(CoreML, TinyDrawingEmbeddingSpec1) {
  fs::path p = kData / "mlmodel/coremltools/TinyDrawingEmbedding.mlmodel";
  coreml_front::Model m = spec(p);
  EXPECT_EQ(m.spec_version, 1);
  EXPECT_EQ(m.kind, "neuralNetwork");
  EXPECT_EQ(m.license, "MIT");
  EXPECT_EQ(m.author, "Core ML Tools Example");
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].kind, "image");
  EXPECT_EQ(m.inputs[0].shape, (std::vector<int64_t>{1, 1, 28, 28})); // GRAYSCALE 28x28
  ASSERT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(m.outputs[0].dtype, "fp32");
  EXPECT_EQ(m.outputs[0].shape, (std::vector<int64_t>{128}));
  EXPECT_EQ(m.layers.size(), 12u);
  EXPECT_EQ(histogram(m.layers),
            (std::map<std::string, int>{
                {"activation", 4}, {"convolution", 3}, {"pooling", 3}, {"flatten", 1}, {"innerProduct", 1}}));
  int64_t weight_bytes = 0;
  for (const coreml_front::Layer &l : m.layers)
    weight_bytes += l.weights.bytes;
  EXPECT_GT(weight_bytes, 350000); // the file is 390095 bytes, nearly all weights
  EXPECT_LT(weight_bytes, 390095);

  Graph g = load_model(p, catalog());
  EXPECT_EQ(g.inputs, std::vector<std::string>{"drawing"});
  EXPECT_EQ(shape(g, "drawing"), "[1,1,1,28,28]");
  EXPECT_EQ(g.outputs, std::vector<std::string>{"embedding"});
  EXPECT_EQ(shape(g, "embedding"), "[1,1,128,1,1]");
  // The channel-last flatten is a transpose moving C last, then the reshape.
  EXPECT_EQ(op_types(g),
            (std::map<std::string, int>{
                {"conv", 3}, {"relu", 4}, {"max_pool", 3}, {"transpose", 1}, {"reshape", 1}, {"linear", 1}}));
  EXPECT_EQ(decoded_count(p, "layers {"), 12);
}

TEST(CoreML, KerasModelsSpec4) {
  coreml_front::Model m = spec(kData / "mlmodel/s4tf/keras_model.mlmodel");
  EXPECT_EQ(m.spec_version, 4);
  EXPECT_EQ(histogram(m.layers), (std::map<std::string, int>{{"batchedMatmul", 1}}));
  EXPECT_EQ(m.inputs[0].dtype, "fp64");
  EXPECT_EQ(m.inputs[0].shape, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(m.outputs[0].shape.empty()); // "Identity:MultiArray(DOUBLE,-)"
  Graph g = load_model(kData / "mlmodel/s4tf/keras_model.mlmodel", catalog());
  EXPECT_EQ(op_types(g), (std::map<std::string, int>{{"linear", 1}})); // a weight matrix: one input
  EXPECT_EQ(g.outputs, std::vector<std::string>{"Identity"});

  fs::path up = kData / "mlmodel/s4tf/keras_model_personalization.mlmodel";
  coreml_front::Model u = spec(up);
  EXPECT_TRUE(u.updatable);
  ASSERT_EQ(u.training_inputs.size(), 2u);
  EXPECT_EQ(u.training_inputs[0].name, "dense_input");
  EXPECT_EQ(u.training_inputs[1].name, "output_true");
  ASSERT_EQ(u.layers.size(), 1u);
  EXPECT_EQ(u.layers[0].type, "innerProduct");
  EXPECT_EQ(u.layers[0].name, "dense_1");
  EXPECT_TRUE(u.layers[0].updatable);
  Graph ug = load_model(up, catalog());
  ASSERT_EQ(ug.ops.size(), 1u);
  EXPECT_EQ(ug.ops[0].type, "linear");
  EXPECT_TRUE(ug.ops[0].attrs.find("trainable") != nullptr);
  EXPECT_EQ(decoded_count(up, "layers {"), 1);
}

TEST(CoreML, CustomLayerIsUnmappedWithItsReason) {
  fs::path p = kData / "mlmodel/hollance/NeuralMcNeuralNet.mlmodel";
  coreml_front::Model m = spec(p);
  EXPECT_EQ(m.spec_version, 2);
  EXPECT_EQ(m.inputs[0].shape, (std::vector<int64_t>{1, 3, 256, 256})); // RGB 256x256
  EXPECT_EQ(m.outputs[0].shape, (std::vector<int64_t>{10}));
  EXPECT_EQ(histogram(m.layers),
            (std::map<std::string, int>{
                {"convolution", 1}, {"custom", 1}, {"innerProduct", 1}, {"pooling", 1}, {"softmax", 1}}));
  EXPECT_EQ(m.preprocessing, std::vector<std::string>{"scaler:image"});
  Graph g = load_model(p, catalog());
  EXPECT_EQ(op_types(g).count("coreml:custom/Swish"), 1u);
  bool reason = false;
  for (const std::string &n : g.notes)
    reason = reason ||
             (n.find("custom/Swish x1") != std::string::npos && n.find("MLCustomLayer") != std::string::npos);
  EXPECT_TRUE(reason);
  EXPECT_EQ(shape(g, "output"), "[1,1,10,1,1]");
  EXPECT_EQ(decoded_count(p, "layers {"), 5);
}

TEST(CoreML, ModelsWithoutANeuralNetworkRunOnTheHost) {
  coreml_front::Model tree = spec(kData / "mlmodel/improveai/dummy_v6.mlmodel");
  EXPECT_EQ(tree.kind, "treeEnsembleClassifier");
  EXPECT_EQ(tree.spec_version, 1);
  EXPECT_EQ(tree.tree_nodes, 530);
  EXPECT_EQ(tree.predicted_feature, "target");
  ASSERT_EQ(tree.outputs.size(), 2u);
  EXPECT_EQ(tree.outputs[0].name, "target");
  EXPECT_EQ(tree.outputs[0].kind, "int64");
  EXPECT_EQ(tree.outputs[1].kind, "dictionary");
  Graph g = load_model(kData / "mlmodel/improveai/dummy_v6.mlmodel", catalog());
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].type, "host_model");
  EXPECT_EQ(g.inputs.size(), tree.inputs.size());
  EXPECT_GT(g.inputs.size(), 250u);

  coreml_front::Model text = spec(kData / "mlmodel/rules_apple/sample.mlmodel");
  EXPECT_EQ(text.kind, "textClassifier");
  EXPECT_EQ(text.spec_version, 3);
  EXPECT_EQ(text.author, "Bazel Rules Authors");
  EXPECT_EQ(text.inputs[0].name, "text");
  EXPECT_EQ(text.inputs[0].kind, "string");
  EXPECT_EQ(text.outputs[0].name, "label");
  Graph tg = load_model(kData / "mlmodel/rules_apple/sample.mlmodel", catalog());
  EXPECT_EQ(op_types(tg), (std::map<std::string, int>{{"host_model", 1}}));
}

TEST(CoreML, MlProgramSpecWithoutItsWeights) {
  fs::path p = kData / "mlmodel/bisenet/bisenet_mlprogram_spec_no_weights.mlmodel";
  coreml_front::Model m = spec(p);
  EXPECT_EQ(m.spec_version, 6);
  EXPECT_EQ(m.kind, "mlProgram");
  EXPECT_EQ(m.program_version, 1);
  ASSERT_EQ(m.program.functions.size(), 1u);
  const MilFunction &f = m.program.functions[0];
  EXPECT_EQ(f.name, "main");
  EXPECT_EQ(f.opset, "CoreML5");
  ASSERT_EQ(f.inputs.size(), 1u);
  EXPECT_EQ(f.inputs[0].type.str(), "tensor<fp32, [1, 3, 256, 512]>");
  EXPECT_EQ(f.outputs, std::vector<std::string>{"output"});
  EXPECT_EQ(f.ops.size(), 546u);
  std::map<std::string, int> h = mil_histogram(f);
  EXPECT_EQ(h, (std::map<std::string, int>{{"const", 423},
                                           {"conv", 56},
                                           {"relu", 40},
                                           {"add", 11},
                                           {"mul", 3},
                                           {"cast", 2},
                                           {"sigmoid", 2},
                                           {"upsample_nearest_neighbor", 2},
                                           {"avg_pool", 1},
                                           {"batch_norm", 1},
                                           {"concat", 1},
                                           {"max_pool", 1},
                                           {"reduce_argmax", 1},
                                           {"reduce_mean", 1},
                                           {"upsample_bilinear", 1}}));
  EXPECT_EQ(blob_files(f), (std::map<std::string, int>{{"@model_path/weights/weight.bin", 113}}));

  Graph g = load_model(p, catalog());
  EXPECT_EQ(g.ops.size(), 123u); // the non-const operations
  EXPECT_EQ(shape(g, "input"), "[1,1,3,256,512]");
  EXPECT_EQ(g.outputs, std::vector<std::string>{"output"});
  // mapped through the "mil" front-end map when there is one, else kept as mil:<type>
  bool mil_map = catalog().front_end("mil", "conv") != nullptr;
  EXPECT_EQ(op_types(g).count(mil_map ? catalog().front_end("mil", "conv")->op : "mil:conv"), 1u);
}

TEST(CoreML, Packages) {
  fs::path stft = kData / "mlpackage/mobius-silero/silero-vad-stft-v6.0.0.mlpackage";
  ASSERT_TRUE(is_bundle(stft));
  BundleModel b = resolve_bundle(stft);
  EXPECT_EQ(b.format, "coreml");
  EXPECT_EQ(b.file.filename(), "model.mlmodel");
  EXPECT_EQ(b.weights.filename(), "weights");
  EXPECT_EQ(fs::file_size(b.weights / "weight.bin"), 132224u);
  coreml_front::Model m = spec(b.file);
  EXPECT_EQ(m.kind, "mlProgram");
  EXPECT_EQ(m.spec_version, 6);
  EXPECT_EQ(m.author, "Fluid Infernece + Silero Team");
  ASSERT_EQ(m.program.functions.size(), 1u);
  EXPECT_EQ(m.program.functions[0].ops.size(), 33u);
  EXPECT_EQ(blob_files(m.program.functions[0]),
            (std::map<std::string, int>{{"@model_path/weights/weight.bin", 1}}));
  EXPECT_EQ(mil_histogram(m.program.functions[0]), (std::map<std::string, int>{{"const", 21},
                                                                               {"add", 2},
                                                                               {"cast", 2},
                                                                               {"pow", 2},
                                                                               {"slice_by_index", 2},
                                                                               {"conv", 1},
                                                                               {"expand_dims", 1},
                                                                               {"pad", 1},
                                                                               {"sqrt", 1}}));
  Graph g = load_model(stft, catalog());
  EXPECT_EQ(g.inputs, std::vector<std::string>{"audio_input"});
  EXPECT_EQ(shape(g, "audio_input"), "[1,1,576,1,1]");
  EXPECT_EQ(g.outputs, std::vector<std::string>{"stft_output"});
  EXPECT_EQ(g.ops.size(), 12u);

  fs::path sample = kData / "mlpackage/rules_apple/sample.mlpackage";
  BundleModel s = resolve_bundle(sample);
  EXPECT_EQ(s.file.filename(), "sample.mlmodel"); // the root item is not model.mlmodel
  Graph sg = load_model(sample, catalog());
  EXPECT_EQ(op_types(sg), (std::map<std::string, int>{{"host_model", 1}}));
}

TEST(CoreML, CompiledBundles) {
  // NeuralNetwork compiled to Espresso: one inner_product
  fs::path nn = kData / "mlmodelc/s4tf/s4tf_model_retrained.mlmodelc";
  EXPECT_EQ(resolve_bundle(nn).format, "espresso");
  Graph g = load_model(nn, catalog());
  EXPECT_EQ(op_types(g), (std::map<std::string, int>{{"linear", 1}}));
  EXPECT_EQ(g.inputs, std::vector<std::string>{"dense_input"});
  EXPECT_EQ(g.outputs, std::vector<std::string>{"output"});

  // mlProgram bundles: model.mil, read by the "mil" front-end when one is registered
  struct Compiled {
    const char *path;
    int64_t spec;
    std::vector<std::string> inputs, outputs;
  };
  const std::vector<Compiled> compiled = {
      {"coremltools/add_model.mlmodelc",
       7,
       {"x:Float16[1, 10]", "y:Float16[1, 10]"},
       {"var_3:Float16[1, 10]"}},
      {"fluidaudio/Argmax.mlmodelc", 7, {"input:Float16[1025]"}, {"var_4:Int32[1]"}},
      {"fluidaudio/TransposeEncoder.mlmodelc", 7, {"x:Float16[1, 1, 1]"}, {"var_4:Float16[]"}},
      {"mobius-silero/silero-vad-unified-256ms-v6.0.0.mlmodelc",
       6,
       {"audio_input:Float32[1, 4160]", "hidden_state:Float32[1, 128]", "cell_state:Float32[1, 128]"},
       {"vad_output:Float32[1, 1, 1]", "new_hidden_state:Float32[1, 128]", "new_cell_state:Float32[1, 128]"}},
      {"mobius-silero/unified_256ms_int8.mlmodelc",
       7,
       {"audio_input:Float32[1, 4160]", "hidden_state:Float32[1, 128]", "cell_state:Float32[1, 128]"},
       {"vad_output:Float32[1, 1, 1]", "new_hidden_state:Float32[1, 128]", "new_cell_state:Float32[1, 128]"}},
  };
  bool mil = false;
  for (const FrontEnd &f : front_ends())
    mil = mil || std::string(f.format) == "mil";
  for (const Compiled &c : compiled) {
    SCOPED_TRACE(c.path);
    fs::path dir = kData / "mlmodelc" / c.path;
    BundleModel b = resolve_bundle(dir);
    EXPECT_EQ(b.format, "mil");
    EXPECT_EQ(b.file.filename(), "model.mil");
    BundleMetadata meta = read_bundle_metadata(dir);
    EXPECT_EQ(meta.model_type, "MLModelType_mlProgram");
    EXPECT_EQ(meta.spec_version, c.spec);
    EXPECT_EQ(meta.inputs, c.inputs);
    EXPECT_EQ(meta.outputs, c.outputs);
    if (!mil) {
      EXPECT_EQ(code_of([&] { load_model(dir, catalog()); }), "ANEC-MODEL-001");
    }
  }
}

TEST(CoreML, MalformedFilesGiveReasonCodes) {
  std::string tiny = read_text_file(kData / "mlmodel/coremltools/TinyDrawingEmbedding.mlmodel", 1 << 20);
  std::string message;
  fs::path truncated = scratch("truncated.mlmodel");
  write(truncated, tiny.substr(0, tiny.size() / 2));
  EXPECT_EQ(code_of([&] { load_model(truncated, catalog()); }, &message), "ANEC-COREML-001");
  EXPECT_NE(message.find("first bytes 08 01"), std::string::npos) << message;

  fs::path json = scratch("json.mlmodel");
  write(json, "{\"format\": \"anec-graph\"}");
  EXPECT_EQ(code_of([&] { load_model(json, catalog()); }, &message), "ANEC-COREML-001");
  EXPECT_NE(message.find("(\"{\"format"), std::string::npos) << message;

  fs::path empty = scratch("empty.mlmodel");
  write(empty, "");
  EXPECT_EQ(code_of([&] { load_model(empty, catalog()); }), "ANEC-COREML-001");

  fs::path version_only = scratch("version.mlmodel"); // specificationVersion = 4, no model type
  write(version_only, std::string("\x08\x04", 2));
  EXPECT_EQ(code_of([&] { load_model(version_only, catalog()); }), "ANEC-COREML-002");

  // A feature of rank 17: past the reader's cap.
  std::string array = "\x0a\x11" + std::string(17, '\x01');                      // ArrayType.shape, packed
  std::string type = "\x2a" + std::string(1, char(array.size())) + array;        // FeatureType.multiArrayType
  std::string feature = std::string("\x0a\x01x\x1a") + char(type.size()) + type; // Feature name, type
  std::string description = "\x0a" + std::string(1, char(feature.size())) + feature;
  fs::path deep = scratch("rank17.mlmodel");
  write(deep, std::string("\x08\x04\x12", 3) + char(description.size()) + description +
                  std::string("\xa2\x1f\x00", 3));
  EXPECT_EQ(code_of([&] { load_model(deep, catalog()); }), "ANEC-COREML-003");

  // Specification 10 is read with a warning (ANEC-COREML-006).
  fs::path newer = scratch("spec10.mlmodel");
  write(newer, std::string("\x08\x0a\xa2\x1f\x00", 5));
  Graph g = load_model(newer, catalog());
  ASSERT_FALSE(g.notes.empty());
  EXPECT_EQ(g.notes[0].rfind("ANEC-COREML-006 warning", 0), 0u) << g.notes[0];

  // Every prefix of a real file is refused with a reason, never a crash.
  for (size_t n = 1; n < 400; n += 7) {
    fs::path cut = scratch("cut.mlmodel");
    write(cut, tiny.substr(0, n));
    std::string code = code_of([&] { load_model(cut, catalog()); });
    EXPECT_TRUE(code == "ANEC-COREML-001" || code == "ANEC-COREML-002" || code == "none" ||
                code.rfind("ANEC-GRAPH", 0) == 0)
        << n << ": " << code;
  }
}

TEST(CoreML, BundlePathsStayInside) {
  fs::path pkg = scratch("escape.mlpackage");
  fs::remove_all(pkg);
  write(pkg / "Manifest.json", R"({"fileFormatVersion": "1.0.0", "rootModelIdentifier": "A",
      "itemInfoEntries": {"A": {"name": "model.mlmodel", "path": "../../../outside.mlmodel"}}})");
  EXPECT_EQ(code_of([&] { load_model(pkg, catalog()); }), "ANEC-COREML-004");

  write(pkg / "Manifest.json", R"({"rootModelIdentifier": "A",
      "itemInfoEntries": {"A": {"name": "model.mlmodel", "path": "/etc/passwd"}}})");
  EXPECT_EQ(code_of([&] { load_model(pkg, catalog()); }), "ANEC-COREML-004");

  write(pkg / "Manifest.json", R"({"rootModelIdentifier": "B", "itemInfoEntries": {}})");
  EXPECT_EQ(code_of([&] { load_model(pkg, catalog()); }), "ANEC-COREML-005");

  fs::remove(pkg / "Manifest.json");
  EXPECT_EQ(code_of([&] { load_model(pkg, catalog()); }), "ANEC-COREML-005");

  fs::path linked = scratch("linked.mlmodelc");
  fs::remove_all(linked);
  fs::create_directories(linked);
  fs::create_symlink("/etc/hostname", linked / "model.espresso.net");
  EXPECT_EQ(code_of([&] { load_model(linked, catalog()); }), "ANEC-COREML-004");
  // A link out to nothing is refused as well (weakly_canonical stops at it, so it counted as inside
  // and then as missing: the answer told whether the file outside exists).
  fs::remove(linked / "model.espresso.net");
  fs::create_symlink("/nonexistent-anec-test/model.espresso.net", linked / "model.espresso.net");
  EXPECT_EQ(code_of([&] { load_model(linked, catalog()); }), "ANEC-COREML-004");

  fs::path none = scratch("none.mlmodelc");
  fs::create_directories(none);
  EXPECT_EQ(code_of([&] { load_model(none, catalog()); }), "ANEC-COREML-005");
}

TEST(CoreML, EveryLayerTypeIsMappedOrHasAReason) {
  // The NeuralNetworkLayer fields of the reference schema, each mapped or listed as unmapped.
  std::string proto = read_text_file(kFormat / "NeuralNetwork.proto", 1 << 22);
  size_t begin = proto.find("message NeuralNetworkLayer {");
  size_t end = proto.find("\n}", begin);
  ASSERT_NE(begin, std::string::npos);
  std::string body = proto.substr(begin, end - begin);
  size_t types = 0;
  for (size_t at = 0; (at = body.find("LayerParams ", at)) != std::string::npos;) {
    size_t name_begin = at + 12, name_end = body.find(' ', name_begin);
    std::string name = body.substr(name_begin, name_end - name_begin);
    at = name_end;
    ++types;
    bool mapped = catalog().front_end("coreml", name) != nullptr;
    for (const char *sub : {"/MAX", "/ReLU", "/SQRT", "/SUM"})
      mapped = mapped || catalog().front_end("coreml", name + sub) != nullptr;
    EXPECT_TRUE(mapped || catalog().unmapped_reason("coreml", name)) << name;
  }
  EXPECT_GT(types, 150u);
}

TEST(CoreML, CheckAndEstimateThroughTheTool) {
  const std::string tool = ANEC_TEST_ANEC_TOOL, tables = ANEC_TEST_TABLES_DIR;
  auto run = [&](const std::string &args) { return anec::test::run_tool(tool, tables, args); };
  test::ToolRun r =
      run("check " + (kData / "mlmodel/coremltools/TinyDrawingEmbedding.mlmodel").string() + " --target h16");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("native, 0 reject(s)"), std::string::npos) << r.out;
  r = run("check " + (kData / "mlmodel/hollance/NeuralMcNeuralNet.mlmodel").string() + " --target h16");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("coreml:custom/Swish"), std::string::npos);
  r = run("estimate " + (kData / "mlpackage/rules_apple/sample.mlpackage").string() + " --target all");
  EXPECT_EQ(r.status, 0) << r.err;
  // corpus mode: a folder of bundles, each bundle one model
  r = run("check " + (kData / "mlpackage/mobius-silero").string() + " " +
          (kData / "mlpackage/rules_apple").string() + " --target h16");
  EXPECT_NE(r.out.find("2 file(s)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Manifest.json"), std::string::npos) << r.out;
  r = run("estimate " + (kData / "mlmodel").string() + "/s4tf --target h13");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2 file(s): 2 without a reject"), std::string::npos) << r.out;
  r = run("check " + (kData / "mlmodel/bisenet/Manifest.json").string() + " --target h16");
  EXPECT_EQ(r.status, 2);
}

// The evaluator reads a package's weights from its weight.bin through the spec's BLOBFILE values:
// nothing but the input is seeded, and the output is computed.
TEST(CoreML, APackageEvaluatesWithItsOwnWeights) {
  fs::path stft = kData / "mlpackage/mobius-silero/silero-vad-stft-v6.0.0.mlpackage";
  Graph g = load_model(stft, catalog(), {}, true);
  EvalOptions options;
  options.gemm = Gemm::reference;
  EvalResult r = evaluate(g, catalog(), anec::test::numerics(), options);
  EXPECT_EQ(r.report.seeded, std::vector<std::string>{"audio_input (input)"});
  EXPECT_TRUE(r.report.unevaluated.empty());
  ASSERT_EQ(r.outputs.count("stft_output"), 1u);
  for (float v : r.outputs.at("stft_output").v)
    ASSERT_TRUE(std::isfinite(v));
}

// A spec whose input name is not UTF-8: protobuf's parse fails, and the user sees anec's reason code
// alone, not protobuf's log line before it.
TEST(CoreML, AStringThatIsNotUtf8IsOneErrorLine) {
  fs::path bad = fs::temp_directory_path() / ("anec-coreml-utf8-" + std::to_string(getpid()) + ".mlmodel");
  std::ofstream(bad, std::ios::binary) << std::string("\x12\x06\x0a\x04\x0a\x02\xff\xfe", 8);
  test::ToolRun r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR,
                                         "check " + bad.string() + " --target h16");
  fs::remove(bad);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.err.starts_with("anec: error: ANEC-COREML-001")) << r.err;
  EXPECT_EQ(r.err.find("libprotobuf"), std::string::npos) << r.err;
}
