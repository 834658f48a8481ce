// The Core ML adapter, the only file that includes protobuf and the classes protoc generates from
// coreml.proto: it checks the bytes look like a protobuf message, parses them, and copies the model
// into the records of coreml_model.hpp. Layer and model kinds are read by reflection (the name of the
// oneof field that is set), so a layer declared as `bytes` in the schema subset is still named.
// Its entry function, named by coreml_front::kEntry, is the only symbol the module exports.
#include "coreml_model.hpp"

#include "anec/support/error.hpp"
#include "anec/support/half.hpp"

#include "coreml.pb.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
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
      {1, "bool"},    {2, "string"},  {10, "fp16"},      {11, "fp32"},   {12, "fp64"},  {13, "bf16"},
      {21, "int8"},   {22, "int16"},  {23, "int32"},     {24, "int64"},  {25, "int4"},  {31, "uint8"},
      {32, "uint16"}, {33, "uint32"}, {34, "uint64"},    {35, "uint4"},  {36, "uint2"}, {37, "uint1"},
      {38, "uint6"},  {39, "uint3"},  {40, "fp8e4m3fn"}, {41, "fp8e5m2"}};
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

// A WeightParams' float values (fp32, fp16, or unquantized raw fp32 bytes); none when quantized.
std::vector<float> float_values(const coreml::Weights &w) {
  std::vector<float> out(w.floatvalue().begin(), w.floatvalue().end());
  const std::string &halves = w.float16value();
  for (size_t i = 0; i + 1 < halves.size(); i += 2)
    out.push_back(from_half(uint16_t(uint8_t(halves[i]) | uint8_t(halves[i + 1]) << 8)));
  if (!w.has_quantization() && w.rawvalue().size() % 4 == 0)
    for (size_t i = 0; i < w.rawvalue().size(); i += 4) {
      float v;
      std::memcpy(&v, w.rawvalue().data() + i, 4);
      out.push_back(v);
    }
  return out;
}

