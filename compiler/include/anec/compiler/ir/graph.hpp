// The graph IR: 5-D tensors [N, D, C, H, W] with dtypes (a dimension may be symbolic), operations
// with named inputs, outputs and attributes. Front-ends build it (compiler/frontends/), shape
// inference fills it in (shapes.hpp); the checker and the cost model read it.
#pragma once
#include "anec/compiler/ir/ops.hpp"
#include "anec/support/doc.hpp"
#include "anec/support/huge_pages.hpp"
#include "anec/support/interned.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace anec::compiler {

enum Axis { kN, kD, kC, kH, kW };
inline constexpr const char *kAxisNames = "NDCHW";

// The names of a shape's symbolic dimensions, stored only when there is one (most shapes are
// concrete, and a graph holds a shape per tensor).
class Symbols {
public:
  Symbols() = default;
  Symbols(const Symbols &o) : names_(o.names_ ? std::make_unique<Names>(*o.names_) : nullptr) {}
  Symbols(Symbols &&) noexcept = default;
  Symbols &operator=(const Symbols &o) { return *this = Symbols(o); }
  Symbols &operator=(Symbols &&) noexcept = default;
  const std::string &operator[](size_t axis) const { return names()[axis]; }
  std::string &operator[](size_t axis) {
    if (!names_)
      names_ = std::make_unique<Names>();
    return (*names_)[axis];
  }
  auto begin() const { return names().begin(); }
  auto end() const { return names().end(); }

private:
  using Names = std::array<std::string, 5>;
  const Names &names() const {
    static const Names none;
    return names_ ? *names_ : none;
  }
  std::unique_ptr<Names> names_;
};

struct Shape {
  std::array<int64_t, 5> d{1, 1, 1, 1, 1}; // -1 where symbolic
  Symbols symbol;                          // the symbol's name where symbolic
  bool symbolic() const { return d[0] < 0 || d[1] < 0 || d[2] < 0 || d[3] < 0 || d[4] < 0; }
  // 0 when symbolic; ANEC-GRAPH-003 when the count overflows 64 bits. Inline: every pass asks it.
  int64_t elements() const {
    if (symbolic())
      return 0;
    int64_t n = d[0];
    bool over = false;
    for (size_t a = 1; a < d.size(); ++a)
      over |= __builtin_mul_overflow(n, d[a], &n);
    if (over)
      too_many_elements();
    return n;
  }
  std::string str() const; // "[1,1,3,224,224]"

private:
  [[noreturn]] void too_many_elements() const;
};

int64_t dtype_bytes(const std::string &dtype); // 0 for an unknown dtype
int64_t dtype_bytes(const Interned &dtype);    // the same, for a tensor's

struct Tensor {
  std::string name;
  Shape shape;
  Interned dtype = fp16();
  Interned format;         // an image input: "fourcc"; a Core ML feature that is no tensor: "string",
                           // "dictionary", "sequence"; else "" (a plain tensor)
  int32_t interleave = 0;  // the channel interleave the model declares for it (a plist port), 0: the target's
  int16_t source_rank = 0; // the rank the front-end read (0: native 5-D), > 5 cannot be represented
  bool constant = false;   // a weight or other embedded constant
  bool dynamic = false; // its shape is known only at run time: symbolic, bound by --dim, or derived from such
  // As the engine holds it: elements x element size, wider types narrowed to fp16.
  int64_t bytes() const {
    int64_t n = shape.elements(), b = 0;
    if (__builtin_mul_overflow(n, std::min<int64_t>(dtype_bytes(dtype), 2), &b))
      too_many_bytes(n);
    return b;
  }
  // Sets source_rank (a tensor is held in 104 bytes: a graph may hold millions); ANEC-GRAPH-003 past
  // 32,767 dimensions.
  void set_source_rank(size_t rank);
  [[noreturn]] void too_many_bytes(int64_t elements) const;
  static Interned fp16() {
    static const Interned word("fp16");
    return word;
  }
};

struct Op {
  std::string name, type;
  std::vector<std::string> inputs, outputs;
  Doc attrs = Doc::table();
  // Runtime operation skip (compiler/src/ir/skip.cpp): eligible to be optimized out (at compile time,
  // or at run time when `runtime_skippable`); runtime_skippable without optimized is invalid.
  bool optimized = false, runtime_skippable = false;
  // Read through OpAttrs (attrs.hpp), which knows each attribute's declared type and default.
};

