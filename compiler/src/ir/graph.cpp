#include "anec/compiler/ir/graph.hpp"

#include "anec/compiler/ir/attrs.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

namespace anec::compiler {

namespace {
// The product of the dimensions, or nullopt when it does not fit in 64 bits.
std::optional<int64_t> product(const Shape &s) {
  int64_t n = 1;
  for (int64_t v : s.d) {
    auto m = checked_mul(n, v);
    if (!m)
      return std::nullopt;
    n = *m;
  }
  return n;
}
} // namespace

void Shape::too_many_elements() const {
  throw Error("ANEC-GRAPH-003", "the element count of shape " + str() + " does not fit in 64 bits");
}
std::string Shape::str() const {
  std::string s = "[";
  char digits[24];
  for (int k = 0; k < 5; ++k) {
    if (k)
      s += ',';
    if (d[k] < 0)
      s += symbol[k];
    else
      s.append(digits, std::to_chars(digits, digits + sizeof digits, d[k]).ptr);
  }
  return s += ']';
}

int64_t dtype_bytes(const std::string &t) {
  static constexpr std::pair<std::string_view, int64_t> kSizes[] = {
      {"fp16", 2},   {"fp32", 4},  {"bf16", 2}, {"int8", 1}, {"uint8", 1}, {"int16", 2},
      {"uint16", 2}, {"int32", 4}, {"fp8", 1},  {"int4", 1}, {"fp64", 8}};
  for (const auto &[name, size] : kSizes)
    if (name == t)
      return size;
  return 0;
}
int64_t dtype_bytes(const Interned &t) {
  // A tensor's dtype is one of a few words, asked for on every size: the last answer is kept, by
  // the word's one copy.
  thread_local Interned last = Tensor::fp16();
  thread_local int64_t size = 2;
  if (t != last) {
    size = dtype_bytes(t.str());
    last = t;
  }
  return size;
}
int axis_index(const std::string &a, int fallback) {
  const char *p = a.size() == 1 && a[0] ? std::strchr(kAxisNames, a[0]) : nullptr;
  return p ? int(p - kAxisNames) : fallback;
}
void Tensor::too_many_bytes(int64_t n) const {
  throw Error("ANEC-GRAPH-003", "tensor '" + name + "' " + shape.str() + ": " + std::to_string(n) +
                                    " elements x " +
                                    std::to_string(std::min<int64_t>(dtype_bytes(dtype), 2)) +
                                    " bytes does not fit in 64 bits");
}

void Tensor::set_source_rank(size_t rank) {
  if (rank > size_t(INT16_MAX))
    throw Error("ANEC-GRAPH-003", "tensor '" + name + "' has " + std::to_string(rank) +
                                      " dimensions: at most 32767 are read (and at most 5 run)");
  source_rank = int16_t(rank);
}

namespace {
// Empty when t is within the size limits, else why not.
std::string size_problem(const Tensor &t) {
  auto what = [&] { return "tensor '" + t.name + "' " + t.shape.str(); };
  for (int a = 0; a < 5; ++a)
    if (t.shape.d[a] > kMaxDimension)
      return what() + ": dimension " + kAxisNames[a] + " = " + std::to_string(t.shape.d[a]) +
             " exceeds the limit " + std::to_string(kMaxDimension) + " (2^40)";
  if (t.shape.symbolic())
    return "";
  auto n = product(t.shape);
  if (!n || !checked_mul(*n, std::min<int64_t>(dtype_bytes(t.dtype), 2)))
    return what() + " (" + t.dtype + "): its element count or byte size (the " +
           "product of the dimensions) does not fit in 64 bits";
  return "";
}
} // namespace

bool within_size_limits(const Tensor &t) {
  return size_problem(t).empty();
}

void check_size(const Tensor &t, const std::string &where) {
  if (std::string why = size_problem(t); !why.empty())
    throw Error("ANEC-GRAPH-003", where + ": " + why);
}

namespace {
uint32_t name_hash(std::string_view name) {
  return uint32_t(text_hash(name)); // its low half holds its high half folded in
}
} // namespace

size_t TensorIndex::probe(uint32_t hash, std::string_view name, const std::vector<Tensor> &tensors) const {
  size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot &s = slots_[i];
    if (s.position == kEmpty || (s.hash == hash && same_text(tensors[s.position].name, name)))
      return i;
  }
}
size_t TensorIndex::find(std::string_view name, const std::vector<Tensor> &tensors) const {
  if (slots_.empty())
    return npos;
  const Slot &s = slots_[probe(name_hash(name), name, tensors)];
  return s.position == kEmpty ? npos : s.position;
}

