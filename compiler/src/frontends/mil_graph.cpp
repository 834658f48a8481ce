// A parsed MIL function as a graph: operations mapped through the front-end map (tables/schema/
// frontend/mil.toml), constants and the compression ops read as the weights of the operations that
// use them, BLOBFILE references resolved inside the model's folder (milblob layout: a 64-byte
// header, then per blob a 64-byte record: u32 sentinel 0xDEADBEEF, u32 data type, u64 size in bytes,
// u64 data offset, u64 padding bits; reference/coreml/milblob/StorageFormat.hpp).
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/mil.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "mil_values.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/inside.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

namespace anec::compiler {

namespace {

// Where a MIL axis of a rank-r tensor lands in [N, D, C, H, W] (as the ONNX front-end lays out NCHW).
constexpr int kLayout[6][5] = {{}, {kC}, {kN, kC}, {kN, kC, kW}, {kN, kC, kH, kW}, {kN, kC, kD, kH, kW}};

int map_axis(int64_t axis, size_t rank) {
  if (rank == 0)
    return kC;
  int64_t r = int64_t(rank);
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    return kC;
  if (rank > 5) // the leading axes fold into N
    return a < r - 4 ? kN : kLayout[5][a - (r - 5)];
  return kLayout[rank][a];
}

// Bits per element of a MIL element type (the sub-byte types of the compression ops included).
int dtype_bits(const std::string &t) {
  static const std::map<std::string, int> bits = {
      {"fp16", 16},  {"fp32", 32},     {"fp64", 64},  {"bf16", 16},   {"int4", 4},    {"int8", 8},
      {"int16", 16}, {"int32", 32},    {"int64", 64}, {"uint1", 1},   {"uint2", 2},   {"uint3", 3},
      {"uint4", 4},  {"uint6", 6},     {"uint8", 8},  {"uint16", 16}, {"uint32", 32}, {"uint64", 64},
      {"bool", 8},   {"fp8e4m3fn", 8}, {"fp8e5m2", 8}};
  auto it = bits.find(t);
  return it == bits.end() ? 0 : it->second;
}

// The graph's dtype for a MIL element type.
std::string graph_dtype(const std::string &t) {
  if (t == "bool")
    return "uint8";
  if (t == "fp8e4m3fn" || t == "fp8e5m2")
    return "fp8";
  return t;
}

// A constant: its (dense) type, its value as written (a const's `val`; null for a compression op),
// and the bytes it is stored in (a compression op: the sum of its stored parts).
struct Constant {
  MilType type;
  const MilValue *value = nullptr;
  const MilOp *op = nullptr; // the compression op, for its values (keep_values)
  int64_t stored_bytes = 0;
  std::string compression; // the constexpr op that produced it, "" for a const
};

// A constant tensor that is data (weights, a mask, a bias), not a parameter: more than one element
// of a float or an 8-bit-or-narrower type. Integer lists of 16 bits and more are shapes, axes, pads.
bool weight_like(const MilType &t) {
  int bits = dtype_bits(t.dtype);
  bool parameter = t.dtype == "bool" || t.dtype == "string" ||
                   (bits >= 16 && (t.dtype.rfind("int", 0) == 0 || t.dtype.rfind("uint", 0) == 0));
  return t.tensor && t.elements() > 1 && bits > 0 && !parameter;
}

// The evaluator's broadcasting ops: with keep_values their constant operands are input tensors.
const std::set<std::string> kBroadcast = {"add", "sub", "mul",       "div",    "max",
                                          "min", "pow", "floor_div", "compare"};

int64_t stored_bytes_of(const MilType &t) {
  int64_t n = t.elements();
  int bits = dtype_bits(t.dtype);
  if (n <= 0 || bits <= 0)
    return 0;
  auto total = checked_mul(n, int64_t(bits));
  return total ? (*total + 7) / 8 : 0;
}

class Converter {
public:
  Converter(const MilProgram &p, const std::string &source, const OpCatalog &catalog, const DimBindings &dims,
            const MilContext &context)
      : p_(p), source_(source), catalog_(catalog), dims_(dims), context_(context) {}

  Graph run() {
    if (p_.functions.empty())
      throw Error("ANEC-MIL-005", source_ + ": the program has no function");
    const MilFunction *f = nullptr;
    std::string others;
    for (const MilFunction &x : p_.functions)
      if (!f && x.name == context_.function)
        f = &x;
    if (!f) {
      f = &p_.functions[0];
      g_.notes.push_back("no function '" + context_.function + "': read '" + f->name + "'");
    }
    for (const MilFunction &x : p_.functions)
      if (&x != f)
        others += (others.empty() ? "" : ", ") + x.name + (x.opset.empty() ? "" : "<" + x.opset + ">");
    if (!others.empty())
      g_.notes.push_back("other functions, not read: " + others);
    g_.source = source_;
    g_.front_end = "mil " + p_.version + (f->opset.empty() ? "" : " " + f->opset);
    fn_ = f;
    for (const MilVar &in : f->inputs) {
      define(in.name, f->pos);
      Tensor t = tensor_of(in.name, in.type);
      g_.inputs.push_back(g_.add(std::move(t)).name);
      types_[in.name] = in.type;
    }
    flexible_shapes(*f);
    bind_dimensions(g_, dims_);
    bind_defaults(*f);
    for (const MilOp &o : f->ops)
      op(o);
    for (const std::string &out : f->outputs) {
      if (!g_.tensor(out)) {
        auto c = constants_.find(out);
        if (c == constants_.end())
          throw Error("ANEC-MIL-006", source_ + ":" + at(f->pos) + ": function '" + f->name + "' returns '" +
                                          out + "', which nothing defines");
        Tensor t = tensor_of(out, c->second.type);
        t.constant = true;
        g_.add(std::move(t));
      }
      g_.outputs.push_back(out);
    }
    bind_symbols();
    infer_unnamed();
    g_.source_nodes = f->ops.size();
    for (const auto &[type, count] : unmapped_)
      g_.notes.push_back(
          "unmapped MIL op '" + type + "' (" + std::to_string(count) +
          "x): not in the front-end map (tables/schema/frontend/mil.toml), kept as mil:" + type);
    for (const std::string &n : value_notes_)
      g_.notes.push_back("values: " + n);
    if (blob_absent_)
      g_.notes.push_back(std::to_string(blob_absent_) + " of " + std::to_string(blob_refs_) +
                         " BLOBFILE weight(s) with bytes absent (stored size known from the type)" +
                         (absent_files_.empty() ? "" : ": " + join(absent_files_)));
    return std::move(g_);
  }

private:
  static std::string at(MilPos p) { return std::to_string(p.line) + ":" + std::to_string(p.column); }
  static std::string join(const std::set<std::string> &s) {
    std::string out;
    for (const std::string &x : s)
      out += (out.empty() ? "" : ", ") + x;
    return out;
  }

