// The ONNX front-end's parts, by job: the reader builds the graph (onnx_reader.cpp), folding computes
// the values of provably constant nodes and of shape arithmetic (onnx_fold.cpp), the shape fallback
// fills in the output shapes ONNX inference left unknown (onnx_shapes.cpp), and the translator turns
// a node's ONNX attributes into its operation's (onnx_attributes.cpp). What they share is `Facts`:
// what is known of each value of the model.
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"
#include "onnx_model.hpp"
#include "onnx_sym.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace anec::compiler::onnx_front {

using Syms = std::vector<Sym>;

// The engine type of an ONNX element type.
std::string dtype_of(int type);
bool integer_type(int type);

// ONNX rank r to [N, D, C, H, W]: 4-D NCHW, 3-D N C L (L as width), 2-D N F (F as channels), 1-D F,
// 5-D N C D H W.
inline constexpr int kLayout[6][5] = {
    {}, {kC}, {kN, kC}, {kN, kC, kW}, {kN, kC, kH, kW}, {kN, kC, kD, kH, kW}};
int map_axis(int64_t axis, size_t rank);

// A node's attributes, with the fallback where absent.
const Attribute *attribute(const Node &n, const char *name);
std::vector<int64_t> ints(const Node &n, const char *name);
int64_t int_attr(const Node &n, const char *name, int64_t fallback);
float float_attr(const Node &n, const char *name, float fallback);
std::string string_attr(const Node &n, const char *name, const std::string &fallback);
// Input k is given (present and not "").
bool given(const Node &n, int k);

// The values the module copied of a small tensor (kMaxValues), as numbers.
std::optional<Syms> tensor_values(const TensorData &t);

// A value's shape and element type.
struct Info {
  Syms dims;
  int type = 0;
  bool known = false; // the rank is known
};

// What is known of a tensor's value.
struct Value {
  bool constant = false;   // provably constant: no runtime input reaches it
  bool shape_data = false; // integer arithmetic on dimensions (derived from a Shape)
  // its elements, when known (small tensors), symbolic where they derive from symbols
  std::optional<Syms> data;
  int64_t elements = -1; // its element count, when known
};

// A constant whose every element the module copied (with keep_values).
struct Full {
  const std::vector<float> *values = nullptr;
  std::vector<int64_t> dims;
};

// What is known of the model's values, by name: shapes and types (ONNX inference, completed by the
// shape fallback), values (folding), the constants copied whole, and the outputs of inlined Ifs.
struct Facts {
  std::map<std::string, Info> infos;
  std::map<std::string, Value> values;
  // With keep_values: the constants whose every element the module copied (an initializer, a
  // Constant node's value, or one of those through Identity, Cast to a float type or a reshape).
  std::map<std::string, Full> full;
  std::map<std::string, std::string> alias; // an inlined If's output -> the branch tensor it is

  std::string resolve(const std::string &name) const;
  // Input k's name, resolved ("" where not given).
  std::string input(const Node &n, int k) const;
  Info &info(const std::string &name) { return infos[name]; }
  const Value *value(const std::string &name) const;
  std::optional<Syms> data(const Node &n, int k) const;
  const Full *full_of(const Node &n, int k) const;
  // Every dimension a positive number.
  bool static_dims(const std::string &name);
  // The element count where every dimension is a number, else -1.
  int64_t elements_of(const std::string &name);
};

// Input 1's values as integers (`axes` or `pads` given as an input), each unknown one as `unknown`,
// or left out where `unknown` is nullopt.
std::vector<int64_t> input_ints(const Facts &facts, const Node &n, std::optional<int64_t> unknown);

// ---- folding (onnx_fold.cpp) ----

// The values of a node's outputs where they can be computed at compile time: shape arithmetic,
// symbolic where it derives from a symbolic dimension. One value for all outputs, except a Split's
// parts (split_values).
std::optional<Syms> evaluate(Facts &facts, const Node &n);
std::vector<std::optional<Syms>> split_values(const Facts &facts, const Node &n);
// With keep_values: a folded node that passes a wholly copied constant on unchanged.
void carry_full(Facts &facts, const Node &n);

// ---- the shape fallback (onnx_shapes.cpp) ----

// Output 0's shape where ONNX inference left it incomplete: a dimension not a number nor a product
// of the graph's input symbols (`input_symbols`). `shape_preserving`: the op maps onto one whose
// output has its input's shape.
void fill_unknown_shapes(Facts &facts, const std::set<std::string> &input_symbols, const Node &n,
                         bool shape_preserving);

// ---- attribute translation (onnx_attributes.cpp) ----

// Translates one node's ONNX attributes into the attributes of the operation it maps onto, and, for
// the evaluator (keep_values), passes on its constants and what it means beyond its map row. Adds
// constant tensors and values to `g`.
class Translator {
public:
  Translator(Facts &facts, compiler::Graph &g, const Node &n, Op &op)
      : facts_(facts), g_(g), n_(n), op_(op) {}

  // The attribute handler the front-end map row names.
  void map(const FrontEndOp &row);
  // With keep_values: a broadcasting op's constant operands as constant tensors, by input position.
  std::map<int, std::string> broadcast_constants(const std::string &op_type);
  // With keep_values: the weights of a conv, deconv or linear layer (Graph::values).
  void record_weights();
  // With keep_values: what the op means beyond its map row (or "onnx:<type>" where the evaluator
  // would compute something else).
  void eval_semantics();
  // The evaluator's comparison of a Compare-like ONNX op.
  static const char *compare_mode(const std::string &type);

private:
  Facts &facts_;
  compiler::Graph &g_;
  const Node &n_;
  Op &op_;

  size_t rank() const;
  void window();
  void gemm();
  void axis(bool last);
  void reduce(bool global);
  void perm();
  void slice();
  void pad();
  bool conv_weights(const Full &w, const Full *b, size_t rank, std::vector<float> &weight,
                    std::vector<float> &bias) const;
  bool linear_weights(const Full &w, const Full *b, size_t rank, std::vector<float> &weight,
                      std::vector<float> &bias) const;
  std::string constant_operand(const std::string &name, const Full &f, size_t rank);
  std::optional<double> scalar(int k) const;
  bool clip();
  bool normalization();
  void attention();
  bool attention_evaluable();
  bool pad_value();
  bool quantization();
  void resize_mode();
  std::string resize_differs(const std::string &mode, const std::string &ctm, const std::string &rounding,
                             bool legacy);
  std::string resize_axis(const std::string &mode, const std::string &ctm, const std::string &rounding,
                          int64_t from, int64_t to, double scale, int axis);
};

} // namespace anec::compiler::onnx_front
