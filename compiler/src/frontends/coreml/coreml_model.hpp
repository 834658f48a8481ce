// A Core ML model (.mlmodel, the protobuf of Model.proto) as the front-end reads it, and the interface
// of the module that makes it (anec_coreml_backend.so, coreml_backend.cpp): the only code that uses
// protobuf and the classes protoc generates from anec's schema subset (coreml.proto), loaded the first
// time a Core ML model is read (anec/support/plugin.hpp), so that a command given another kind of
// model does not load protobuf.
//
// The module validates and parses the bytes and copies what the front-end reads into these records:
// the model's kind (the name of the Model.Type field that is set), its inputs and outputs, the
// NeuralNetwork layers (type, sub-type, the scalar parameters, the stored size of their weights),
// the models of a pipeline, and an mlProgram's program (mil.hpp's records). What the model means is the
// front-end's (coreml_reader.cpp).
#pragma once
#include "anec/compiler/frontends/mil.hpp"
#include "anec/support/plugin.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace anec::compiler::coreml_front {

// Raised whenever a record or a function below changes.
inline constexpr uint32_t kVersion = 3;
inline constexpr const char *kModule = "anec_coreml_backend";
inline constexpr const char *kEntry = "anec_coreml_backend_entry";

// Caps the module checks before copying (ANEC-COREML-003 past them).
inline constexpr size_t kMaxLayers = 1u << 20, kMaxPipelineDepth = 16, kMaxRank = 16;
// An mlProgram's immediate values: elements in one value, and in the whole program (as the MIL text
// reader's 1 << 24 items in one literal), value nesting.
inline constexpr size_t kMaxImmediate = 1u << 24, kMaxProgramImmediates = 1u << 25, kMaxValueDepth = 64;

// One input, output or state of a model (FeatureDescription).
struct Feature {
  std::string name;
  // "multiArray", "image", "double", "int64", "string", "dictionary", "sequence", "state", "" (none)
  std::string kind;
  std::string dtype;          // "fp32", "fp16", "fp64", "int32", "int8" for an array; "" otherwise
  std::vector<int64_t> shape; // an array's shape as declared (may be empty: flexible); an image's
                              // [1, C, H, W] (C 1 for grayscale, 3 for colour)
  bool flexible = false;      // an array's shape range or enumerated shapes, an image's size range
  bool optional = false;
};

// The stored weights of a layer, summed over its WeightParams.
struct Weights {
  int64_t elements = 0; // values held
  int64_t bytes = 0;    // bytes stored
  std::string storage;  // "fp32", "fp16", "int8", "quantized<N>", "mixed", "" (none)
  bool updatable = false;
  // When values are asked for: the layer's own float weights ("weights", "bias": fp32, fp16 or raw
  // fp32 values, in the schema's layout), for the evaluator; quantized ones are not expanded.
  std::map<std::string, std::vector<float>> values;
};

// One NeuralNetwork layer.
struct Layer {
  std::string name;
  std::string type;    // the NeuralNetworkLayer field set: "convolution", "innerProduct", ...
  std::string subtype; // activation kind ("ReLU"), pooling or unary or reduce mode ("MAX", "SQRT")
  std::vector<std::string> inputs, outputs;
  // Scalar and repeated integer / float / bool parameters by field name ("kernelSize" -> {3, 3}).
  std::map<std::string, std::vector<double>> params;
  std::string class_name; // a custom layer's className
  Weights weights;
  bool updatable = false;
  int64_t params_bytes = 0; // the size of the layer's parameters message
};

struct Model {
  int32_t spec_version = 0;
  std::string kind; // the Model.Type field set: "neuralNetwork", "mlProgram", "pipeline", ...
  std::vector<Feature> inputs, outputs, states, training_inputs;
  std::string author, license, short_description, predicted_feature;
  bool updatable = false;
  int64_t kind_bytes = 0; // the size of the kind's message (for a kind anec does not read further)
  // NeuralNetwork kinds
  std::vector<Layer> layers;
  std::vector<std::string> preprocessing; // "scaler:input", "meanImage:input"
  int32_t array_shape_mapping = 0;        // 0 RANK5_ARRAY_MAPPING, 1 EXACT_ARRAY_MAPPING
  // pipelines
  std::vector<Model> models;
  std::vector<std::string> model_names;
  // tree ensembles
  int64_t tree_nodes = 0;
  // mlProgram: the program as the MIL text reader would give it (mil.hpp), so that mil_to_graph reads
  // both alike; positions are 0:0 (a protobuf has no lines).
  int64_t program_version = 0;
  MilProgram program;
  size_t nested_ops = 0; // operations in nested blocks (cond, while_loop), not copied
};

struct Api {
  plugin::Header header;
  // Validates and parses `bytes` (a Model protobuf). Errors: ANEC-COREML-001 the schema cannot parse
  // the bytes (with an excerpt), ANEC-COREML-002 no model kind set, ANEC-COREML-003 past a cap.
  // With `values`, each layer's float weights are kept (Weights::values).
  Model (*read)(std::string_view bytes, const std::string &source, bool values);
};

// The module's table, loaded on first use (ANEC-PLUGIN-* when it cannot be).
const Api &api();

} // namespace anec::compiler::coreml_front