  void define(const std::string &name, MilPos pos) {
    if (!defined_.insert(name).second)
      throw Error("ANEC-MIL-006", source_ + ":" + at(pos) + ": '" + name + "' is defined twice");
  }

  Tensor tensor_of(const std::string &name, const MilType &type) {
    Tensor t;
    t.name = name;
    t.dtype = graph_dtype(type.dtype);
    size_t r = type.dims.size();
    t.set_source_rank(r >= 4 ? r : 0);
    for (size_t k = 0; k < r; ++k) {
      int a = map_axis(int64_t(k), r);
      int64_t d = type.dims[k];
      if (d < 0) {
        t.shape.d[a] = -1;
        t.shape.symbol[a] = type.symbols[k].empty() ? name + ":" + std::to_string(k) : type.symbols[k];
        t.dynamic = true;
      } else if (t.shape.d[a] >= 0) {
        auto m = checked_mul(t.shape.d[a], d); // only the folded leading axes multiply
        t.shape.d[a] = m && *m <= kMaxDimension ? *m : kMaxDimension + 1;
      }
    }
    check_size(t, source_);
    return t;
  }

  // Symbols bound by --dim (or by a default shape) hold their value in every tensor the text types
  // with them.
  void bind_symbols() {
    for (Tensor &t : g_.tensors)
      for (int a = 0; a < 5; ++a)
        if (t.shape.d[a] < 0)
          for (const DimBindings *b : {&dims_, static_cast<const DimBindings *>(&defaulted_)})
            if (auto it = b->find(t.shape.symbol[a]); it != b->end()) {
              t.shape.d[a] = it->second;
              t.shape.symbol[a].clear();
              break;
            }
  }

  // A `?` the text leaves unnamed (MIL's type inference lost the link to the input's dimension) is
  // found again from the op's inputs once those are bound: the catalogue's shape function gives the
  // output, its element type stays the text's.
  void infer_unnamed() {
    for (const Op &op : g_.ops) {
      bool open = false, known = true;
      for (const std::string &n : op.outputs)
        open |= g_.tensor(n)->shape.symbolic();
      for (const std::string &n : op.inputs)
        known &= !g_.tensor(n)->shape.symbolic();
      if (!open || !known || op.inputs.empty() || !catalog_.find(op.type))
        continue;
      std::vector<std::string> dtypes;
      for (const std::string &n : op.outputs)
        dtypes.push_back(g_.tensor(n)->dtype);
      std::vector<Shape> before;
      for (const std::string &n : op.outputs)
        before.push_back(g_.tensor(n)->shape);
      try {
        infer_shapes(g_, op, catalog_);
      } catch (const Error &) { // the catalogue cannot tell (an attribute absent): the text's `?` stays
        for (size_t k = 0; k < op.outputs.size(); ++k)
          g_.tensor(op.outputs[k])->shape = before[k];
      }
      for (size_t k = 0; k < op.outputs.size(); ++k)
        g_.tensor(op.outputs[k])->dtype = dtypes[k];
    }
  }

  // ---- flexible input shapes ----
  // coremltools writes them after the signature: [FlexibleShapeInformation = tuple<...>((("DefaultShapes",
  // {{"x", [1, 1, 1]}}), ("RangeDims", {{"x", [[1, 1], [1, 2048], [1, 2048]]}})))], or with
  // ("EnumeratedShapes", {{"<id>", {{"x", [1, 3, 224, 224]}}}, ...}) for enumerated shapes.
  static std::vector<int64_t> int_list(const MilValue &v) {
    std::vector<double> n;
    std::vector<int64_t> out;
    if (v.numbers(n))
      for (double x : n)
        out.push_back(int64_t(x));
    return out;
  }
  // The entries {key, value} of a MIL dict literal.
  static std::vector<std::pair<std::string, const MilValue *>> entries(const MilValue &dict) {
    std::vector<std::pair<std::string, const MilValue *>> out;
    const MilValue &d = dict.unwrapped();
    if (d.kind != MilValue::Kind::List)
      return out;
    for (const MilValue &e : d.items)
      if (e.kind == MilValue::Kind::List && e.items.size() == 2 &&
          e.items[0].unwrapped().kind == MilValue::Kind::String)
        out.emplace_back(e.items[0].unwrapped().text, &e.items[1]);
    return out;
  }
  static std::string shape_text(const std::vector<int64_t> &v) {
    std::string out;
    for (int64_t x : v)
      out += (out.empty() ? "" : ", ") + std::to_string(x);
    return "[" + out + "]";
  }

