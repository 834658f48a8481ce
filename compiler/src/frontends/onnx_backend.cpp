// The ONNX adapter, the only file that includes libonnx and protobuf: it parses the model, checks what
// the library would trip on (ANEC-ONNX-005..007), binds --dim values, runs the ONNX checker
// (onnx::checker) and shape inference with data propagation in a child process (a crash there is
// ANEC-ONNX-009, not the end of the caller), then copies the model into the records of onnx_model.hpp. Its
// entry function, named by onnx_front::kEntry, is the only symbol the module exports.
#include "onnx_model.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/half.hpp"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "anec/support/inside.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <map>
#include <set>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace anec::compiler::onnx_front {
namespace {

using onnx::TensorProto_DataType;
static_assert(kFloat == TensorProto_DataType::TensorProto_DataType_FLOAT &&
              kUint8 == TensorProto_DataType::TensorProto_DataType_UINT8 &&
              kInt8 == TensorProto_DataType::TensorProto_DataType_INT8 &&
              kInt16 == TensorProto_DataType::TensorProto_DataType_INT16 &&
              kInt32 == TensorProto_DataType::TensorProto_DataType_INT32 &&
              kInt64 == TensorProto_DataType::TensorProto_DataType_INT64 &&
              kBool == TensorProto_DataType::TensorProto_DataType_BOOL &&
              kFloat16 == TensorProto_DataType::TensorProto_DataType_FLOAT16 &&
              kDouble == TensorProto_DataType::TensorProto_DataType_DOUBLE &&
              kBfloat16 == TensorProto_DataType::TensorProto_DataType_BFLOAT16);

// A bfloat16's value (an IEEE half's is anec::from_half).
float bfloat16_value(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <class T, class Out, class F> void from_raw(const std::string &raw, std::vector<Out> &out, F value) {
  out.reserve(out.size() + raw.size() / sizeof(T));
  for (size_t i = 0; i + sizeof(T) <= raw.size(); i += sizeof(T)) {
    T v;
    std::memcpy(&v, raw.data() + i, sizeof v);
    out.push_back(Out(value(v)));
  }
}
template <class T, class Out> void from_raw(const std::string &raw, std::vector<Out> &out) {
  from_raw<T>(raw, out, [](T v) { return v; });
}

// The elements of a tensor stored in the file, appended to `out`; false for a type not read (float16
// and bfloat16 only when `halves`).
template <class Out> bool elements(const onnx::TensorProto &t, std::vector<Out> &out, bool halves) {
  const std::string &raw = t.raw_data();
  switch (t.data_type()) {
  case TensorProto_DataType::TensorProto_DataType_INT64:
    if (!raw.empty())
      from_raw<int64_t>(raw, out);
    for (int64_t v : t.int64_data())
      out.push_back(Out(v));
    return true;
  case TensorProto_DataType::TensorProto_DataType_INT32:
  case TensorProto_DataType::TensorProto_DataType_BOOL:
  case TensorProto_DataType::TensorProto_DataType_INT8:
  case TensorProto_DataType::TensorProto_DataType_UINT8:
    if (!raw.empty() && t.data_type() == TensorProto_DataType::TensorProto_DataType_INT32)
      from_raw<int32_t>(raw, out);
    else if (!raw.empty() && t.data_type() == TensorProto_DataType::TensorProto_DataType_INT8)
      from_raw<int8_t>(raw, out);
    else if (!raw.empty())
      from_raw<uint8_t>(raw, out);
    for (int32_t v : t.int32_data())
      out.push_back(Out(v));
    return true;
  case TensorProto_DataType::TensorProto_DataType_FLOAT:
    if (!raw.empty())
      from_raw<float>(raw, out);
    for (float v : t.float_data())
      out.push_back(Out(v));
    return true;
  case TensorProto_DataType::TensorProto_DataType_DOUBLE:
    if (!raw.empty())
      from_raw<double>(raw, out);
    for (double v : t.double_data())
      out.push_back(Out(v));
    return true;
  case TensorProto_DataType::TensorProto_DataType_FLOAT16:
  case TensorProto_DataType::TensorProto_DataType_BFLOAT16: {
    if (!halves)
      return false;
    auto value =
        t.data_type() == TensorProto_DataType::TensorProto_DataType_FLOAT16 ? from_half : bfloat16_value;
    if (!raw.empty())
      from_raw<uint16_t>(raw, out, value);
    for (int32_t v : t.int32_data()) // the bit patterns (onnx.proto)
      out.push_back(Out(value(uint16_t(v))));
    return true;
  }
  default:
    return false;
  }
}

bool external(const onnx::TensorProto &t) {
  return t.has_data_location() && t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
}

// The values of a small tensor (up to kMaxValues elements), or nullopt for anything larger or of a
// type the front-end does not read.
std::optional<std::vector<double>> tensor_values(const onnx::TensorProto &t) {
  size_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || n * size_t(std::max<int64_t>(d, 1)) > kMaxValues)
      return std::nullopt;
    n *= size_t(d);
  }
  std::vector<double> out;
  if (external(t) || !elements(t, out, false) || out.size() != n)
    return std::nullopt;
  return out;
}

