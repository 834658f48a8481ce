// The Core ML adapter, the only file that includes protobuf and the classes protoc generates from
// coreml.proto: it checks the bytes look like a protobuf message, parses them, and copies the model
// into the records of coreml_model.hpp. Layer and model kinds are read by reflection (the name of the
// oneof field that is set), so a layer declared as `bytes` in the schema subset is still named.
// Its entry function, named by coreml_front::kEntry, is the only symbol the module exports.
#include "coreml_model.hpp"

#include "anec/support/error.hpp"

#include "coreml.pb.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

namespace anec::compiler::coreml_front {
namespace {

namespace pb = google::protobuf;

// The first bytes of a file, as hex and as text, for a message about a file that does not parse.
std::string excerpt(std::string_view bytes) {
  std::string hex, text;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 16); ++i) {
    char b[4];
    std::snprintf(b, sizeof b, "%02x", unsigned(static_cast<unsigned char>(bytes[i])));
    hex += (hex.empty() ? "" : " ") + std::string(b);
    char c = bytes[i];
    text += c >= 0x20 && c < 0x7f ? c : '.';
  }
  return "first bytes " + hex + " (\"" + text + "\")";
}

// A protobuf message starts with a key: field number >= 1, wire type 0, 1, 2 or 5 (proto3 has no
// groups). Text, JSON, a zip or a plist fails this before the parser sees it.
bool plausible_key(std::string_view bytes) {
  if (bytes.empty())
    return false;
  unsigned key = static_cast<unsigned char>(bytes[0]);
  unsigned wire = key & 7u;
  return key >> 3 != 0 && (wire == 0 || wire == 1 || wire == 2 || wire == 5);
}

const pb::FieldDescriptor *set_field(const pb::Message &m, const char *oneof) {
  const pb::OneofDescriptor *o = m.GetDescriptor()->FindOneofByName(oneof);
  return o ? m.GetReflection()->GetOneofFieldDescriptor(m, o) : nullptr;
}

std::string array_dtype(int code) {
  switch (code) {
  case 65568:
    return "fp32";
  case 65600:
    return "fp64";
  case 65552:
    return "fp16";
  case 131104:
    return "int32";
  case 131080:
    return "int8";
  default:
    return "unknown(" + std::to_string(code) + ")";
  }
}

std::string mil_dtype(int code) {
  static const std::map<int, const char *> names = {
      {1, "bool"},    {2, "string"},  {10, "fp16"},    {11, "fp32"},   {12, "fp64"},  {13, "bf16"},
      {21, "int8"},   {22, "int16"},  {23, "int32"},   {24, "int64"},  {25, "int4"},  {31, "uint8"},
      {32, "uint16"}, {33, "uint32"}, {34, "uint64"},  {35, "uint4"},  {36, "uint2"}, {37, "uint1"},
      {38, "uint6"},  {39, "uint3"},  {40, "fp8e4m3"}, {41, "fp8e5m2"}};
  auto it = names.find(code);
  return it == names.end() ? "unknown(" + std::to_string(code) + ")" : it->second;
}

Feature feature(const coreml::Feature &f) {
  Feature out;
  out.name = f.name();
  const coreml::FeatureType &t = f.type();
  out.optional = t.isoptional();
  const pb::FieldDescriptor *k = set_field(t, "Type");
  out.kind = k ? k->name() : "";
  if (out.kind.ends_with("Type"))
    out.kind.resize(out.kind.size() - 4);
  auto array = [&](const coreml::ArrayType &a) {
    out.dtype = array_dtype(a.datatype());
    out.shape.assign(a.shape().begin(), a.shape().end());
    out.flexible = a.has_enumeratedshapes() || a.has_shaperange();
  };
  if (t.has_multiarraytype())
    array(t.multiarraytype());
  if (t.has_statetype())
    array(t.statetype().arraytype());
  if (t.has_imagetype()) {
    const coreml::ImageType &i = t.imagetype();
    int c = i.colorspace() == 20 || i.colorspace() == 30 ? 3 : 1;
    out.dtype = i.colorspace() == 40 ? "fp16" : "uint8";
    out.shape = {1, c, i.height(), i.width()};
    out.flexible = !i.enumeratedsizes().empty() || !i.imagesizerange().empty();
  }
  return out;
}