  void flexible_shapes(const MilFunction &f) {
    for (const MilNamed &a : f.attributes) {
      if (a.name != "FlexibleShapeInformation") {
        g_.notes.push_back("function attribute '" + a.name + "' not read");
        continue;
      }
      const MilValue &v = a.value.unwrapped();
      if (v.kind != MilValue::Kind::List)
        continue;
      for (const MilValue &pair : v.items) {
        if (pair.kind != MilValue::Kind::List || pair.items.size() != 2 ||
            pair.items[0].unwrapped().kind != MilValue::Kind::String)
          continue;
        const std::string &key = pair.items[0].unwrapped().text;
        for (const auto &[input, value] : entries(pair.items[1])) {
          if (key == "DefaultShapes") {
            defaults_[input] = int_list(*value);
          } else if (key == "RangeDims") {
            std::vector<int64_t> r = int_list(*value);
            if (r.size() % 2 == 0)
              ranges_[input] = r;
          } else if (key == "EnumeratedShapes") {
            for (const auto &[name, shape] : entries(*value))
              enumerated_[name].push_back(int_list(*shape));
          }
        }
      }
    }
    for (const auto &[input, r] : ranges_) {
      std::string text;
      for (size_t k = 0; k + 1 < r.size(); k += 2)
        text += (text.empty() ? "" : ", ") + (r[k] == r[k + 1]
                                                  ? std::to_string(r[k])
                                                  : std::to_string(r[k]) + ".." + std::to_string(r[k + 1]));
      g_.notes.push_back("input '" + input + "': flexible shape [" + text +
                         "] (FlexibleShapeInformation RangeDims)");
    }
    for (const auto &[input, shapes] : enumerated_) {
      std::string text;
      for (const auto &s : shapes)
        text += (text.empty() ? "" : ", ") + shape_text(s);
      g_.notes.push_back("input '" + input + "': enumerated shapes " + text +
                         " (FlexibleShapeInformation EnumeratedShapes)");
    }
  }

  // A dimension --dim leaves open takes the model's default shape (what Core ML feeds when the
  // caller gives none: metadata.json lists it as the input's shape); one --dim binds outside the
  // declared range is refused (Core ML would refuse that input).
  void bind_defaults(const MilFunction &f) {
    for (const MilVar &in : f.inputs) {
      Tensor &t = *g_.tensor(in.name);
      size_t r = in.type.dims.size();
      auto range = ranges_.find(in.name);
      auto def = defaults_.find(in.name);
      std::vector<std::string> taken;
      for (size_t k = 0; k < r; ++k) {
        if (in.type.dims[k] >= 0)
          continue;
        int a = map_axis(int64_t(k), r);
        if (t.shape.d[a] >= 0 && range != ranges_.end() && range->second.size() == 2 * r &&
            (t.shape.d[a] < range->second[2 * k] || t.shape.d[a] > range->second[2 * k + 1]))
          throw Error("ANEC-MODEL-003", source_ + ": input '" + in.name + "' axis " + std::to_string(k) +
                                            " is bound to " + std::to_string(t.shape.d[a]) +
                                            ", outside the range " + std::to_string(range->second[2 * k]) +
                                            ".." + std::to_string(range->second[2 * k + 1]) +
                                            " the model declares (FlexibleShapeInformation RangeDims)");
        if (t.shape.d[a] >= 0 || def == defaults_.end() || def->second.size() != r || def->second[k] <= 0)
          continue;
        std::string symbol = t.shape.symbol[a];
        t.shape.d[a] = def->second[k];
        t.shape.symbol[a].clear();
        defaulted_[symbol] = def->second[k];
        taken.push_back(std::to_string(k));
      }
      if (!taken.empty()) {
        std::string axes;
        for (const std::string &k : taken)
          axes += (axes.empty() ? "" : ", ") + k;
        g_.notes.push_back("input '" + in.name + "': axis " + axes +
                           " not bound by --dim, read at the default shape " + shape_text(def->second) +
                           " (FlexibleShapeInformation DefaultShapes)");
      }
    }
  }

  // ---- weights ----
  int64_t blob_bytes(const MilValue &blob, const MilType &type) {
    ++blob_refs_;
    int64_t expected = stored_bytes_of(type);
    const std::string &path = blob.text;
    std::optional<std::filesystem::path> real =
        mil_blob_file(context_.model_path, path, source_ + ":" + at(blob.pos));
    if (!real) {
      ++blob_absent_;
      if (!context_.model_path.empty())
        absent_files_.insert(path);
      return expected;
    }
    int64_t bytes = checked_blob(*real, blob, path, expected);
    blob_files_[&blob] = *real;
    return bytes;
  }

  // The blob's record at `offset` (milblob StorageFormat: sentinel, type, size, data offset) must be
  // there and hold as many bytes as the type needs.
  int64_t checked_blob(const std::filesystem::path &file, const MilValue &blob, const std::string &path,
                       int64_t expected) {
    auto fail = [&](const std::string &why) {
      return Error("ANEC-MIL-008", source_ + ":" + at(blob.pos) + ": BLOBFILE '" + path + "' offset " +
                                       std::to_string(blob.i) + ": " + why);
    };
    std::error_code ec;
    uint64_t size = std::filesystem::file_size(file, ec);
    uint64_t offset = uint64_t(blob.i);
    if (ec || offset > size || size - offset < 64)
      throw fail("no 64-byte blob record there (the file holds " + std::to_string(size) + " bytes)");
    std::ifstream in(file, std::ios::binary);
    unsigned char rec[64] = {};
    in.seekg(std::streamoff(offset));
    if (!in.read(reinterpret_cast<char *>(rec), 64))
      throw fail("cannot read the blob record");
    auto u32 = [&](int k) {
      uint32_t v = 0;
      for (int b = 3; b >= 0; --b)
        v = v << 8 | rec[k + b];
      return v;
    };
    auto u64 = [&](int k) { return uint64_t(u32(k)) | uint64_t(u32(k + 4)) << 32; };
    if (u32(0) != 0xDEADBEEFu)
      throw fail("no blob record sentinel 0xDEADBEEF");
    uint64_t bytes = u64(8), data = u64(16);
    if (data > size || bytes > size - data)
      throw fail("the blob's " + std::to_string(bytes) + " bytes at " + std::to_string(data) +
                 " run past the file's end (" + std::to_string(size) + " bytes)");
    if (expected > 0 && bytes < uint64_t(expected))
      throw fail("the blob holds " + std::to_string(bytes) + " bytes; the type needs " +
                 std::to_string(expected));
    return int64_t(bytes);
  }

