// The one reader of an op's attributes: each as ops.toml declares it for the op's type (or for every
// op), the op's value when it sets one of the declared type, else the declared default.
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace anec::compiler {

// Reading an attribute the table does not declare for the op, with a reader of another type, or
// one without a default that the op does not set, is ANEC-INTERNAL: a program error, never a
// made-up default.
class OpAttrs {
public:
  OpAttrs(const Op &op, const OpCatalog &catalog);
  int64_t integer(std::string_view name) const;
  double number(std::string_view name) const; // a float attribute, or an int one as a float
  std::vector<int64_t> ints(std::string_view name) const;
  void ints(std::string_view name, std::vector<int64_t> &out) const; // into `out`, reusing its storage
  const std::string &text(std::string_view name) const; // in the op's attributes or the table's default
  bool flag(std::string_view name) const;
  // Whether the op sets the attribute with a value of its declared type (for one without a default).
  bool given(std::string_view name) const;
  // Whether the table declares the attribute for the op.
  bool declares(std::string_view name) const;

private:
  const AttrDecl *find(std::string_view name) const;
  const AttrDecl &declared(std::string_view name) const;     // ANEC-INTERNAL when it is not
  const Doc &read(std::string_view name, AttrType as) const; // its value or default, read as `as`
  const Doc &value(const AttrDecl &decl) const;
  const Op *op_;
  const OpSpec *spec_; // null for an op the catalogue does not list: it has the common attributes only
  const AttrDecls *common_;
  uint64_t catalog_; // its identity
};

// Refuses an op that sets a declared attribute below its `min` (ops.toml), or an item of such an
// attribute that is not an integer: ANEC-GRAPH-003 naming the op, the attribute and the value. Shape
// inference runs it first: it, the cost model and the evaluator divide by strides, loop over kernels.
void check_attribute_bounds(const Op &op, const OpCatalog &catalog, const std::string &source);

} // namespace anec::compiler