// Every element of a tensor stored in the file, as float; empty when they cannot be read.
std::vector<float> all_elements(const onnx::TensorProto &t) {
  size_t n = 1;
  for (int64_t d : t.dims())
    if (d < 0 || __builtin_mul_overflow(n, size_t(d), &n))
      return {};
  std::vector<float> out;
  if (external(t) || !elements(t, out, true) || out.size() != n)
    return {};
  return out;
}

TensorData tensor(const onnx::TensorProto &t, bool all) {
  return {t.name(), t.data_type(), std::vector<int64_t>(t.dims().begin(), t.dims().end()), tensor_values(t),
          all ? all_elements(t) : std::vector<float>{}};
}

ValueInfo value_info(const onnx::ValueInfoProto &v) {
  ValueInfo out;
  out.name = v.name();
  const auto &type = v.type();
  if (!type.has_tensor_type())
    return out;
  out.tensor = true;
  out.elem_type = type.tensor_type().elem_type();
  out.has_shape = type.tensor_type().has_shape();
  if (out.has_shape)
    for (const auto &d : type.tensor_type().shape().dim())
      out.dims.push_back({d.has_dim_value() ? std::optional<int64_t>(d.dim_value()) : std::nullopt,
                          d.has_dim_param() ? d.dim_param() : std::string()});
  return out;
}

Graph graph(const onnx::GraphProto &gp, bool all);

Attribute attribute(const onnx::AttributeProto &a, bool all) {
  Attribute out;
  out.name = a.name();
  if (a.has_i())
    out.i = a.i();
  if (a.has_f())
    out.f = a.f();
  if (a.has_s())
    out.s = a.s();
  out.ints.assign(a.ints().begin(), a.ints().end());
  if (a.has_t())
    out.t = tensor(a.t(), all);
  if (a.has_g())
    out.g = std::make_unique<Graph>(graph(a.g(), all));
  for (const auto &sub : a.graphs())
    out.graphs.push_back(graph(sub, all));
  return out;
}

// The graph's records; `all`: every tensor's elements too (TensorData::all).
Graph graph(const onnx::GraphProto &gp, bool all) {
  Graph out;
  for (const auto &v : gp.input())
    out.inputs.push_back(value_info(v));
  for (const auto &v : gp.output())
    out.outputs.push_back(value_info(v));
  for (const auto &v : gp.value_info())
    out.value_info.push_back(value_info(v));
  for (const auto &t : gp.initializer())
    out.initializers.push_back(tensor(t, all));
  for (const auto &n : gp.node()) {
    Node node;
    node.name = n.name();
    node.op_type = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const auto &a : n.attribute())
      node.attributes.push_back(attribute(a, all));
    out.nodes.push_back(std::move(node));
  }
  return out;
}

// The highest default-domain opset this build's ONNX library knows.
int64_t library_opset() {
  const auto &map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find("");
  return it == map.end() ? 0 : it->second.second;
}

// A bound name is bound wherever the file declares it: value_info and outputs, subgraphs included.
void bind_everywhere(onnx::GraphProto &gp, const std::string &name, int64_t value) {
  auto bind = [&](onnx::ValueInfoProto &v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
      return;
    for (auto &d : *v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_param() && d.dim_param() == name)
        d.set_dim_value(value);
  };
  for (auto &v : *gp.mutable_value_info())
    bind(v);
  for (auto &v : *gp.mutable_output())
    bind(v);
  for (auto &n : *gp.mutable_node())
    for (auto &a : *n.mutable_attribute()) {
      if (a.has_g())
        bind_everywhere(*a.mutable_g(), name, value);
      for (auto &sub : *a.mutable_graphs())
        bind_everywhere(sub, name, value);
    }
}

