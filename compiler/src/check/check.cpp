#include "anec/compiler/check/check.hpp"

#include "anec/compiler/ir/attrs.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>
#include <variant>

namespace anec::compiler {

const char *verdict_name(Verdict v) {
  return v == Verdict::Native ? "native" : v == Verdict::Decompose ? "decompose" : "reject";
}

namespace {
std::string str(int64_t v) {
  return std::to_string(v);
}
// A magnitude a model gives as a float, printed whole; beyond int64 the cast would be undefined.
std::string whole(double v) {
  return v > -0x1p63 && v < 0x1p63 ? str(int64_t(v)) : std::to_string(v);
}

// What the rules read of the current op that is the same on every target: its operands, looked
// up once per op, its attributes and its embedded weight bytes.
struct Operands {
  std::vector<const Tensor *> ins, outs;
  std::optional<OpAttrs> attrs;
  double weight = 0;
  std::vector<int64_t> kernel, pad; // a window op's attributes, with their defaults
  void of(const Graph &g, const Op &o, const OpTensors &tensors, const OpCatalog &catalog,
          std::optional<double> weight_given) {
    ins.clear();
    outs.clear();
    for (size_t k : tensors.ins)
      ins.push_back(&g.tensors[k]);
    for (size_t k : tensors.outs)
      outs.push_back(&g.tensors[k]);
    attrs.emplace(o, catalog);
    weight = weight_given ? *weight_given : weight_bytes(g, o, tensors, catalog);
    if (attrs->declares("kernel")) {
      attrs->ints("kernel", kernel);
      attrs->ints("pad", pad);
      // The window rules read a height and a width, and a pad before and after each.
      if (kernel.size() < 2 || pad.size() < 4)
        throw Error("ANEC-GRAPH-003", g.source + ": op '" + o.name + "' (" + o.type + "): kernel has " +
                                          std::to_string(kernel.size()) + " value(s) and pad " +
                                          std::to_string(pad.size()) + "; a window needs 2 and 4");
    }
  }
};

struct Checker {
  const Graph &g;
  const hal::Target &t;
  CheckResult &r;
  Detail detail = Detail::Full;
  const Op *op = nullptr;
  OpVerdict *verdict = nullptr;
  OpVerdict scratch = {}; // the current op's verdict in a summary, which keeps none
  const Operands *operands = nullptr;