  // The stored bytes of a value given inline or by name (a tensor literal, a BLOBFILE, a constant).
  int64_t stored(const MilValue &v, const MilType *declared) {
    if (v.kind == MilValue::Kind::Name) {
      auto c = constants_.find(v.text);
      return c == constants_.end() ? 0 : c->second.stored_bytes;
    }
    if (v.kind == MilValue::Kind::Typed && v.type) {
      if (!v.items.empty() && v.items[0].kind == MilValue::Kind::Blob)
        return blob_bytes(v.items[0], *v.type);
      return v.type->tensor ? stored_bytes_of(*v.type) : 0; // scalars (an axis, a scalar scale) aside
    }
    if (v.kind == MilValue::Kind::Blob && declared)
      return blob_bytes(v, *declared);
    return 0;
  }

  void constant(const MilOp &o) {
    const MilValue *val = o.attribute("val");
    if (!val)
      val = o.input("val");
    if (o.outputs.size() != 1 || !val)
      throw Error("ANEC-MIL-002", source_ + ":" + at(o.pos) + ": const takes one output and a val");
    define(o.outputs[0].name, o.pos);
    Constant c;
    c.type = o.outputs[0].type;
    c.value = val;
    c.stored_bytes = stored(*val, &c.type);
    constants_[o.outputs[0].name] = c;
  }

  // A compression op (constexpr_*): its dense outputs are constants whose stored size is the sum of
  // its parts (quantized data, palette and indices, mask and values, scales and offsets).
  void compressed(const MilOp &o) {
    int64_t bytes = 0;
    for (const auto *list : {&o.inputs, &o.attributes})
      for (const MilNamed &n : *list)
        if (n.name != "name")
          bytes = add_or_throw(bytes, stored(n.value, nullptr), "ANEC-GRAPH-003",
                               source_ + ": " + o.name() + " stored bytes");
    for (size_t k = 0; k < o.outputs.size(); ++k) {
      define(o.outputs[k].name, o.pos);
      Constant c;
      c.type = o.outputs[k].type;
      c.stored_bytes = k + 1 == o.outputs.size() ? bytes : 0; // the last output holds the dense values
      c.compression = o.type;
      c.op = &o;
      constants_[o.outputs[k].name] = c;
    }
  }

  // ---- operations ----
  const MilValue *resolved(const MilValue *v) const {
    if (v && v->kind == MilValue::Kind::Name)
      if (auto c = constants_.find(v->text); c != constants_.end() && c->second.value)
        return c->second.value;
    return v;
  }
  std::optional<std::vector<double>> numbers(const MilOp &o, const char *name) const {
    const MilValue *v = resolved(o.input(name));
    std::vector<double> out;
    if (!v || !v->numbers(out))
      return std::nullopt;
    return out;
  }
  std::optional<std::string> text(const MilOp &o, const char *name) const {
    const MilValue *v = resolved(o.input(name));
    if (!v || v->unwrapped().kind != MilValue::Kind::String)
      return std::nullopt;
    return v->unwrapped().text;
  }
  const MilType *type_of(const std::string &name) const {
    if (auto t = types_.find(name); t != types_.end())
      return &t->second;
    if (auto c = constants_.find(name); c != constants_.end())
      return &c->second.type;
    return nullptr;
  }
  size_t rank_of(const Op &op) const {
    const MilType *t = op.inputs.empty() ? nullptr : type_of(op.inputs[0]);
    return t ? t->dims.size() : 0;
  }
  static Doc ints(const std::vector<int64_t> &v) {
    Doc a = Doc::array();
    for (int64_t x : v)
      a.push(Doc::integer(x));
    return a;
  }
  std::string letters(const std::vector<double> &axes, size_t rank) const {
    std::string out;
    for (double a : axes)
      if (char l = kAxisNames[map_axis(int64_t(a), rank)]; out.find(l) == std::string::npos)
        out += l;
    return out;
  }