void add_weights(const coreml::Weights &w, Weights &out) {
  auto take = [&](int64_t elements, int64_t bytes, const std::string &storage) {
    if (elements <= 0 && bytes <= 0)
      return;
    out.elements += elements;
    out.bytes += bytes;
    out.storage = out.storage.empty() || out.storage == storage ? storage : "mixed";
  };
  take(w.floatvalue_size(), int64_t(w.floatvalue_size()) * 4, "fp32");
  take(int64_t(w.float16value().size()) / 2, int64_t(w.float16value().size()), "fp16");
  take(int64_t(w.int8rawvalue().size()), int64_t(w.int8rawvalue().size()), "int8");
  if (int64_t raw = int64_t(w.rawvalue().size()); raw > 0) {
    uint64_t bits = w.has_quantization() ? w.quantization().numberofbits() : 0;
    if (bits >= 1 && bits <= 16)
      take(raw * 8 / int64_t(bits), raw, "quantized" + std::to_string(bits));
    else
      take(raw / 4, raw, "fp32");
  }
  out.updatable = out.updatable || w.isupdatable();
}

// Every WeightParams reachable from `m` (a layer's parameters), summed.
void collect_weights(const pb::Message &m, Weights &out, int depth = 0) {
  if (depth > 8)
    return;
  const pb::Reflection *r = m.GetReflection();
  std::vector<const pb::FieldDescriptor *> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor *f : fields) {
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    auto one = [&](const pb::Message &x) {
      if (x.GetDescriptor() == coreml::Weights::descriptor())
        add_weights(static_cast<const coreml::Weights &>(x), out);
      else
        collect_weights(x, out, depth + 1);
    };
    if (f->is_repeated())
      for (int i = 0; i < r->FieldSize(m, f); ++i)
        one(r->GetRepeatedMessage(m, f, i));
    else
      one(r->GetMessage(m, f));
  }
}

// The numeric and bool fields of a layer's parameters, by name.
std::map<std::string, std::vector<double>> scalars(const pb::Message &m) {
  std::map<std::string, std::vector<double>> out;
  const pb::Reflection *r = m.GetReflection();
  std::vector<const pb::FieldDescriptor *> fields;
  r->ListFields(m, &fields);
  using F = pb::FieldDescriptor;
  for (const F *f : fields) {
    auto value = [&](int i) -> std::optional<double> {
      bool rep = f->is_repeated();
      switch (f->cpp_type()) {
      case F::CPPTYPE_INT32:
        return rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f);
      case F::CPPTYPE_INT64:
        return double(rep ? r->GetRepeatedInt64(m, f, i) : r->GetInt64(m, f));
      case F::CPPTYPE_UINT32:
        return rep ? r->GetRepeatedUInt32(m, f, i) : r->GetUInt32(m, f);
      case F::CPPTYPE_UINT64:
        return double(rep ? r->GetRepeatedUInt64(m, f, i) : r->GetUInt64(m, f));
      case F::CPPTYPE_FLOAT:
        return rep ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f);
      case F::CPPTYPE_DOUBLE:
        return rep ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f);
      case F::CPPTYPE_BOOL:
        return rep ? r->GetRepeatedBool(m, f, i) : r->GetBool(m, f);
      default:
        return std::nullopt;
      }
    };
    int n = f->is_repeated() ? std::min(r->FieldSize(m, f), 64) : 1;
    for (int i = 0; i < n; ++i)
      if (auto v = value(i))
        out[f->name()].push_back(*v);
  }
  return out;
}

// The layer's sub-type: the activation set, or the named mode of a pooling, unary or reduce layer.
std::string subtype(const coreml::Layer &l) {
  auto pick = [](int v, std::initializer_list<const char *> names) {
    return v >= 0 && size_t(v) < names.size() ? std::string(names.begin()[v])
                                              : "unknown(" + std::to_string(v) + ")";
  };
  if (l.has_activation()) {
    const pb::FieldDescriptor *f = set_field(l.activation(), "NonlinearityType");
    return f ? f->name() : "";
  }
  if (l.has_pooling())
    return pick(l.pooling().type(), {"MAX", "AVERAGE", "L2"});
  if (l.has_unary())
    return pick(l.unary().type(), {"SQRT", "RSQRT", "INVERSE", "POWER", "EXP", "LOG", "ABS", "THRESHOLD"});
  if (l.has_reduce())
    return pick(l.reduce().mode(),
                {"SUM", "AVG", "PROD", "LOGSUM", "SUMSQUARE", "L1", "L2", "MAX", "MIN", "ARGMAX"});
  return "";
}