  // The table's entries, looked up once per field name and kept: the rules ask for the same few
  // limits on every op.
  mutable std::unordered_map<std::string, const hal::Entry *, TextHash, std::equal_to<>> entries = {};
  // In front of them, the last lookup per slot of the name's hash: a repeated lookup costs a hash of a
  // few bytes and a name comparison, not a search (and, unlike a slot per name's address, the same
  // for every build's layout of the literals).
  struct Recent {
    uint64_t hash = 0;
    std::string field;
    const hal::Entry *entry = nullptr;
  };
  mutable std::array<Recent, 128> recent = {};
  const hal::Entry *entry(std::string_view field) const {
    uint64_t hash = text_hash(field);
    Recent &r = recent[hash % recent.size()];
    if (r.hash == hash && same_text(r.field, field))
      return r.entry;
    r.hash = hash;
    r.field.assign(field);
    return r.entry = kept(field);
  }
  const hal::Entry *kept(std::string_view field) const {
    auto it = entries.find(field);
    if (it == entries.end())
      it = entries.emplace(std::string(field), t.find(field)).first;
    return it->second;
  }
  // A numeric table value, or nullopt when the table lacks it.
  std::optional<double> num(std::string_view field) const { return value_of(entry(field)); }
  static std::optional<double> value_of(const hal::Entry *e) {
    if (!e)
      return std::nullopt;
    if (auto *u = std::get_if<uint64_t>(&e->value))
      return double(*u);
    if (auto *d = std::get_if<double>(&e->value))
      return *d;
    if (auto *b = std::get_if<bool>(&e->value))
      return *b ? 1.0 : 0.0;
    return std::nullopt;
  }
  // A finding's limit, looked up in the kept entries: it leaves the recent slots to the rules.
  std::string conf(std::string_view field) const {
    const hal::Entry *e = kept(field);
    return e ? hal::confidence_name(e->provenance.confidence) : "absent";
  }
  void add(const std::string &code, Severity s, const std::string &message, const std::string &value,
           const std::string &limit, const std::string &field, const std::string &fix) {
    ++r.counts[size_t(s)];
    if (s == Severity::Reject)
      r.verdict = Verdict::Reject;
    else if (s == Severity::Decompose && verdict && r.verdict == Verdict::Native)
      r.verdict = Verdict::Decompose;
    if (verdict && s == Severity::Reject)
      verdict->verdict = Verdict::Reject;
    else if (verdict && s == Severity::Decompose && verdict->verdict == Verdict::Native)
      verdict->verdict = Verdict::Decompose;
    if (detail == Detail::Summary)
      return;
    Finding f = finding_about(code, op ? op->name : "", "", message, s);
    f.value = value;
    f.limit = limit;
    f.limit_field = field;
    f.confidence = field.empty() ? "" : conf(field);
    f.fix = fix;
    r.findings.push_back(std::move(f));
  }
  // value > table limit: reject with the limit's provenance. A placeholder is no limit (it stands
  // for "not published", often as 0), so nothing is judged against it.
  // The strings are views: a literal passed in makes no string unless the limit is exceeded.
  bool over(int64_t value, std::string_view field, std::string_view code, std::string_view what,
            std::string_view fix, Severity s = Severity::Reject) {
    if (!exceeds(value, field))
      return false;
    auto lim = num(field);
    add(std::string(code), s, std::string(what) + " " + str(value) + " exceeds " + str(int64_t(*lim)),
        str(value), str(int64_t(*lim)), std::string(field), std::string(fix));
    return true;
  }
  // Whether value > the table limit `field` (its entry `limit`), as over() judges it: a message need
  // not be made unless.
  bool exceeds(int64_t value, std::string_view field) const { return exceeds(value, entry(field)); }
  static bool exceeds(int64_t value, const hal::Entry *limit) { return exceeds(value, bound_of(limit)); }
  static bool exceeds(int64_t value, double bound) { return value >= 0 && double(value) > bound; }
  // The value past which a limit is exceeded: infinity where none binds (absent, not a number, or a
  // placeholder).
  static double bound_of(const hal::Entry *limit) {
    auto lim = value_of(limit);
    return lim && limit->provenance.confidence != hal::Confidence::Placeholder ? *lim : INFINITY;
  }
  void begin(const Op &o, const Operands &x, OpVerdict &v) {
    op = &o;
    operands = &x;
    verdict = &v;
  }
  // The op's input `i`; a model whose op lacks it is bad (ANEC-GRAPH-003), as a missing attribute is.
  const Tensor &in(size_t i) const {
    if (i >= operands->ins.size())
      throw Error("ANEC-GRAPH-003", g.source + ": op '" + op->name + "' (" + op->type + "): needs input " +
                                        std::to_string(i + 1) + ", has " +
                                        std::to_string(operands->ins.size()));
    return *operands->ins[i];
  }
  const OpAttrs &attrs() const { return *operands->attrs; }
  // Extent plus pads, and other sums and products of extents and attribute values: an overflow is
  // a bad model (ANEC-GRAPH-003), never a wrapped comparison.
  int64_t padded(int64_t extent, int64_t before, int64_t after) const {
    std::optional<int64_t> s = checked_add(extent, before);
    if (s)
      s = checked_add(*s, after);
    if (!s)
      throw Error("ANEC-GRAPH-003", g.source + ": op '" + op->name + "': extent " + str(extent) + " + pads " +
                                        str(before) + " + " + str(after) + " does not fit in 64 bits");
    return *s;
  }
  // a x b, or ANEC-GRAPH-003 naming the op and what() (the message is built only then).
  template <typename What> int64_t times(int64_t a, int64_t b, What what) const {
    if (auto product = checked_mul(a, b))
      return *product;
    return mul_or_throw(a, b, "ANEC-GRAPH-003", g.source + ": op '" + op->name + "' " + what());
  }
  const Tensor &out() const { return *operands->outs.at(0); }

