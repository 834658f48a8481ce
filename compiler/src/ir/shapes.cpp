#include "anec/compiler/ir/shapes.hpp"

#include "anec/compiler/ir/attrs.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

namespace anec::compiler {

namespace {
int axis_of(const OpAttrs &attrs, int fallback) {
  return axis_index(attrs.text("axis"), fallback);
}

// Shape arithmetic on the attribute values a model supplies: an overflow is a bad model, reported
// with the op and both operands (ANEC-GRAPH-003), never a wrapped, negative extent.
struct Arith {
  const std::string &source;
  const Op &op;
  std::string context() const { return source + ": op '" + op.name + "' (" + op.type + ")"; }
  int64_t add(int64_t a, int64_t b) const {
    auto r = checked_add(a, b);
    return r ? *r : add_or_throw(a, b, "ANEC-GRAPH-003", context());
  }
  int64_t sub(int64_t a, int64_t b) const {
    auto r = checked_sub(a, b);
    return r ? *r : sub_or_throw(a, b, "ANEC-GRAPH-003", context());
  }
  int64_t mul(int64_t a, int64_t b) const {
    auto r = checked_mul(a, b);
    return r ? *r : mul_or_throw(a, b, "ANEC-GRAPH-003", context());
  }
};

int64_t window_out(const Arith &m, int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t dil) {
  int64_t span = m.add(m.mul(dil, m.sub(k, 1)), 1), padded = m.add(m.add(in, p0), p1);
  return padded < span || s < 1 ? 0 : m.sub(padded, span) / s + 1;
}
// The transposed window: (in - 1) * s - p0 - p1 + dil * (k - 1) + 1.
int64_t deconv_out(const Arith &m, int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t dil) {
  int64_t grown = m.sub(m.sub(m.mul(m.sub(in, 1), s), p0), p1);
  return m.add(grown, m.add(m.mul(dil, m.sub(k, 1)), 1));
}

// Inputs and constants (after --dim bindings) within the size limits before any arithmetic on them.
void check_sources(const Graph &g) {
  for (const Tensor &t : g.tensors) {
    bool input = std::find(g.inputs.begin(), g.inputs.end(), t.name) != g.inputs.end();
    if (t.constant || input)
      check_size(t, g.source);
  }
}

// One op's shape function (ops.toml `shape`): the output shape from the input shapes and the
// attributes. Products and sums of attribute values go through Arith (ANEC-GRAPH-003 on overflow).
struct ShapeFn {
  const Op &op;
  const OpAttrs &attrs;
  const std::vector<Shape> &in;
  const Arith &m;
  Shape out;

  Error bad(const std::string &why) const { return Error("ANEC-GRAPH-003", m.context() + ": " + why); }
  void need(size_t n) const {
    if (in.size() < n)
      throw bad("needs " + std::to_string(n) + " input(s), has " + std::to_string(in.size()));
  }
  void set(const std::vector<int64_t> &v) {
    if (v.size() != 5)
      throw bad("shape attribute of the wrong length");
    for (int64_t x : v)
      if (x < 1)
        throw bad("produces an empty or negative extent " + Shape{}.str());
    std::copy(v.begin(), v.end(), out.d.begin());
  }