// Every WeightParams reachable from `m` (a layer's parameters), summed; with `values`, those that are
// direct fields of the layer's parameters keep their float values under the field's name.
void collect_weights(const pb::Message &m, Weights &out, bool values, int depth = 0) {
  if (depth > 8)
    return;
  const pb::Reflection *r = m.GetReflection();
  std::vector<const pb::FieldDescriptor *> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor *f : fields) {
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    auto one = [&](const pb::Message &x) {
      if (x.GetDescriptor() != coreml::Weights::descriptor())
        return collect_weights(x, out, values, depth + 1);
      const auto &w = static_cast<const coreml::Weights &>(x);
      add_weights(w, out);
      if (values && depth == 0 && !f->is_repeated())
        out.values[f->name()] = float_values(w);
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

Layer layer(const coreml::Layer &l, bool values) {
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
    collect_weights(p, out.weights, values);
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
    if (l.has_padding()) {
      for (const coreml::BorderEdge &e : l.padding().paddingamounts().borderamounts()) {
        out.params["pad"].push_back(double(e.startedgesize()));
        out.params["pad"].push_back(double(e.endedgesize()));
      }
      out.subtype = l.padding().has_reflection()    ? "reflect"
                    : l.padding().has_replication() ? "replicate"
                                                    : "constant";
      out.params["value"] = {double(l.padding().constant().value())};
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

// ---- mlProgram: MIL.proto's program as mil.hpp's records ----

// The first tensor arguments of MIL ops, in the order the op definitions list them (reference/coreml/
// mil-ops: the primary operand first, then the second operand of a binary op, then the others).
// Protobuf maps carry no order, so an operation's inputs are put in this order, then by name: the
// graph's first input is then the op's primary operand, as in the text form.
int input_rank(const std::string &name) {
  static const char *const order[] = {"x",        "data",      "query",     "key",    "value",   "cond",
                                      "a",        "b",         "y",         "values", "indices", "updates",
                                      "update",   "initial_h", "initial_c", "weight", "bias",    "mean",
                                      "variance", "gamma",     "beta"};
  for (size_t i = 0; i < std::size(order); ++i)
    if (name == order[i])
      return int(i);
  return int(std::size(order));
}

class ProgramReader {
public:
  explicit ProgramReader(const std::string &source) : source_(source) {}

  void read(const coreml::Program &p, Model &out) {
    out.program_version = p.version();
    out.program.version = std::to_string(p.version());
    for (const auto &[name, value] : sorted(p.attributes()))
      out.program.attributes.push_back({name, this->value(*value, 0)});
    for (const auto &[name, f] : sorted(p.functions())) {
      if (out.program.functions.size() >= 4096)
        throw Error("ANEC-COREML-003", source_ + ": more than 4096 functions in the program");
      out.program.functions.push_back(function(name, *f));
    }
    out.nested_ops = nested_;
  }

private:
  template <class Map>
  static std::vector<std::pair<std::string, const typename Map::mapped_type *>> sorted(const Map &m) {
    std::vector<std::pair<std::string, const typename Map::mapped_type *>> out;
    for (const auto &[k, v] : m)
      out.emplace_back(k, &v);
    std::sort(out.begin(), out.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    return out;
  }

  MilType type(const coreml::ValueType &t, int depth) {
    if (depth > int(kMaxValueDepth))
      throw Error("ANEC-COREML-003", source_ + ": types nest deeper than " + std::to_string(kMaxValueDepth));
    MilType out;
    if (t.has_statetype()) // state<tensor<...>>: the state's tensor type, as the text reader keeps it
      return type(t.statetype().wrappedtype(), depth + 1);
    if (t.has_tensortype()) {
      const coreml::TensorType &tt = t.tensortype();
      out.dtype = mil_dtype(tt.datatype());
      if (tt.dimensions().empty() && tt.rank() == 0)
        return out; // rank 0: a scalar, as `fp16` in the text
      out.tensor = true;
      if (tt.dimensions().empty() || size_t(tt.dimensions_size()) > kMaxRank * 4) {
        if (size_t(tt.dimensions_size()) > kMaxRank * 4)
          throw Error("ANEC-COREML-003",
                      source_ + ": a tensor type of " + std::to_string(tt.dimensions_size()) + " dimensions");
        out.unknown_rank = true; // rank -1 or no dimensions given: tensor<fp16, *>
        return out;
      }
      for (const coreml::Dimension &d : tt.dimensions()) {
        if (d.has_constant() && d.constant().size() > uint64_t(kMaxDimension))
          throw Error("ANEC-COREML-003", source_ + ": a dimension of " + std::to_string(d.constant().size()) +
                                             ", over " + std::to_string(kMaxDimension));
        out.dims.push_back(d.has_constant() ? int64_t(d.constant().size()) : -1);
        out.symbols.push_back("");
      }
      return out;
    }
    out.dtype = t.has_listtype()         ? "list"
                : t.has_tupletype()      ? "tuple"
                : t.has_dictionarytype() ? "dict"
                                         : "";
    out.unknown_rank = true;
    return out;
  }

  void count(size_t n) {
    total_ += n;
    if (n > kMaxImmediate || total_ > kMaxProgramImmediates)
      throw Error("ANEC-COREML-003",
                  source_ + ": immediate values of more than " +
                      std::to_string(n > kMaxImmediate ? kMaxImmediate : kMaxProgramImmediates) +
                      " elements");
  }

  static MilValue number(double v, bool integral) {
    MilValue x;
    if (integral) {
      x.kind = MilValue::Kind::Int;
      x.i = int64_t(v);
    } else {
      x.kind = MilValue::Kind::Float;
      x.f = v;
    }
    return x;
  }

  // A tensor packed in bytes: 8-bit and narrower integers (narrower ones packed from the low bits of
  // each byte up), fp16 and bf16 little-endian.
  std::vector<MilValue> unpacked(const std::string &bytes, const std::string &dtype) {
    std::vector<MilValue> out;
    auto u8 = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
    if (dtype == "fp16" || dtype == "bf16") {
      count(bytes.size() / 2);
      for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
        uint16_t h = uint16_t(u8(i) | u8(i + 1) << 8);
        double v = dtype == "fp16" ? from_half(h) : double(std::bit_cast<float>(uint32_t(h) << 16));
        out.push_back(number(v, false));
      }
      return out;
    }
    int bits = dtype == "uint1"                      ? 1
               : dtype == "uint2"                    ? 2
               : dtype == "uint3"                    ? 3
               : dtype == "int4" || dtype == "uint4" ? 4
               : dtype == "uint6"                    ? 6
                                                     : 8;
    bool is_signed = dtype == "int8" || dtype == "int4";
    count(bytes.size() * 8 / size_t(bits));
    for (size_t bit = 0; bit + size_t(bits) <= bytes.size() * 8; bit += size_t(bits)) {
      unsigned v = 0;
      for (int k = 0; k < bits; ++k)
        v |= unsigned((u8((bit + size_t(k)) / 8) >> ((bit + size_t(k)) % 8)) & 1u) << k;
      int64_t x = is_signed && (v >> (bits - 1)) ? int64_t(v) - (int64_t(1) << bits) : int64_t(v);
      out.push_back(number(double(x), true));
    }
    return out;
  }

  std::vector<MilValue> elements(const coreml::TensorValue &t, const std::string &dtype) {
    std::vector<MilValue> out;
    auto all = [&](const auto &values, bool integral) {
      count(size_t(values.size()));
      for (const auto &v : values)
        out.push_back(number(double(v), integral));
    };
    if (t.has_floats())
      all(t.floats().values(), false);
    else if (t.has_doubles())
      all(t.doubles().values(), false);
    else if (t.has_ints())
      all(t.ints().values(), true);
    else if (t.has_longints())
      all(t.longints().values(), true);
    else if (t.has_bools()) {
      all(t.bools().values(), true);
      for (MilValue &v : out)
        v.kind = MilValue::Kind::Bool;
    } else if (t.has_strings()) {
      count(size_t(t.strings().values_size()));
      for (const std::string &s : t.strings().values()) {
        MilValue v;
        v.kind = MilValue::Kind::String;
        v.text = s;
        out.push_back(std::move(v));
      }
    } else if (t.has_bytes()) {
      out = unpacked(t.bytes().values(), dtype);
    }
    return out;
  }

  // A value as the text reader gives it: `fp16(0.5)` and `tensor<int32, [2]>([1, 1])` as Typed
  // values holding a number or a list, a BLOBFILE as a Typed value holding the Blob, a tuple or
  // list as a List.
  MilValue value(const coreml::Value &v, int depth) {
    if (depth > int(kMaxValueDepth))
      throw Error("ANEC-COREML-003", source_ + ": values nest deeper than " + std::to_string(kMaxValueDepth));
    MilValue out;
    MilType t = type(v.type(), 0);
    if (v.has_blobfilevalue()) {
      MilValue blob;
      blob.kind = MilValue::Kind::Blob;
      blob.text = v.blobfilevalue().filename();
      blob.i = int64_t(std::min<uint64_t>(v.blobfilevalue().offset(), uint64_t(INT64_MAX)));
      out.kind = MilValue::Kind::Typed;
      out.type = std::move(t);
      out.items.push_back(std::move(blob));
      return out;
    }
    const coreml::Immediate &im = v.immediatevalue();
    if (im.has_tuple() || im.has_list() || im.has_dictionary()) {
      out.kind = MilValue::Kind::List;
      if (im.has_dictionary()) {
        count(size_t(im.dictionary().values_size()));
        for (const coreml::KeyValues::Pair &p : im.dictionary().values()) {
          MilValue pair;
          pair.kind = MilValue::Kind::List;
          pair.items.push_back(value(p.key(), depth + 1));
          pair.items.push_back(value(p.value(), depth + 1));
          out.items.push_back(std::move(pair));
        }
        return out;
      }
      const coreml::ValueList &l = im.has_tuple() ? im.tuple() : im.list();
      count(size_t(l.values_size()));
      for (const coreml::Value &x : l.values())
        out.items.push_back(value(x, depth + 1));
      return out;
    }
    std::vector<MilValue> items = elements(im.tensor(), t.dtype);
    out.kind = MilValue::Kind::Typed;
    bool scalar = !t.tensor;
    out.type = std::move(t);
    if (scalar && items.size() == 1) {
      out.items.push_back(std::move(items[0]));
    } else {
      MilValue list;
      list.kind = MilValue::Kind::List;
      list.items = std::move(items);
      out.items.push_back(std::move(list));
    }
    return out;
  }

  MilVar var(const coreml::NamedValueType &v) { return MilVar{v.name(), type(v.type(), 0)}; }

  static size_t count_ops(const coreml::Block &b, int depth) {
    size_t n = size_t(b.operations_size());
    if (depth < 32)
      for (const coreml::Operation &op : b.operations())
        for (const coreml::Block &inner : op.blocks())
          n += count_ops(inner, depth + 1);
    return n;
  }

  MilOp op(const coreml::Operation &o) {
    MilOp out;
    out.type = o.type();
    auto in = sorted(o.inputs());
    std::stable_sort(in.begin(), in.end(),
                     [](const auto &x, const auto &y) { return input_rank(x.first) < input_rank(y.first); });
    for (const auto &[name, arg] : in) {
      std::vector<MilValue> bound;
      for (const coreml::Binding &b : arg->arguments()) {
        if (b.has_name()) {
          MilValue v;
          v.kind = MilValue::Kind::Name;
          v.text = b.name();
          bound.push_back(std::move(v));
        } else {
          bound.push_back(value(b.value(), 0));
        }
      }
      if (bound.size() == 1) {
        out.inputs.push_back({name, std::move(bound[0])});
      } else { // values = (a, b): a list, as the text writes it
        MilValue list;
        list.kind = MilValue::Kind::List;
        list.items = std::move(bound);
        out.inputs.push_back({name, std::move(list)});
      }
    }
    for (const auto &[name, v] : sorted(o.attributes()))
      out.attributes.push_back({name, value(*v, 0)});
    for (const coreml::NamedValueType &v : o.outputs())
      out.outputs.push_back(var(v));
    for (const coreml::Block &b : o.blocks())
      nested_ += count_ops(b, 0);
    return out;
  }

  MilFunction function(const std::string &name, const coreml::Function &f) {
    MilFunction fn;
    fn.name = name;
    fn.opset = f.opset();
    for (const coreml::NamedValueType &v : f.inputs())
      fn.inputs.push_back(var(v));
    auto it = f.block_specializations().find(f.opset());
    if (it == f.block_specializations().end() && !f.block_specializations().empty())
      it = f.block_specializations().begin();
    if (it == f.block_specializations().end())
      return fn;
    const coreml::Block &b = it->second;
    fn.outputs.assign(b.outputs().begin(), b.outputs().end());
    if (size_t(b.operations_size()) > kMaxLayers)
      throw Error("ANEC-COREML-003", "function '" + name + "' holds " + std::to_string(b.operations_size()) +
                                         " operations, over the cap of " + std::to_string(kMaxLayers));
    for (const coreml::Operation &o : b.operations())
      fn.ops.push_back(op(o));
    return fn;
  }

  const std::string &source_;
  size_t total_ = 0, nested_ = 0;
};

Model model(const coreml::Model &m, const std::string &source, size_t depth, bool values) {
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
      out.layers.push_back(layer(l, values));
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
      out.models.push_back(model(sub, source, depth + 1, values));
    out.model_names.assign(pipe->names().begin(), pipe->names().end());
  }
  if (m.has_treeensembleclassifier())
    out.tree_nodes = m.treeensembleclassifier().treeensemble().nodes_size();
  if (m.has_treeensembleregressor())
    out.tree_nodes = m.treeensembleregressor().treeensemble().nodes_size();
  if (m.has_mlprogram())
    ProgramReader(source).read(m.mlprogram(), out);
  return out;
}

// protobuf logs a malformed field (a string that is not UTF-8) on stderr before its parse fails; the
// failure is reported as ANEC-COREML-001, so that log is not shown.
void quiet_protobuf() {
  static const bool quiet = [] {
    pb::SetLogHandler([](pb::LogLevel, const char *, int, const std::string &) {});
    return true;
  }();
  (void)quiet;
}

Model read(std::string_view bytes, const std::string &source, bool values) {
  quiet_protobuf();
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
  return model(m, source, 0, values);
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
