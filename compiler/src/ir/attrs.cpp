#include "anec/compiler/ir/attrs.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <array>
#include <cstdint>

namespace anec::compiler {

namespace {
Error internal(const Op &op, std::string_view name, const std::string &why) {
  return Error("ANEC-INTERNAL",
               "op '" + op.name + "' (" + op.type + "): attribute '" + std::string(name) + "' " + why);
}
// The first value of `v` (an int, or an array of them) that is not an integer of at least `min`.
const Doc *out_of_bounds(const Doc &v, int64_t min) {
  if (!v.is(Doc::Kind::Array))
    return v.as_int() < min ? &v : nullptr;
  for (const Doc &x : v.items())
    if (!x.is(Doc::Kind::Int) || x.as_int() < min)
      return &x;
  return nullptr;
}
} // namespace

void check_attribute_bounds(const Op &op, const OpCatalog &catalog, const std::string &source) {
  const OpSpec *spec = op.attrs.members().empty() ? nullptr : catalog.find(op.type);
  if (!spec)
    return;
  for (const AttrDecl &d : spec->attrs) {
    const Doc *v = d.min ? op.attrs.find(d.name) : nullptr;
    const Doc *bad = v && holds(*v, d.type) ? out_of_bounds(*v, *d.min) : nullptr;
    if (!bad)
      continue;
    std::string value = bad->is(Doc::Kind::Int) ? std::to_string(bad->as_int()) : "a non-integer";
    throw Error("ANEC-GRAPH-003", source + ": op '" + excerpt(op.name) + "' (" + op.type + "): " + d.name +
                                      " holds " + value + "; each value must be an integer of at least " +
                                      std::to_string(*d.min) + " (tables/schema/ops.toml)");
  }
}

OpAttrs::OpAttrs(const Op &op, const OpCatalog &catalog)
    : op_(&op), spec_(catalog.find(op.type)), common_(&catalog.common_attrs()), catalog_(catalog.identity()) {
}

const AttrDecl *OpAttrs::find(std::string_view name) const {
  // The passes ask each op for the same few attributes, by names that are literals: the answer
  // (a declaration, or none) for an operation and a name's address is kept with the name's text,
  // which confirms it.
  struct Found {
    uint64_t catalog = 0;
    const OpSpec *spec = nullptr;
    const char *asked = nullptr;
    const AttrDecl *decl = nullptr;
    uint8_t size = 0;
    std::array<char, 31> text = {};
  };
  thread_local std::array<Found, 256> found;
  // The slot from every bit of both addresses: names a few bytes apart must not share one.
  uint64_t mixed = (uint64_t(reinterpret_cast<uintptr_t>(name.data())) * 0x9e3779b97f4a7c15) ^
                   uint64_t(reinterpret_cast<uintptr_t>(spec_));
  Found &f = found[(mixed * 0xff51afd7ed558ccd >> 32) % found.size()];
  if (f.catalog == catalog_ && f.spec == spec_ && f.asked == name.data() &&
      same_text(std::string_view(f.text.data(), f.size), name))
    return f.decl;
  const AttrDecl *d = spec_ ? find_attr(spec_->attrs, name) : nullptr;
  d = d ? d : find_attr(*common_, name);
  if (name.size() <= f.text.size()) {
    f = {catalog_, spec_, name.data(), d, uint8_t(name.size())};
    std::copy(name.begin(), name.end(), f.text.begin());
  }
  return d;
}

bool OpAttrs::declares(std::string_view name) const {
  return find(name) != nullptr;
}

const AttrDecl &OpAttrs::declared(std::string_view name) const {
  const AttrDecl *d = find(name);
  if (!d)
    throw internal(*op_, name, "is not declared for it in ops.toml");
  return *d;
}

const Doc &OpAttrs::read(std::string_view name, AttrType as) const {
  const AttrDecl &d = declared(name);
  if (d.type != as && !(as == AttrType::number && d.type == AttrType::integer))
    throw internal(*op_, name, "is read as another type than ops.toml declares");
  return value(d);
}

const Doc &OpAttrs::value(const AttrDecl &decl) const {
  if (const Doc *v = op_->attrs.find(decl.name); v && holds(*v, decl.type))
    return *v;
  if (decl.fallback)
    return *decl.fallback;
  if (!decl.fallback_from.empty())
    return value(declared(decl.fallback_from));
  throw internal(*op_, decl.name, "has no default and is not set (ask given() first)");
}

bool OpAttrs::given(std::string_view name) const {
  const AttrDecl &decl = declared(name);
  const Doc *v = op_->attrs.find(name);
  return v && holds(*v, decl.type);
}

int64_t OpAttrs::integer(std::string_view name) const {
  return read(name, AttrType::integer).as_int();
}
double OpAttrs::number(std::string_view name) const {
  const Doc &v = read(name, AttrType::number);
  return v.is(Doc::Kind::Int) ? double(v.as_int()) : v.as_float();
}
std::vector<int64_t> OpAttrs::ints(std::string_view name) const {
  std::vector<int64_t> out;
  ints(name, out);
  return out;
}
void OpAttrs::ints(std::string_view name, std::vector<int64_t> &out) const {
  const std::vector<Doc> &items = read(name, AttrType::ints).items();
  out.clear();
  out.reserve(items.size());
  for (const Doc &x : items)
    out.push_back(x.as_int()); // a non-integer item reads as 0
}
const std::string &OpAttrs::text(std::string_view name) const {
  return read(name, AttrType::text).as_string();
}
bool OpAttrs::flag(std::string_view name) const {
  return read(name, AttrType::flag).as_bool();
}

} // namespace anec::compiler
