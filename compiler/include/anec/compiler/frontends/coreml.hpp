// The Core ML front-end: .mlmodel files (the protobuf of Model.proto; protobuf is in a module,
// compiler/src/frontends/coreml/coreml_model.hpp) and the bundles that hold them (.mlpackage,
// .mlmodelc).
//
// The NeuralNetwork kinds (neuralNetwork, neuralNetworkClassifier, neuralNetworkRegressor) become a
// graph whose inputs and outputs are the model description's (a multi-array of rank 1 as channels,
// rank 3 as C,H,W, other ranks as ONNX's layout; an image as [1,C,H,W]) and whose operations are the
// layers mapped through the front-end map (tables/schema/frontend/coreml.toml) by "type/subtype"
// ("activation/ReLU", "pooling/MAX") or "type"; a layer type not mapped stays as
// "coreml:<type>[/<subtype>]" and the checker reports it unmapped. Each op carries its weights'
// stored size (weight_elements, weight_bytes). A pipeline is read model by model into one graph. A
// model with no neural network (tree ensembles, GLMs, text classifiers, ...) becomes one host
// operation ("model:<kind>" in the map): Core ML runs it on the CPU. An mlProgram's program is read
// as its MIL text would be (mil.hpp's records, then mil_to_graph): shapes from its declared types,
// const and compression ops as weights, BLOBFILE references resolved under `model_path` (a
// .mlpackage's Data/com.apple.CoreML folder; "" for a bare .mlmodel: sizes from the types), unmapped
// ops as "mil:<type>" with a note.
// Errors: ANEC-COREML-001 the bytes do not parse as a Model, 002 no model type set, 003 past a cap;
// an mlProgram's ANEC-MIL-005..008 as mil_to_graph's.
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

namespace anec::compiler {

// Binds `dims` and infers the shapes itself (a NeuralNetwork's through the catalogue, an mlProgram's
// from its types). With `keep_values` an mlProgram's constants carry their values for the evaluator
// (MilContext::keep_values).
Graph read_coreml(std::string_view bytes, const std::string &source, const OpCatalog &catalog,
                  const DimBindings &dims = {}, const std::filesystem::path &model_path = {},
                  bool keep_values = false);

// The folders that are one model: Core ML bundles.
inline const std::set<std::string> kBundleExtensions = {".mlpackage", ".mlmodelc"};
// A bundle: a folder whose name ends in one of kBundleExtensions.
bool is_bundle(const std::filesystem::path &path);

// What a bundle holds, resolved inside it. A path a manifest names that leaves the bundle is an
// error (ANEC-COREML-004), as is a bundle with no model in it (ANEC-COREML-005).
struct BundleModel {
  std::filesystem::path file;    // the file to read: model.mlmodel, model.mil or model.espresso.net
  std::string format;            // "coreml", "mil", "espresso"
  std::filesystem::path weights; // the weights folder or file, "" when there is none
};
BundleModel resolve_bundle(const std::filesystem::path &bundle);

// A compiled NeuralNetwork (.mlmodelc's model.espresso.net, JSON) with its shapes (model.espresso.shape)
// and, when there is one, metadata.json for the inputs and outputs. Layer types are mapped through
// the coreml map as "espresso:<type>"; others stay "espresso:<type>".
Graph read_espresso(const std::filesystem::path &bundle, const OpCatalog &catalog);

// The inputs and outputs a compiled bundle's metadata.json lists ("name:dtype[shape]" each), with
// its modelType name and specificationVersion; empty when the bundle has none.
struct BundleMetadata {
  std::string model_type;
  int64_t spec_version = 0;
  std::vector<std::string> inputs, outputs;
};
BundleMetadata read_bundle_metadata(const std::filesystem::path &bundle);

} // namespace anec::compiler
