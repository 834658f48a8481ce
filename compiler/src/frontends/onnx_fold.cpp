// Folding: the values of provably constant nodes and of shape arithmetic, symbolic where they derive
// from a symbolic dimension (onnx_sym.hpp), so that a reshape target computed from a symbolic input
// is known.
#include "onnx_reader.hpp"

#include <algorithm>
#include <functional>

namespace anec::compiler::onnx_front {

namespace {

using Fold = std::function<std::optional<Syms>(Facts &, const Node &)>;

std::optional<Syms> constant(Facts &, const Node &n) {
  const auto *a = attribute(n, "value");
  if (a && a->t)
    return tensor_values(*a->t);
  if ((a = attribute(n, "value_int")))
    return Syms{Sym::num(double(a->i.value_or(0)))};
  if ((a = attribute(n, "value_ints"))) {
    Syms out;
    for (int64_t v : a->ints)
      out.push_back(Sym::num(double(v)));
    return out;
  }
  if ((a = attribute(n, "value_float")))
    return Syms{Sym::num(double(a->f.value_or(0)))};
  return std::nullopt;
}

std::optional<Syms> shape(Facts &facts, const Node &n) {
  if (n.inputs.size() != 1)
    return std::nullopt;
  const Info &i = facts.info(facts.input(n, 0));
  if (!i.known)
    return std::nullopt;
  int64_t r = int64_t(i.dims.size()), b = int_attr(n, "start", 0), e = int_attr(n, "end", r);
  b = std::clamp<int64_t>(b < 0 ? b + r : b, 0, r);
  e = std::clamp<int64_t>(e < 0 ? e + r : e, 0, r);
  return b <= e ? Syms(i.dims.begin() + b, i.dims.begin() + e) : Syms{};
}

std::optional<Syms> size_of(Facts &facts, const Node &n) {
  if (n.inputs.size() != 1)
    return std::nullopt;
  const Info &i = facts.info(facts.input(n, 0));
  if (!i.known)
    return std::nullopt;
  Sym p = Sym::num(1);
  for (const Sym &d : i.dims)
    p = mul(p, d);
  return Syms{p};
}

std::optional<Syms> pass_through(Facts &facts, const Node &n) {
  return facts.data(n, 0);
}

std::optional<Syms> gather(Facts &facts, const Node &n) {
  auto d = facts.data(n, 0), idx = facts.data(n, 1);
  if (!d || !idx || int_attr(n, "axis", 0) != 0)
    return std::nullopt;
  Syms out;
  for (const Sym &i : *idx) {
    if (!i.is_number())
      return std::nullopt;
    int64_t k = int64_t(i.k) < 0 ? int64_t(i.k) + int64_t(d->size()) : int64_t(i.k);
    if (k < 0 || k >= int64_t(d->size()))
      return std::nullopt;
    out.push_back((*d)[size_t(k)]);
  }
  return out;
}

std::optional<Syms> concat(Facts &facts, const Node &n) {
  Syms out;
  for (int k = 0; k < int(n.inputs.size()); ++k) {
    auto d = facts.data(n, k);
    if (!d)
      return std::nullopt;
    out.insert(out.end(), d->begin(), d->end());
  }
  return out;
}

// A 1-D slice along axis 0 with step 1.
std::optional<Syms> slice(Facts &facts, const Node &n) {
  auto d = facts.data(n, 0), starts = facts.data(n, 1), ends = facts.data(n, 2), axes = facts.data(n, 3),
       steps = facts.data(n, 4);
  if (n.inputs.size() == 1) { // opset 1-9: attributes
    auto s = ints(n, "starts"), e = ints(n, "ends");
    if (s.size() != 1 || e.size() != 1)
      return std::nullopt;
    starts = Syms{Sym::num(double(s[0]))};
    ends = Syms{Sym::num(double(e[0]))};
  }
  if (!d || !starts || !ends || starts->size() != 1 || ends->size() != 1)
    return std::nullopt;
  if (axes && (axes->size() != 1 || !(*axes)[0].is_number() || (*axes)[0].k != 0))
    return std::nullopt;
  int64_t step = steps && steps->size() == 1 && (*steps)[0].is_number() ? int64_t((*steps)[0].k) : 1;
  if (step != 1 || !(*starts)[0].is_number() || !(*ends)[0].is_number())
    return std::nullopt;
  int64_t r = int64_t(d->size());
  auto clamp = [&](double v) {
    return std::clamp<int64_t>(v < 0 ? int64_t(v) + r : v > double(r) ? r : int64_t(v), 0, r);
  };
  int64_t b = clamp((*starts)[0].k), e = clamp((*ends)[0].k);
  return b <= e ? Syms(d->begin() + b, d->begin() + e) : Syms{};
}

std::optional<Syms> arithmetic(Facts &facts, const Node &n) {
  const std::string &t = n.op_type;
  auto a = facts.data(n, 0), b = facts.data(n, 1);
  if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1))
    return std::nullopt;
  bool integer = integer_type(facts.info(facts.input(n, 0)).type);
  Syms out;
  for (size_t k = 0; k < std::max(a->size(), b->size()); ++k) {
    const Sym &x = (*a)[a->size() == 1 ? 0 : k], &y = (*b)[b->size() == 1 ? 0 : k];
    out.push_back(t == "Mul" ? mul(x, y) : t == "Div" ? div(x, y, integer) : add(x, y, t == "Add" ? 1 : -1));
  }
  return out;
}

