// The host evaluator's kernels (eval_kernels.hpp): elementwise, data movement, reductions, resize,
// pooling and the multiply-accumulate ops (GEMM and im2col convolution through OpenBLAS).
#include "kernels.hpp"

#include "anec/support/half.hpp"
#include "anec/support/strict.hpp"
#include "blas_module.hpp"
#include "reference_gemm.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

namespace anec::compiler {

namespace blas {
const Api &api() {
  // Loaded once; a failed load throws and is tried again by the next caller.
  static const Api &table = plugin::load<Api>(kModule, kEntry, kVersion);
  return table;
}
} // namespace blas

namespace eval_detail {
namespace {

// Seeded values: splitmix64 over a stream keyed by the seed and the tensor's name (FNV-1a), so a
// tensor's values do not depend on the order tensors are visited in.
class Seeded {
public:
  Seeded(uint64_t seed, const std::string &name) : state_(seed ^ fnv(name)) {}
  float uniform() { // in [-1, 1)
    return float(double(next() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }

private:
  static uint64_t fnv(const std::string &s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s)
      h = (h ^ c) * 0x100000001b3ull;
    return h;
  }
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

} // namespace

std::vector<float> seeded(uint64_t seed, const std::string &name, int64_t count, float scale) {
  Seeded rng(seed, name);
  std::vector<float> v(static_cast<size_t>(count));
  for (float &x : v)
    x = rng.uniform() * scale;
  return v;
}

namespace {

// Row-major strides of a 5-D shape; a broadcast axis (extent 1 against a larger output) strides 0.
std::array<int64_t, 5> strides(const std::array<int64_t, 5> &d, const std::array<int64_t, 5> &out) {
  std::array<int64_t, 5> s{};
  int64_t step = 1;
  for (int a = 4; a >= 0; --a) {
    s[a] = d[a] == 1 && out[a] != 1 ? 0 : step;
    step *= d[a];
  }
  return s;
}

// Unevaluated unless every axis of `d` is `out`'s or 1.
void broadcasts(const std::array<int64_t, 5> &d, const std::array<int64_t, 5> &out) {
  for (int a = 0; a < 5; ++a)
    if (d[size_t(a)] != out[size_t(a)] && d[size_t(a)] != 1)
      throw Unevaluated{std::string("an operand's ") + kAxisNames[a] + " extent " +
                        std::to_string(d[size_t(a)]) + " does not broadcast to " +
                        std::to_string(out[size_t(a)])};
}

// Calls f(out_index, in_offsets...) over every element of `out`, the inputs broadcast to it.
template <size_t K, class F>
void each_broadcast(const std::array<int64_t, 5> &out, const std::array<const Values *, K> &in, F f) {
  std::array<std::array<int64_t, 5>, K> st;
  for (size_t k = 0; k < K; ++k) {
    broadcasts(in[k]->d, out);
    st[k] = strides(in[k]->d, out);
  }
  int64_t i = 0;
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t d = 0; d < out[1]; ++d)
      for (int64_t c = 0; c < out[2]; ++c)
        for (int64_t h = 0; h < out[3]; ++h)
          for (int64_t w = 0; w < out[4]; ++w, ++i) {
            std::array<int64_t, K> at;
            for (size_t k = 0; k < K; ++k)
              at[k] = n * st[k][0] + d * st[k][1] + c * st[k][2] + h * st[k][3] + w * st[k][4];
            f(i, at);
          }
}

// Unevaluated unless the output keeps the input's extents on `axes` (a front-end that shapes the
// output otherwise, as ONNX inference may, asks for other semantics than the kernel's).
void keeps_extents(Call &c, std::initializer_list<int> axes) {
  for (int a : axes)
    if (c.y().d[size_t(a)] != c.x().d[size_t(a)])
      throw Unevaluated{std::string("its output's ") + kAxisNames[a] + " extent " +
                        std::to_string(c.y().d[size_t(a)]) + " is not its input's " +
                        std::to_string(c.x().d[size_t(a)])};
}

// ---- elementwise -------------------------------------------------------------------------------

// A one-input function of up to two attributes (ops.toml declares their defaults).
struct Unary {
  double (*f)(double x, double a, double b);
  const char *a_key = "";
  const char *b_key = "";
};

double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}
double softplus(double x) {
  return x > 30 ? x : std::log1p(std::exp(x));
}
double relu6(double x) {
  return std::clamp(x, 0.0, 6.0);
}

const std::map<std::string, Unary> &unary_table() {
  static const std::map<std::string, Unary> t = {
      {"relu", {[](double x, double, double) { return x > 0 ? x : 0.0; }}},
      {"sigmoid", {[](double x, double, double) { return sigmoid(x); }}},
      {"tanh", {[](double x, double, double) { return std::tanh(x); }}},
      {"gelu", {[](double x, double, double) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }}},
      {"swish", {[](double x, double, double) { return x * sigmoid(x); }}},
      {"clamp", {[](double x, double lo, double hi) { return std::clamp(x, lo, hi); }, "min", "max"}},
      {"abs", {[](double x, double, double) { return std::fabs(x); }}},
      {"exp", {[](double x, double, double) { return std::exp(x); }}},
      {"exp2", {[](double x, double, double) { return std::exp2(x); }}},
      {"log", {[](double x, double, double) { return std::log(x); }}},
      {"sqrt", {[](double x, double, double) { return std::sqrt(x); }}},
      {"rsqrt", {[](double x, double, double) { return 1 / std::sqrt(x); }}},
      {"reciprocal", {[](double x, double, double) { return 1 / x; }}},
      {"erf", {[](double x, double, double) { return std::erf(x); }}},
      {"sin", {[](double x, double, double) { return std::sin(x); }}},
      {"cos", {[](double x, double, double) { return std::cos(x); }}},
      {"atan", {[](double x, double, double) { return std::atan(x); }}},
      {"ceil", {[](double x, double, double) { return std::ceil(x); }}},
      {"floor", {[](double x, double, double) { return std::floor(x); }}},
      {"round", {[](double x, double, double) { return std::nearbyint(x); }}},
      {"sign", {[](double x, double, double) { return double((x > 0) - (x < 0)); }}},
      {"square", {[](double x, double, double) { return x * x; }}},
      {"neg", {[](double x, double, double) { return -x; }}},
      {"logical_not", {[](double x, double, double) { return x == 0 ? 1.0 : 0.0; }}},
      {"identity", {[](double x, double, double) { return x; }}},
      {"dropout", {[](double x, double, double) { return x; }}}, // inference: a copy
      {"cast", {[](double x, double, double) { return x; }}},    // computed as fp16 (seed ch.17)
      {"relu6", {[](double x, double, double) { return relu6(x); }}},
      {"hard_swish", {[](double x, double, double) { return x * relu6(x + 3) / 6; }}},
      {"softplus", {[](double x, double, double) { return softplus(x); }}},
      {"softsign", {[](double x, double, double) { return x / (1 + std::fabs(x)); }}},
      {"mish", {[](double x, double, double) { return x * std::tanh(softplus(x)); }}},
      {"leaky_relu", {[](double x, double a, double) { return x > 0 ? x : a * x; }, "alpha"}},
      {"elu", {[](double x, double a, double) { return x > 0 ? x : a * std::expm1(x); }, "alpha"}},
      {"selu",
       {[](double x, double a, double g) { return g * (x > 0 ? x : a * std::expm1(x)); }, "alpha", "gamma"}},
      {"thresholded_relu", {[](double x, double a, double) { return x > a ? x : 0.0; }, "alpha"}},
      {"hard_sigmoid",
       {[](double x, double a, double b) { return std::clamp(a * x + b, 0.0, 1.0); }, "alpha", "beta"}},
      {"goc", {[](double x, double g, double o) { return x * g + o; }, "gain", "offset"}},
      {"quantize",
       {[](double x, double s, double z) { return std::clamp(std::nearbyint(x / s) + z, -128.0, 127.0); },
        "scale", "zero_point"}},
      {"dequantize", {[](double q, double s, double z) { return (q - z) * s; }, "scale", "zero_point"}},
      {"fill", {[](double, double v, double) { return v; }, "value"}},
  };
  return t;
}

void unary(Call &c) {
  const Unary &u = unary_table().at(c.op.type);
  double a = *u.a_key ? c.attrs.number(u.a_key) : 0, b = *u.b_key ? c.attrs.number(u.b_key) : 0;
  const Values &x = c.x();
  Values &y = c.y();
  for (size_t i = 0; i < y.v.size(); ++i)
    y.v[i] = float(u.f(double(x.v[i % x.v.size()]), a, b));
  if (!c.fp16)
    return;
  // the engine's reciprocal path drops a zero's sign, and log(+0) is a finite sentinel (guide ch.3)
  bool recip = c.op.type == "reciprocal" || c.op.type == "rsqrt";
  if (recip || c.op.type == "log")
    for (size_t i = 0; i < y.v.size(); ++i)
      if (x.v[i] == 0)
        y.v[i] = recip ? kInf : float(c.num.log_zero);
}

using Binary = double (*)(double, double);

const std::map<std::string, Binary> &binary_table() {
  static const std::map<std::string, Binary> t = {
      {"add", [](double a, double b) { return a + b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"div", [](double a, double b) { return a / b; }},
      {"max", [](double a, double b) { return std::max(a, b); }},
      {"min", [](double a, double b) { return std::min(a, b); }},
      {"pow", [](double a, double b) { return std::pow(a, b); }},
      {"floor_div", [](double a, double b) { return std::floor(a / b); }},
      {"prelu", [](double x, double slope) { return x > 0 ? x : slope * x; }},
  };
  return t;
}

const std::map<std::string, Binary> &comparisons() {
  static const std::map<std::string, Binary> t = {
      {"equal", [](double a, double b) { return double(a == b); }},
      {"not_equal", [](double a, double b) { return double(a != b); }},
      {"greater", [](double a, double b) { return double(a > b); }},
      {"greater_equal", [](double a, double b) { return double(a >= b); }},
      {"less", [](double a, double b) { return double(a < b); }},
      {"less_equal", [](double a, double b) { return double(a <= b); }},
  };
  return t;
}

void binary_with(Call &c, Binary f) {
  Values &y = c.y();
  // more than two inputs (add of several): folded left to right
  Values acc = c.x(0);
  for (size_t k = 1; k < std::max<size_t>(2, c.in.size()); ++k) {
    Values next;
    next.d = y.d;
    for (int a = 0; a < 5; ++a)
      next.d[a] = std::max(acc.d[a], c.x(k).d[a]);
    next.v.resize(size_t(next.elements()));
    each_broadcast<2>(next.d, {&acc, &c.x(k)}, [&](int64_t i, const std::array<int64_t, 2> &at) {
      next.v[size_t(i)] = float(f(double(acc.v[size_t(at[0])]), double(c.x(k).v[size_t(at[1])])));
    });
    acc = std::move(next);
  }
  y.v = std::move(acc.v);
}

void binary(Call &c) {
  binary_with(c, binary_table().at(c.op.type));
}

void compare(Call &c) {
  std::string mode = c.attrs.text("mode");
  auto it = comparisons().find(mode);
  if (it == comparisons().end())
    throw Unevaluated{"unknown comparison mode '" + mode + "'"};
  binary_with(c, it->second);
}

void select(Call &c) {
  Values &y = c.y();
  const Values &cond = c.x(0), &a = c.x(1), &b = c.x(2);
  each_broadcast<3>(y.d, {&cond, &a, &b}, [&](int64_t i, const std::array<int64_t, 3> &at) {
    y.v[size_t(i)] = cond.v[size_t(at[0])] != 0 ? a.v[size_t(at[1])] : b.v[size_t(at[2])];
  });
}

// ---- data movement ------------------------------------------------------------------------------

// out[o] = in[index(o)] where index maps an output coordinate to an input offset (or -1: `fill`).
template <class F> void gather_each(Call &c, const Values &x, F index, float fill = 0) {
  Values &y = c.y();
  std::array<int64_t, 5> st = strides(x.d, x.d), o{};
  int64_t i = 0;
  for (o[0] = 0; o[0] < y.d[0]; ++o[0])
    for (o[1] = 0; o[1] < y.d[1]; ++o[1])
      for (o[2] = 0; o[2] < y.d[2]; ++o[2])
        for (o[3] = 0; o[3] < y.d[3]; ++o[3])
          for (o[4] = 0; o[4] < y.d[4]; ++o[4], ++i) {
            std::array<int64_t, 5> at = o;
            bool inside = index(at);
            int64_t off = 0;
            for (int a = 0; a < 5; ++a) {
              if (inside && (at[a] < 0 || at[a] >= x.d[a]))
                throw Unevaluated{"it would read outside its input (check its attributes)"};
              off += at[a] * st[a];
            }
            y.v[size_t(i)] = inside ? x.v[size_t(off)] : fill;
          }
}

void reshape(Call &c) {
  if (c.x().elements() != c.y().elements())
    throw Unevaluated{"reshape changes the element count"};
  c.y().v = c.x().v;
}

void transpose(Call &c) {
  auto perm = c.attrs.ints("perm");
  gather_each(c, c.x(), [&](std::array<int64_t, 5> &at) {
    std::array<int64_t, 5> src{};
    for (int a = 0; a < 5; ++a)
      src[size_t(perm[size_t(a)])] = at[size_t(a)];
    at = src;
    return true;
  });
}

void slice(Call &c) {
  auto b = c.attrs.ints("begin");
  gather_each(c, c.x(), [&](std::array<int64_t, 5> &at) {
    for (int a = 0; a < 5; ++a)
      at[size_t(a)] += b[size_t(a)];
    return true;
  });
  if (!c.fp16 || b[kW] == 0)
    return;
  // a nonzero width offset applies a gain internally: past the ceiling the value is infinity
  int64_t n = 0;
  for (float &v : c.y().v)
    if (std::isfinite(v) && std::fabs(double(v)) * c.num.width_slice_gain > c.num.fp16_max) {
      v = std::copysign(kInf, v);
      ++n;
    }
  c.note("value(s) overflowed in the width slice's x" + std::to_string(int(c.num.width_slice_gain)) + " gain",
         n);
}

void pad(Call &c) {
  auto p = c.attrs.ints("pad");
  auto cp = c.attrs.ints("channel_pad");
  std::string mode = c.attrs.text("mode");
  const Values &x = c.x();
  std::array<int64_t, 5> before{0, 0, cp.size() == 2 ? cp[0] : 0, p[0], p[2]};
  bool constant = mode == "constant";
  if (!constant && mode != "reflect" && mode != "replicate" && mode != "edge")
    throw Unevaluated{"unknown pad mode '" + mode + "'"};
  gather_each(
      c, x,
      [&](std::array<int64_t, 5> &at) {
        for (int a = 2; a < 5; ++a) {
          int64_t i = at[size_t(a)] - before[size_t(a)], n = x.d[size_t(a)];
          if (i >= 0 && i < n) {
            at[size_t(a)] = i;
            continue;
          }
          if (constant)
            return false;
          if (mode == "reflect")
            i = i < 0 ? -i : 2 * (n - 1) - i;
          at[size_t(a)] = std::clamp<int64_t>(i, 0, n - 1);
        }
        return true;
      },
      float(c.attrs.number("value")));
}

void tile(Call &c) {
  const Values &x = c.x();
  gather_each(c, x, [&](std::array<int64_t, 5> &at) {
    for (int a = 0; a < 5; ++a)
      at[size_t(a)] %= x.d[size_t(a)];
    return true;
  });
}

void broadcast_to(Call &c) {
  const Values &x = c.x();
  gather_each(c, x, [&](std::array<int64_t, 5> &at) {
    for (int a = 0; a < 5; ++a)
      if (x.d[size_t(a)] == 1)
        at[size_t(a)] = 0;
    return true;
  });
}

void concat(Call &c) {
  int axis = axis_index(c.attrs.text("axis"), kC);
  Values &y = c.y();
  int64_t offset = 0;
  for (const Values *x : c.in) {
    for (int a = 0; a < 5; ++a)
      if (a != axis && x->d[size_t(a)] != y.d[size_t(a)])
        throw Unevaluated{"its inputs differ off the concatenation axis"};
    std::array<int64_t, 5> o{};
    int64_t i = 0;
    std::array<int64_t, 5> yst = strides(y.d, y.d);
    for (o[0] = 0; o[0] < x->d[0]; ++o[0])
      for (o[1] = 0; o[1] < x->d[1]; ++o[1])
        for (o[2] = 0; o[2] < x->d[2]; ++o[2])
          for (o[3] = 0; o[3] < x->d[3]; ++o[3])
            for (o[4] = 0; o[4] < x->d[4]; ++o[4], ++i) {
              std::array<int64_t, 5> at = o;
              at[size_t(axis)] += offset;
              int64_t off = 0;
              for (int a = 0; a < 5; ++a)
                off += at[size_t(a)] * yst[size_t(a)];
              y.v[size_t(off)] = x->v[size_t(i)];
            }
    offset += x->d[size_t(axis)];
  }
}

void split(Call &c) {
  int axis = axis_index(c.attrs.text("axis"), kC);
  int64_t offset = 0;
  for (size_t k = 0; k < c.out.size(); ++k) {
    Call part{c.op, c.attrs, c.num, c.fp16, c.report, c.in, {}};
    part.out.push_back(std::move(c.out[k]));
    gather_each(part, c.x(), [&](std::array<int64_t, 5> &at) {
      at[size_t(axis)] += offset;
      return at[size_t(axis)] < c.x().d[size_t(axis)];
    });
    offset += part.out[0].d[size_t(axis)];
    c.out[k] = std::move(part.out[0]);
  }
}

// An axis window: `offset` + `step` * i along `axis` (the plists' InputView).
void input_view(Call &c) {
  int axis = axis_index(c.attrs.text("axis"), kC);
  int64_t offset = int64_t(c.attrs.number("offset")), step = int64_t(c.attrs.number("step"));
  gather_each(c, c.x(), [&](std::array<int64_t, 5> &at) {
    at[size_t(axis)] = offset + step * at[size_t(axis)];
    return at[size_t(axis)] < c.x().d[size_t(axis)];
  });
}

void dynamic_slice(Call &c) {
  std::vector<int64_t> begin = c.attrs.ints("begin");
  if (c.in.size() >= 2) { // the begin offsets as a runtime tensor of five values
    begin.clear();
    for (float v : c.x(1).v)
      begin.push_back(int64_t(v));
  }
  if (begin.size() != 5)
    throw Unevaluated{"begin takes 5 values"};
  gather_each(c, c.x(), [&](std::array<int64_t, 5> &at) {
    for (int a = 0; a < 5; ++a)
      at[size_t(a)] = std::clamp<int64_t>(at[size_t(a)] + begin[size_t(a)], 0, c.x().d[size_t(a)] - 1);
    return true;
  });
}

void reverse(Call &c) {
  std::string axes = c.attrs.text("axes");
  const Values &x = c.x();
  gather_each(c, x, [&](std::array<int64_t, 5> &at) {
    for (char l : axes)
      if (int a = axis_index(std::string(1, l), -1); a >= 0)
        at[size_t(a)] = x.d[size_t(a)] - 1 - at[size_t(a)];
    return true;
  });
}

// Channels to space (to_space) or back, channel c * fy * fx + i * fx + j at row h * fy + i, column
// w * fx + j (the pixel-shuffle order).
void rearrange(Call &c, bool to_space) {
  int64_t fx = c.attrs.integer("factor_x"), fy = c.attrs.integer("factor_y");
  gather_each(c, c.x(), [&](std::array<int64_t, 5> &at) {
    if (to_space) {
      int64_t i = at[kH] % fy, j = at[kW] % fx;
      at = {at[kN], at[kD], (at[kC] * fy + i) * fx + j, at[kH] / fy, at[kW] / fx};
    } else {
      int64_t k = at[kC] % (fx * fy);
      at = {at[kN], at[kD], at[kC] / (fx * fy), at[kH] * fy + k / fx, at[kW] * fx + k % fx};
    }
    return true;
  });
}
void depth_to_space(Call &c) {
  rearrange(c, true);
}
void space_to_depth(Call &c) {
  rearrange(c, false);
}

// gather: indices (second input) select along `axis`; gather_elements: an index per output element.
void gather(Call &c) {
  int axis = axis_index(c.attrs.text("axis"), kC);
  const Values &x = c.x(), &idx = c.x(1);
  bool elements = c.op.type == "gather_elements";
  if (elements)
    broadcasts(idx.d, c.y().d);
  else if (idx.elements() != c.y().d[size_t(axis)])
    throw Unevaluated{"it takes one index per output position along the axis (" +
                      std::to_string(c.y().d[size_t(axis)]) + "), its indices hold " +
                      std::to_string(idx.elements())};
  std::array<int64_t, 5> ist = strides(idx.d, c.y().d);
  gather_each(c, x, [&](std::array<int64_t, 5> &at) {
    int64_t off = elements ? 0 : at[size_t(axis)]; // gather: the index of this position along the axis
    for (int a = 0; elements && a < 5; ++a)
      off += at[size_t(a)] * ist[size_t(a)];
    int64_t i = int64_t(idx.v[size_t(off)]);
    if (i < 0)
      i += x.d[size_t(axis)];
    at[size_t(axis)] = i;
    return i >= 0 && i < x.d[size_t(axis)];
  });
}

// ---- reductions ---------------------------------------------------------------------------------

// The groups of elements a reduction over `axes` combines: f(output index, the group's offsets).
template <class F> void each_group(const Values &x, const std::array<int64_t, 5> &out, F f) {
  std::array<int64_t, 5> st = strides(x.d, x.d);
  std::vector<int64_t> offsets;
  std::array<int64_t, 5> o{}, r{};
  int64_t i = 0;
  for (o[0] = 0; o[0] < out[0]; ++o[0])
    for (o[1] = 0; o[1] < out[1]; ++o[1])
      for (o[2] = 0; o[2] < out[2]; ++o[2])
        for (o[3] = 0; o[3] < out[3]; ++o[3])
          for (o[4] = 0; o[4] < out[4]; ++o[4], ++i) {
            offsets.clear();
            std::array<int64_t, 5> span{};
            for (int a = 0; a < 5; ++a)
              span[size_t(a)] = out[size_t(a)] == 1 ? x.d[size_t(a)] : 1;
            for (r[0] = 0; r[0] < span[0]; ++r[0])
              for (r[1] = 0; r[1] < span[1]; ++r[1])
                for (r[2] = 0; r[2] < span[2]; ++r[2])
                  for (r[3] = 0; r[3] < span[3]; ++r[3])
                    for (r[4] = 0; r[4] < span[4]; ++r[4]) {
                      int64_t off = 0;
                      for (int a = 0; a < 5; ++a)
                        off += (o[size_t(a)] + r[size_t(a)]) * st[size_t(a)];
                      offsets.push_back(off);
                    }
            f(i, offsets);
          }
}

// The shape a reduction over the axes letters leaves.
std::array<int64_t, 5> reduced(const std::array<int64_t, 5> &d, const std::string &axes) {
  std::array<int64_t, 5> out = d;
  for (char l : axes)
    if (int a = axis_index(std::string(1, l), -1); a >= 0)
      out[size_t(a)] = 1;
  return out;
}

// The reduced shape of the op's input, which must be its output's (one element per group).
std::array<int64_t, 5> reduced_to_output(Call &c, const std::string &axes) {
  std::array<int64_t, 5> r = reduced(c.x().d, axes);
  if (r != c.y().d)
    throw Unevaluated{"its output shape does not match a reduction over '" + axes + "'"};
  return r;
}

using Fold = double (*)(const Values &x, const std::vector<int64_t> &group);

double sum_of(const Values &x, const std::vector<int64_t> &g, double (*f)(double)) {
  double s = 0;
  for (int64_t o : g)
    s += f(double(x.v[size_t(o)]));
  return s;
}

const std::map<std::string, Fold> &fold_table() {
  static const std::map<std::string, Fold> t = {
      {"reduce_sum", [](const Values &x,
                        const std::vector<int64_t> &g) { return sum_of(x, g, [](double v) { return v; }); }},
      {"reduce_mean",
       [](const Values &x, const std::vector<int64_t> &g) {
         return sum_of(x, g, [](double v) { return v; }) / double(g.size());
       }},
      {"reduce_max",
       [](const Values &x, const std::vector<int64_t> &g) {
         double m = -INFINITY;
         for (int64_t o : g)
           m = std::max(m, double(x.v[size_t(o)]));
         return m;
       }},
      {"reduce_min",
       [](const Values &x, const std::vector<int64_t> &g) {
         double m = INFINITY;
         for (int64_t o : g)
           m = std::min(m, double(x.v[size_t(o)]));
         return m;
       }},
      {"reduce_l1",
       [](const Values &x, const std::vector<int64_t> &g) {
         return sum_of(x, g, [](double v) { return std::fabs(v); });
       }},
      {"reduce_l2",
       [](const Values &x, const std::vector<int64_t> &g) {
         return std::sqrt(sum_of(x, g, [](double v) { return v * v; }));
       }},
      {"reduce_sum_square",
       [](const Values &x, const std::vector<int64_t> &g) {
         return sum_of(x, g, [](double v) { return v * v; });
       }},
      {"reduce_log_sum",
       [](const Values &x, const std::vector<int64_t> &g) {
         return std::log(sum_of(x, g, [](double v) { return v; }));
       }},
      {"reduce_log_sum_exp",
       [](const Values &x, const std::vector<int64_t> &g) {
         double m = -INFINITY;
         for (int64_t o : g)
           m = std::max(m, double(x.v[size_t(o)]));
         double s = 0;
         for (int64_t o : g)
           s += std::exp(double(x.v[size_t(o)]) - m);
         return m + std::log(s);
       }},
  };
  return t;
}

void reduce(Call &c) {
  std::string type = c.op.type;
  if (type == "reduce_sum" && c.attrs.flag("square"))
    type = "reduce_sum_square";
  Fold f = fold_table().at(type);
  Values &y = c.y();
  each_group(c.x(), reduced_to_output(c, c.attrs.text("axes")),
             [&](int64_t i, const std::vector<int64_t> &g) { y.v[size_t(i)] = float(f(c.x(), g)); });
}

// argmax / argmin along one axis, and global_argmax over all but N (the flat index).
void argreduce(Call &c) {
  bool global = c.op.type == "global_argmax", max = c.op.type != "argmin";
  std::string axes = global ? "DCHW" : c.attrs.text("axis");
  const Values &x = c.x();
  each_group(x, reduced_to_output(c, axes), [&](int64_t i, const std::vector<int64_t> &g) {
    size_t best = 0;
    for (size_t k = 1; k < g.size(); ++k) {
      float a = x.v[size_t(g[k])], b = x.v[size_t(g[best])];
      if (max ? a > b : a < b)
        best = k;
    }
    c.y().v[size_t(i)] = float(best);
  });
}

// Softmax over the `axes` letters.
void softmax_over(Call &c, const std::string &axes) {
  keeps_extents(c, {kN, kD, kC, kH, kW});
  const Values &x = c.x();
  each_group(x, reduced(x.d, axes), [&](int64_t, const std::vector<int64_t> &g) {
    double m = -INFINITY, s = 0; // the maximum is subtracted first, as the engine does (guide ch.3)
    for (int64_t o : g)
      m = std::max(m, double(x.v[size_t(o)]));
    for (int64_t o : g)
      s += std::exp(double(x.v[size_t(o)]) - m);
    for (int64_t o : g)
      c.y().v[size_t(o)] = float(std::exp(double(x.v[size_t(o)]) - m) / s);
  });
}
void softmax(Call &c) {
  softmax_over(c, c.attrs.text("axis"));
}

// Normalization over `axes`: (x - mean) / sqrt(var + eps), the mean taken as 0 where not `centred`
// (a root mean square), then a per-element (layer_norm, rms_norm) or per-channel scale and bias from
// the second and third inputs when given.
void normalize(Call &c, const std::string &axes, bool centred = true) {
  keeps_extents(c, {kN, kD, kC, kH, kW});
  const Values &x = c.x();
  double eps = c.attrs.number("epsilon");
  each_group(x, reduced(x.d, axes), [&](int64_t, const std::vector<int64_t> &g) {
    double mean = centred ? sum_of(x, g, [](double v) { return v; }) / double(g.size()) : 0, var = 0;
    for (int64_t o : g)
      var += (double(x.v[size_t(o)]) - mean) * (double(x.v[size_t(o)]) - mean);
    double inv = 1 / std::sqrt(var / double(g.size()) + eps);
    for (int64_t o : g)
      c.y().v[size_t(o)] = float((double(x.v[size_t(o)]) - mean) * inv);
  });
  for (size_t k = 1; k < std::min<size_t>(3, c.in.size()); ++k) {
    Values y = std::move(c.y());
    c.y().d = y.d;
    c.y().v.resize(y.v.size());
    each_broadcast<2>(y.d, {&y, c.in[k]}, [&](int64_t i, const std::array<int64_t, 2> &at) {
      float p = c.in[k]->v[size_t(at[1])];
      c.y().v[size_t(i)] = k == 1 ? y.v[size_t(at[0])] * p : y.v[size_t(at[0])] + p;
    });
  }
}
void layer_norm(Call &c) {
  normalize(c, c.attrs.text("axes"));
}
// ONNX opset 23 RMSNormalization: x / sqrt(mean(x^2) + eps) over `axes`, times the scale (input 1).
void rms_norm(Call &c) {
  normalize(c, c.attrs.text("axes"), false);
}
void instance_norm(Call &c) {
  normalize(c, "HW");
}

// Inference batch normalization: inputs x, mean, variance, scale, bias (per channel).
void batch_norm(Call &c) {
  keeps_extents(c, {kN, kD, kC, kH, kW});
  const Values &x = c.x();
  double eps = c.attrs.number("epsilon");
  std::array<const Values *, 4> p{};
  for (size_t k = 0; k < 4; ++k)
    p[k] = k + 1 < c.in.size() ? c.in[k + 1] : nullptr;
  auto at = [&](size_t k, int64_t ch, double fallback) {
    return p[k] ? double(p[k]->v[size_t(ch) % p[k]->v.size()]) : fallback;
  };
  int64_t inner = x.d[3] * x.d[4], channels = x.d[2];
  std::vector<double> scale(static_cast<size_t>(channels)), shift(scale.size()); // y = x * scale + shift
  for (int64_t ch = 0; ch < channels; ++ch) {
    scale[size_t(ch)] = at(2, ch, 1) / std::sqrt(at(1, ch, 1) + eps);
    shift[size_t(ch)] = at(3, ch, 0) - at(0, ch, 0) * scale[size_t(ch)];
  }
  for (size_t i = 0; i < x.v.size(); ++i) {
    size_t ch = size_t(int64_t(i) / inner % channels);
    c.y().v[i] = float(double(x.v[i]) * scale[ch] + shift[ch]);
  }
}

void l2_norm(Call &c) {
  keeps_extents(c, {kN, kD, kC, kH, kW});
  const Values &x = c.x();
  double eps = c.attrs.number("epsilon");
  each_group(x, reduced(x.d, c.attrs.text("axes")), [&](int64_t, const std::vector<int64_t> &g) {
    double inv = 1 / std::sqrt(std::max(sum_of(x, g, [](double v) { return v * v; }), eps));
    for (int64_t o : g)
      c.y().v[size_t(o)] = float(double(x.v[size_t(o)]) * inv);
  });
}

void min_max_norm(Call &c) {
  keeps_extents(c, {kN, kD, kC, kH, kW});
  const Values &x = c.x();
  each_group(x, reduced(x.d, c.attrs.text("axes")), [&](int64_t, const std::vector<int64_t> &g) {
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t o : g)
      lo = std::min(lo, double(x.v[size_t(o)])), hi = std::max(hi, double(x.v[size_t(o)]));
    for (int64_t o : g)
      c.y().v[size_t(o)] = float(hi > lo ? (double(x.v[size_t(o)]) - lo) / (hi - lo) : 0);
  });
}

// Local response normalization across channels (size, alpha, beta, bias as ONNX LRN).
void lrn(Call &c) {
  keeps_extents(c, {kN, kD, kC, kH, kW});
  const Values &x = c.x();
  int64_t size = int64_t(c.attrs.number("size")), inner = x.d[3] * x.d[4], C = x.d[2];
  double alpha = c.attrs.number("alpha"), beta = c.attrs.number("beta"), bias = c.attrs.number("bias");
  for (size_t i = 0; i < x.v.size(); ++i) {
    int64_t ch = int64_t(i) / inner % C, base = int64_t(i) - ch * inner;
    double s = 0;
    for (int64_t k = std::max<int64_t>(0, ch - (size - 1) / 2); k <= std::min(C - 1, ch + size / 2); ++k)
      s += double(x.v[size_t(base + k * inner)]) * double(x.v[size_t(base + k * inner)]);
    c.y().v[i] = float(double(x.v[i]) / std::pow(bias + alpha / double(size) * s, beta));
  }
}

void cumsum(Call &c) {
  keeps_extents(c, {kN, kD, kC, kH, kW});
  const Values &x = c.x();
  bool exclusive = c.attrs.number("exclusive") != 0, rev = c.attrs.number("reverse") != 0;
  each_group(x, reduced(x.d, c.attrs.text("axis")), [&](int64_t, const std::vector<int64_t> &g) {
    double s = 0;
    for (size_t k = 0; k < g.size(); ++k) {
      size_t o = size_t(g[rev ? g.size() - 1 - k : k]);
      double v = double(x.v[o]);
      if (!exclusive)
        s += v;
      c.y().v[o] = float(s);
      if (exclusive)
        s += v;
    }
  });
}

// sort along `axis` (ascending unless descending = 1); topk: the k largest (smallest with
// largest = 0), values in the first output, indices in the second when there is one.
void sort_values(Call &c) {
  const Values &x = c.x();
  bool topk = c.op.type == "topk";
  std::string axis = c.attrs.text("axis");
  bool descending = c.attrs.number(topk ? "largest" : "descending") != 0;
  const std::array<int64_t, 5> &yd = c.y().d;
  int a = axis_index(axis, -1);
  if (axis.size() != 1 || a < 0 || yd[size_t(a)] > x.d[size_t(a)] || reduced(yd, axis) != reduced(x.d, axis))
    throw Unevaluated{"its axis '" + axis + "' and output do not fit its input"};
  std::array<int64_t, 5> yst = strides(yd, yd);
  each_group(x, reduced(x.d, axis), [&](int64_t i, const std::vector<int64_t> &g) {
    std::vector<size_t> order(g.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t l, size_t r) {
      float vl = x.v[size_t(g[l])], vr = x.v[size_t(g[r])];
      return descending ? vl > vr : vl < vr;
    });
    // the group's first output element, then steps along the axis
    std::array<int64_t, 5> o{};
    int64_t rest = i;
    std::array<int64_t, 5> rd = reduced(yd, axis);
    for (int k = 4; k >= 0; --k)
      o[size_t(k)] = rest % rd[size_t(k)], rest /= rd[size_t(k)];
    int64_t base = 0;
    for (int k = 0; k < 5; ++k)
      base += o[size_t(k)] * yst[size_t(k)];
    for (int64_t k = 0; k < yd[size_t(a)]; ++k) {
      size_t at = size_t(base + k * yst[size_t(a)]);
      c.y(0).v[at] = x.v[size_t(g[order[size_t(k)]])];
      if (c.out.size() > 1)
        c.y(1).v[at] = float(order[size_t(k)]);
    }
  });
}

// ---- resize -------------------------------------------------------------------------------------

// Nearest (default) or bilinear ("linear"), half-pixel centres.
void resize(Call &c) {
  keeps_extents(c, {kN, kD, kC});
  const Values &x = c.x();
  std::string mode = c.attrs.text("mode");
  bool linear = mode == "linear" || mode == "bilinear";
  if (!linear && mode != "nearest")
    throw Unevaluated{"unknown resize mode '" + mode + "'"};
  Values &y = c.y();
  double sh = double(x.d[kH]) / double(y.d[kH]), sw = double(x.d[kW]) / double(y.d[kW]);
  int64_t i = 0;
  for (int64_t p = 0; p < y.d[0] * y.d[1] * y.d[2]; ++p) {
    const float *plane = x.v.data() + p * x.d[kH] * x.d[kW];
    for (int64_t h = 0; h < y.d[kH]; ++h)
      for (int64_t w = 0; w < y.d[kW]; ++w, ++i) {
        double fh = (double(h) + 0.5) * sh - 0.5, fw = (double(w) + 0.5) * sw - 0.5;
        auto px = [&](int64_t r, int64_t q) {
          return double(plane[std::clamp<int64_t>(r, 0, x.d[kH] - 1) * x.d[kW] +
                              std::clamp<int64_t>(q, 0, x.d[kW] - 1)]);
        };
        if (!linear) {
          y.v[size_t(i)] = float(
              px(int64_t(std::floor((double(h) + 0.5) * sh)), int64_t(std::floor((double(w) + 0.5) * sw))));
          continue;
        }
        int64_t h0 = int64_t(std::floor(fh)), w0 = int64_t(std::floor(fw));
        double ah = fh - double(h0), aw = fw - double(w0);
        y.v[size_t(i)] = float((px(h0, w0) * (1 - aw) + px(h0, w0 + 1) * aw) * (1 - ah) +
                               (px(h0 + 1, w0) * (1 - aw) + px(h0 + 1, w0 + 1) * aw) * ah);
      }
  }
}

// ---- pooling ------------------------------------------------------------------------------------

struct Window {
  std::vector<int64_t> k, s, p, dil;
  explicit Window(const OpAttrs &attrs)
      : k(attrs.ints("kernel")), s(attrs.ints("stride")), p(attrs.ints("pad")), dil(attrs.ints("dilation")) {}
};

void pool(Call &c) {
  keeps_extents(c, {kN, kD, kC});
  const Values &x = c.x();
  Values &y = c.y();
  Window win(c.attrs);
  bool max = c.op.type == "max_pool", include_pad = c.attrs.number("count_include_pad") != 0;
  int64_t i = 0;
  for (int64_t p = 0; p < y.d[0] * y.d[1] * y.d[2]; ++p) {
    const float *plane = x.v.data() + p * x.d[kH] * x.d[kW];
    for (int64_t oh = 0; oh < y.d[kH]; ++oh)
      for (int64_t ow = 0; ow < y.d[kW]; ++ow, ++i) {
        double acc = max ? -INFINITY : 0;
        int64_t n = 0;
        for (int64_t r = 0; r < win.k[0]; ++r)
          for (int64_t q = 0; q < win.k[1]; ++q) {
            int64_t h = oh * win.s[0] - win.p[0] + r * win.dil[0],
                    w = ow * win.s[1] - win.p[2] + q * win.dil[1];
            if (h < 0 || h >= x.d[kH] || w < 0 || w >= x.d[kW]) {
              n += include_pad;
              continue;
            }
            double v = double(plane[h * x.d[kW] + w]);
            acc = max ? std::max(acc, v) : acc + v;
            ++n;
          }
        y.v[size_t(i)] = float(max ? acc : acc / double(std::max<int64_t>(n, 1)));
      }
  }
}

// ---- the multiply-accumulate ops ----------------------------------------------------------------

// Calls f(i, channel, h, w) for every channel, kernel tap (r, q) and window position (a, b) of an
// A x B grid, in that order (i counts them: the rows of im2col's matrix), where (h, w) is the pixel
// tap (r, q) of window (a, b) reaches under the stride, padding and dilation (maybe outside).
template <class F> void each_tap(const Window &win, int64_t channels, int64_t A, int64_t B, F f) {
  size_t i = 0;
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t r = 0; r < win.k[0]; ++r)
      for (int64_t q = 0; q < win.k[1]; ++q)
        for (int64_t a = 0; a < A; ++a)
          for (int64_t b = 0; b < B; ++b, ++i)
            f(i, ch, a * win.s[0] - win.p[0] + r * win.dil[0], b * win.s[1] - win.p[2] + q * win.dil[1]);
}

