// The programs of ../shared/data/ane-measured/README.md ("Reading a row as a graph"), one builder per
// program, shared by the rows that time the same program. Layout: a row block [R, D] with the op
// over D is [1, 1, D, 1, R] (features on C, where linear contracts; rows on W); images are
// [B, 1, C, H, W]; heads fold into N, where matmul broadcasts.
#include "anec/compiler/calibrate/workload.hpp"
#include "anec/compiler/ir/shapes.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

namespace anec::compiler {

namespace {

constexpr std::array<const char *, 7> kColumns = {"chip",  "model_id", "op",         "params",
                                                  "gflop", "lat_ms",   "source_file"};
// Repeat counts (layers, depth, steps, iterations) above this would build graphs of millions of ops.
constexpr int64_t kMaxRepeat = 4096;

std::string columns() {
  return join(std::vector<std::string>(kColumns.begin(), kColumns.end()), ", ");
}

Error unreadable(const std::string &source, size_t line, const std::string &why) {
  return Error("ANEC-CAL-001", source + ":" + std::to_string(line) + ": " + why);
}

// A whole-field number: no spaces, no trailing text, finite.
std::optional<double> number(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

double gflop_of(std::string_view text, const std::string &source, size_t line) {
  if (text == "NA")
    return -1;
  std::optional<double> v = number(text);
  if (!v || *v < 0)
    throw unreadable(source, line, "gflop " + quote_arg(text) + " is not a number >= 0 or NA");
  return *v;
}

double latency_of(std::string_view text, const std::string &source, size_t line) {
  std::optional<double> v = number(text);
  if (!v || *v <= 0)
    throw unreadable(source, line, "lat_ms " + quote_arg(text) + " is not a finite number > 0");
  return *v;
}

void check_header(std::string_view header, const std::string &source) {
  std::vector<std::string_view> f = split(header, '\t');
  bool same = f.size() == kColumns.size() && std::equal(f.begin(), f.end(), kColumns.begin());
  if (!same)
    throw unreadable(source, 1,
                     "header " + quote_arg(header) + " does not name the columns " + columns() +
                         " (tab-separated, in that order)");
}

Measurement row_of(std::string_view text, const std::string &source, size_t line) {
  std::vector<std::string_view> f = split(text, '\t');
  if (f.size() != kColumns.size())
    throw unreadable(source, line,
                     std::to_string(f.size()) + " column(s) in " + quote_arg(text) + ", expected " +
                         std::to_string(kColumns.size()) + " (" + columns() + ")");
  Measurement m{std::string(f[0]), std::string(f[1]), std::string(f[2]), std::string(f[3]),
                std::string(f[6])};
  m.gflop = gflop_of(f[4], source, line);
  m.lat_ms = latency_of(f[5], source, line);
  m.line = line;
  return m;
}

} // namespace

std::vector<Measurement> read_measurements(std::string_view text, const std::string &source) {
  std::vector<std::string_view> lines = split(text, '\n');
  if (lines.size() > 1 && lines.back().empty())
    lines.pop_back(); // the final newline
  for (std::string_view &l : lines)
    if (!l.empty() && l.back() == '\r')
      l.remove_suffix(1);
  check_header(lines[0], source);
  std::vector<Measurement> out;
  for (size_t i = 1; i < lines.size(); ++i)
    out.push_back(row_of(lines[i], source, i + 1));
  return out;
}

namespace {

using Dims = std::array<int64_t, 5>;

// A row's params ("K=V,K=V", V a whole number or NA) and the program under construction.
struct Build {
  const Measurement &m;
  std::map<std::string, std::optional<int64_t>, std::less<>> params;
  Workload w;
  int next = 0;

  std::string row() const { return "line " + std::to_string(m.line) + ": op '" + m.op + "'"; }
  Error bad(const std::string &why) const {
    return Error("ANEC-CAL-002", row() + " (params " + quote_arg(m.params) + "): " + why);
  }