void TensorIndex::rehash(size_t slots) {
  std::vector<Slot, HugePageAllocator<Slot>> old = std::move(slots_);
  slots_.assign(slots, Slot{});
  size_t mask = slots_.size() - 1;
  for (const Slot &s : old) {
    if (s.position == kEmpty)
      continue;
    size_t i = s.hash & mask;
    while (slots_[i].position != kEmpty)
      i = (i + 1) & mask;
    slots_[i] = s;
  }
}
void TensorIndex::reserve(size_t tensors) {
  size_t slots = 16;
  while (slots < 2 * tensors)
    slots *= 2;
  if (slots > slots_.size())
    rehash(slots);
}
void TensorIndex::prefetch(std::string_view name) const {
  if (!slots_.empty())
    __builtin_prefetch(&slots_[name_hash(name) & (slots_.size() - 1)], 1);
}
bool TensorIndex::insert(size_t position, const std::vector<Tensor> &tensors) {
  if (position >= kEmpty)
    throw Error("ANEC-GRAPH-003", "a graph of more than 2^32 - 1 tensors");
  if ((count_ + 1) * 2 > slots_.size())
    rehash(std::max<size_t>(16, slots_.size() * 2)); // at most half full: probes stay short
  const std::string &name = tensors[position].name;
  uint32_t hash = name_hash(name);
  Slot &s = slots_[probe(hash, name, tensors)];
  if (s.position != kEmpty)
    return false;
  s = {hash, uint32_t(position)};
  ++count_;
  return true;
}

const Tensor *Graph::tensor(std::string_view name) const {
  // The passes over an op look its few tensors up many times, by the names the op holds: the last
  // ones found are tried first, by the address of the name asked for (each confirmed by its name, so
  // a stale entry, or one of another graph, is only a miss).
  struct Recent {
    const char *asked = nullptr;
    const Graph *graph = nullptr;
    size_t at = 0;
  };
  // An address names one entry at most: the next op's names take the storage of the last's.
  thread_local std::array<Recent, 8> recent;
  thread_local size_t next = 0;
  Recent *same_address = nullptr;
  for (Recent &r : recent) {
    if (r.asked != name.data())
      continue;
    if (r.graph == this && r.at < tensors.size() && same_text(tensors[r.at].name, name))
      return &tensors[r.at];
    same_address = &r;
    break;
  }
  size_t at = index.find(name, tensors);
  if (at == TensorIndex::npos)
    return nullptr;
  *(same_address ? same_address : &recent[next++ % recent.size()]) = {name.data(), this, at};
  return &tensors[at];
}
Tensor *Graph::tensor(std::string_view name) {
  return const_cast<Tensor *>(std::as_const(*this).tensor(name));
}
Tensor *Graph::try_add(Tensor t) {
  tensors.push_back(std::move(t));
  if (index.insert(tensors.size() - 1, tensors))
    return &tensors.back();
  tensors.pop_back();
  return nullptr;
}
Tensor &Graph::add(Tensor t) {
  std::string name = t.name;
  if (Tensor *added = try_add(std::move(t)))
    return *added;
  throw Error("ANEC-GRAPH-002", source + ": tensor '" + name + "' is defined twice");
}