  static constexpr const char *kExtentFields[5] = {
      "max_tensor_batch", "max_tensor_depth", "max_tensor_channels", "max_tensor_height", "max_tensor_width"};
  // The limits every op is held to, resolved once (a target's table does not change): resolve().
  struct Limits {
    std::array<const hal::Entry *, 5> extent_limits = {}; // the entries of kExtentFields
    std::array<double, 5> extent_bounds = {};             // their bound_of()
    std::optional<double> family_index, channel_interleave, dram_alignment;
    double operand_bound = INFINITY; // bound_of() max_operand_bytes
  } limits = {};
  void resolve() {
    for (int a = 0; a < 5; ++a) {
      limits.extent_limits[a] = entry(kExtentFields[a]);
      limits.extent_bounds[a] = bound_of(limits.extent_limits[a]);
    }
    limits.family_index = num("family_index");
    limits.channel_interleave = num("channel_interleave");
    limits.dram_alignment = num("dram_alignment");
    limits.operand_bound = bound_of(entry("max_operand_bytes"));
  }
  void extents(const Tensor &x) {
    const auto &fields = kExtentFields;
    static const char *codes[5] = {"ANEC-CHK-014", "ANEC-CHK-013", "ANEC-CHK-012", "ANEC-CHK-011",
                                   "ANEC-CHK-010"};
    static const char *names[5] = {"batch", "depth", "channels", "height", "width"};
    if (x.source_rank > 5)
      add("ANEC-CHK-015", Severity::Reject, "tensor '" + x.name + "' has rank " + str(x.source_rank),
          str(x.source_rank), "5", "", "fold axes so at most five remain");
    // An extent above the limit is met by tiling along that axis (a decomposition, not a reject).
    for (int a = 0; a < 5; ++a) {
      if (!exceeds(x.shape.d[a], limits.extent_bounds[a]))
        continue; // within the limit: no message to build
      auto lim = value_of(limits.extent_limits[a]);
      std::string tiles = *lim >= 1 ? str((x.shape.d[a] + int64_t(*lim) - 1) / int64_t(*lim)) : "several";
      std::string along = std::string(" along ") + kAxisNames[a];
      if (over(x.shape.d[a], fields[a], codes[a], "tensor '" + x.name + "' " + names[a],
               "the compiler tiles it into " + tiles + " parts" + along, Severity::Decompose) &&
          verdict->decompose_with.empty())
        verdict->decompose_with = tiles + " tiles" + along + " within " + fields[a];
    }
  }

  void rule_io() {
    for (const Tensor *in : operands->ins) {
      const Tensor &x = *in;
      const std::string &n = x.name;
      bool io = std::find(g.inputs.begin(), g.inputs.end(), n) != g.inputs.end();
      if (io && x.dtype == "bf16")
        add("ANEC-CHK-016", Severity::Reject, "bf16 is not usable as a program input or output dtype", "bf16",
            "fp16", "", "declare the input fp16");
      if (io && (x.dtype == "fp32" || x.dtype == "int32"))
        add("ANEC-CHK-017", Severity::Warning,
            "tensor '" + n + "' is " + x.dtype +
                "; the engine computes fp16 (the annotation does not widen the arithmetic)",
            x.dtype, "fp16", "", "use fp16 activations");
    }
    static const Interned bf16("bf16"); // compared by its one copy: asked of every output
    for (const Tensor *x : operands->outs)
      if (x->dtype == bf16 && std::find(g.outputs.begin(), g.outputs.end(), x->name) != g.outputs.end())
        add("ANEC-CHK-016", Severity::Reject, "bf16 is not usable as a program output dtype", "bf16", "fp16",
            "", "produce fp16");
  }

  void rule_extent() {
    for (const auto *list : {&operands->ins, &operands->outs})
      for (const Tensor *x : *list)
        extents(*x);
  }

  // Constant inputs (a linear's weight, a norm's gamma and beta) are embedded, not streamed inputs.
  void rule_single_input() {
    auto n = int64_t(std::count_if(operands->ins.begin(), operands->ins.end(),
                                   [](const Tensor *x) { return !x->constant; }));
    if (n != 1)
      add("ANEC-CHK-030", Severity::Reject, op->type + " takes exactly one non-constant input, has " + str(n),
          str(n), "1", "", "");
  }

  void rule_conv_kernel() {
    const auto &k = operands->kernel, &p = operands->pad;
    over(k[1], "max_kernel_width_small_fp16", "ANEC-CHK-020", "fp16 kernel width",
         "split the kernel along width into narrower convolutions and add the results");
    over(k[0], "max_conv_kernel_height", "ANEC-CHK-021", "kernel height",
         "split the kernel along height into shorter convolutions and add the results");
    int64_t height = in(0).shape.d[kH] > 0 ? padded(in(0).shape.d[kH], p[0], p[1]) : 0;
    if (in(0).shape.d[kH] > 0 && k[0] > height)
      add("ANEC-CHK-021", Severity::Reject,
          "kernel height " + str(k[0]) + " is taller than the padded input (" + str(height) + ")", str(k[0]),
          str(height), "", "pad the input or shorten the kernel");
  }