// C = op(A) op(B) by the call's GEMM (eval.hpp: the reference kernel unless OpenBLAS was asked for);
// for OpenBLAS every extent must fit an int (checked here, so the module need not).
void gemm(const Call &c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, float *out, int64_t ldc) {
  if (!m || !n)
    return;
  if (c.gemm == Gemm::reference)
    return reference_sgemm(ta, tb, m, n, k, a, lda, b, ldb, out, ldc);
  for (int64_t v : {m, n, k, lda, ldb, ldc})
    if (v > INT_MAX)
      throw Unevaluated{"a matrix extent of " + std::to_string(v) + " exceeds the GEMM's int range"};
  blas::api().sgemm(ta, tb, int(m), int(n), int(k), 1.0f, a, int(std::max<int64_t>(lda, 1)), b,
                    int(std::max<int64_t>(ldb, 1)), 0.0f, out, int(std::max<int64_t>(ldc, 1)));
}

// The weights of a conv, deconv or linear: the second input, or seeded values scaled by 1/sqrt(fan
// in) (said in the report).
// `drawn` holds seeded weights.
const std::vector<float> &weights_of(Call &c, int64_t count, int64_t fan_in, std::vector<float> &drawn) {
  if (c.in.size() >= 2) {
    if (c.x(1).elements() != count)
      throw Unevaluated{"its weight input holds " + std::to_string(c.x(1).elements()) + " values, it needs " +
                        std::to_string(count)};
    return c.x(1).v;
  }
  c.report.seeded.push_back(c.op.name + " (weights, " + std::to_string(count) + " values)");
  return drawn = seeded(c.seed, c.op.name + "/weights", count,
                        float(1 / std::sqrt(double(std::max<int64_t>(fan_in, 1)))));
}

