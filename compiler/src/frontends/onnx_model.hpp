// An ONNX model as the front-end reads it, and the interface of the module that makes it
// (anec_onnx_backend.so, compiler/src/frontends/onnx_backend.cpp): the only code that uses libonnx and
// protobuf, loaded the first time an .onnx file is read (anec/support/plugin.hpp), so that a
// command given another kind of model does not load those libraries.
//
// The module parses the protobuf, binds --dim values, runs the ONNX checker and shape inference,
// and copies the result into these records (the fields onnx.proto gives them, those the front-end
// reads). What the model means, shapes, folding and the graph, is the front-end's (onnx_reader.hpp).
#pragma once
#include "anec/support/plugin.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace anec::compiler::onnx_front {

// Raised whenever a record or a function below changes.
inline constexpr uint32_t kVersion = 5;
inline constexpr const char *kModule = "anec_onnx_backend";
inline constexpr const char *kEntry = "anec_onnx_backend_entry";

// TensorProto.DataType (onnx.proto), the values the front-end tells apart; the module checks them
// against the library's.
inline constexpr int kFloat = 1, kUint8 = 2, kInt8 = 3, kInt16 = 5, kInt32 = 6, kInt64 = 7, kBool = 9,
                     kFloat16 = 10, kDouble = 11, kBfloat16 = 16;

// The values of a tensor are copied only when it holds at most this many elements.
inline constexpr size_t kMaxValues = 4096;

struct Dim {
  std::optional<int64_t> value; // dim_value
  std::string param;            // dim_param
};

struct ValueInfo {
  std::string name;
  bool tensor = false; // the type is a tensor type
  int elem_type = 0;
  bool has_shape = false;
  std::vector<Dim> dims;
};

struct TensorData {
  std::string name;
  int data_type = 0;
  std::vector<int64_t> dims;
  // The elements, for a tensor of at most kMaxValues elements of an integer, bool, float or double
  // type stored in the file (not external data); nullopt otherwise.
  std::optional<std::vector<double>> values;
  // Every element as float, of any size, for a tensor of an integer, bool, float, float16, bfloat16
  // or double type stored in the file, when `read` is asked for all values; empty otherwise.
  std::vector<float> all;
};

struct Graph;

struct Attribute {
  std::string name;
  std::optional<int64_t> i;
  std::optional<float> f;
  std::optional<std::string> s;
  std::vector<int64_t> ints;
  std::optional<TensorData> t;
  std::unique_ptr<Graph> g;
  std::vector<Graph> graphs;
};

struct Node {
  std::string name, op_type;
  std::string domain;                       // "" for the default domain (also when the file says "ai.onnx")
  std::vector<std::string> inputs, outputs; // "" for an omitted optional input or output
  std::vector<Attribute> attributes;
};

struct Graph {
  std::vector<ValueInfo> inputs, outputs, value_info;
  std::vector<TensorData> initializers;
  std::vector<Node> nodes;
};

struct Model {
  Graph graph;
  // ANEC-ONNX-004 warnings: read without the checker (a model newer than the library, or of IR
  // version 1 or 2 with opset imports), inference stopped (at an operator whose output is no tensor).
  std::vector<std::string> notes;
  // The inputs with a dimension `dims` bound: their shapes are known only at run time.
  std::set<std::string> bound_inputs;
};

struct Api {
  plugin::Header header;
  // Parses `bytes`, checks what the ONNX library would trip on, binds `dims` (a dim_param name, or
  // "input:axis"), checks the model and infers its shapes (the library in a child process).
  // `folder` is the model file's folder, where external data is found; "" for a model given as
  // bytes, whose external data is then refused. Errors: ANEC-ONNX-001 not a model, ANEC-ONNX-002 the
  // checker rejects it, ANEC-ONNX-003 shape inference fails, ANEC-ONNX-005 an attribute or dimension
  // out of range, ANEC-ONNX-006 external data outside the folder (or with no folder), ANEC-ONNX-007 a
  // stored tensor whose data does not match its shape, ANEC-ONNX-008 subgraphs nested deeper than
  // protobuf parses, ANEC-ONNX-009 the library crashed, ANEC-MODEL-003 a binding that does not
  // apply. `all_values` copies every tensor's elements (TensorData::all), for the evaluator.
  Model (*read)(std::string_view bytes, const std::string &source, const std::map<std::string, int64_t> &dims,
                bool all_values, const std::string &folder);
  // The ONNX checker and shape inference alone, in the child process, on a model NOT checked first
  // (the crash boundary's own test): the model with its inferred shapes, serialized, and the notes;
  // the errors of `read` from 001 to 004, 008 and 009.
  std::string (*infer_isolated)(std::string_view bytes, const std::string &source,
                                std::vector<std::string> &notes);
};

// The module's table, loaded on first use (ANEC-PLUGIN-* when it cannot be).
const Api &api();

} // namespace anec::compiler::onnx_front
