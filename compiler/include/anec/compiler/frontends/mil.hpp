// The MIL front-end: a MIL program (the text coremltools writes as a compiled model's model.mil, and
// the direct-path projects compile on the engine) as a graph. Two layers, so a reader of another
// container (a Core ML spec's mlProgram) reuses the second:
//  - parse_mil: the text as a program (functions, typed inputs, operations with their typed outputs,
//    named inputs and attributes, the returned names), nothing interpreted;
//  - mil_to_graph: one function of a parsed program as a graph, its operations mapped through the
//    front-end map (tables/schema/frontend/mil.toml), its constants as weights.
// Errors: ANEC-MIL-001 a character the text cannot hold, 002 a token where another is expected,
// 003 a literal out of range or malformed, 004 a limit passed (nesting, size), 005 a program with no
// function, 006 a name used before it is defined or defined twice, 007 a BLOBFILE path that leaves the
// model's folder, 008 a weight file that is there but does not hold the blob the text names; each
// with line:column and a short quoted excerpt.
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace anec::compiler {

// Where in the text: line and column (1-based) and the byte offset (the text is at most
// kMilMaxBytes long).
struct MilPos {
  uint32_t line = 0, column = 0, offset = 0;
};

// A type: "fp16", "int32", "string", "bool", ... for a scalar; a tensor (its element type, and its
// dimensions, -1 with a symbol where flexible); "dict", "list", "tuple", "state" with their
// arguments kept as text.
struct MilType {
  std::string dtype;                // the element type ("fp16"), or the scalar type
  bool tensor = false;              // tensor<...>
  std::vector<int64_t> dims;        // tensor dimensions, -1 where symbolic
  std::vector<std::string> symbols; // a symbolic dimension's name ("" where fixed)
  bool unknown_rank = false;        // tensor<fp16, *> or a list/dict: no dimensions given
  std::string str() const;          // "tensor<fp16, [1, 4, 1, 2]>"
  int64_t elements() const;         // 0 when unknown or symbolic
};

// A value as written: a reference to a name, a literal (number, string, bool), a typed literal
// (`fp16(0x1p-3)`, `tensor<int32, [2]>([1, 1])`: `type` and one item), a tuple or list of values,
// a BLOBFILE (path and offset).
struct MilValue {
  enum class Kind { Name, Int, Float, Bool, String, Typed, List, Blob };
  Kind kind = Kind::Int;
  MilPos pos;
  uint32_t end = 0;            // the byte offset just past it in the text
  std::string text;            // Name, String; Blob: the path
  int64_t i = 0;               // Int (Bool: 0 or 1); Blob: the offset
  double f = 0;                // Float
  std::optional<MilType> type; // Typed
  std::vector<MilValue> items; // Typed: one item; List: the items
  // The values of an Int/Float/Bool or a (typed) list of them, flattened; false when another kind.
  bool numbers(std::vector<double> &out) const;
  const MilValue &unwrapped() const; // a Typed value's item, else itself
};

struct MilNamed {
  std::string name;
  MilValue value;
};

struct MilVar {
  std::string name;
  MilType type;
};

struct MilOp {
  std::string type;                 // "conv", "const", "constexpr_affine_dequantize"
  std::vector<MilVar> outputs;      // typed names
  std::vector<MilNamed> inputs;     // op(x = a, weight = W)
  std::vector<MilNamed> attributes; // [name = string("y"), val = ...]
  MilPos pos;
  uint32_t end = 0;                                   // the byte offset just past its ';'
  std::string name() const;                           // the `name` attribute, else the first output
  const MilValue *input(std::string_view name) const; // nullptr when absent
  const MilValue *attribute(std::string_view name) const;
};

struct MilFunction {
  std::string name, opset; // "main", "ios18"
  std::vector<MilVar> inputs;
  std::vector<MilNamed> attributes; // [FlexibleShapeInformation = ...] after the signature
  std::vector<MilOp> ops;
  std::vector<std::string> outputs;
  MilPos pos;
};

struct MilProgram {
  std::string version;              // "1.3"
  std::vector<MilNamed> attributes; // [buildInfo = dict<...>(...)]
  std::vector<MilFunction> functions;
};

// Caps: the text's size (64 MiB), nesting of values and types (64), items in one literal (1 << 24),
// operations in a function (1 << 22), functions (4096).
inline constexpr uint64_t kMilMaxBytes = 64ull << 20;

// Parses MIL text (ANEC-MIL-001..004 at the offending line:column).
MilProgram parse_mil(std::string_view text, const std::string &source);

// How mil_to_graph finds the weights: `model_path` is the folder `@model_path` names (a bare .mil:
// its own folder; a .mlmodelc's model.mil: the bundle). Empty: no folder (the bytes came from
// memory); every weight is then "stored size known from its type, bytes absent".
struct MilContext {
  std::filesystem::path model_path;
  std::string function = "main"; // the function read; another is listed in the notes
  // For the evaluator: constants' values read (inline literals, BLOBFILE blobs, the compression ops
  // expanded), a conv, deconv or linear layer's as Graph::values "<op>/weight" and "<op>/bias", a
  // broadcasting op's constant operands as constant input tensors with their values.
  bool keep_values = false;
};

// One function of a parsed program as a graph (ANEC-MIL-005..008). Its inputs' shapes are its
// typed inputs' (rank 4 NCHW -> [N,1,C,H,W], rank 3 -> N,C,W, rank 2 -> N,C, rank 1 -> C; more than
// five leading axes fold into N), flexible dimensions are bound by `dims`, every other tensor's
// shape and type is the one the text gives it (symbols bound there too). Operations map through the
// front-end map "mil"; an unmapped one stays as "mil:<op>" with a note. `const` and the
// compression ops (constexpr_*) are weights: an op reading one carries weight_elements and, where
// the stored form is smaller than fp16 (int8, n-bit palettes, sparse), weight_bytes.
Graph mil_to_graph(const MilProgram &program, const std::string &source, const OpCatalog &catalog,
                   const DimBindings &dims, const MilContext &context = {});

// A BLOBFILE path relative to the model's folder: "@model_path/weights/weight.bin" as
// "weights/weight.bin"; a path without the prefix as written.
std::filesystem::path mil_blob_relative(const std::string &path);

// The file a BLOBFILE path ("@model_path/weights/weight.bin", or relative) names under `model_path`,
// symbolic links followed; nullopt when there is no folder or no such file. ANEC-MIL-007 (`where`
// prefixing the message) for a path that is absolute, climbs out with "..", or resolves outside.
std::optional<std::filesystem::path> mil_blob_file(const std::filesystem::path &model_path,
                                                   const std::string &path, const std::string &where);

// parse_mil then mil_to_graph.
Graph read_mil(std::string_view text, const std::string &source, const OpCatalog &catalog,
               const DimBindings &dims = {}, const MilContext &context = {});

} // namespace anec::compiler