// Adds the bias (third input, one value per output channel) to `y`.
void add_bias(Call &c, Values &y) {
  if (c.in.size() < 3)
    return;
  const Values &b = c.x(2);
  int64_t inner = y.d[3] * y.d[4];
  if (b.elements() != y.d[kC])
    throw Unevaluated{"its bias holds " + std::to_string(b.elements()) + " values"};
  for (size_t i = 0; i < y.v.size(); ++i)
    y.v[i] += b.v[size_t(int64_t(i) / inner % y.d[kC])];
}

void conv(Call &c) {
  keeps_extents(c, {kN, kD});
  const Values &x = c.x();
  Values &y = c.y();
  Window win(c.attrs);
  int64_t groups = std::max<int64_t>(1, c.attrs.integer("groups"));
  int64_t C = x.d[kC], O = y.d[kC], cg = C / groups, og = O / groups, taps = cg * win.k[0] * win.k[1];
  if (C % groups || O % groups)
    throw Unevaluated{"channels not divisible by groups"};
  std::vector<float> drawn;
  const std::vector<float> &w = weights_of(c, O * taps, taps, drawn);
  int64_t IH = x.d[kH], IW = x.d[kW], OH = y.d[kH], OW = y.d[kW];
  bool pointwise = taps == cg && win.s[0] == 1 && win.s[1] == 1 && win.p == std::vector<int64_t>{0, 0, 0, 0};
  std::vector<float> col(pointwise ? 0 : size_t(taps * OH * OW));
  for (int64_t b = 0; b < x.d[0] * x.d[1]; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const float *in = x.v.data() + (b * C + g * cg) * IH * IW;
      if (!pointwise) // im2col: each tap of each output position gathers its input pixel
        each_tap(win, cg, OH, OW, [&](size_t i, int64_t ch, int64_t h, int64_t w) {
          col[i] = h < 0 || h >= IH || w < 0 || w >= IW ? 0 : in[(ch * IH + h) * IW + w];
        });
      gemm(c, false, false, og, OH * OW, taps, w.data() + g * og * taps, taps, pointwise ? in : col.data(),
           OH * OW, y.v.data() + (b * O + g * og) * OH * OW, OH * OW);
    }
  add_bias(c, y);
  c.report.flops += 2.0 * double(y.elements()) * double(taps);
}