  void rule_groups() {
    int64_t groups = attrs().integer("groups"), cin = in(0).shape.d[kC], cout = out().shape.d[kC];
    if (groups < 1 || (cin > 0 && cin % groups) || (cout > 0 && cout % groups))
      add("ANEC-CHK-022", Severity::Reject,
          "group count " + str(groups) + " does not divide input channels " + str(cin) +
              " and output channels " + str(cout),
          str(groups), "a divisor of both channel counts", "",
          "choose a group count dividing both channel counts");
    auto cores = num("num_nes");
    if (groups > 1 && groups != cin && cores && int64_t(*cores) % groups)
      add("ANEC-CHK-042", Severity::Warning,
          "group count " + str(groups) + " does not divide the " + str(int64_t(*cores)) +
              " cores: the one-to-one core-to-lookup-table mapping is lost (slower)",
          str(groups), str(int64_t(*cores)), "num_nes", "use a group count dividing " + str(int64_t(*cores)));
  }

  void rule_dynamic_weight_batch() {
    bool runtime = attrs().text("weight") == "runtime" || (op->inputs.size() >= 2 && !in(1).constant);
    if (runtime)
      over(in(0).shape.d[kN], "dynamic_weight_conv_max_batch", "ANEC-CHK-051",
           "dynamic-weight convolution batch",
           "run batch one per dispatch, or embed the weight as a constant");
    if (attrs().flag("trainable") && in(0).shape.d[kN] >= 64)
      add("ANEC-CHK-054", Severity::Warning,
          "trainable convolution at batch " + str(in(0).shape.d[kN]) +
              ": compile time grows with the batch (about 35 s at 64 and 79 s at 128 on the M1; 1000 never "
              "finishes)",
          str(in(0).shape.d[kN]), "64", "", "compile smaller batches and accumulate");
  }

  void rule_linear_rank() {
    if (in(0).shape.d[kD] > 1)
      add("ANEC-CHK-027", Severity::Reject, "linear input has rank 5 (depth " + str(in(0).shape.d[kD]) + ")",
          str(in(0).shape.d[kD]), "depth 1", "", "fold depth into batch");
  }

  void rule_matmul() {
    if (op->inputs.size() != 2) {
      add("ANEC-CHK-030", Severity::Reject, "matmul takes exactly two inputs",
          str(int64_t(op->inputs.size())), "2", "", "");
      return;
    }
    const Shape &a = in(0).shape, &b = in(1).shape;
    if (a.d[kD] > 1 || b.d[kD] > 1)
      add("ANEC-CHK-023", Severity::Reject, "matmul operand depth above one", str(std::max(a.d[kD], b.d[kD])),
          "1", "", "fold depth into batch");
    if (a.d[kW] != b.d[kC] && !attrs().flag("contraction_checked"))
      add("ANEC-CHK-024", Severity::Reject,
          "left width " + str(a.d[kW]) + " does not match right channels " + str(b.d[kC]), str(a.d[kW]),
          str(b.d[kC]), "", "transpose or pad so the contracted dimensions agree");
    for (int ax : {kN, kH})
      if (a.d[ax] != b.d[ax] && a.d[ax] != 1 && b.d[ax] != 1)
        add("ANEC-CHK-024", Severity::Reject,
            std::string("matmul operands differ on ") + kAxisNames[ax] + " and neither is one", str(a.d[ax]),
            str(b.d[ax]), "", "");
    over(times(out().shape.d[kC], 2, [] { return std::string("output-channel bytes"); }), "kmem_dense_cap",
         "ANEC-CHK-025", "matmul output-channel bytes", "split the output channels across several matmuls");
  }

  void rule_pool() {
    const auto &k = operands->kernel, &p = operands->pad;
    if (k[0] > padded(in(0).shape.d[kH], p[0], p[1]) || k[1] > padded(in(0).shape.d[kW], p[2], p[3]))
      add("ANEC-CHK-034", Severity::Reject, "pooling window larger than the padded input",
          str(k[0]) + "x" + str(k[1]), in(0).shape.str(), "", "shrink the window or use a global reduction");
  }