void find_tensors(const Graph &g, const Op &op, OpTensors &out) {
  for (auto [names, found] : {std::pair{&op.inputs, &out.ins}, std::pair{&op.outputs, &out.outs}}) {
    found->clear();
    for (const std::string &n : *names) {
      const Tensor *t = g.tensor(n);
      if (!t)
        throw Error("ANEC-GRAPH-002", g.source + ": op '" + excerpt(op.name) + "' names tensor '" +
                                          excerpt(n) + "', which the graph does not define");
      found->push_back(size_t(t - g.tensors.data()));
    }
  }
}

double weight_bytes(const Graph &g, const Op &op, const OpTensors &tensors, const OpCatalog &catalog) {
  OpAttrs attrs(op, catalog);
  bool counted = !op.attrs.members().empty(); // an op without attributes has no front-end's count
  if (counted && attrs.given("weight_bytes")) // as stored (fp32, fp16, quantized): a Core ML layer's
    if (int64_t n = attrs.integer("weight_bytes"); n >= 0)
      return double(n);
  if (counted && attrs.given("weight_elements"))
    if (int64_t n = attrs.integer("weight_elements"); n >= 0)
      return double(n) * 2;
  bool conv = same_text(op.type, "conv") || same_text(op.type, "deconv"),
       linear = same_text(op.type, "linear");
  if (op.inputs.empty() || op.outputs.empty() || !(conv || linear))
    return 0;
  const Shape &in = g.tensors[tensors.ins[0]].shape, &out = g.tensors[tensors.outs[0]].shape;
  if (conv && op.inputs.size() == 1 && attrs.text("weight") != "runtime") {
    thread_local std::vector<int64_t> k; // reused: asked for on every conv
    attrs.ints("kernel", k);
    double groups = double(std::max<int64_t>(1, attrs.integer("groups")));
    return double(in.d[kC]) / groups * double(out.d[kC]) * double(k[0]) * double(k[1]) * 2;
  }
  if (linear && op.inputs.size() == 1)
    return double(in.d[kC]) * double(out.d[kC]) * 2;
  return 0;
}

std::string binding_hint(const Graph &g, const std::string &symbol) {
  std::set<std::string> bindable; // the symbols of the graph's inputs: what --dim can bind
  for (const std::string &n : g.inputs)
    for (const std::string &s : g.tensor(n)->shape.symbol)
      bindable.insert(s);
  std::string out, name;
  bool derived = false, unknown = false;
  auto flush = [&] {
    bool number = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
    if (bindable.count(name))
      out += (out.empty() ? "" : " ") + ("--dim " + name + "=N");
    else if (name == "?")
      unknown = true;
    else if (!number)
      derived = true;
    name.clear();
  };
  for (char c : symbol)
    c == '*' ? flush() : void(name += c);
  flush();
  if (derived)
    out += std::string(out.empty() ? "" : ", and ") + "bind the input dimensions it derives from";
  if (unknown) // "?": a front-end's dimension that derives from no input (onnx_reader.cpp)
    out += std::string(out.empty() ? "" : "; ") +
           "no --dim binds it: the model does not determine it (a shape computed from values the "
           "front-end does not fold, or divided by zero)";
  return out;
}

std::vector<std::string> unbound_dimensions(const Graph &g) {
  std::vector<std::string> out;
  for (const std::string &n : g.inputs) {
    const Shape &s = g.tensor(n)->shape;
    for (int a = 0; a < 5; ++a) {
      if (s.d[a] >= 0)
        continue;
      std::string line = "input '" + n + "' " + s.str() + " " + kAxisNames[a] + " = " + s.symbol[a] + ": " +
                         binding_hint(g, s.symbol[a]);
      if (std::find(out.begin(), out.end(), line) == out.end())
        out.push_back(line);
    }
  }
  return out;
}

} // namespace anec::compiler