// Transposed convolution, weight [C_in, O / groups, kh, kw]: each input pixel scatters its
// products over the output window (col2im).
void deconv(Call &c) {
  keeps_extents(c, {kN, kD});
  const Values &x = c.x();
  Values &y = c.y();
  Window win(c.attrs);
  int64_t groups = std::max<int64_t>(1, c.attrs.integer("groups"));
  int64_t C = x.d[kC], O = y.d[kC], cg = C / groups, og = O / groups, kk = win.k[0] * win.k[1];
  if (C % groups || O % groups)
    throw Unevaluated{"channels not divisible by groups"};
  std::vector<float> drawn;
  const std::vector<float> &w = weights_of(c, C * og * kk, cg * kk, drawn);
  int64_t IH = x.d[kH], IW = x.d[kW], OH = y.d[kH], OW = y.d[kW];
  std::vector<float> col(size_t(og * kk * IH * IW));
  std::fill(y.v.begin(), y.v.end(), 0.0f);
  for (int64_t b = 0; b < x.d[0] * x.d[1]; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const float *in = x.v.data() + (b * C + g * cg) * IH * IW;
      gemm(c, true, false, og * kk, IH * IW, cg, w.data() + g * cg * og * kk, og * kk, in, IH * IW,
           col.data(), IH * IW);
      float *out = y.v.data() + (b * O + g * og) * OH * OW;
      // col2im: each tap of each input position scatters its product to the output pixel it reaches
      each_tap(win, og, IH, IW, [&](size_t i, int64_t o, int64_t h, int64_t w) {
        if (h >= 0 && h < OH && w >= 0 && w < OW)
          out[(o * OH + h) * OW + w] += col[i];
      });
    }
  add_bias(c, y);
  c.report.flops += 2.0 * double(x.elements()) * double(og * kk);
}