// Tensor name -> position in the graph's tensor list: open addressing over 8-byte (hash, position)
// slots in one array, at most half full, so a lookup reads one slot and the tensor it names (a graph
// may hold millions).
class TensorIndex {
public:
  // The position of `name`, or npos.
  size_t find(std::string_view name, const std::vector<Tensor> &tensors) const;
  // Adds `tensors[position]` under its name; false, and nothing added, when the name is there.
  // ANEC-GRAPH-003 past 2^32 - 1 tensors.
  bool insert(size_t position, const std::vector<Tensor> &tensors);
  // Room for `tensors` names without growing.
  void reserve(size_t tensors);
  // Asks the processor for the slot where `name` would be, ahead of a find or insert: a reader
  // that knows the names it will add soon hides the cache miss of each.
  void prefetch(std::string_view name) const;
  static constexpr size_t npos = SIZE_MAX;

private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint32_t hash = 0;
    uint32_t position = kEmpty;
  };
  size_t probe(uint32_t hash, std::string_view name, const std::vector<Tensor> &tensors) const;
  void rehash(size_t slots);
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  size_t count_ = 0;
};

// Where a constant's values come from (the anec-graph "file" or "data" keys, an ONNX initializer);
// only the evaluator reads them.
struct ConstantValues {
  std::string file;        // an .npy file, relative to the graph file's folder
  std::vector<float> data; // the values, C order
};

struct Graph {
  std::string source, front_end;             // file, and "anec-graph 1" / "onnx" / "plist"
  std::vector<std::string> notes;            // what the front-end did (constant folding, unknown shapes)
  size_t source_nodes = 0, folded_nodes = 0; // nodes the front-end read, and those folded as constants
  std::vector<Tensor> tensors;
  std::vector<std::string> inputs, outputs;
  std::vector<Op> ops;
  std::map<std::string, ConstantValues> values; // constant name -> its values, when given
  TensorIndex index;

  const Tensor *tensor(std::string_view name) const;
  Tensor *tensor(std::string_view name);
  Tensor &add(Tensor t);     // ANEC-GRAPH-002 on a duplicate name
  Tensor *try_add(Tensor t); // null, and nothing added, on a duplicate name
};

// An op's operand tensors, looked up by name once for the passes that follow one another over it
// (shape inference, the skip marks, the cost, the check, the placement): their positions in the
// graph's tensor list, which only grows.
struct OpTensors {
  std::vector<size_t> ins, outs;
};
// Into `out`, reusing its storage; ANEC-GRAPH-002 for a name the graph does not define.
void find_tensors(const Graph &g, const Op &op, OpTensors &out);

// Values for symbolic input dimensions (--dim): a dimension's name, or "INPUT:AXIS" with the axis
// counted in the shape the model gives.
using DimBindings = std::map<std::string, int64_t>;

// The largest dimension a front-end or `--dim` accepts (2^40): far above every engine limit, and
// small enough that a sum or product of two dimensions cannot overflow 64 bits unnoticed.
inline constexpr int64_t kMaxDimension = int64_t(1) << 40;
// ANEC-GRAPH-003 (message prefixed by `where`: file, op) when a concrete dimension of `t` exceeds
// kMaxDimension or its element count or byte size does not fit in 64 bits.
void check_size(const Tensor &t, const std::string &where);
bool within_size_limits(const Tensor &t); // what check_size checks, without a message

// The axis a one-letter name ("N", "D", "C", "H", "W") names, else `fallback`.
int axis_index(const std::string &letter, int fallback);

// The weight bytes an op embeds: attrs.weight_bytes when a front-end set it (their stored size:
// fp32, fp16, int8, n-bit palettes, sparse), else attrs.weight_elements x 2 (fp16), else a conv,
// deconv or linear without a weight input (fp16); 0 otherwise.
double weight_bytes(const Graph &g, const Op &op, const OpTensors &tensors, const OpCatalog &catalog);

// How to bind a dimension symbol on the command line: "--dim batch=N" for a named symbol (every
// name in a product such as "64*batch"), "--dim x:0=N" for the unnamed axis 0 of input x.
std::string binding_hint(const Graph &g, const std::string &symbol);

// Every symbolic dimension of the graph's inputs, with its binding hint ("batch: --dim batch=N").
std::vector<std::string> unbound_dimensions(const Graph &g);

} // namespace anec::compiler