// Binds `--dim` values on the model's inputs: a dim_param name, or "input:axis" (the axis counted in
// that input's own shape). Returns the inputs it bound a dimension of.
std::set<std::string> bind_dims(onnx::ModelProto &model, const std::map<std::string, int64_t> &bind,
                                const std::string &source) {
  std::set<std::string> bound;
  for (const auto &[name, value] : bind) {
    bool used = false;
    size_t colon = name.rfind(':');
    for (auto &in : *model.mutable_graph()->mutable_input()) {
      if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape())
        continue;
      auto *dims = in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
      if (colon != std::string::npos && name.substr(0, colon) == in.name()) {
        std::string axis_text = name.substr(colon + 1);
        int64_t axis = axis_text.empty() || axis_text.find_first_not_of("0123456789") != std::string::npos
                           ? -1
                           : std::stoll(axis_text.substr(0, 9));
        if (axis < 0 || axis >= dims->size())
          throw Error("ANEC-MODEL-003", source + ": input '" + in.name() + "' has " +
                                            std::to_string(dims->size()) + " axes; --dim " + name +
                                            " names axis " + axis_text);
        auto &d = (*dims)[int(axis)];
        if (d.has_dim_value() && d.dim_value() != value)
          throw Error("ANEC-MODEL-003", source + ": input '" + in.name() + "' axis " + axis_text +
                                            " is fixed at " + std::to_string(d.dim_value()) +
                                            "; --dim gives " + std::to_string(value));
        d.set_dim_value(value);
        used = true;
        bound.insert(in.name());
      }
      for (auto &d : *dims)
        if (d.has_dim_param() && d.dim_param() == name) {
          d.set_dim_value(value);
          used = true;
          bound.insert(in.name());
        }
    }
    if (!used)
      throw Error("ANEC-MODEL-003", source + ": no input dimension is named '" + name +
                                        "' (an unnamed one binds as INPUT:AXIS)");
    if (colon == std::string::npos)
      bind_everywhere(*model.mutable_graph(), name, value);
  }
  return bound;
}

// The opset a model imports for `domain` ("" and "ai.onnx" are one), 0 when it imports none.
int64_t opset_of(const onnx::ModelProto &model, const std::string &domain) {
  int64_t v = 0;
  for (const auto &o : model.opset_import())
    if (o.domain() == domain || ((o.domain().empty() || o.domain() == "ai.onnx") && domain.empty()))
      v = std::max<int64_t>(v, o.version());
  return v;
}

// The nodes of the main graph whose outputs are not tensors (a sequence, a map: ZipMap, the
// classical-ML operators of ai.onnx.ml that return one, SequenceConstruct...): what the graph declares
// of their outputs, or else what their schema allows. They are host (CPU) operations; shape inference
// cannot carry a tensor shape through them. Keyed by position, valued "domain:op_type".
std::map<int, std::string> non_tensor_nodes(const onnx::ModelProto &model) {
  std::set<std::string> declared; // values the graph types as something other than a tensor
  auto note = [&](const onnx::ValueInfoProto &v) {
    if (v.has_type() && !v.type().has_tensor_type() && !v.type().has_sparse_tensor_type() &&
        v.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
      declared.insert(v.name());
  };
  for (const auto &v : model.graph().output())
    note(v);
  for (const auto &v : model.graph().value_info())
    note(v);
  std::map<int, std::string> out;
  for (int k = 0; k < model.graph().node_size(); ++k) {
    const onnx::NodeProto &n = model.graph().node(k);
    std::string domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    bool host = std::any_of(n.output().begin(), n.output().end(),
                            [&](const std::string &o) { return declared.count(o) > 0; });
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
        n.op_type(), int(std::max<int64_t>(opset_of(model, domain), 1)), domain);
    if (!host && schema)
      for (const auto &param : schema->outputs()) {
        const auto &types = param.GetTypes();
        host |= !types.empty() && std::none_of(types.begin(), types.end(), [](const std::string *t) {
          return t->rfind("tensor(", 0) == 0 || t->rfind("sparse_tensor(", 0) == 0;
        });
      }
    if (host)
      out[k] = (domain.empty() ? "" : domain + ":") + n.op_type();
  }
  return out;
}

