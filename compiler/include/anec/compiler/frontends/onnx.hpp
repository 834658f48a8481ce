// The ONNX front-end (the reader; libonnx and protobuf are in a module, onnx_model.hpp).
#pragma once
#include "anec/compiler/ir/budget.hpp"
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace anec::compiler {

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
// `folder` is the model file's folder: an initializer's external data is found there and only there
// (ANEC-ONNX-006 for a location that is absolute, climbs out with "..", or resolves outside it); a model
// read from memory (no folder) has its external data refused. ANEC-ONNX-007 for a stored tensor whose
// data does not match its shape (never read in part, never replaced by seeded values), ANEC-ONNX-008 for
// subgraphs nested deeper than protobuf parses, ANEC-ONNX-009 when the ONNX library crashes on the model
// (it runs in a child process). ANEC-MEM-001 before parsing, when the nodes the file holds (counted on
// its wire format) and its size plan more memory than `max_memory`.
Graph read_onnx(std::string_view bytes, const std::string &source, const OpCatalog &catalog,
                const DimBindings &dims = {}, bool keep_values = false,
                const std::filesystem::path &folder = {}, double max_memory = kDefaultMaxMemory);

} // namespace anec::compiler