// A fully connected layer over C: weight [out_features, C_in].
void linear(Call &c) {
  keeps_extents(c, {kN, kD, kH, kW});
  const Values &x = c.x();
  Values &y = c.y();
  int64_t C = x.d[kC], O = y.d[kC], inner = x.d[3] * x.d[4];
  std::vector<float> drawn;
  const std::vector<float> &w = weights_of(c, O * C, C, drawn);
  for (int64_t b = 0; b < x.d[0] * x.d[1]; ++b)
    gemm(c, false, false, O, inner, C, w.data(), C, x.v.data() + b * C * inner, inner,
         y.v.data() + b * O * inner, inner);
  add_bias(c, y);
  c.report.flops += 2.0 * double(y.elements()) * double(C);
}

// For each (n, d, h) of the output: out[C, W] = A[C, K] B[K, W], the left W contracting with the
// right C; N and D broadcast, the right H broadcasts when it is 1.
void matmul(Call &c) {
  const Values &a = c.x(0), &b = c.x(1);
  Values &y = c.y();
  int64_t K = a.d[kW], M = y.d[kC], H = y.d[kH], W = y.d[kW];
  if (b.d[kC] != K)
    throw Unevaluated{"the left operand's W (" + std::to_string(K) + ") is not the right operand's C (" +
                      std::to_string(b.d[kC]) + ")"};
  broadcasts({a.d[0], a.d[1], a.d[kC], a.d[kH], 1}, {y.d[0], y.d[1], y.d[kC], y.d[kH], 1});
  broadcasts({b.d[0], b.d[1], 1, b.d[kH], b.d[kW]}, {y.d[0], y.d[1], 1, y.d[kH], y.d[kW]});
  for (int64_t n = 0; n < y.d[0]; ++n)
    for (int64_t d = 0; d < y.d[1]; ++d)
      for (int64_t h = 0; h < H; ++h) {
        auto slab = [&](const Values &v) {
          int64_t nn = v.d[0] == 1 ? 0 : n, dd = v.d[1] == 1 ? 0 : d, hh = v.d[kH] == 1 ? 0 : h;
          return v.v.data() + ((nn * v.d[1] + dd) * v.d[kC] * v.d[kH] + hh) * v.d[kW];
        };
        gemm(c, false, false, M, W, K, slab(a), a.d[kH] * K, slab(b), b.d[kH] * b.d[kW],
             y.v.data() + ((n * y.d[1] + d) * M * H + h) * W, H * W);
      }
  c.report.flops += 2.0 * double(y.elements()) * double(K);
}