// Shape inference on a copy without the nodes whose outputs are not tensors; what it infers is
// copied back into the model's value_info. Returns the text of the first failure, empty on success.
std::string infer_around(onnx::ModelProto &model, const std::map<int, std::string> &host) {
  onnx::ModelProto pruned = model;
  auto *nodes = pruned.mutable_graph()->mutable_node();
  for (auto it = host.rbegin(); it != host.rend(); ++it)
    nodes->erase(nodes->begin() + it->first);
  auto *outputs = pruned.mutable_graph()->mutable_output();
  for (int k = outputs->size() - 1; k >= 0; --k)
    if (!(*outputs)[k].type().has_tensor_type())
      outputs->erase(outputs->begin() + k);
  try {
    onnx::shape_inference::InferShapes(pruned, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception &e) {
    return e.what();
  }
  std::set<std::string> known;
  for (const auto &v : model.graph().value_info())
    known.insert(v.name());
  for (const auto &v : pruned.graph().value_info())
    if (known.insert(v.name()).second)
      *model.mutable_graph()->add_value_info() = v;
  for (auto &o : *model.mutable_graph()->mutable_output())
    for (const auto &p : pruned.graph().output())
      if (p.name() == o.name() && o.type().has_tensor_type())
        o = p;
  return {};
}

// How a tensor of each data type stores its elements: the bytes of one in raw_data, the typed field
// that holds them otherwise (onnx.proto), and how many of that field's entries make one (2 for the
// complex types). A type not listed (string, types newer than this table) is not checked.
enum TypedField { kFloatData, kInt32Data, kInt64Data, kDoubleData, kUint64Data, kTypedFields };
constexpr const char *kFieldNames[kTypedFields] = {"float_data", "int32_data", "int64_data", "double_data",
                                                   "uint64_data"};
struct Storage {
  int type;
  const char *name;
  size_t bytes;
  TypedField field;
  size_t per;
};
constexpr Storage kStorage[] = {
    {1, "float", 4, kFloatData, 1},      {2, "uint8", 1, kInt32Data, 1},
    {3, "int8", 1, kInt32Data, 1},       {4, "uint16", 2, kInt32Data, 1},
    {5, "int16", 2, kInt32Data, 1},      {6, "int32", 4, kInt32Data, 1},
    {7, "int64", 8, kInt64Data, 1},      {9, "bool", 1, kInt32Data, 1},
    {10, "float16", 2, kInt32Data, 1},   {11, "double", 8, kDoubleData, 1},
    {12, "uint32", 4, kUint64Data, 1},   {13, "uint64", 8, kUint64Data, 1},
    {14, "complex64", 8, kFloatData, 2}, {15, "complex128", 16, kDoubleData, 2},
    {16, "bfloat16", 2, kInt32Data, 1},
};

std::string dims_text(const onnx::TensorProto &t) {
  std::string out = "[";
  for (int64_t d : t.dims())
    out += (out.size() > 1 ? "," : "") + std::to_string(d);
  return out + "]";
}

// A tensor stored in the file holds exactly what its shape and type need, or nothing (a model
// shipped without its weights: the evaluator seeds those and says so). A part of it would otherwise
// be read as the whole, or the whole seeded with random values (ANEC-ONNX-007).
void check_stored(const onnx::TensorProto &t, const std::string &what, const std::string &source) {
  const Storage *s = nullptr;
  for (const Storage &row : kStorage)
    s = row.type == t.data_type() ? &row : s;
  if (!s || external(t))
    return;
  auto fail = [&](const std::string &found, size_t needed, const char *unit) {
    throw Error("ANEC-ONNX-007", source + ": " + what + " holds " + found + "; its shape " + dims_text(t) +
                                     " of " + s->name + " needs " + std::to_string(needed) + " " + unit);
  };
  size_t n = 1, raw_needed = 0, typed_needed = 0;
  bool overflow = false;
  for (int64_t d : t.dims())
    overflow |= __builtin_mul_overflow(n, size_t(d), &n);
  overflow |= __builtin_mul_overflow(n, s->bytes, &raw_needed);
  overflow |= __builtin_mul_overflow(n, s->per, &typed_needed);
  if (overflow)
    throw Error("ANEC-ONNX-007", source + ": " + what + ": its shape " + excerpt(dims_text(t)) +
                                     " has more elements than 64 bits can count");
  const size_t counts[kTypedFields] = {size_t(t.float_data_size()), size_t(t.int32_data_size()),
                                       size_t(t.int64_data_size()), size_t(t.double_data_size()),
                                       size_t(t.uint64_data_size())};
  for (int f = 0; f < kTypedFields; ++f)
    if (counts[f] > 0 && (f != s->field || !t.raw_data().empty()))
      fail(std::to_string(counts[f]) + " values in " + kFieldNames[f] +
               (t.raw_data().empty() ? ", a field its type does not use" : " besides raw_data"),
           typed_needed, (std::string("values in ") + kFieldNames[s->field]).c_str());
  if (!t.raw_data().empty() && t.raw_data().size() != raw_needed)
    fail(std::to_string(t.raw_data().size()) + " bytes of raw_data", raw_needed, "bytes");
  if (counts[s->field] > 0 && counts[s->field] != typed_needed)
    fail(std::to_string(counts[s->field]) + " values in " + kFieldNames[s->field], typed_needed, "values");
}

// Where an external-data tensor's location is read: inside the model's folder, and nowhere else.
// The ONNX checker stats the location as given, relative to the working directory, absolute paths
// and ".." included; it is replaced by the path it names inside the folder once that is known to be
// inside (ANEC-ONNX-006 otherwise, and always for a model given as bytes, which has no folder).
void place_external(onnx::TensorProto &t, const std::string &what, const std::string &source,
                    const std::string &folder) {
  if (!external(t))
    return;
  if (folder.empty())
    throw Error("ANEC-ONNX-006", source + ": " + what +
                                     " keeps its values in external data, and a model given as bytes has no "
                                     "folder to find them in");
  for (auto &entry : *t.mutable_external_data()) {
    if (entry.key() != "location")
      continue;
    std::optional<std::filesystem::path> path;
    if (entry.value().find('\0') == std::string::npos)
      path = resolve_inside(folder, entry.value());
    if (!path)
      throw Error("ANEC-ONNX-006", source + ": " + what + ": external data location '" +
                                       excerpt(entry.value()) +
                                       "' leaves the model's folder (absolute, climbing out with '..', or a "
                                       "link leading out); external data is read only inside it");
    entry.set_value(path->string());
  }
}

// Every tensor the model stores, with what it is (for messages): initializers, sparse initializers'
// parts and attribute tensors, in every graph and subgraph and in the model's functions.
template <class F> void each_tensor(onnx::GraphProto &gp, const F &f);
template <class F> void each_tensor(onnx::NodeProto &n, const F &f) {
  for (auto &a : *n.mutable_attribute()) {
    std::string what = "attribute '" + excerpt(a.name()) + "' of node '" + excerpt(n.name()) + "'";
    if (a.has_t())
      f(*a.mutable_t(), what);
    for (auto &t : *a.mutable_tensors())
      f(t, what);
    if (a.has_sparse_tensor())
      f(*a.mutable_sparse_tensor()->mutable_values(), what),
          f(*a.mutable_sparse_tensor()->mutable_indices(), what);
    for (auto &sparse : *a.mutable_sparse_tensors())
      f(*sparse.mutable_values(), what), f(*sparse.mutable_indices(), what);
    if (a.has_g())
      each_tensor(*a.mutable_g(), f);
    for (auto &sub : *a.mutable_graphs())
      each_tensor(sub, f);
  }
}
template <class F> void each_tensor(onnx::GraphProto &gp, const F &f) {
  for (auto &t : *gp.mutable_initializer())
    f(t, "initializer '" + excerpt(t.name()) + "'");
  for (auto &sparse : *gp.mutable_sparse_initializer()) {
    f(*sparse.mutable_values(), "sparse initializer '" + excerpt(sparse.values().name()) + "'");
    f(*sparse.mutable_indices(), "sparse initializer '" + excerpt(sparse.values().name()) + "'");
  }
  for (auto &n : *gp.mutable_node())
    each_tensor(n, f);
}
template <class F> void each_tensor(onnx::ModelProto &model, const F &f) {
  each_tensor(*model.mutable_graph(), f);
  for (auto &function : *model.mutable_functions())
    for (auto &n : *function.mutable_node())
      each_tensor(n, f);
  for (auto &training : *model.mutable_training_info()) {
    each_tensor(*training.mutable_initialization(), f);
    each_tensor(*training.mutable_algorithm(), f);
  }
}

// What the ONNX library's checker and shape inference divide by or loop over, checked before they see
// it (ANEC-ONNX-005): strides, dilations and kernel sizes of 1 or more, a group of 1 or more, no
// negative dimension in a declared shape or a stored tensor. Debian's libonnx divides by a zero stride
// in its convolution and pooling shape inference (SIGFPE), with the checker passing the model.
void check_library_input(const onnx::GraphProto &gp, const std::string &source) {
  auto fail = [&](const std::string &what, int64_t v) {
    throw Error("ANEC-ONNX-005", source + ": " + what + " is " + std::to_string(v) +
                                     ": the ONNX library would divide by it or loop on it");
  };
  auto shape = [&](const onnx::ValueInfoProto &v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      for (const auto &d : v.type().tensor_type().shape().dim())
        if (d.has_dim_value() && d.dim_value() < 0)
          fail("a dimension of '" + excerpt(v.name()) + "'", d.dim_value());
  };
  for (const auto *list : {&gp.input(), &gp.output(), &gp.value_info()})
    for (const auto &v : *list)
      shape(v);
  for (const auto &n : gp.node())
    for (const auto &a : n.attribute()) {
      std::string what = "attribute '" + excerpt(a.name()) + "' of node '" + excerpt(n.name()) + "' (" +
                         excerpt(n.op_type()) + ")";
      if (a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape")
        for (int64_t v : a.ints())
          if (v < 1)
            fail(what, v);
      if (a.name() == "group" && a.has_i() && a.i() < 1)
        fail(what, a.i());
      if (a.has_g())
        check_library_input(a.g(), source);
      for (const auto &sub : a.graphs())
        check_library_input(sub, source);
    }
}

// The stored tensors: no negative dimension (ANEC-ONNX-005), as much data as the shape needs
// (ANEC-ONNX-007), external data inside the model's folder (ANEC-ONNX-006).
void check_tensors(onnx::ModelProto &model, const std::string &source, const std::string &folder) {
  each_tensor(model, [&](onnx::TensorProto &t, const std::string &what) {
    for (int64_t d : t.dims())
      if (d < 0)
        throw Error("ANEC-ONNX-005", source + ": a dimension of " + what + " is " + std::to_string(d) +
                                         ": the ONNX library would divide by it or loop on it");
    check_stored(t, what, source);
    place_external(t, what, source, folder);
  });
}

// The protobuf parser's limit on nested messages (its default), and the deeper limit a model that
// fails to parse is tried again with, to tell "nested too deeply" from "not a model".
constexpr int kParseDepth = 100, kDiagnoseDepth = 1000;

// How many levels of subgraphs (If branches, Loop and Scan bodies) the graph nests.
int subgraph_depth(const onnx::GraphProto &gp) {
  int depth = 0;
  for (const auto &n : gp.node())
    for (const auto &a : n.attribute()) {
      if (a.has_g())
        depth = std::max(depth, 1 + subgraph_depth(a.g()));
      for (const auto &sub : a.graphs())
        depth = std::max(depth, 1 + subgraph_depth(sub));
    }
  return depth;
}

// The model, or ANEC-ONNX-001 (not a model) or ANEC-ONNX-008 (a model nested deeper than the parser
// reads: refused, but said).
onnx::ModelProto parse(std::string_view bytes, const std::string &source) {
  auto parse_at = [&](onnx::ModelProto &m, int depth) {
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(bytes.data()),
                                              int(bytes.size()));
    in.SetRecursionLimit(depth);
    return m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
  };
  onnx::ModelProto model;
  if (bytes.size() <= size_t(INT32_MAX) && parse_at(model, kParseDepth))
    return model;
  onnx::ModelProto deep;
  if (bytes.size() <= size_t(INT32_MAX) && parse_at(deep, kDiagnoseDepth))
    throw Error("ANEC-ONNX-008", source + ": subgraphs (If, Loop, Scan bodies) nested " +
                                     std::to_string(subgraph_depth(deep.graph())) +
                                     " levels deep: deeper than the protobuf parser reads (" +
                                     std::to_string(kParseDepth) + " nested messages)");
  throw Error("ANEC-ONNX-001",
              source + ": not an ONNX model (protobuf parse failed: damaged, or nested deeper than " +
                  std::to_string(kDiagnoseDepth) + " messages)");
}

// What the ONNX library does with the model, in place: its checker (not for a model it would refuse
// only for being newer than it, or of IR 1 or 2 with opset imports: a note says so) and its shape
// inference (around the operators whose outputs are not tensors: a note). `stage` is told each step
// before it runs.
void library_pass(onnx::ModelProto &model, const std::string &source, std::vector<std::string> &notes,
                  const std::function<void(const char *)> &stage) {
  int64_t opset = opset_of(model, "");
  bool newer = model.ir_version() > onnx::Version::IR_VERSION || opset > library_opset();
  // IR versions 1 and 2 predate opset_import (IR 3, onnx.proto); exporters of that time wrote it
  // all the same, and onnxruntime runs such models. The checker's rule is the only objection.
  bool early = model.ir_version() < 3 && model.opset_import_size() > 0;
  bool lenient = newer || early;
  if (newer) {
    // The library's checker refuses what it does not know; read the model anyway, without it.
    notes.push_back("ANEC-ONNX-004 warning: IR version " + std::to_string(model.ir_version()) + ", opset " +
                    std::to_string(opset) + " is newer than this build's ONNX library (IR " +
                    std::to_string(int(onnx::Version::IR_VERSION)) + ", opset " +
                    std::to_string(library_opset()) +
                    "): read without the ONNX checker; shapes inferred where the library knows the operator");
  } else if (early) {
    notes.push_back("ANEC-ONNX-004 warning: IR version " + std::to_string(model.ir_version()) +
                    " with opset imports (opset " + std::to_string(opset) +
                    "): the ONNX checker refuses opset_import below IR version 3, onnxruntime runs "
                    "such models; read without the ONNX checker");
  } else {
    stage("the ONNX checker");
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception &e) {
      throw Error("ANEC-ONNX-002",
                  source + ": the ONNX checker rejects the model: " + std::string(e.what()).substr(0, 400));
    }
  }
  stage("ONNX shape inference");
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception &e) {
    std::map<int, std::string> host = non_tensor_nodes(model);
    std::string again = host.empty() ? std::string(e.what()) : infer_around(model, host);
    if (!host.empty()) {
      std::set<std::string> names;
      for (const auto &[k, name] : host)
        names.insert(name);
      std::string list;
      for (const auto &name : names)
        list += (list.empty() ? "" : ", ") + name;
      notes.push_back("ANEC-ONNX-004 warning: ONNX shape inference fails on " + list +
                      ", whose outputs are not tensors (sequences or maps: host, CPU, operations); "
                      "shapes inferred without them");
    }
    if (!again.empty() && !lenient)
      throw Error("ANEC-ONNX-003", source + ": ONNX shape inference fails: " + again.substr(0, 400));
    if (!again.empty())
      notes.push_back("ANEC-ONNX-004 warning: ONNX shape inference stopped (" + again.substr(0, 200) +
                      "); shapes it did not reach are unknown");
  }
}