// Equal, Less, Greater on scalars, and Not: Equal holds for two equal symbols too.
std::optional<Syms> comparison(Facts &facts, const Node &n) {
  const std::string &t = n.op_type;
  auto a = facts.data(n, 0), b = t == "Not" ? facts.data(n, 0) : facts.data(n, 1);
  if (!a || !b || a->size() != 1 || b->size() != 1)
    return std::nullopt;
  const Sym &x = (*a)[0], &y = (*b)[0];
  if (t == "Not")
    return x.is_number() ? std::optional<Syms>(Syms{Sym::num(x.k == 0)}) : std::nullopt;
  if (!x.is_number() || !y.is_number())
    return t == "Equal" && x == y ? std::optional<Syms>(Syms{Sym::num(1)}) : std::nullopt;
  return Syms{Sym::num(t == "Equal" ? x.k == y.k : t == "Less" ? x.k < y.k : x.k > y.k)};
}

const std::map<std::string, Fold> kFolds = {
    {"Constant", constant},      {"Shape", shape},          {"Size", size_of},
    {"Identity", pass_through},  {"Cast", pass_through},    {"Squeeze", pass_through},
    {"Unsqueeze", pass_through}, {"Flatten", pass_through}, {"Reshape", pass_through},
    {"Gather", gather},          {"Concat", concat},        {"Slice", slice},
    {"Add", arithmetic},         {"Sub", arithmetic},       {"Mul", arithmetic},
    {"Div", arithmetic},         {"Equal", comparison},     {"Less", comparison},
    {"Greater", comparison},     {"Not", comparison},
};

} // namespace

std::optional<Syms> evaluate(Facts &facts, const Node &n) {
  auto it = kFolds.find(n.op_type);
  return it == kFolds.end() ? std::nullopt : it->second(facts, n);
}

// A 1-D Split's parts (sizes from the `split` attribute or input, else equal), one per output.
std::vector<std::optional<Syms>> split_values(const Facts &facts, const Node &n) {
  std::vector<std::optional<Syms>> parts(n.outputs.size());
  auto d = facts.data(n, 0);
  if (n.op_type != "Split" || !d || int_attr(n, "axis", 0) != 0)
    return parts;
  std::vector<int64_t> sizes = ints(n, "split");
  if (auto s = facts.data(n, 1); sizes.empty() && s)
    for (const Sym &x : *s)
      sizes.push_back(x.is_number() ? int64_t(x.k) : -1);
  if (sizes.empty())
    sizes.assign(parts.size(), int64_t(d->size() / std::max<size_t>(1, parts.size())));
  size_t at = 0;
  for (size_t k = 0; k < parts.size() && k < sizes.size(); ++k) {
    if (sizes[k] < 0 || at + size_t(sizes[k]) > d->size())
      break;
    parts[k] = Syms(d->begin() + int64_t(at), d->begin() + int64_t(at + size_t(sizes[k])));
    at += size_t(sizes[k]);
  }
  return parts;
}

// A Constant's value, Identity, a Cast to float or double, a reshape: the output's values are the
// input constant's.
void carry_full(Facts &facts, const Node &n) {
  if (n.outputs.empty() || n.outputs[0].empty())
    return;
  const std::string &t = n.op_type, &o = n.outputs[0];
  if (t == "Constant") {
    const auto *a = attribute(n, "value");
    if (a && a->t && !a->t->all.empty())
      facts.full[o] = {&a->t->all, a->t->dims};
    return;
  }
  int64_t to = int_attr(n, "to", 0);
  bool same = t == "Identity" || t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" ||
              (t == "Cast" && (to == kFloat || to == kDouble));
  const Full *in = facts.full_of(n, 0);
  if (!same || !in || !facts.static_dims(o))
    return;
  Full out{in->values, {}};
  size_t count = 1;
  for (const Sym &d : facts.info(o).dims) {
    out.dims.push_back(int64_t(d.k));
    count *= size_t(d.k);
  }
  if (count == in->values->size())
    facts.full[o] = std::move(out);
}

} // namespace anec::compiler::onnx_front