// Scaled dot-product attention, Q, K, V [B, 1, heads, S, features] (the heads along C, the sequence
// along H; N, D and C broadcast): softmax(q k^T * scale + mask) v per head, scale 1/sqrt(W) unless
// given, the mask added to the [.., S_q, S_k] scores.
void sdpa(Call &c) {
  const Values &q = c.x(0), &k = c.x(1), &v = c.x(2);
  Values &y = c.y();
  int64_t sq = q.d[kH], sk = k.d[kH], e = q.d[kW], ev = v.d[kW];
  if (k.d[kW] != e || v.d[kH] != sk)
    throw Unevaluated{"k's W must be q's (" + std::to_string(e) + ") and v's H k's (" + std::to_string(sk) +
                      ")"};
  for (const Values *t : {&q, &k, &v})
    broadcasts({t->d[0], t->d[1], t->d[kC], 1, 1}, {y.d[0], y.d[1], y.d[kC], 1, 1});
  auto slab = [&](const Values &t, int64_t n, int64_t d, int64_t ch) {
    int64_t nn = t.d[0] == 1 ? 0 : n, dd = t.d[1] == 1 ? 0 : d, cc = t.d[kC] == 1 ? 0 : ch;
    return t.v.data() + ((nn * t.d[1] + dd) * t.d[kC] + cc) * t.d[kH] * t.d[kW];
  };
  Values s;
  s.d = {y.d[0], y.d[1], y.d[kC], sq, sk};
  s.v.resize(size_t(s.elements()));
  int64_t heads = y.d[0] * y.d[1] * y.d[kC];
  for (int64_t i = 0; i < heads; ++i) {
    int64_t n = i / (y.d[1] * y.d[kC]), d = i / y.d[kC] % y.d[1], ch = i % y.d[kC];
    gemm(c, false, true, sq, sk, e, slab(q, n, d, ch), e, slab(k, n, d, ch), e, s.v.data() + i * sq * sk, sk);
  }
  float scale = float(c.attrs.given("scale") ? c.attrs.number("scale") : 1 / std::sqrt(double(e)));
  for (float &x : s.v)
    x *= scale;
  if (c.in.size() >= 4) {
    Values masked = s;
    each_broadcast<2>(s.d, {&s, c.in[3]}, [&](int64_t i, const std::array<int64_t, 2> &at) {
      masked.v[size_t(i)] = s.v[size_t(at[0])] + c.in[3]->v[size_t(at[1])];
    });
    s = std::move(masked);
  }
  Call sm{c.op, c.attrs, c.num, c.fp16, c.report, {&s}, {s}, c.seed, c.gemm};
  softmax_over(sm, "W");
  if (c.fp16)
    round_to_half(std::span<float>(sm.out[0].v));
  for (int64_t i = 0; i < heads; ++i) {
    int64_t n = i / (y.d[1] * y.d[kC]), d = i / y.d[kC] % y.d[1], ch = i % y.d[kC];
    gemm(c, false, false, sq, ev, sk, sm.out[0].v.data() + i * sq * sk, sk, slab(v, n, d, ch), ev,
         y.v.data() + i * sq * ev, ev);
  }
  c.report.flops += 2.0 * double(s.elements()) * double(e + ev);
}