  void parse() {
    if (m.params.empty())
      return;
    for (std::string_view kv : split(m.params, ',')) {
      size_t eq = kv.find('=');
      std::string key(kv.substr(0, eq)), value(eq == kv.npos ? "" : kv.substr(eq + 1));
      std::optional<int64_t> v;
      int64_t x = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
      if (ec == std::errc() && end == value.data() + value.size())
        v = x;
      if (key.empty() || eq == kv.npos || (!v && value != "NA"))
        throw bad("parameter " + quote_arg(kv) + " is not K=V with V a whole number or NA");
      if (!params.emplace(key, v).second)
        throw bad("parameter '" + key + "' is given twice");
    }
  }
  // A needed parameter in [lo, hi].
  int64_t get(const std::string &key, int64_t lo, int64_t hi) const {
    auto it = params.find(key);
    if (it == params.end())
      throw bad("needs parameter '" + key + "', which the row does not give");
    if (!it->second)
      throw bad("needs parameter '" + key + "', which the row records as NA");
    int64_t v = *it->second;
    if (v < lo || v > hi)
      throw bad("parameter " + key + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
    return v;
  }
  int64_t dim(const std::string &key) const { return get(key, 1, kMaxDimension); }
  int64_t count(const std::string &key) const { return get(key, 1, kMaxRepeat); }
  int64_t flag(const std::string &key) const { return get(key, 0, 1); }
  bool na(const std::string &key) const {
    auto it = params.find(key);
    return it != params.end() && !it->second;
  }
  int64_t mul(int64_t a, int64_t b) const { return mul_or_throw(a, b, "ANEC-CAL-002", row()); }
  int64_t divide(int64_t a, int64_t b, const std::string &what) const {
    if (a % b)
      throw bad(what + ": " + std::to_string(b) + " does not divide " + std::to_string(a));
    return a / b;
  }

  std::string tensor(const std::string &stem, const Dims &d, const std::string &dtype, bool constant) {
    Tensor t;
    t.name = stem + "_" + std::to_string(next++);
    t.shape.d = d;
    t.dtype = dtype;
    t.constant = constant;
    return w.graph.add(std::move(t)).name;
  }
  std::string input(const std::string &stem, const Dims &d) {
    std::string n = tensor(stem, d, "fp16", false);
    w.graph.inputs.push_back(n);
    return n;
  }
  std::string constant(const std::string &stem, const Dims &d, const std::string &dtype = "fp16") {
    return tensor(stem, d, dtype, true);
  }
  // The output's shape is left to infer_shapes.
  std::string op(const std::string &type, std::vector<std::string> in, Doc attrs = Doc::table()) {
    Op o;
    o.name = type + "_" + std::to_string(next++);
    o.type = type;
    o.inputs = std::move(in);
    o.outputs = {o.name};
    o.attrs = std::move(attrs);
    Tensor t;
    t.name = o.name;
    w.graph.add(std::move(t));
    w.graph.ops.push_back(std::move(o));
    return w.graph.ops.back().name;
  }
  void assume(std::string what) { w.assumptions.push_back(std::move(what)); }
};

using Builder = void (*)(Build &);

Doc ints(std::initializer_list<int64_t> v) {
  Doc a = Doc::array();
  for (int64_t x : v)
    a.push(Doc::integer(x));
  return a;
}
Doc attr(const char *key, Doc value) {
  Doc t = Doc::table();
  t.set(key, std::move(value));
  return t;
}
Doc axis(const char *letter) {
  return attr("axis", Doc::string(letter));
}
Doc reshape_to(const Dims &d) {
  return attr("shape", ints({d[0], d[1], d[2], d[3], d[4]}));
}
Doc perm(const Dims &p) {
  return attr("perm", ints({p[0], p[1], p[2], p[3], p[4]}));
}

// ---- layers -----------------------------------------------------------------------------------

// x @ W with W a constant [out, 1, in, 1, 1] (int8 where the row stores its weights so; guide ch.7,
// ch.14: per-output-channel symmetric int8, dequantised as it streams, its scale folded in the layer).
std::string linear_with(Build &b, const std::string &x, const std::string &w, int64_t out) {
  return b.op("linear", {x, w}, attr("out_features", Doc::integer(out)));
}
std::string linear(Build &b, const std::string &x, int64_t in, int64_t out,
                   const std::string &dtype = "fp16") {
  return linear_with(b, x, b.constant("w", {out, 1, in, 1, 1}, dtype), out);
}
std::string biased(Build &b, const std::string &x, int64_t in, int64_t out) {
  return b.op("add", {linear(b, x, in, out), b.constant("bias", {1, 1, out, 1, 1})});
}

struct ConvChain {
  int64_t cin, c, k, stride, pad, depth;
  bool relu_between, relu_last;
};
// depth x (k x k conv, cin -> c first, c -> c after), constant weights, no bias.
std::string convs(Build &b, std::string x, const ConvChain &cc) {
  for (int64_t i = 0; i < cc.depth; ++i) {
    int64_t cin = i ? cc.c : cc.cin;
    Doc a = attr("out_channels", Doc::integer(cc.c));
    a.set("kernel", ints({cc.k, cc.k}));
    a.set("stride", ints({cc.stride, cc.stride}));
    a.set("pad", ints({cc.pad, cc.pad, cc.pad, cc.pad}));
    a.set("groups", Doc::integer(1));
    x = b.op("conv", {x, b.constant("w", {cc.c, 1, cin, cc.k, cc.k})}, std::move(a));
    if (i + 1 < cc.depth ? cc.relu_between : cc.relu_last)
      x = b.op("relu", {x});
  }
  return x;
}

// x * rsqrt(mean(x^2) + 1e-5) * g over C, written out: no rms_norm layer in the catalogue.
std::string rms_norm(Build &b, const std::string &x, int64_t d) {
  std::string ms = b.op("reduce_mean", {b.op("mul", {x, x})}, attr("axes", Doc::string("C")));
  std::string r = b.op("rsqrt", {b.op("add", {ms, b.constant("eps", {1, 1, 1, 1, 1})})});
  return b.op("mul", {b.op("mul", {x, r}), b.constant("g", {1, 1, d, 1, 1})});
}

std::string layer_norm(Build &b, const std::string &x, int64_t d) {
  return b.op("layer_norm", {x, b.constant("gamma", {1, 1, d, 1, 1}), b.constant("beta", {1, 1, d, 1, 1})},
              axis("C"));
}

// softmax(q kT / sqrt(d_head)) v: q [., 1, 1, rows, dh], kT [., 1, dh, 1, keys], v [., 1, keys, 1, dh].
std::string attention(Build &b, const std::string &q, const std::string &kt, const std::string &v) {
  std::string s = b.op("mul", {b.op("matmul", {q, kt}), b.constant("scale", {1, 1, 1, 1, 1})});
  return b.op("matmul", {b.op("softmax", {s}, axis("W")), v});
}

// ---- programs ---------------------------------------------------------------------------------

// [batch, rows, k] @ W[k, n], W constant.
void product(Build &b, int64_t batch, int64_t rows, int64_t k, int64_t n) {
  linear(b, b.input("x", {batch, 1, k, 1, rows}), k, n);
}
void product_mkn(Build &b) {
  product(b, 1, b.dim("M"), b.dim("K"), b.dim("N"));
}

// Rows [R, D] (the row-count key is "R", or "S" for the wc_ rows).
std::string rows_input(Build &b, const char *rows) {
  return b.input("x", {1, 1, b.dim("D"), 1, b.dim(rows)});
}
void unary(Build &b) {
  b.op(b.m.op, {rows_input(b, "R")});
} // relu, gelu, sigmoid: the op's own name

void rms_rows(Build &b, const char *rows) {
  rms_norm(b, rows_input(b, rows), b.dim("D"));
  b.assume(
      "rms_norm written as mul, reduce_mean, add, rsqrt and two muls (ANEForge's lowering not recorded)");
}

std::string image(Build &b) {
  return b.input("x", {b.dim("B"), 1, b.dim("C"), b.dim("H"), b.dim("W")});
}

void conv(Build &b) {
  int64_t c = b.dim("C"), k = b.dim("k"), pad = k / 2;
  if (!b.na("pad"))
    pad = b.get("pad", 0, k - 1);
  else
    b.assume("pad " + std::to_string(pad) + " = k//2, same padding (not recorded)");
  convs(b, b.input("x", {b.dim("B"), 1, c, b.dim("H"), b.dim("W")}),
        {c, c, k, b.dim("stride"), pad, 1, false, false});
}
void conv_chain(Build &b) { // conv -> relu -> conv -> relu -> conv
  int64_t c = b.dim("C"), k = b.dim("k");
  ConvChain cc{c, c, k, b.dim("stride"), b.get("pad", 0, k - 1), b.count("n_conv"), true, false};
  convs(b, image(b), cc);
}
std::string conv_stack(Build &b) { // depth x (conv + relu), Cin -> C then C -> C
  int64_t k = b.dim("k");
  bool relu = b.flag("relu");
  ConvChain cc{b.dim("Cin"),           b.dim("C"),       k,    b.dim("stride"),
               b.get("pad", 0, k - 1), b.count("depth"), relu, relu};
  return convs(b, b.input("x", {b.dim("B"), 1, b.dim("Cin"), b.dim("H"), b.dim("W")}), cc);
}
void vision_stack(Build &b) { // conv stack -> global average pool -> linear C -> fc
  std::string x = conv_stack(b);
  if (b.flag("gap"))
    x = b.op("reduce_mean", {x}, attr("axes", Doc::string("HW")));
  if (int64_t fc = b.get("fc", 0, kMaxDimension); fc > 0)
    linear(b, x, b.dim("C"), fc);
}
void stencil(Build &b) { // steps x (C -> C conv), no activation
  int64_t c = b.dim("C"), k = b.dim("k");
  ConvChain cc{c, c, k, 1, b.get("pad", 0, k - 1), b.count("steps"), false, false};
  convs(b, b.input("x", {1, 1, c, b.dim("H"), b.dim("W")}), cc);
}

// Group norm as instance norm over the grouped view [B, 1, G, C/G * H, W], then a per-channel affine.
void group_norm(Build &b, int64_t groups) {
  int64_t n = b.dim("B"), c = b.dim("C"), h = b.dim("H"), w = b.dim("W");
  int64_t per = b.divide(c, groups, "group count");
  std::string x = b.op("reshape", {image(b)}, reshape_to({n, 1, groups, b.mul(per, h), w}));
  x = b.op("reshape", {b.op("instance_norm", {x})}, reshape_to({n, 1, c, h, w}));
  x = b.op("mul", {x, b.constant("gamma", {1, 1, c, 1, 1})});
  b.op("add", {x, b.constant("beta", {1, 1, c, 1, 1})});
}

void pool(Build &b) { // max_pool, avg_pool: the op's own name
  Doc a = attr("kernel", ints({2, 2}));
  a.set("stride", ints({2, 2}));
  b.op(b.m.op, {image(b)}, std::move(a));
  b.assume("pool window 2x2 stride 2 (not recorded)");
}
void pixel_shuffle(Build &b) {
  b.divide(b.dim("C"), 4, "channels for upscale 2");
  b.op("depth_to_space", {image(b)}, attr("factor", Doc::integer(2)));
  b.assume("upscale factor 2 (not recorded)");
}

// The catalogue's attention op on program inputs Q, K, V [B, 1, H, S, D].
void sdpa(Build &b, int64_t batch) {
  Dims d{batch, 1, b.dim("H"), b.dim("S"), b.dim("D")};
  b.op("sdpa", {b.input("q", d), b.input("k", d), b.input("v", d)});
}
void arg_reduce(Build &b, const char *type, Doc attrs) {
  b.op(type, {b.input("x", {1, 1, b.dim("C"), 1, b.dim("W")})}, std::move(attrs));
}

// x [B, 1, D, 1, S] -> Q, K, V linear with bias -> heads -> attention -> merge -> linear with bias.
std::string attention_block(Build &b, const std::string &x, int64_t batch) {
  int64_t s = b.dim("S"), d = b.dim("D"), dh = b.divide(d, b.dim("H"), "heads"),
          bh = b.mul(batch, b.dim("H"));
  auto heads = [&](const std::string &t) {
    return b.op("reshape", {biased(b, t, d, d)}, reshape_to({bh, 1, dh, 1, s}));
  };
  std::string q = b.op("transpose", {heads(x)}, perm({0, 1, 3, 4, 2})); // [bh, 1, 1, S, dh]
  std::string kt = heads(x);                                            // [bh, 1, dh, 1, S]
  std::string v = b.op("transpose", {heads(x)}, perm({0, 1, 4, 3, 2})); // [bh, 1, S, 1, dh]
  std::string a = b.op("transpose", {attention(b, q, kt, v)}, perm({0, 1, 4, 2, 3}));
  return biased(b, b.op("reshape", {a}, reshape_to({batch, 1, d, 1, s})), d, d);
}
std::string sequence(Build &b, int64_t batch) {
  return b.input("x", {batch, 1, b.dim("D"), 1, b.dim("S")});
}

void encoder_block(Build &b) { // x + attn(LN(x)), then y + W2 gelu(W1 LN(y) + b1) + b2
  int64_t batch = b.dim("B"), d = b.dim("D"), ff = b.dim("Dff");
  std::string x = sequence(b, batch);
  std::string y = b.op("add", {x, attention_block(b, layer_norm(b, x, d), batch)});
  std::string f = biased(b, b.op("gelu", {biased(b, layer_norm(b, y, d), d, ff)}), ff, d);
  b.op("add", {y, f});
}

// One decode layer for B streams x [B, 1, d, 1, 1]: the token's K and V join the KV-cache inputs
// (Kt [B*H, 1, dh, 1, s_kv], V [B*H, 1, s_kv, 1, dh]), so it attends to s_kv + 1 positions.
struct Decoder {
  Build &b;
  int64_t batch, d, heads, dh, ff, skv;
  std::string dtype;