  void op(const MilOp &o) {
    if (o.outputs.empty()) // MIL text always names one; a spec's program may not
      throw Error("ANEC-MIL-006", source_ + ":" + at(o.pos) + ": '" + o.type + "' defines no output");
    if (o.type == "const") {
      constant(o);
      return;
    }
    if (o.type.rfind("constexpr_", 0) == 0) {
      compressed(o);
      return;
    }
    const FrontEndOp *row = catalog_.front_end("mil", o.type);
    Op op;
    op.name = o.name();
    if (row) {
      op.type = row->op;
    } else {
      op.type = "mil:" + o.type;
      ++unmapped_[o.type];
    }
    int64_t weight_elements = 0, weight_stored = 0;
    bool compressed_weights = false, broadcast = context_.keep_values && kBroadcast.count(op.type);
    auto operand = [&](const MilNamed &n, const MilValue &v) {
      if (row && row->params.count(n.name))
        return; // read as an attribute below
      if (broadcast && (v.kind != MilValue::Kind::Name || constants_.count(v.text))) {
        std::string t = constant_operand(o, n, v);
        if (t.empty())
          op.type = "mil:" + o.type; // not evaluated, rather than computed without the operand
        else
          op.inputs.push_back(t);
        return;
      }
      if (v.kind == MilValue::Kind::Name) {
        if (g_.tensor(v.text) && !constants_.count(v.text)) {
          if (std::find(op.inputs.begin(), op.inputs.end(), v.text) == op.inputs.end())
            op.inputs.push_back(v.text);
          return;
        }
        auto c = constants_.find(v.text);
        if (c == constants_.end())
          throw Error("ANEC-MIL-006", source_ + ":" + at(v.pos) + ": '" + o.type + "' reads '" + v.text +
                                          "', which nothing defines before it");
        if (weight_like(c->second.type) || !c->second.compression.empty()) {
          weight_elements += c->second.type.elements();
          weight_stored += c->second.stored_bytes;
          compressed_weights |= !c->second.compression.empty();
        }
        return;
      }
      if (v.kind == MilValue::Kind::Typed && v.type && weight_like(*v.type)) {
        weight_elements += v.type->elements();
        weight_stored += stored(v, nullptr);
      }
    };
    std::vector<MilNamed> ordered = o.inputs;
    if (broadcast) // x before y, as the evaluator reads them
      std::stable_sort(ordered.begin(), ordered.end(),
                       [](const MilNamed &a, const MilNamed &b) { return a.name < b.name; });
    for (const MilNamed &n : ordered) {
      if (n.value.kind == MilValue::Kind::List) // concat(values = (a, b)), ...
        for (const MilValue &x : n.value.items)
          operand(n, x);
      else
        operand(n, n.value);
    }
    for (const MilVar &out : o.outputs) {
      define(out.name, o.pos);
      types_[out.name] = out.type;
      op.outputs.push_back(g_.add(tensor_of(out.name, out.type)).name);
    }
    if (row)
      attributes(o, *row, op);
    if (context_.keep_values)
      record_weights(o, op);
    if (weight_elements > 0) {
      if (op.type == "matmul") // x @ W with a constant W: a linear layer
        op.type = "linear";
      op.attrs.set("weight_elements", Doc::integer(weight_elements));
      if (weight_stored > 0 && (compressed_weights || weight_stored != weight_elements * 2))
        op.attrs.set("weight_bytes", Doc::integer(weight_stored));
    }
    if (const MilType *out = o.outputs.empty() ? nullptr : &o.outputs[0].type;
        op.type == "linear" && out && !out->dims.empty() && out->dims.back() > 0)
      op.attrs.set("out_features", Doc::integer(out->dims.back()));
    // The text's types are the contraction's result (MIL's type inference wrote them).
    if (op.type == "matmul")
      op.attrs.set("contraction_checked", Doc::boolean(true));
    g_.ops.push_back(std::move(op));
  }

  // ---- values (keep_values) ----
  static const MilValue *param(const MilOp &o, const char *name) {
    const MilValue *v = o.input(name);
    return v ? v : o.attribute(name);
  }
  // A value's declared type: a named constant's, a typed literal's.
  const MilType *declared(const MilValue *v) const {
    if (!v)
      return nullptr;
    if (v->kind == MilValue::Kind::Name)
      return type_of(v->text);
    return v->kind == MilValue::Kind::Typed && v->type ? &*v->type : nullptr;
  }
  std::optional<std::vector<double>> elements_of(const MilValue *v, const MilType *type) {
    if (!v)
      return std::nullopt;
    if (v->kind == MilValue::Kind::Name)
      return dense(v->text);
    const MilValue *blob = v->kind == MilValue::Kind::Blob ? v : nullptr;
    if (v->kind == MilValue::Kind::Typed && v->type && !v->items.empty() &&
        v->items[0].kind == MilValue::Kind::Blob)
      blob = &v->items[0], type = &*v->type;
    if (blob) {
      auto f = blob_files_.find(blob);
      if (!type || f == blob_files_.end())
        return std::nullopt; // bytes absent: the evaluator seeds the values and says so
      int64_t n = type->elements();
      if (n > mil_values::kMaxElements - values_read_) {
        value_notes_.insert("constants past " + std::to_string(mil_values::kMaxElements) +
                            " elements in all not read (seeded)");
        return std::nullopt;
      }
      std::string why;
      auto out = mil_values::read_blob(f->second, uint64_t(blob->i), n, why);
      if (!out)
        value_notes_.insert("BLOBFILE '" + blob->text + "' offset " + std::to_string(blob->i) + ": " + why);
      else
        values_read_ += n;
      return out;
    }
    std::vector<double> out;
    if (!v->numbers(out))
      return std::nullopt;
    return out;
  }

  // A constant's dense values (a const's literal or blob, a compression op expanded), once.
  std::optional<std::vector<double>> dense(const std::string &name) {
    if (auto it = dense_.find(name); it != dense_.end())
      return it->second;
    dense_[name] = std::nullopt; // a constant defined through itself reads as unknown
    auto c = constants_.find(name);
    std::optional<std::vector<double>> v;
    if (c != constants_.end() && c->second.value)
      v = elements_of(c->second.value, &c->second.type);
    else if (c != constants_.end() && c->second.op && c->second.op->outputs.size() == 1)
      v = decompressed(*c->second.op, c->second.type);
    int64_t n = c == constants_.end() ? 0 : c->second.type.elements();
    if (v && int64_t(v->size()) != n && !(n <= 1 && v->size() == 1)) {
      value_notes_.insert("constant '" + name + "' holds " + std::to_string(v->size()) +
                          " values, its type " + std::to_string(n));
      v.reset();
    }
    return dense_[name] = std::move(v);
  }