  void rule_broadcast() {
    for (size_t i = 1; i < op->inputs.size(); ++i)
      for (int a = 0; a < 5; ++a) {
        int64_t x = in(0).shape.d[a], y = in(i).shape.d[a];
        if (x != y && x != 1 && y != 1 && x > 0 && y > 0)
          add("ANEC-CHK-035", Severity::Reject,
              std::string("operands differ on ") + kAxisNames[a] + " and neither is one", str(y), str(x), "",
              "broadcast only from a length-one axis");
      }
  }

  void rule_reshape() {
    auto s = attrs().ints("shape");
    if (s.size() > 5)
      add("ANEC-CHK-015", Severity::Reject, "reshape to rank " + str(int64_t(s.size())),
          str(int64_t(s.size())), "5", "", "keep at most five axes");
    else if (!out().shape.symbolic() && !in(0).shape.symbolic() &&
             out().shape.elements() != in(0).shape.elements())
      add("ANEC-CHK-029", Severity::Reject, "reshape changes the element count", str(out().shape.elements()),
          str(in(0).shape.elements()), "", "");
  }

  void rule_transpose() {
    auto perm = attrs().ints("perm");
    auto sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != std::vector<int64_t>{0, 1, 2, 3, 4})
      add("ANEC-CHK-029", Severity::Reject, "perm must name each of the five axes once", "", "", "", "");
    else if (over(out().shape.d[kH], "max_transpose_height", "ANEC-CHK-031", "transpose height", "",
                  Severity::Decompose) ||
             over(out().shape.d[kW], "max_transpose_width", "ANEC-CHK-031", "transpose width", "",
                  Severity::Decompose))
      verdict->decompose_with = "multiple transpose passes";
  }

  void rule_concat() {
    std::string axis = attrs().text("axis");
    int a = axis_index(axis, -1);
    if (a < 0) {
      add("ANEC-CHK-028", Severity::Reject, "concat axis must be a constant axis letter (N, D, C, H, W)",
          axis, "", "", "");
      return;
    }
    for (size_t i = 1; i < op->inputs.size(); ++i)
      for (int x = 0; x < 5; ++x)
        if (x != a && in(i).shape.d[x] != in(0).shape.d[x])
          add("ANEC-CHK-028", Severity::Reject,
              "concat input '" + op->inputs[i] + "' differs from the first on " + kAxisNames[x],
              in(i).shape.str(), in(0).shape.str(), "", "");
  }

  void rule_slice_saturation() {
    auto begin = attrs().ints("begin");
    auto hazard = num("slice_offset_saturation");
    auto threshold = num("slice_saturation_threshold");
    if (begin.size() == 5 && begin[kW] != 0 && hazard && *hazard && threshold) {
      double v = attrs().given("max_abs") ? attrs().number("max_abs") : -1; // -1: not given
      if (v > *threshold)
        add("ANEC-CHK-050", Severity::Reject,
            "width-offset slice of values up to " + whole(v) + " saturates to infinity above " +
                std::to_string(int64_t(*threshold)),
            std::to_string(v), std::to_string(int64_t(*threshold)), "slice_offset_saturation",
            "slice from width offset 0, or keep the values under the bound");
      else if (v < 0)
        add("ANEC-CHK-050", Severity::Warning,
            "width-offset slice: values above " + std::to_string(int64_t(*threshold)) +
                " would saturate to infinity on this target (give attrs.max_abs to decide)",
            "begin W " + str(begin[kW]), std::to_string(int64_t(*threshold)), "slice_offset_saturation",
            "slice from width offset 0");
    }
  }

  void rule_pad() {
    auto cp = attrs().ints("channel_pad");
    if (cp.size() == 2 && (cp[0] || cp[1]))
      add("ANEC-CHK-032", Severity::Reject, "channel padding is not supported", str(cp[0]) + "," + str(cp[1]),
          "0", "", "pad with a concat of constants instead");
    std::string mode = attrs().text("mode");
    auto te = num("texture_engine");
    if ((mode == "reflect" || mode == "symmetric") && te && !*te) {
      add("ANEC-CHK-032", Severity::Decompose, mode + " padding needs the texture engine", mode, "constant",
          "texture_engine", "");
      verdict->decompose_with = "slices and concats";
    }
  }