  std::string view(const std::string &t, const Dims &to) { return b.op("reshape", {t}, reshape_to(to)); }
  std::string attend(const std::string &h) {
    int64_t bh = b.mul(batch, heads);
    std::string q = view(linear(b, h, d, d, dtype), {bh, 1, 1, 1, dh});
    std::string k = view(linear(b, h, d, d, dtype), {bh, 1, dh, 1, 1});
    std::string v = view(linear(b, h, d, d, dtype), {bh, 1, 1, 1, dh});
    std::string kt = b.op("concat", {b.input("k_cache", {bh, 1, dh, 1, skv}), k}, axis("W"));
    std::string vs = b.op("concat", {b.input("v_cache", {bh, 1, skv, 1, dh}), v}, axis("C"));
    return linear(b, view(attention(b, q, kt, vs), {batch, 1, d, 1, 1}), d, d, dtype);
  }
  std::string swiglu(const std::string &h) {
    std::string g = b.op("swish", {linear(b, h, d, ff, dtype)});
    return linear(b, b.op("mul", {g, linear(b, h, d, ff, dtype)}), ff, d, dtype);
  }
  std::string layer(const std::string &x) {
    std::string y = b.op("add", {x, attend(rms_norm(b, x, d))});
    return b.op("add", {y, swiglu(rms_norm(b, y, d))});
  }
};
void decode_stack(Build &b, const std::string &dtype) {
  Decoder dec{
      b,    b.dim("B"), b.dim("d_model"), b.dim("n_heads"), b.dim("d_head"), b.dim("d_ff"), b.dim("s_kv"),
      dtype};
  if (b.mul(dec.heads, dec.dh) != dec.d)
    throw b.bad("n_heads x d_head differs from d_model " + std::to_string(dec.d));
  std::string x = b.input("x", {dec.batch, 1, dec.d, 1, 1});
  for (int64_t l = 0, n = b.count("n_layers"); l < n; ++l)
    x = dec.layer(x);
  linear(b, rms_norm(b, x, dec.d), dec.d, b.dim("vocab"), dtype);
}

// iters x (x <- (b - x R) Dinv) with R [n, n] a constant every iteration shares.
void jacobi(Build &b) {
  int64_t n = b.dim("n");
  std::string x = b.input("x", {1, 1, n, 1, 1}), rhs = b.input("b", {1, 1, n, 1, 1});
  std::string dinv = b.input("dinv", {1, 1, n, 1, 1}), r = b.constant("R", {n, 1, n, 1, 1});
  for (int64_t i = 0, iters = b.count("iters"); i < iters; ++i)
    x = b.op("mul", {b.op("sub", {rhs, linear_with(b, x, r, n)}), dinv});
}

const std::map<std::string, Builder, std::less<>> &builder_table() {
  static const std::map<std::string, Builder, std::less<>> table = {
      {"gemm", [](Build &b) { product(b, 1, b.dim("N"), b.dim("N"), b.dim("N")); }},
      {"gemv", product_mkn},
      {"matmul", product_mkn},
      {"wc_gemm_floor", product_mkn},
      {"wc_gemm_bandwidth", product_mkn},
      {"wc_gemm_compute", product_mkn},
      {"serve_gemm_batched", [](Build &b) { product(b, b.dim("B"), b.dim("M"), b.dim("K"), b.dim("N")); }},
      {"wc_dft_matmul_2nets",
       [](Build &b) { // the cosine half, then the sine half: two programs
         product(b, 1, 1, b.dim("N"), b.dim("N"));
         b.w.dispatches = 2;
       }},
      {"conv", conv},
      {"conv3x3_chain3_fused", conv_chain},
      {"wc_conv_single", [](Build &b) { conv_stack(b); }},
      {"wc_conv_resnetish", [](Build &b) { conv_stack(b); }},
      {"serve_vision_convstack", vision_stack},
      {"wc_stencil5pt_conv_chain", stencil},
      {"relu", unary},
      {"gelu", unary},
      {"sigmoid", unary},
      {"softmax", [](Build &b) { b.op("softmax", {rows_input(b, "R")}, axis("C")); }},
      {"reduce_sum",
       [](Build &b) { b.op("reduce_sum", {rows_input(b, "R")}, attr("axes", Doc::string("C"))); }},
      {"layer_norm", [](Build &b) { layer_norm(b, rows_input(b, "R"), b.dim("D")); }},
      {"wc_layer_norm", [](Build &b) { layer_norm(b, rows_input(b, "S"), b.dim("D")); }},
      {"rms_norm", [](Build &b) { rms_rows(b, "R"); }},
      {"wc_rms_norm", [](Build &b) { rms_rows(b, "S"); }},
      {"l2_norm",
       [](Build &b) {
         b.op("l2_norm", {rows_input(b, "R")}, axis("C"));
         b.assume("l2_norm as the catalogue's l2_norm layer (ANEForge's lowering not recorded)");
       }},
      {"group_norm",
       [](Build &b) {
         group_norm(b, 32);
         b.assume("group count 32 (not recorded; ANEForge's other group-norm benchmark uses 32)");
       }},
      {"wc_group_norm", [](Build &b) { group_norm(b, b.dim("groups")); }},
      {"max_pool", pool},
      {"avg_pool", pool},
      {"pixel_shuffle", pixel_shuffle},
      {"sdpa", [](Build &b) { sdpa(b, b.dim("B")); }},
      {"bridge_sdpa", [](Build &b) { sdpa(b, 1); }},
      {"bridge_argmax", [](Build &b) { arg_reduce(b, "argmax", axis("W")); }},
      {"bridge_topk",
       [](Build &b) {
         Doc a = axis("W");
         a.set("k", Doc::integer(b.get("k", 1, b.dim("W"))));
         arg_reduce(b, "topk", std::move(a));
       }},
      {"decode_stack_fp16", [](Build &b) { decode_stack(b, "fp16"); }},
      {"decode_stack_int8w", [](Build &b) { decode_stack(b, "int8"); }},
      {"serve_attention_block", [](Build &b) { attention_block(b, sequence(b, b.dim("B")), b.dim("B")); }},
      {"wc_mha", [](Build &b) { attention_block(b, sequence(b, 1), 1); }},
      {"serve_encoder_block", encoder_block},
      {"wc_jacobi_fused", jacobi},
  };
  return table;
}

} // namespace

std::vector<std::string> workload_ops() {
  return keys_of(builder_table());
}

Workload build_workload(const Measurement &m, const OpCatalog &catalog) {
  auto it = builder_table().find(m.op);
  if (it == builder_table().end())
    throw Error("ANEC-CAL-002",
                "line " + std::to_string(m.line) + ": op " + quote_arg(m.op) +
                    " is no program the workload builder knows (known: " + join(workload_ops(), ", ") + ")");
  Build b{m, {}, {}};
  b.w.graph.source = m.source_file;
  b.w.graph.front_end = "ane-measured";
  b.parse();
  it->second(b);
  b.w.graph.outputs = {b.w.graph.ops.back().outputs[0]};
  infer_shapes(b.w.graph, catalog);
  return std::move(b.w);
}

} // namespace anec::compiler