  // A compression op's dense output as its op spec defines it (mil-ops iOS16 constexpr_ops.py, iOS18
  // compression.py). iOS16 packs lut_to_dense's indices and sparse_to_dense's mask into uint8
  // vectors, least significant bit first; iOS18 gives them typed (uint1..uint8) at the output's shape.
  std::optional<std::vector<double>> decompressed(const MilOp &o, const MilType &type) {
    auto values = [&](const char *n) { return elements_of(param(o, n), declared(param(o, n))); };
    auto dims = [&](const char *n) {
      const MilType *t = declared(param(o, n));
      return t ? t->dims : std::vector<int64_t>{};
    };
    auto dtype = [&](const char *n) {
      const MilType *t = declared(param(o, n));
      return t ? t->dtype : std::string();
    };
    int64_t count = type.elements();
    // A packed uint8 vector as `bits`-wide fields.
    auto unpacked = [&](const std::vector<double> &bytes, int bits) {
      std::vector<uint8_t> b(bytes.begin(), bytes.end());
      if (int64_t(b.size()) * 8 < count * bits)
        return std::optional<std::vector<double>>();
      return std::optional<std::vector<double>>(mil_values::unpack(b, bits, count, false));
    };
    const std::string &t = o.type;
    if (t == "constexpr_affine_dequantize") {
      auto q = values("quantized_data"), zp = values("zero_point"), s = values("scale"),
           axis = values("axis");
      if (!q || !zp || !s || !axis || axis->size() != 1)
        return std::nullopt;
      return mil_values::affine_dequantize(*q, type.dims, *zp, *s, int64_t((*axis)[0]));
    }
    if (t == "constexpr_blockwise_shift_scale") {
      auto d = values("data"), s = values("scale");
      std::optional<std::vector<double>> off = param(o, "offset") ? values("offset") : std::vector<double>{};
      if (!d || !s || !off)
        return std::nullopt;
      return mil_values::blockwise_shift_scale(*d, type.dims, *s, dims("scale"), *off);
    }
    if (t == "constexpr_lut_to_dense") {
      auto idx = values("indices"), lut = values("lut");
      std::vector<int64_t> lut_dims = dims("lut");
      if (!idx || !lut || lut_dims.empty())
        return std::nullopt;
      if (lut_dims.size() == 1 && dtype("indices") == "uint8" && int64_t(idx->size()) != count)
        idx = unpacked(*idx, std::bit_width(uint64_t(std::max<int64_t>(lut_dims[0], 2) - 1)));
      return idx ? mil_values::lut_to_dense(*idx, type.dims, *lut, lut_dims) : std::nullopt;
    }
    if (t == "constexpr_sparse_to_dense") {
      auto mask = values("mask"), nz = values("nonzero_data");
      if (mask && dtype("mask") == "uint8")
        mask = unpacked(*mask, 1);
      if (!mask || !nz)
        return std::nullopt;
      return mil_values::sparse_to_dense(*mask, *nz, count);
    }
    if (t == "constexpr_cast")
      return values("source_val");
    value_notes_.insert("'" + t + "' not expanded: its values are seeded");
    return std::nullopt;
  }

  // A broadcasting op's constant operand as a constant tensor with its values: its dims left-padded
  // with 1s to the output's rank (MIL broadcasts right-aligned), laid out as a tensor of that rank.
  // "" where that cannot be (values unknown, rank past 5).
  std::string constant_operand(const MilOp &o, const MilNamed &n, const MilValue &v) {
    const MilType *out = o.outputs.empty() ? nullptr : &o.outputs[0].type;
    const MilType *ct = declared(&v);
    auto values = elements_of(&v, ct);
    size_t rank = out ? out->dims.size() : 0;
    std::vector<int64_t> cd = ct && ct->tensor ? ct->dims : std::vector<int64_t>{};
    if (!values || !out || rank > 5 || cd.size() > rank)
      return "";
    Tensor t;
    t.constant = true;
    t.set_source_rank(rank);
    t.dtype = graph_dtype(ct ? ct->dtype : "fp32");
    for (size_t k = 0; k < cd.size(); ++k)
      t.shape.d[size_t(kLayout[rank][rank - cd.size() + k])] = cd[k];
    if (t.shape.elements() != int64_t(values->size()))
      return "";
    std::string base = v.kind == MilValue::Kind::Name ? v.text : o.name() + "/" + n.name, shape;
    for (int64_t d : t.shape.d)
      shape += (shape.empty() ? "@" : "x") + std::to_string(d);
    for (int k = 0;; ++k) {
      t.name = k == 0 ? base : base + shape + (k > 1 ? "#" + std::to_string(k) : "");
      const Tensor *have = g_.tensor(t.name);
      if (!have)
        break;
      if (have->constant && have->shape.d == t.shape.d && g_.values.count(t.name))
        return t.name;
    }
    g_.values[t.name].data.assign(values->begin(), values->end());
    return g_.add(std::move(t)).name;
  }

  // A conv, deconv or linear layer's constant weight and bias as the evaluator reads them
  // (Graph::values "<op>/weight", "<op>/bias"): MIL's layouts are the evaluator's (conv [O, C/groups,
  // k...], conv_transpose [C, O/groups, k...], linear [out, in]); matmul with a constant y is a
  // linear layer of y transposed (unless transpose_y).
  void record_weights(const MilOp &o, const Op &op) {
    if (op.inputs.size() != 1)
      return;
    std::optional<std::vector<double>> w, b;
    if (o.type == "matmul" && op.type == "linear") {
      const MilValue *x = o.input("x"), *y = o.input("y");
      const MilType *yt = declared(y);
      auto tx = o.input("transpose_x");
      if (!x || x->kind != MilValue::Kind::Name || x->text != op.inputs[0] || !yt || yt->dims.size() != 2 ||
          (tx && resolved(tx)->unwrapped().i))
        return;
      auto ty = o.input("transpose_y");
      bool transposed = ty && resolved(ty)->unwrapped().i;
      w = elements_of(y, yt);
      if (w && !transposed) {
        size_t k = size_t(yt->dims[0]), m = size_t(yt->dims[1]);
        std::vector<double> t(w->size());
        for (size_t i = 0; i < k; ++i)
          for (size_t j = 0; j < m; ++j)
            t[j * k + i] = (*w)[i * m + j];
        w = std::move(t);
      }
    } else if (op.type == "conv" || op.type == "deconv" || op.type == "linear") {
      w = elements_of(o.input("weight"), declared(o.input("weight")));
      if (o.input("bias")) {
        b = elements_of(o.input("bias"), declared(o.input("bias")));
        if (!b)
          return;
      }
    }
    if (!w)
      return;
    g_.values[op.name + "/weight"].data.assign(w->begin(), w->end());
    if (b)
      g_.values[op.name + "/bias"].data.assign(b->begin(), b->end());
  }