  void rule_reduction() {
    auto cap = num("square_after_reduction");
    if (attrs().flag("square") && cap && !*cap) {
      add("ANEC-CHK-033", Severity::Decompose, "square after reduction is not fused on this family", "square",
          "", "square_after_reduction", "");
      verdict->decompose_with = "the reduction then a separate square";
    }
  }

  void rule_argminmax() {
    std::string axis = attrs().text("axis");
    int a = axis_index(axis, kC);
    over(in(0).shape.d[a], "argminmax_max_axis", "ANEC-CHK-026", "arg reduction axis",
         "reduce in chunks of at most the limit, then reduce the partial results");
  }

  // The software gather envelope (appendix A, appendix B validator Gather): without the texture
  // engine's hardware gather, batch one and depth one only.
  void rule_gather() {
    auto te = num("texture_engine");
    if (!te || *te || op->inputs.empty())
      return;
    const Shape &x = in(0).shape;
    if (x.d[kN] > 1 || x.d[kD] > 1)
      add("ANEC-CHK-036", Severity::Reject,
          "gather outside the software envelope: batch " + str(x.d[kN]) + ", depth " + str(x.d[kD]), x.str(),
          "batch 1, depth 1", "texture_engine",
          "gather per batch item, or target a family with the texture engine");
  }

  // An operation with a symbolic dimension cannot be compiled until the dimension is bound (the
  // direct path compiles one program per concrete shape, ch.19).
  void symbolic() {
    std::vector<std::string> names;
    for (const auto *list : {&operands->ins, &operands->outs})
      for (const Tensor *x : *list)
        for (int a = 0; a < 5; ++a)
          if (const Shape &s = x->shape;
              s.d[a] < 0 && std::find(names.begin(), names.end(), s.symbol[a]) == names.end())
            names.push_back(s.symbol[a]);
    if (names.empty())
      return;
    std::string list, fix;
    for (const std::string &n : names) {
      list += (list.empty() ? "" : ", ") + n;
      std::string hint = binding_hint(g, n);
      if (fix.find(hint) == std::string::npos)
        fix += (fix.empty() ? "" : "; ") + hint;
    }
    add("ANEC-CHK-053", Severity::Reject,
        "shape depends on the symbolic dimension(s) " + list +
            "; the direct path compiles one program per concrete shape",
        list, "", "", "a fixed shape would make it compile: " + fix);
  }

  void layout_warnings() {
    for (const Tensor *out : operands->outs) {
      const Tensor &x = *out;
      const std::string &n = x.name;
      if (x.shape.symbolic())
        continue;
      // The tensor's own interleave where the model declares one (a plist port), else the target's.
      auto il = x.interleave > 0 ? std::optional<double>(double(x.interleave)) : limits.channel_interleave;
      if (il && *il > 1 && x.shape.d[kC] % int64_t(*il))
        add("ANEC-CHK-040", Severity::Warning,
            "channels " + str(x.shape.d[kC]) + " are not a multiple of the interleave " + str(int64_t(*il)) +
                ": lanes pad out",
            str(x.shape.d[kC]), str(int64_t(*il)), x.interleave > 0 ? "" : "channel_interleave",
            "round the channels up to a multiple of the interleave");
      int64_t row = times(x.shape.d[kW], dtype_bytes(x.dtype), [&] { return "row bytes of '" + n + "'"; });
      int64_t granule = int64_t(limits.dram_alignment.value_or(16));
      if (granule > 1 && row % granule)
        add("ANEC-CHK-041", Severity::Warning,
            "width " + str(x.shape.d[kW]) + " (" + str(row) + " bytes) pads to the " + str(granule) +
                "-byte DMA granule",
            str(row), "multiple of " + str(granule) + " bytes", "dram_alignment",
            "make the width a multiple of " +
                str(std::max<int64_t>(1, granule / std::max<int64_t>(1, dtype_bytes(x.dtype)))));
    }
    int64_t largest = 0;
    std::string_view which; // the largest operand's name
    std::string weight;     // the weight's, where that is larger
    for (const auto *list : {&operands->ins, &operands->outs})
      for (const Tensor *x : *list)
        if (int64_t bytes = x->bytes(); bytes > largest)
          largest = bytes, which = x->name;
    // weight_bytes is a double product of attribute values: compare as doubles, clamp before the cast.
    if (double w = operands->weight; w > double(largest))
      largest = w < 0x1p63 ? int64_t(w) : INT64_MAX, which = weight = op->name + ".weight";
    if (exceeds(largest, limits.operand_bound))
      over(largest, "max_operand_bytes", "ANEC-CHK-043", "bytes of operand '" + std::string(which) + "'",
           "split the operation so each operand fits on chip (it still runs, streaming from DRAM)",
           Severity::Warning);
    if (op->inputs.size() >= 12)
      add("ANEC-CHK-055", Severity::Warning,
          str(int64_t(op->inputs.size())) + " branches reconverge into one consumer: the compiler's "
                                            "partition search grows exponentially with the branch width",
          str(int64_t(op->inputs.size())), "12", "", "merge the branches in stages");
  }
};

// The validator rules ops.toml names, by name.
const std::map<std::string, void (Checker::*)()> &rule_table() {
  static const std::map<std::string, void (Checker::*)()> rules = {
      {"io", &Checker::rule_io},
      {"extent", &Checker::rule_extent},
      {"single_input", &Checker::rule_single_input},
      {"conv_kernel", &Checker::rule_conv_kernel},
      {"groups", &Checker::rule_groups},
      {"dynamic_weight_batch", &Checker::rule_dynamic_weight_batch},
      {"linear_rank", &Checker::rule_linear_rank},
      {"matmul", &Checker::rule_matmul},
      {"pool", &Checker::rule_pool},
      {"broadcast", &Checker::rule_broadcast},
      {"reshape", &Checker::rule_reshape},
      {"transpose", &Checker::rule_transpose},
      {"concat", &Checker::rule_concat},
      {"slice_saturation", &Checker::rule_slice_saturation},
      {"pad", &Checker::rule_pad},
      {"reduction", &Checker::rule_reduction},
      {"argminmax", &Checker::rule_argminmax},
      {"gather", &Checker::rule_gather},
  };
  return rules;
}
} // namespace

