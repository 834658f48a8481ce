// The operation catalogue (tables/schema/ops.toml): per operation its engine unit, family floor,
// capability gates, validator rules, shape function, cost form and code-generation floor; and the
// front-end maps (tables/schema/frontend/{onnx,plist}.toml) from a model format's operator names to
// catalogue operations, each with its attribute handler.
#pragma once
#include "anec/support/doc.hpp"
#include "anec/support/format.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace anec::compiler {

struct Gate {
  std::string field;   // a target-table capability field that must be nonzero
  bool reject = false; // without it: reject (true) or decompose (false)
  std::string with;    // what it decomposes into
};

// An attribute an operation reads (ops.toml `[op.attrs]`): its type and its default, a value or
// another attribute's value (`default_from`); without either it has no default and is read only
// when the op sets it. `min`: the least value an int, or each item of an ints, may take (a stride
// of 0 has no meaning; shape inference and the evaluator divide by it).
enum class AttrType { integer, number, ints, text, flag };
struct AttrDecl {
  std::string name;
  AttrType type = AttrType::integer;
  std::optional<Doc> fallback; // `default`
  std::string fallback_from;   // `default_from`: the attribute whose value is the default
  std::optional<int64_t> min;  // `min`
};
using AttrDecls = std::vector<AttrDecl>;

// The declaration named `name` in `decls`, or nullptr.
const AttrDecl *find_attr(const AttrDecls &decls, std::string_view name);
// Whether an op's value is of `type` (an integer is a float too; `ints`: any array, a non-integer
// item reading as 0).
bool holds(const Doc &value, AttrType type);

struct OpSpec {
  std::string name, unit, cost, source;
  std::optional<int> floor; // minimum family index (F0 -> 0, F2 -> 2, F3 -> 3, F4 -> 4); none: no engine path
  std::optional<int> codegen_floor; // below it the validator accepts and code generation rejects
  std::vector<Gate> gates;
  std::vector<std::string> rules;
  std::string decompose_with; // below the floor (for a host operation: what the host does)
  std::string shape = "same"; // the shape function (compiler/src/ir/shapes.cpp)
  size_t shape_index = 0;     // its place in known_shapes(), set with it by the catalogue
  std::string lowered_as;     // on every family: the native sequence it lowers to
  std::string skip;           // when it moves no data and is skipped (compiler/src/ir/skip.cpp)
  AttrDecls attrs;            // the attributes it reads
};

// One row of a front-end map: the catalogue operation a model format's operator stands for.
struct FrontEndOp {
  std::string op;                            // catalogue operation
  std::string attrs = "none";                // the front-end's attribute handler
  bool weights = false;                      // constant inputs are weights the engine streams
  std::map<std::string, std::string> params; // plist Params key -> attribute name
  std::string source;
};

// One backend of the placement model (tables/schema/placement.toml, guide ch.18 tables 18.2, 18.3).
struct Backend {
  std::string name, source;
  double gflops = 0, gbps = 0;                 // coarse roofline anchors
  double launch_units = 0, transfer_units = 0; // penalties in the model's relative units
};

// A number no two objects of a run share, even after one is gone: what a lookup keeps about an
// object is keyed by it, never by an address another object may take. A copy takes a new one; a
// move takes the source's, and the source a new one.
class Identity {
public:
  Identity() : value_(next()) {}
  Identity(const Identity &) : value_(next()) {}
  Identity(Identity &&other) noexcept : value_(std::exchange(other.value_, next())) {}
  Identity &operator=(const Identity &) {
    value_ = next();
    return *this;
  }
  Identity &operator=(Identity &&other) noexcept {
    value_ = std::exchange(other.value_, next());
    return *this;
  }
  uint64_t value() const { return value_; }

private:
  static uint64_t next();
  uint64_t value_;
};

class OpCatalog {
public:
  OpCatalog() = default;
  // A copy indexes its own entries; a move keeps the map's nodes, which the index names.
  OpCatalog(const OpCatalog &other);
  OpCatalog &operator=(const OpCatalog &other);
  OpCatalog(OpCatalog &&) = default;
  OpCatalog &operator=(OpCatalog &&) = default;
  uint64_t identity() const { return identity_.value(); }
  // Strict (ANEC-OPS-001 with line:column): unknown keys, unknown rule or cost names, duplicates,
  // attribute declarations of an unknown type or with a default of another type.
  static OpCatalog from_doc(const Doc &doc, const std::string &source);
  // ops.toml, and the front-end maps in frontend/ and the placement model (placement.toml) beside
  // it when present.
  static OpCatalog load(const std::filesystem::path &path);
  // By a hash. Every pass over an op asks for its type, by the name the op holds: the thread's last
  // answer is tried first, by the address of the name asked for (confirmed by the name).
  const OpSpec *find(std::string_view name) const {
    const LastFound &l = last_found_;
    if (l.catalog == identity() && l.asked == name.data() && same_text(l.spec->name, name))
      return l.spec;
    return find_by_hash(name);
  }
  const std::map<std::string, OpSpec> &ops() const { return ops_; }
  // The attributes any operation may carry (ops.toml `[every_op.attrs]`), what a front-end counted.
  const AttrDecls &common_attrs() const { return common_attrs_; }
  // The row for an operator name in a front-end's map ("onnx", "plist"), or nullptr. Names match
  // without regard to case or underscores.
  const FrontEndOp *front_end(const std::string &format, const std::string &name) const;
  // Why a front-end's operator maps to nothing (a map's [[unmapped]] rows), or nullptr.
  const std::string *unmapped_reason(const std::string &format, const std::string &name) const;
  // Reads one front-end map (strict, ANEC-OPS-001); every row must name a catalogue operation.
  void add_front_end(const Doc &doc, const std::string &source);
  // The placement model's backends, engine first (strict, ANEC-OPS-001).
  const std::vector<Backend> &backends() const { return backends_; }
  void set_backends(const Doc &doc, const std::string &source);

private:
  struct LastFound {
    uint64_t catalog; // 0, no catalogue's, until a first answer
    const char *asked;
    const OpSpec *spec;
  };
  static inline thread_local LastFound last_found_{};
  const OpSpec *find_by_hash(std::string_view name) const;
  void reindex();
  std::map<std::string, OpSpec> ops_;
  std::unordered_map<std::string_view, const OpSpec *, TextHash> index_; // ops_ by name
  AttrDecls common_attrs_;
  std::map<std::string, std::map<std::string, FrontEndOp>> front_ends_; // format -> folded name -> row
  std::map<std::string, std::map<std::string, std::string>> unmapped_;  // format -> folded name -> reason
  std::vector<Backend> backends_;
  Identity identity_;
};

// The rule, cost, shape-function and attribute-handler names the checker, the cost model, shape
// inference and the front-ends implement.
const std::vector<std::string> &known_rules();
const std::vector<std::string> &known_costs();
const std::vector<std::string> &known_shapes();
const std::vector<std::string> &known_attr_handlers();
const std::vector<std::string> &known_skips();

// The names of a name-keyed table (the rule and shape-function tables), in order.
template <class Map> std::vector<std::string> keys_of(const Map &table) {
  std::vector<std::string> out;
  for (const auto &entry : table)
    out.push_back(entry.first);
  return out;
}

} // namespace anec::compiler