  // The attributes of a mapped op, by the map row's handler and its renamed parameters.
  void attributes(const MilOp &o, const FrontEndOp &row, Op &op) {
    size_t rank = rank_of(op);
    const MilType *out = op.outputs.empty() ? nullptr : type_of(op.outputs[0]);
    const Tensor *y = op.outputs.empty() ? nullptr : g_.tensor(op.outputs[0]);
    const std::string &h = row.attrs;
    if (h == "window")
      window(o, op);
    if (h == "gemm" && y && !op.inputs.empty()) {
      const MilType *a = type_of(op.inputs[0]);
      if (a && !a->dims.empty() && out && out->elements() > 0 && a->dims.back() > 0) {
        int64_t k = a->dims.back();
        if (auto tx = o.input("transpose_x"); tx && tx->unwrapped().i && a->dims.size() >= 2)
          k = a->dims[a->dims.size() - 2];
        if (auto f = checked_mul(out->elements(), 2 * k))
          op.attrs.set("flops", Doc::integer(*f));
      }
    }
    if ((h == "axis" || h == "axis_last") && !op.inputs.empty()) {
      auto axis = numbers(o, "axis");
      op.attrs.set("axis",
                   Doc::string(std::string(
                       1, kAxisNames[map_axis(axis && !axis->empty() ? int64_t((*axis)[0]) : -1, rank)])));
    }
    if (h == "reduce") {
      auto axes = numbers(o, "axes");
      op.attrs.set("axes", Doc::string(axes ? letters(*axes, rank) : "NDCHW"));
    }
    if (h == "perm" && rank >= 1 && rank <= 5) {
      auto perm = numbers(o, "perm");
      std::vector<int64_t> p5 = {0, 1, 2, 3, 4};
      if (perm && perm->size() == rank)
        for (size_t i = 0; i < rank; ++i) {
          int64_t from = int64_t((*perm)[i]);
          from = from < 0 ? from + int64_t(rank) : from;
          if (from >= 0 && from < int64_t(rank))
            p5[size_t(kLayout[rank][i])] = kLayout[rank][from];
        }
      op.attrs.set("perm", ints(p5));
    }
    if (h == "slice" && rank >= 1 && !op.inputs.empty()) {
      // slice_by_index: a begin_mask entry starts the axis at 0; a negative begin counts from the end
      std::vector<int64_t> begin(5, 0);
      auto mask = numbers(o, "begin_mask");
      const MilType *x = type_of(op.inputs[0]);
      if (auto b = numbers(o, "begin"); b && b->size() == rank)
        for (size_t i = 0; i < rank; ++i) {
          int64_t v = mask && mask->size() == rank && (*mask)[i] != 0 ? 0 : int64_t((*b)[i]);
          if (v < 0 && x && x->dims.size() == rank && x->dims[i] > 0)
            v += x->dims[i];
          begin[size_t(map_axis(int64_t(i), rank))] = v;
        }
      op.attrs.set("begin", ints(begin));
    }
    if (op.type == "pad" && rank >= 1 && rank <= 5) {
      // MIL pads the last len/2 axes, (before, after) each; H and W as [top, bottom, left, right],
      // C as channel_pad
      std::vector<int64_t> hw(4, 0), channel(2, 0);
      auto p = numbers(o, "pad");
      if (p && p->size() % 2 == 0 && p->size() / 2 <= rank)
        for (size_t j = 0; j < p->size() / 2; ++j) {
          int a = map_axis(int64_t(rank - p->size() / 2 + j), rank);
          int64_t before = int64_t((*p)[2 * j]), after = int64_t((*p)[2 * j + 1]);
          if (a == kH || a == kW)
            hw[a == kH ? 0 : 2] = before, hw[a == kH ? 1 : 3] = after;
          else if (a == kC)
            channel = {before, after};
        }
      op.attrs.set("pad", ints(hw));
      if (channel[0] || channel[1])
        op.attrs.set("channel_pad", ints(channel));
    }
    if (op.type == "reshape" && y)
      op.attrs.set("shape", ints(std::vector<int64_t>(y->shape.d.begin(), y->shape.d.end())));
    // Renamed parameters: numbers as the declared type, strings as strings.
    const OpSpec *spec = catalog_.find(op.type);
    for (const auto &[from, to] : row.params) {
      const AttrDecl *decl = spec ? find_attr(spec->attrs, to) : nullptr;
      if (auto v = numbers(o, from.c_str()); v && !v->empty()) {
        if (decl && decl->type == AttrType::ints) {
          std::vector<int64_t> x;
          for (double d : *v)
            x.push_back(int64_t(d));
          op.attrs.set(to, ints(x));
        } else if (decl && decl->type == AttrType::integer) {
          op.attrs.set(to, Doc::integer(int64_t((*v)[0])));
        } else if (decl && decl->type == AttrType::flag) {
          op.attrs.set(to, Doc::boolean((*v)[0] != 0));
        } else if (!decl || decl->type == AttrType::number) {
          op.attrs.set(to, Doc::number((*v)[0]));
        }
      } else if (auto s = text(o, from.c_str()); s && (!decl || decl->type == AttrType::text)) {
        op.attrs.set(to, Doc::string(*s));
      }
    }
    if (op.type == "layer_norm") {
      auto axes = numbers(o, "axes");
      op.attrs.set("axes", Doc::string(axes ? letters(*axes, rank) : "C"));
    }
  }