// ---- the kernel table ---------------------------------------------------------------------------

} // namespace

const std::map<std::string, Kernel> &kernels() {
  static const std::map<std::string, Kernel> t = [] {
    std::map<std::string, Kernel> k = {
        {"conv", conv},
        {"deconv", deconv},
        {"linear", linear},
        {"matmul", matmul},
        {"sdpa", sdpa},
        {"max_pool", pool},
        {"avg_pool", pool},
        {"compare", compare},
        {"select", select},
        {"reshape", reshape},
        {"transpose", transpose},
        {"slice", slice},
        {"pad", pad},
        {"tile", tile},
        {"broadcast_to", broadcast_to},
        {"concat", concat},
        {"split", split},
        {"input_view", input_view},
        {"dynamic_slice", dynamic_slice},
        {"reverse", reverse},
        {"depth_to_space", depth_to_space},
        {"space_to_depth", space_to_depth},
        {"gather", gather},
        {"gather_elements", gather},
        {"argmax", argreduce},
        {"argmin", argreduce},
        {"global_argmax", argreduce},
        {"softmax", softmax},
        {"layer_norm", layer_norm},
        {"rms_norm", rms_norm},
        {"instance_norm", instance_norm},
        {"batch_norm", batch_norm},
        {"l2_norm", l2_norm},
        {"min_max_norm", min_max_norm},
        {"lrn", lrn},
        {"cumsum", cumsum},
        {"sort", sort_values},
        {"topk", sort_values},
        {"resize", resize},
    };
    for (const auto &[name, u] : unary_table())
      k[name] = unary;
    for (const auto &[name, f] : binary_table())
      k[name] = binary;
    for (const auto &[name, f] : fold_table())
      k[name] = reduce;
    return k;
  }();
  return t;
}