// ---- the crash boundary: library_pass in a child process ----
//
// The ONNX library's checker and shape inference run on input anec cannot fully pre-validate (every
// operator's inference function); where one of them divides by zero or dereferences what it should
// not, the child dies, and the model is refused with the signal's name (ANEC-ONNX-009) while the tool,
// a corpus run or the Python interpreter goes on. The child writes records to a pipe, each a tag, a
// length and bytes: 'S' the step it starts, 'N' a note, 'E' an error (code, NUL, message), 'M' the
// model with its shapes inferred (without the main graph's initializers, which the parent keeps).

void put(int fd, char tag, std::string_view bytes) {
  uint64_t size = bytes.size();
  std::string record(1, tag);
  record.append(reinterpret_cast<const char *>(&size), sizeof size);
  record.append(bytes);
  for (size_t done = 0; done < record.size();) {
    ssize_t k = ::write(fd, record.data() + done, record.size() - done);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      ::_exit(3);
    done += size_t(k);
  }
}

struct SignalName {
  int signal;
  const char *name;
};
constexpr SignalName kSignals[] = {{SIGFPE, "SIGFPE"},   {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},
                                   {SIGABRT, "SIGABRT"}, {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}};

[[noreturn]] void child(int fd, onnx::ModelProto &model, const std::string &source) {
  struct rlimit none = {0, 0};
  ::setrlimit(RLIMIT_CORE, &none); // a crash is reported, not dumped
  // A fault ends the child, whatever handler the host installed (Python's faulthandler, a
  // sanitizer, libFuzzer's crash handler, which would report the library's crash as its own).
  for (const SignalName &s : kSignals)
    if (s.signal != SIGKILL)
      std::signal(s.signal, SIG_DFL);
  // Another thread's pipe (a corpus run reads files in parallel) is not held open by this child.
  ::close_range(3, unsigned(fd) - 1, 0);
  ::close_range(unsigned(fd) + 1, ~0u, 0);
  try {
    std::vector<std::string> notes;
    library_pass(model, source, notes, [&](const char *step) { put(fd, 'S', step); });
    for (const std::string &note : notes)
      put(fd, 'N', note);
    model.mutable_graph()->clear_initializer();
    put(fd, 'M', model.SerializeAsString());
  } catch (const Error &e) {
    std::string what = e.what();
    put(fd, 'E', e.code() + '\0' + what.substr(std::min(what.size(), e.code().size() + 2)));
  } catch (const std::exception &e) {
    put(fd, 'E', std::string("ANEC-ONNX-009") + '\0' + source + ": the ONNX library failed: " + e.what());
  }
  ::_exit(0); // no destructors, no atexit handlers, no stdio flushed twice
}