Layer layer(const coreml::Layer &l) {
  Layer out;
  out.name = l.name();
  out.inputs.assign(l.input().begin(), l.input().end());
  out.outputs.assign(l.output().begin(), l.output().end());
  out.updatable = l.isupdatable();
  const pb::FieldDescriptor *f = set_field(l, "layer");
  if (!f)
    return out; // type "": a layer of a newer schema (its field is unknown here)
  out.type = f->name();
  out.subtype = subtype(l);
  const pb::Reflection *r = l.GetReflection();
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    const pb::Message &p = r->GetMessage(l, f);
    out.params_bytes = int64_t(p.ByteSizeLong());
    out.params = scalars(p);
    collect_weights(p, out.weights);
    if (l.has_pooling() && l.pooling().has_valid())
      for (const coreml::BorderEdge &e : l.pooling().valid().paddingamounts().borderamounts()) {
        out.params["pad"].push_back(double(e.startedgesize()));
        out.params["pad"].push_back(double(e.endedgesize()));
      }
    if (l.has_convolution() && l.convolution().has_valid())
      for (const coreml::BorderEdge &e : l.convolution().valid().paddingamounts().borderamounts()) {
        out.params["pad"].push_back(double(e.startedgesize()));
        out.params["pad"].push_back(double(e.endedgesize()));
      }
    if ((l.has_pooling() && l.pooling().has_same()) || (l.has_convolution() && l.convolution().has_same()))
      out.params["same"] = {1};
  } else {
    out.params_bytes = int64_t(r->GetString(l, f).size());
  }
  if (l.has_custom())
    out.class_name = l.custom().classname();
  return out;
}

MilValue mil_value(const coreml::NamedValueType &v) {
  MilValue out;
  out.name = v.name();
  const coreml::ValueType *t = &v.type();
  if (t->has_statetype())
    t = &t->statetype().wrappedtype();
  if (t->has_tensortype()) {
    out.tensor = true;
    out.dtype = mil_dtype(t->tensortype().datatype());
    for (const coreml::Dimension &d : t->tensortype().dimensions())
      out.dims.push_back(d.has_constant() ? int64_t(d.constant().size()) : -1);
  }
  return out;
}

size_t count_ops(const coreml::Block &b, int depth) {
  size_t n = size_t(b.operations_size());
  if (depth < 32)
    for (const coreml::Operation &op : b.operations())
      for (const coreml::Block &inner : op.blocks())
        n += count_ops(inner, depth + 1);
  return n;
}

MilOp mil_op(const coreml::Operation &o) {
  MilOp out;
  out.type = o.type();
  auto blob = [&](const coreml::Value &v) {
    if (!v.has_blobfilevalue())
      return false;
    ++out.blob_refs;
    const std::string &file = v.blobfilevalue().filename();
    if (std::find(out.blob_files.begin(), out.blob_files.end(), file) == out.blob_files.end())
      out.blob_files.push_back(file);
    return true;
  };
  std::map<std::string, std::vector<std::string>> inputs; // sorted: protobuf maps have no order
  for (const auto &[name, arg] : o.inputs()) {
    std::vector<std::string> &bound = inputs[name];
    for (const coreml::Binding &b : arg.arguments())
      bound.push_back(b.has_name() ? b.name() : blob(b.value()) ? "@blob" : "");
  }
  out.inputs.assign(inputs.begin(), inputs.end());
  for (const auto &[name, value] : o.attributes())
    blob(value);
  for (const coreml::NamedValueType &v : o.outputs())
    out.outputs.push_back(mil_value(v));
  for (const coreml::Block &b : o.blocks())
    out.nested_ops += count_ops(b, 0);
  return out;
}

void program(const coreml::Program &p, Model &out) {
  out.program_version = p.version();
  std::map<std::string, const coreml::Function *> functions; // sorted: protobuf maps have no order
  for (const auto &[name, f] : p.functions())
    functions[name] = &f;
  for (const auto &[name, f] : functions) {
    MilFunction fn;
    fn.name = name;
    fn.opset = f->opset();
    for (const coreml::NamedValueType &v : f->inputs())
      fn.inputs.push_back(mil_value(v));
    auto it = f->block_specializations().find(f->opset());
    if (it == f->block_specializations().end() && !f->block_specializations().empty())
      it = f->block_specializations().begin();
    if (it != f->block_specializations().end()) {
      const coreml::Block &b = it->second;
      fn.outputs.assign(b.outputs().begin(), b.outputs().end());
      if (size_t(b.operations_size()) > kMaxLayers)
        throw Error("ANEC-COREML-003", "function '" + name + "' holds " +
                                           std::to_string(b.operations_size()) +
                                           " operations, over the cap of " + std::to_string(kMaxLayers));
      for (const coreml::Operation &o : b.operations())
        fn.ops.push_back(mil_op(o));
    }
    out.functions.push_back(std::move(fn));
  }
}

