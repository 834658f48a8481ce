// Model files to graphs, by front-end: the anec-graph JSON format (.json), the engine network plist
// (.plist), read through the support adapters, and ONNX (.onnx). ANEC-MODEL-001 for a file no front-end reads.
#pragma once
#include "anec/compiler/graph.hpp"

#include <filesystem>
#include <string_view>
#include <map>

namespace anec::compiler {

// The engine network plist (the ANECompiler input, as tinygrad's net.plist): the first network of
// `Networks`, its `Inputs` (BatchSize, InputChannels, InputHeight, InputWidth, InputType), its
// `Units` in order (Bottom, Type, OutputChannels, Params) and its `Outputs` (name@output -> Bottom).
// Unit types map to catalogue operations (Conv -> conv or deconv, GOC -> goc, Neuron -> its
// activation, ElementWise -> add/mul/..., Pool -> max_pool/avg_pool, Concat, Softmax, Reshape);
// any other type is kept as "plist:<Type>" so the checker reports it unmapped.
// ANEC-MODEL-002 for a plist that is not a network description.
Graph read_network_plist(const Doc &doc, const std::string &source);

// An ONNX model (protobuf bytes): checked by the ONNX checker, shapes from ONNX shape inference
// (rank 4 NCHW -> [N,1,C,H,W], 3 N,C,L -> width L, 2 N,F -> channels F, 5 NCDHW), constant
// subgraphs folded, nodes mapped to catalogue operations (Conv, Gemm/MatMul, elementwise,
// activations, pooling, Softmax, norms, Reshape, Transpose, Concat, Slice, Pad, Resize, ...); an
// unmapped node stays in the graph as "onnx:<OpType>" and the checker rejects it. Errors:
// ANEC-ONNX-001 not a model, 002 the checker rejects it, 003 shape inference fails.
// `dims` binds symbolic input dimensions (ONNX dim_param names, anec-graph symbol strings) to values
// before shape inference; ANEC-MODEL-003 for a name no input dimension carries.
using DimBindings = std::map<std::string, int64_t>;
Graph read_onnx(std::string_view bytes, const std::string &source, const DimBindings &dims = {});

Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog, const DimBindings &dims = {});

} // namespace anec::compiler