std::string read_all(int fd) {
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    ssize_t k = ::read(fd, buffer, sizeof buffer);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return out;
    out.append(buffer, size_t(k));
  }
}

std::string signal_name(int signal) {
  for (const SignalName &s : kSignals)
    if (s.signal == signal)
      return s.name;
  return "signal " + std::to_string(signal);
}

// The records the child wrote, applied to `model` and `notes`; how the child ended, as an error, when
// it wrote no result.
void take_result(const std::string &records, int status, onnx::ModelProto &model,
                 std::vector<std::string> &notes, const std::string &source) {
  std::string step = "the ONNX library", error_code;
  bool done = false;
  for (size_t at = 0; at + 9 <= records.size();) {
    uint64_t size;
    std::memcpy(&size, records.data() + at + 1, sizeof size);
    if (size > records.size() - at - 9)
      break;
    std::string_view body(records.data() + at + 9, size_t(size));
    char tag = records[at];
    at += 9 + size_t(size);
    if (tag == 'S')
      step = body;
    else if (tag == 'N')
      notes.emplace_back(body);
    else if (tag == 'E') {
      size_t nul = body.find('\0');
      throw Error(std::string(body.substr(0, nul)), std::string(body.substr(std::min(nul + 1, body.size()))));
    } else if (tag == 'M') {
      onnx::ModelProto inferred;
      if (!inferred.ParseFromArray(body.data(), int(body.size())))
        break;
      inferred.mutable_graph()->mutable_initializer()->Swap(model.mutable_graph()->mutable_initializer());
      model = std::move(inferred);
      done = true;
    }
  }
  if (done && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return;
  std::string how = WIFSIGNALED(status) ? "crashed (" + signal_name(WTERMSIG(status)) + ")"
                                        : "stopped (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  throw Error("ANEC-ONNX-009", source + ": the ONNX library " + how + " in " + step +
                                   "; the model is refused, the run goes on");
}