double scratch_elements(const Op &op, const OpAttrs &attrs, const std::vector<const Shape *> &in,
                        const Shape &out) {
  if (in.empty())
    return 0;
  auto d = [](const Shape &s, int a) { return double(s.d[size_t(a)]); };
  const Shape &x = *in[0];
  bool seeded_weights = in.size() < 2;
  if (op.type == "conv" || op.type == "deconv") {
    std::vector<int64_t> k = attrs.ints("kernel");
    double groups = double(std::max<int64_t>(1, attrs.integer("groups")));
    double kk = k.size() == 2 ? double(k[0]) * double(k[1]) : 1;
    double cg = d(x, kC) / groups, og = d(out, kC) / groups;
    if (op.type == "conv") // im2col over the output positions; seeded weights O x taps
      return cg * kk * d(out, kH) * d(out, kW) + (seeded_weights ? d(out, kC) * cg * kk : 0);
    return og * kk * d(x, kH) * d(x, kW) + (seeded_weights ? d(x, kC) * og * kk : 0); // col2im
  }
  if (op.type == "linear")
    return seeded_weights ? d(out, kC) * d(x, kC) : 0;
  if (op.type == "sdpa" && in.size() >= 2) // the scores [.., S_q, S_k]
    return d(out, 0) * d(out, 1) * d(out, kC) * d(x, kH) * d(*in[1], kH);
  return 0;
}

bool accumulates(const std::string &type) {
  return type == "conv" || type == "deconv" || type == "linear" || type == "matmul" || type == "sdpa";
}

} // namespace eval_detail
} // namespace anec::compiler