Model model(const coreml::Model &m, const std::string &source, size_t depth) {
  if (depth > kMaxPipelineDepth)
    throw Error("ANEC-COREML-003",
                source + ": pipelines nest deeper than " + std::to_string(kMaxPipelineDepth) + " levels");
  Model out;
  out.spec_version = m.specificationversion();
  out.updatable = m.isupdatable();
  const coreml::Description &d = m.description();
  for (const coreml::Feature &f : d.input())
    out.inputs.push_back(feature(f));
  for (const coreml::Feature &f : d.output())
    out.outputs.push_back(feature(f));
  for (const coreml::Feature &f : d.state())
    out.states.push_back(feature(f));
  for (const coreml::Feature &f : d.traininginput())
    out.training_inputs.push_back(feature(f));
  out.author = d.metadata().author();
  out.license = d.metadata().license();
  out.short_description = d.metadata().shortdescription();
  out.predicted_feature = d.predictedfeaturename();
  for (auto *list : {&out.inputs, &out.outputs})
    for (const Feature &f : *list)
      if (f.shape.size() > kMaxRank)
        throw Error("ANEC-COREML-003", source + ": feature '" + f.name + "' has rank " +
                                           std::to_string(f.shape.size()) + ", over " +
                                           std::to_string(kMaxRank));
  const pb::FieldDescriptor *kind = set_field(m, "Type");
  if (!kind)
    throw Error("ANEC-COREML-002", source +
                                       ": the model sets no model type this schema knows "
                                       "(specification version " +
                                       std::to_string(out.spec_version) + ")");
  out.kind = kind->name();
  const pb::Reflection *r = m.GetReflection();
  out.kind_bytes = kind->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE
                       ? int64_t(r->GetMessage(m, kind).ByteSizeLong())
                       : int64_t(r->GetString(m, kind).size());
  const coreml::NeuralNetwork *nn = m.has_neuralnetwork()             ? &m.neuralnetwork()
                                    : m.has_neuralnetworkclassifier() ? &m.neuralnetworkclassifier()
                                    : m.has_neuralnetworkregressor()  ? &m.neuralnetworkregressor()
                                                                      : nullptr;
  if (nn) {
    if (size_t(nn->layers_size()) > kMaxLayers)
      throw Error("ANEC-COREML-003", source + ": " + std::to_string(nn->layers_size()) +
                                         " layers, over the cap of " + std::to_string(kMaxLayers));
    for (const coreml::Layer &l : nn->layers())
      out.layers.push_back(layer(l));
    for (const coreml::Preprocessing &p : nn->preprocessing())
      out.preprocessing.push_back(std::string(p.has_scaler()      ? "scaler"
                                              : p.has_meanimage() ? "meanImage"
                                                                  : "none") +
                                  ":" + p.featurename());
    out.array_shape_mapping = nn->arrayinputshapemapping();
  }
  const coreml::Pipeline *pipe = m.has_pipeline()             ? &m.pipeline()
                                 : m.has_pipelineclassifier() ? &m.pipelineclassifier().pipeline()
                                 : m.has_pipelineregressor()  ? &m.pipelineregressor().pipeline()
                                                              : nullptr;
  if (pipe) {
    for (const coreml::Model &sub : pipe->models())
      out.models.push_back(model(sub, source, depth + 1));
    out.model_names.assign(pipe->names().begin(), pipe->names().end());
  }
  if (m.has_treeensembleclassifier())
    out.tree_nodes = m.treeensembleclassifier().treeensemble().nodes_size();
  if (m.has_treeensembleregressor())
    out.tree_nodes = m.treeensembleregressor().treeensemble().nodes_size();
  if (m.has_mlprogram())
    program(m.mlprogram(), out);
  return out;
}

Model read(std::string_view bytes, const std::string &source) {
  if (!plausible_key(bytes))
    throw Error("ANEC-COREML-001", source + ": not a Core ML model: " +
                                       (bytes.empty() ? std::string("the file is empty")
                                                      : "no protobuf field starts it; " + excerpt(bytes)));
  if (bytes.size() > size_t(INT32_MAX))
    throw Error("ANEC-COREML-003",
                source + ": " + std::to_string(bytes.size()) + " bytes, over protobuf's 2 GiB message limit");
  coreml::Model m;
  if (!m.ParseFromArray(bytes.data(), int(bytes.size())))
    throw Error("ANEC-COREML-001",
                source +
                    ": not a Core ML model: the Model schema cannot parse it (truncated, or another "
                    "format); " +
                    excerpt(bytes));
  return model(m, source, 0);
}

constexpr Api kApi = {
    .header = {kVersion, sizeof(Api)},
    .read = read,
};

} // namespace
} // namespace anec::compiler::coreml_front

extern "C" __attribute__((visibility("default"))) const anec::plugin::Header *anec_coreml_backend_entry() {
  return &anec::compiler::coreml_front::kApi.header;
}