const std::vector<std::string> &known_rules() {
  static const std::vector<std::string> names = keys_of(rule_table());
  return names;
}

namespace {
using Rule = void (Checker::*)();

// Graph-level findings: inputs the direct path cannot take.
void check_inputs(Checker &c) {
  const Graph &g = c.g;
  for (const std::string &n : g.inputs) {
    const Tensor &x = *g.tensor(n);
    if (x.format == "fourcc")
      c.add("ANEC-CHK-052", Severity::Reject,
            "input '" + n +
                "' declares a true four-character-code image format, which does not lower on the direct path",
            "fourcc", "", "", "declare a uint8 image input and dequantize in the graph");
    if (x.shape.symbolic()) {
      std::string fix;
      for (int a = 0; a < 5; ++a)
        if (x.shape.d[a] < 0)
          fix += (fix.empty() ? "" : " ") + binding_hint(g, x.shape.symbol[a]);
      c.add("ANEC-CHK-053", Severity::Reject,
            "input '" + n + "' has a symbolic dimension " + x.shape.str() +
                "; the direct path compiles one program per concrete shape",
            x.shape.str(), "", "", "bind it (" + fix + "), pad to a fixed maximum or bucket the lengths");
    }
  }
}

// One op on one target: the catalogue's verdict, the family gates, then the op's rules.
void check_op(Checker &c, const Op &op, const OpSpec *spec, const std::vector<Rule> &rules) {
  const hal::Target &t = c.t;
  if (!spec) {
    c.add("ANEC-CHK-001", Severity::Reject, "operation '" + op.type + "' is not in the catalogue (unmapped)",
          op.type, "", "", "express it with catalogued operations");
    return;
  }
  if (!spec->floor) {
    c.add("ANEC-CHK-002", Severity::Reject, op.type + " has no engine path on any family", op.type, "", "",
          spec->decompose_with.empty() ? "compute it on the host" : spec->decompose_with);
    return;
  }
  if (!spec->lowered_as.empty()) {
    c.add("ANEC-CHK-006", Severity::Decompose,
          op.type + " lowers to " + spec->lowered_as + " on every family", op.type, "", "", "");
    c.verdict->decompose_with = spec->lowered_as;
  }
  auto family = c.limits.family_index;
  if (family && *family < *spec->floor) {
    const hal::Entry *f = t.find("family");
    std::string family_name =
        f && std::holds_alternative<std::string>(f->value) ? std::get<std::string>(f->value) : "?";
    c.add("ANEC-CHK-003", Severity::Decompose,
          op.type + " is native from family index " + str(*spec->floor) + "; " + family_name + " is " +
              str(int64_t(*family)),
          str(int64_t(*family)), str(*spec->floor), "family_index", "");
    c.verdict->decompose_with =
        spec->decompose_with.empty() ? "a sequence of supported operations" : spec->decompose_with;
  }
  if (spec->codegen_floor && family && *family < *spec->codegen_floor)
    c.add("ANEC-CHK-005", Severity::Reject,
          op.type + " passes the validator but code generation rejects it below family index " +
              str(*spec->codegen_floor),
          str(int64_t(*family)), str(*spec->codegen_floor), "family_index",
          "compute it on the host or target a later family");
  for (const Gate &gate : spec->gates) {
    auto v = c.num(gate.field);
    if (v && *v)
      continue;
    c.add("ANEC-CHK-004", gate.reject ? Severity::Reject : Severity::Decompose,
          op.type + " needs " + gate.field + ", which this target lacks", "0", "1", gate.field,
          gate.reject ? "compute it on the host" : "");
    if (!gate.reject)
      c.verdict->decompose_with = gate.with;
  }
  c.symbolic();
  for (Rule rule : rules)
    (c.*rule)();
  c.layout_warnings();
}

} // namespace

