// Model files to graphs, by front-end: the anec-graph JSON format (.json), the engine network plist
// (.plist), read through the support adapters, and ONNX (.onnx). ANEC-MODEL-001 for a file no front-end reads.
#pragma once
#include "anec/compiler/check.hpp"
#include "anec/compiler/cost.hpp"
#include "anec/compiler/graph.hpp"

#include <filesystem>
#include <string_view>
#include <map>

namespace anec::compiler {

// The engine network plist (the ANECompiler input, as tinygrad's net.plist): the first network of
// `Networks`, its `Inputs` (BatchSize, InputChannels, InputHeight, InputWidth, InputType), its
// `Units` in order (Bottom, Type, OutputChannels, Params) and its `Outputs` (name@output -> Bottom).
// Unit types map to catalogue operations through the front-end map (tables/schema/frontend/
// plist.toml: Conv -> conv or deconv, Neuron/Exp2 -> exp2, ElementWise/Add -> add, InputView,
// Broadcast, ...); any other type is kept as "plist:<Type>" so the checker reports it unmapped.
// A port's InputInterleave is kept on its tensor. ANEC-MODEL-002 for a plist that is not a
// network description.
Graph read_network_plist(const Doc &doc, const std::string &source, const OpCatalog &catalog);

// An ONNX model (protobuf bytes): checked by the ONNX checker (a model newer than the library's
// checker is read without it, with an ANEC-ONNX-004 note), shapes from ONNX shape inference with
// data propagation (rank 4 NCHW -> [N,1,C,H,W], 3 N,C,L -> width L, 2 N,F -> channels F, 5 NCDHW),
// provably constant nodes folded (every input constant, or the shape of a tensor whose dimensions are
// all known), and the other nodes mapped through the front-end map (tables/schema/frontend/onnx.toml);
// an unmapped node stays as "onnx:<OpType>" and the checker rejects it. Integer arithmetic on
// symbolic dimensions stays as "shape_math", an If with a runtime condition as "cond" after both
// branches' operations, a Loop or Scan as "while_loop" before its body's. Unnamed input dimensions
// get the symbol "INPUT:AXIS". Errors: ANEC-ONNX-001 not a model, 002 the checker rejects it, 003
// shape inference fails.
// `dims` binds symbolic input dimensions before shape inference: a name (an ONNX dim_param, an
// anec-graph symbol) or "INPUT:AXIS" (the axis counted in that input's own shape); ANEC-MODEL-003
// for a name no input dimension carries, an axis the input lacks, or a fixed axis bound otherwise.
// `keep_values` (for the evaluator: anec eval, anec tune) copies the initializers' values whole and
// records the weights of each conv, deconv (ConvTranspose) and linear (Gemm, MatMul with a constant
// right operand) whose operands map exactly onto the evaluator's layout as Graph::values
// "<op>/weight" and "<op>/bias"; without it only small constants' values are read (for folding),
// which keeps check and estimate lean on large models.
using DimBindings = std::map<std::string, int64_t>;
Graph read_onnx(std::string_view bytes, const std::string &source, const OpCatalog &catalog,
                const DimBindings &dims = {}, bool keep_values = false);

// `keep_values`: as read_onnx's, for an .onnx file (the other front-ends read the values they are given).
Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog, const DimBindings &dims = {},
                 bool keep_values = false);
// The same from memory (the Python module's bytes): `format` is the front-end, "json", "plist" or
// "onnx" (ANEC-MODEL-001 for another), `source` names the model in messages.
Graph read_model(std::string_view bytes, std::string_view format, const std::string &source,
                 const OpCatalog &catalog, const DimBindings &dims = {}, bool keep_values = false);

// A model checked and estimated on targets, keeping the verdicts, counts and totals only
// (Detail::Summary; a null calibration gives the analytic model). An anec-graph file is checked and
// estimated while it is read, op by op (GraphReader), in memory that grows with its tensors, not its
// ops or its size; any other file, or one that reader cannot take, is read whole with load_model,
// whose errors it reports.
struct ModelSummary {
  std::vector<CheckResult> checks;
  std::vector<Estimate> estimates; // in the order of the targets
  bool streamed = false;           // read op by op, not whole
};
ModelSummary summarize_model(const std::filesystem::path &path, const OpCatalog &catalog,
                             const DimBindings &dims, const std::vector<const hal::Target *> &targets,
                             const Calibration *calibration, const std::string &chip = "");

} // namespace anec::compiler