// library_pass in a child process: the same result, or ANEC-ONNX-009 when the child dies.
void isolated_pass(onnx::ModelProto &model, const std::string &source, std::vector<std::string> &notes) {
  // The library's schema registry is built on first use; built here, in the parent, it is built
  // once, not again in every child (12 ms a model), and no child inherits it half built.
  static const bool registry = onnx::OpSchemaRegistry::Schema("Identity", 1, "") != nullptr;
  (void)registry;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error("ANEC-ONNX-009",
                source + ": cannot start the ONNX library's process: pipe: " + std::strerror(errno));
  ::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(fds[0]), ::close(fds[1]);
    throw Error("ANEC-ONNX-009",
                source + ": cannot start the ONNX library's process: fork: " + std::strerror(e));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], model, source);
  }
  ::close(fds[1]);
  std::string records = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  take_result(records, status, model, notes, source);
}

Model read(std::string_view bytes, const std::string &source, const std::map<std::string, int64_t> &dims,
           bool all_values, const std::string &folder) {
  onnx::ModelProto model = parse(bytes, source);
  check_library_input(model.graph(), source);
  check_tensors(model, source, folder);
  Model out;
  out.bound_inputs = bind_dims(model, dims, source);
  isolated_pass(model, source, out.notes);
  out.graph = graph(model.graph(), all_values);
  return out;
}

// The crash boundary alone, on a model not checked first (for tests of the boundary): the model's
// value_info after shape inference, serialized.
std::string infer_isolated(std::string_view bytes, const std::string &source,
                           std::vector<std::string> &notes) {
  onnx::ModelProto model = parse(bytes, source);
  isolated_pass(model, source, notes);
  return model.SerializeAsString();
}

constexpr Api kApi = {
    .header = {kVersion, sizeof(Api)},
    .read = read,
    .infer_isolated = infer_isolated,
};

} // namespace
} // namespace anec::compiler::onnx_front

extern "C" __attribute__((visibility("default"))) const anec::plugin::Header *anec_onnx_backend_entry() {
  return &anec::compiler::onnx_front::kApi.header;
}