// What does not depend on the target is worked out once per op (or per op type) for all of them.
struct GraphCheck::State {
  const Graph &g;
  const OpCatalog &catalog;
  Detail detail;
  std::vector<CheckResult> results;
  std::vector<Checker> checkers;
  std::unordered_map<const OpSpec *, std::vector<Rule>> rules_of = {};
  Operands operands = {};
};

GraphCheck::GraphCheck(const Graph &g, const OpCatalog &catalog,
                       const std::vector<const hal::Target *> &targets, Detail detail)
    : state_(
          std::make_unique<State>(State{g, catalog, detail, std::vector<CheckResult>(targets.size()), {}})) {
  State &s = *state_;
  s.checkers.reserve(targets.size());
  for (size_t k = 0; k < targets.size(); ++k) {
    s.results[k].target = targets[k]->name;
    if (detail == Detail::Full)
      s.results[k].ops.reserve(g.ops.size());
    s.checkers.push_back(Checker{g, *targets[k], s.results[k], detail});
    s.checkers.back().resolve();
    check_inputs(s.checkers.back());
  }
}

GraphCheck::~GraphCheck() = default;

void GraphCheck::add(const Op &op, const OpTensors &tensors, std::optional<double> weight) {
  State &s = *state_;
  s.operands.of(s.g, op, tensors, s.catalog, weight);
  const OpSpec *spec = s.catalog.find(op.type);
  std::vector<Rule> &rules = s.rules_of[spec];
  if (spec && rules.empty())
    for (const std::string &rule : spec->rules)
      rules.push_back(rule_table().at(rule));
  for (Checker &c : s.checkers) {
    OpVerdict &v = s.detail == Detail::Full ? c.r.ops.emplace_back() : (c.scratch = OpVerdict{});
    if (s.detail == Detail::Full) { // the row kept, filled in place: no row moved
      v.op = op.name;
      v.type = op.type;
    }
    c.begin(op, s.operands, v);
    check_op(c, op, spec, rules);
  }
}

CheckResult &GraphCheck::partial(size_t k) {
  return state_->results[k];
}

std::vector<CheckResult> GraphCheck::finish() {
  State &s = *state_;
  if (s.detail == Detail::Full)
    for (size_t k = 0; k < s.results.size(); ++k)
      s.results[k].wire = wire_of(s.g, s.checkers[k].t);
  return std::move(s.results);
}

std::vector<CheckResult> check(const Graph &g, const OpCatalog &catalog,
                               const std::vector<const hal::Target *> &targets, Detail detail) {
  GraphCheck checks(g, catalog, targets, detail);
  OpTensors tensors;
  for (const Op &op : g.ops) {
    find_tensors(g, op, tensors);
    checks.add(op, tensors);
  }
  return checks.finish();
}

CheckResult check(const Graph &g, const OpCatalog &catalog, const hal::Target &t) {
  return std::move(check(g, catalog, std::vector<const hal::Target *>{&t}).front());
}

} // namespace anec::compiler