  void window(const MilOp &o, Op &op) {
    const MilValue *w = o.input("weight");
    const MilType *wt = nullptr;
    if (w && w->kind == MilValue::Kind::Name)
      wt = type_of(w->text);
    else if (w && w->kind == MilValue::Kind::Typed && w->type)
      wt = &*w->type;
    std::vector<int64_t> k;
    if (wt && wt->dims.size() >= 3)
      k.assign(wt->dims.begin() + 2, wt->dims.end());
    else if (auto ks = numbers(o, "kernel_sizes"))
      for (double d : *ks)
        k.push_back(int64_t(d));
    auto pairs = [](std::vector<int64_t> v, int64_t fill) {
      if (v.size() == 1)
        v.insert(v.begin(), fill);
      if (v.size() > 2)
        v.erase(v.begin(), v.end() - 2);
      return v;
    };
    auto list = [&](const char *name) {
      std::vector<int64_t> v;
      if (auto n = numbers(o, name))
        for (double d : *n)
          v.push_back(int64_t(d));
      return v;
    };
    k = pairs(k, 1);
    std::vector<int64_t> s = pairs(list("strides"), 1), d = pairs(list("dilations"), 1), p = list("pad");
    if (s.size() != 2)
      s = {1, 1};
    if (d.size() != 2)
      d = {1, 1};
    std::string pad_type = text(o, "pad_type").value_or("valid");
    if (p.size() == 2)
      p = {0, 0, p[0], p[1]};
    if (pad_type != "custom" || p.size() != 4)
      p = {0, 0, 0, 0};
    if ((pad_type == "same" || pad_type == "same_lower") && k.size() == 2 && !op.inputs.empty()) {
      const Shape &in = g_.tensor(op.inputs[0])->shape;
      int64_t extent[2] = {in.d[kH], in.d[kW]};
      for (int a = 0; a < 2; ++a) {
        if (extent[a] <= 0)
          continue;
        int64_t outn = (extent[a] + s[a] - 1) / s[a];
        int64_t total = std::max<int64_t>(0, (outn - 1) * s[a] + (k[a] - 1) * d[a] + 1 - extent[a]);
        int64_t small = total / 2, large = total - small;
        p[2 * a] = pad_type == "same" ? small : large;
        p[2 * a + 1] = pad_type == "same" ? large : small;
      }
    }
    if (k.size() == 2)
      op.attrs.set("kernel", ints(k));
    op.attrs.set("stride", ints(s));
    op.attrs.set("pad", ints(p));
    op.attrs.set("dilation", ints(d));
    if (op.type == "conv" || op.type == "deconv") {
      auto groups = numbers(o, "groups");
      op.attrs.set("groups", Doc::integer(groups && !groups->empty() ? int64_t((*groups)[0]) : 1));
      if (const Tensor *y = op.outputs.empty() ? nullptr : g_.tensor(op.outputs[0]); y && y->shape.d[kC] > 0)
        op.attrs.set("out_channels", Doc::integer(y->shape.d[kC]));
      if (w && w->kind == MilValue::Kind::Name && g_.tensor(w->text) && !constants_.count(w->text))
        op.attrs.set("weight", Doc::string("runtime"));
    }
  }

  const MilProgram &p_;
  const std::string &source_;
  const OpCatalog &catalog_;
  const DimBindings &dims_;
  const MilContext &context_;
  const MilFunction *fn_ = nullptr;
  Graph g_;
  std::set<std::string> defined_;
  std::map<std::string, MilType> types_;
  std::map<std::string, Constant> constants_;
  std::map<std::string, size_t> unmapped_;
  std::set<std::string> value_notes_; // why a constant's values were not read (keep_values)
  int64_t values_read_ = 0;           // elements read from weight files, capped at kMaxElements
  std::map<const MilValue *, std::filesystem::path> blob_files_;    // a BLOBFILE's file, once checked
  std::map<std::string, std::optional<std::vector<double>>> dense_; // constants' values (keep_values)
  std::map<std::string, std::vector<int64_t>> defaults_, ranges_;   // FlexibleShapeInformation
  std::map<std::string, std::vector<std::vector<int64_t>>> enumerated_;
  DimBindings defaulted_; // symbols bound by a default shape
  size_t blob_refs_ = 0, blob_absent_ = 0;
  std::set<std::string> absent_files_;
};

} // namespace

std::filesystem::path mil_blob_relative(const std::string &path) {
  const std::string prefix = "@model_path/";
  return path.rfind(prefix, 0) == 0 ? path.substr(prefix.size()) : path;
}

std::optional<std::filesystem::path> mil_blob_file(const std::filesystem::path &model_path,
                                                   const std::string &path, const std::string &where) {
  std::filesystem::path r = mil_blob_relative(path);
  if (!names_inside(r))
    throw Error("ANEC-MIL-007", where + ": BLOBFILE path '" + excerpt(path) + "' leaves the model's folder");
  if (model_path.empty())
    return std::nullopt;
  // Where it leads is known before anything there is looked at: a link out is refused whether or not
  // its target exists, so the answer says nothing of files outside the folder.
  std::optional<std::filesystem::path> real = resolve_inside(model_path, r);
  if (!real)
    throw Error("ANEC-MIL-007",
                where + ": BLOBFILE path '" + excerpt(path) + "' resolves outside the model's folder");
  std::error_code ec;
  if (!std::filesystem::exists(*real, ec))
    return std::nullopt;
  return real;
}

Graph mil_to_graph(const MilProgram &program, const std::string &source, const OpCatalog &catalog,
                   const DimBindings &dims, const MilContext &context) {
  return Converter(program, source, catalog, dims, context).run();
}

Graph read_mil(std::string_view text, const std::string &source, const OpCatalog &catalog,
               const DimBindings &dims, const MilContext &context) {
  return mil_to_graph(parse_mil(text, source), source, catalog, dims, context);
}

} // namespace anec::compiler