  void same() {}
  void window() {
    need(1);
    const std::string &t = op.type;
    bool conv = t == "conv" || t == "deconv";
    thread_local std::vector<int64_t> k, s, p, dil; // reused: asked for on every window op
    attrs.ints("kernel", k);
    attrs.ints("stride", s);
    attrs.ints("pad", p);
    attrs.ints("dilation", dil);
    if (k.size() != 2 || s.size() != 2 || p.size() != 4 || dil.size() != 2)
      throw bad("kernel, stride, dilation take 2 values and pad 4 (top, bottom, left, right)");
    auto extent = t == "deconv" ? deconv_out : window_out;
    out.d[kH] = extent(m, in[0].d[kH], k[0], s[0], p[0], p[1], dil[0]);
    out.d[kW] = extent(m, in[0].d[kW], k[1], s[1], p[2], p[3], dil[1]);
    if (!conv)
      return;
    int64_t oc = attrs.integer("out_channels");
    if (oc < 1)
      throw bad("needs out_channels");
    out.d[kC] = oc;
  }
  void linear() {
    need(1);
    int64_t of = attrs.integer("out_features");
    if (of < 1)
      throw bad("needs out_features");
    out.d[kC] = of;
  }
  void matmul() {
    need(2);
    out.d[kN] = std::max(in[0].d[kN], in[1].d[kN]);
    out.d[kD] = std::max(in[0].d[kD], in[1].d[kD]);
    out.d[kW] = in[1].d[kW];
  }
  void broadcast() {
    for (const Shape &o : in)
      for (int a = 0; a < 5; ++a)
        out.d[a] = std::max(out.d[a], o.d[a]);
  }
  void reduce() {
    for (char c : attrs.text("axes"))
      if (int a = axis_index(std::string(1, c), -1); a >= 0)
        out.d[a] = 1;
  }
  void argreduce() { out.d[axis_of(attrs, kC)] = 1; }
  void global_reduce() { out.d = {out.d[kN], 1, 1, 1, 1}; }
  void reshape() {
    need(1);
    auto v = attrs.ints("shape");
    if (v.size() == 4)
      v.insert(v.begin() + 1, 1);
    if (v.size() == 5)
      set(v);
  }
  void tile() {
    need(1);
    auto r = attrs.ints("reps");
    if (r.size() != 5)
      throw bad("reps takes 5 values");
    std::vector<int64_t> v;
    for (int a = 0; a < 5; ++a)
      v.push_back(m.mul(in[0].d[a], r[a]));
    set(v);
  }
  void transpose() {
    need(1);
    auto perm = attrs.ints("perm");
    if (perm.size() != 5)
      throw bad("perm takes 5 axis indices");
    for (int a = 0; a < 5; ++a) {
      if (perm[a] < 0 || perm[a] > 4)
        throw bad("perm holds axis " + std::to_string(perm[a]) + ", not 0 to 4");
      out.d[a] = in[0].d[perm[a]]; // a symbolic dimension moves with its name
      out.symbol[a] = in[0].symbol[perm[a]];
    }
  }
  void slice() {
    need(1);
    auto b = attrs.ints("begin"), e = attrs.ints("end");
    if (b.size() != 5 || e.size() != 5)
      throw bad("begin and end take 5 values (-1 in end: to the end)");
    std::vector<int64_t> v;
    for (int a = 0; a < 5; ++a)
      v.push_back(m.sub(e[a] < 0 ? in[0].d[a] : std::min(e[a], in[0].d[a]), b[a]));
    set(v);
  }
  void dynamic_slice() {
    need(1);
    set(attrs.given("size") ? attrs.ints("size") : std::vector<int64_t>(in[0].d.begin(), in[0].d.end()));
  }
  void concat() {
    need(2);
    int a = axis_of(attrs, kC);
    out.d[a] = 0;
    for (const Shape &o : in)
      out.d[a] = m.add(out.d[a], o.d[a]);
  }
  void pad() {
    need(1);
    auto p = attrs.ints("pad");
    if (p.size() != 4)
      throw bad("pad takes 4 values (top, bottom, left, right)");
    out.d[kH] = m.add(out.d[kH], m.add(p[0], p[1]));
    out.d[kW] = m.add(out.d[kW], m.add(p[2], p[3]));
    auto cp = attrs.ints("channel_pad");
    if (cp.size() == 2)
      out.d[kC] = m.add(out.d[kC], m.add(cp[0], cp[1]));
  }
  void resize() {
    auto sz = attrs.ints("size");
    auto sc = attrs.ints("scale");
    if (sz.size() == 2) {
      out.d[kH] = sz[0];
      out.d[kW] = sz[1];
    } else if (sc.size() == 2) {
      out.d[kH] = m.mul(out.d[kH], sc[0]);
      out.d[kW] = m.mul(out.d[kW], sc[1]);
    } else {
      throw bad("needs size [H, W] or scale [sH, sW]");
    }
  }
  void sdpa() {
    need(3);
    out.d[kW] = in[2].d[kW];
  }
  void topk() { out.d[axis_of(attrs, kW)] = attrs.integer("k"); }
  // A view of `size` elements along one axis (appendix B InputView); a split's first part.
  void input_view() {
    int a = axis_of(attrs, kC);
    if (int64_t size = attrs.integer("size"); size > 0)
      out.d[a] = size;
  }
  void split() {
    int a = axis_of(attrs, kC);
    int64_t parts = std::max<int64_t>(1, int64_t(op.outputs.size()));
    if (out.d[a] > 0)
      out.d[a] = out.d[a] / parts;
  }
  void broadcast_to() {
    int a = axis_of(attrs, kC);
    if (int64_t size = attrs.integer("size"); size > 0)
      out.d[a] = size;
  }
  void gather() {}
  void gather_elements() {}
  void depth_to_space() { rearrange(true); }
  void space_to_depth() { rearrange(false); }
  // Pixel shuffle (channels to space) and its inverse, factors factor_x (W) and factor_y (H).
  void rearrange(bool to_space) {
    int64_t fx = attrs.integer("factor_x"), fy = attrs.integer("factor_y");
    if (fx < 1 || fy < 1)
      throw bad("factors must be positive");
    int64_t f = m.mul(fx, fy);
    if (to_space) {
      out.d[kC] = out.d[kC] > 0 ? out.d[kC] / f : out.d[kC];
      out.d[kH] = out.d[kH] > 0 ? m.mul(out.d[kH], fy) : out.d[kH];
      out.d[kW] = out.d[kW] > 0 ? m.mul(out.d[kW], fx) : out.d[kW];
    } else {
      out.d[kC] = out.d[kC] > 0 ? m.mul(out.d[kC], f) : out.d[kC];
      out.d[kH] = out.d[kH] > 0 ? out.d[kH] / fy : out.d[kH];
      out.d[kW] = out.d[kW] > 0 ? out.d[kW] / fx : out.d[kW];
    }
  }
};

const std::map<std::string, void (ShapeFn::*)()> &shape_table() {
  static const std::map<std::string, void (ShapeFn::*)()> fns = {
      {"same", &ShapeFn::same},
      {"window", &ShapeFn::window},
      {"linear", &ShapeFn::linear},
      {"matmul", &ShapeFn::matmul},
      {"broadcast", &ShapeFn::broadcast},
      {"reduce", &ShapeFn::reduce},
      {"argreduce", &ShapeFn::argreduce},
      {"global_reduce", &ShapeFn::global_reduce},
      {"reshape", &ShapeFn::reshape},
      {"tile", &ShapeFn::tile},
      {"transpose", &ShapeFn::transpose},
      {"slice", &ShapeFn::slice},
      {"dynamic_slice", &ShapeFn::dynamic_slice},
      {"concat", &ShapeFn::concat},
      {"pad", &ShapeFn::pad},
      {"resize", &ShapeFn::resize},
      {"sdpa", &ShapeFn::sdpa},
      {"topk", &ShapeFn::topk},
      {"input_view", &ShapeFn::input_view},
      {"split", &ShapeFn::split},
      {"broadcast_to", &ShapeFn::broadcast_to},
      {"gather", &ShapeFn::gather},
      {"gather_elements", &ShapeFn::gather_elements},
      {"depth_to_space", &ShapeFn::depth_to_space},
      {"space_to_depth", &ShapeFn::space_to_depth},
  };
  return fns;
}
} // namespace

const std::vector<std::string> &known_shapes() {
  static const std::vector<std::string> names = keys_of(shape_table());
  return names;
}

namespace {
// The shape functions in known_shapes()'s order, which OpSpec::shape_index counts in.
const std::vector<void (ShapeFn::*)()> &shape_fns() {
  static const std::vector<void (ShapeFn::*)()> fns = [] {
    std::vector<void (ShapeFn::*)()> v;
    for (const auto &[name, fn] : shape_table())
      v.push_back(fn);
    return v;
  }();
  return fns;
}
} // namespace

void infer_shapes(Graph &g, const Op &op, const OpCatalog &catalog) {
  OpTensors tensors;
  find_tensors(g, op, tensors);
  check_attribute_bounds(op, catalog, g.source);
  infer_shapes(g, op, tensors, catalog);
}

void infer_shapes(Graph &g, const Op &op, const OpTensors &tensors, const OpCatalog &catalog) {
  thread_local std::vector<Shape> in; // reused: one list of input shapes an op
  in.clear();
  Interned dtype = Tensor::fp16();
  for (size_t k : tensors.ins)
    in.push_back(g.tensors[k].shape);
  if (!tensors.ins.empty())
    dtype = g.tensors[tensors.ins[0]].dtype;
  const Arith m{g.source, op};
  const OpAttrs attrs(op, catalog);
  ShapeFn fn{op, attrs, in, m, in.empty() ? Shape{} : in[0]};
  if (const OpSpec *spec = catalog.find(op.type))
    (fn.*shape_fns().at(spec->shape_index))();
  for (size_t k : tensors.outs) {
    Tensor &o = g.tensors[k];
    o.shape = fn.out;
    // a symbolic dimension stays symbolic
    for (int a = 0; a < 5; ++a)
      if (!in.empty() && in[0].d[a] < 0 && o.shape.d[a] <= 0) {
        o.shape.d[a] = -1;
        if (o.shape.symbol[a].empty())
          o.shape.symbol[a] = in[0].symbol[a];
      }
    o.dtype = dtype;
    if (!within_size_limits(o))
      check_size(o, m.context());
  }
}

void infer_shapes(Graph &g, const OpCatalog &catalog) {
  check_sources(g);
  OpTensors tensors;
  for (const Op &op : g.ops) {
    find_tensors(g, op, tensors);
    check_attribute_bounds(op, catalog, g.source);
    infer_shapes(g, op, tensors, catalog);
  }
}

} // namespace anec::compiler
