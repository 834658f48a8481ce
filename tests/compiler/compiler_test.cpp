// The compiler core on the generated target tables: validator limits at and one past each limit on
// targets where it differs, family and capability gates, the pitfall scan, the cost model against
// seed ch.18 table 18.5, and the front-ends' errors.
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/onnx.hpp"
#include "anec/compiler/frontends/plist.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/npy.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"
#include "../run_tool.hpp"
#include "tables.hpp"
#include <filesystem>
#include <gtest/gtest.h>
#include <set>
#include <unistd.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
using anec::test::registry;
namespace fs = std::filesystem;

namespace {

const hal::Target &target(const char *name) {
  return registry().get(name);
}

// One-op graph: input x of `shape` (N, C, H, W), op `type` with `attrs` (JSON), output y.
Graph one_op(const std::string &type, std::vector<int64_t> shape, const std::string &attrs = "{}",
             const std::string &extra_inputs = "", const std::string &more = "") {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  s += "]";
  std::string text = R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": )" + s +
                     R"(})" + more + R"(],
    "ops": [{"name": "op", "op": ")" +
                     type + R"(", "inputs": ["x")" + extra_inputs + R"(], "outputs": ["y"], "attrs": )" +
                     attrs + R"(}],
    "outputs": ["y"]})";
  Graph g = read_graph_json(text, "test.json");
  infer_shapes(g, catalog());
  return g;
}

std::set<std::string> codes(const CheckResult &r, Severity s) {
  std::set<std::string> out;
  for (const Finding &f : r.findings)
    if (f.severity == s)
      out.insert(f.code);
  return out;
}
bool rejects(const Graph &g, const char *t, const std::string &code) {
  return codes(check(g, catalog(), target(t)), Severity::Reject).count(code) > 0;
}
} // namespace

TEST(OpCatalog, LoadsAndIsStrict) {
  EXPECT_GE(catalog().ops().size(), 50u);
  const OpSpec *sin = catalog().find("sin");
  ASSERT_TRUE(sin);
  EXPECT_EQ(sin->floor, 4);
  ASSERT_NE(catalog().find("topk"), nullptr);
  EXPECT_EQ(catalog().find("topk")->codegen_floor, 3);
  ASSERT_NE(catalog().find("tan"), nullptr);
  EXPECT_FALSE(catalog().find("tan")->floor.has_value());
  Doc bad = toml::parse("schema = \"anec-ops\"\nversion = \"1\"\n[[op]]\nname = \"x\"\nunit = \"PE\"\nfloor "
                        "= \"F9\"\nrules = []\ncost = \"none\"\nsource = \"s\"\n",
                        "bad.toml");
  EXPECT_EQ(code_of([&] { OpCatalog::from_doc(bad, "bad.toml"); }), "ANEC-OPS-001");
  Doc rule = toml::parse("schema = \"anec-ops\"\nversion = \"1\"\n[[op]]\nname = \"x\"\nunit = \"PE\"\nfloor "
                         "= \"F0\"\nrules = [\"nope\"]\ncost = \"none\"\nsource = \"s\"\n",
                         "r.toml");
  EXPECT_EQ(code_of([&] { OpCatalog::from_doc(rule, "r.toml"); }), "ANEC-OPS-001");
}

// Seed ch.17 table 17.1, each limit at the limit and one past it, on targets where it differs: past
// the limit the compiler tiles (a decomposition, saying into how many parts), it does not reject.
TEST(Check, TensorExtentBoundaries) {
  struct Case {
    const char *target;
    int axis; // index in the N, C, H, W shape
    int64_t limit;
    const char *code;
  } cases[] = {{"h13", 3, 16384, "ANEC-CHK-010"},
               {"h16", 3, 65536, "ANEC-CHK-010"},
               {"h13", 2, 16384, "ANEC-CHK-011"},
               {"h17s", 2, 65536, "ANEC-CHK-011"},
               {"h13", 1, 65536, "ANEC-CHK-012"}};
  for (auto &c : cases) {
    SCOPED_TRACE(std::string(c.target) + " " + c.code);
    std::vector<int64_t> at = {1, 1, 1, 1};
    at[c.axis] = c.limit;
    EXPECT_FALSE(
        codes(check(one_op("relu", at), catalog(), target(c.target)), Severity::Decompose).count(c.code));
    at[c.axis] = c.limit * 2 + 1;
    CheckResult r = check(one_op("relu", at), catalog(), target(c.target));
    EXPECT_TRUE(codes(r, Severity::Decompose).count(c.code));
    EXPECT_FALSE(rejects(one_op("relu", at), c.target, c.code));
    ASSERT_FALSE(r.ops.empty());
    EXPECT_EQ(r.ops[0].verdict, Verdict::Decompose);
    EXPECT_EQ(r.ops[0].decompose_with.substr(0, 9), "3 tiles a") << r.ops[0].decompose_with;
  }
}

TEST(Check, ConvKernelAndGroupBoundaries) {
  auto conv = [](int kh, int kw, int groups = 1, int cin = 8) {
    return one_op("conv", {1, cin, 64, 64},
                  R"({"out_channels": 8, "kernel": [)" + std::to_string(kh) + "," + std::to_string(kw) +
                      R"(], "groups": )" + std::to_string(groups) + "}");
  };
  for (auto [t, kw] : std::vector<std::pair<const char *, int>>{{"h13", 13}, {"m11", 15}, {"h14", 16}}) {
    SCOPED_TRACE(t);
    EXPECT_FALSE(rejects(conv(1, kw), t, "ANEC-CHK-020"));
    EXPECT_TRUE(rejects(conv(1, kw + 1), t, "ANEC-CHK-020"));
  }
  EXPECT_FALSE(rejects(conv(29, 1), "h13", "ANEC-CHK-021"));
  EXPECT_TRUE(rejects(conv(30, 1), "h13", "ANEC-CHK-021"));
  Graph tall = one_op("conv", {1, 8, 5, 64},
                      R"({"out_channels": 8, "kernel": [7, 1]})"); // kernel taller than its input
  EXPECT_TRUE(rejects(tall, "h13", "ANEC-CHK-021"));
  EXPECT_TRUE(rejects(conv(1, 1, 3, 8), "h13", "ANEC-CHK-022")); // 3 divides neither 8 nor 8
  EXPECT_FALSE(rejects(conv(1, 1, 4, 8), "h13", "ANEC-CHK-022"));
  // groups dividing the channels but not the cores: slower, not rejected (4 cores on h13, 1 on m11)
  auto slow = check(conv(1, 1, 2, 8), catalog(), target("m11"));
  EXPECT_TRUE(codes(slow, Severity::Warning).count("ANEC-CHK-042"));
  EXPECT_FALSE(
      codes(check(conv(1, 1, 2, 8), catalog(), target("h13")), Severity::Warning).count("ANEC-CHK-042"));
  EXPECT_FALSE(
      codes(check(conv(1, 1, 8, 8), catalog(), target("m11")), Severity::Warning).count("ANEC-CHK-042"))
      << "depthwise is exempt";
}

TEST(Check, ReductionMatmulAndWorkingSetBoundaries) {
  EXPECT_FALSE(rejects(one_op("argmax", {1, 2048, 1, 1}, R"({"axis": "C"})"), "h13", "ANEC-CHK-026"));
  EXPECT_TRUE(rejects(one_op("argmax", {1, 2049, 1, 1}, R"({"axis": "C"})"), "h13", "ANEC-CHK-026"));
  EXPECT_TRUE(rejects(one_op("argmax", {1, 1, 1, 2049}, R"({"axis": "W"})"), "h17s", "ANEC-CHK-026"));
  auto mm = [](std::vector<int64_t> a, std::vector<int64_t> b) {
    std::string bs = "[";
    for (size_t i = 0; i < b.size(); ++i)
      bs += (i ? "," : "") + std::to_string(b[i]);
    return one_op("matmul", a, "{}", R"(, "w")", R"(, {"name": "w", "shape": )" + bs + "]}");
  };
  EXPECT_FALSE(rejects(mm({1, 1, 4, 8, 16}, {1, 1, 16, 4, 4}), "h13", "ANEC-CHK-023"));
  EXPECT_TRUE(rejects(mm({1, 2, 4, 8, 16}, {1, 1, 16, 4, 4}), "h13", "ANEC-CHK-023"));
  EXPECT_TRUE(rejects(mm({1, 1, 4, 8, 16}, {1, 1, 15, 4, 4}), "h13", "ANEC-CHK-024"));
  // output channels against the 64 KB kernel-memory budget: 32768 fp16 channels fit, one more does not
  EXPECT_FALSE(rejects(mm({1, 1, 32768, 1, 16}, {1, 1, 16, 1, 4}), "h13", "ANEC-CHK-025"));
  EXPECT_TRUE(rejects(mm({1, 1, 32769, 1, 16}, {1, 1, 16, 1, 4}), "h13", "ANEC-CHK-025"));
  // working set: a 2 MB operand stays on chip, one element more tiles (a warning, not a reject)
  Graph big = one_op("relu", {1, 16, 256, 256}); // 2 MiB exactly
  EXPECT_FALSE(codes(check(big, catalog(), target("h13")), Severity::Warning).count("ANEC-CHK-043"));
  Graph bigger = one_op("relu", {1, 17, 256, 256});
  EXPECT_TRUE(codes(check(bigger, catalog(), target("h13")), Severity::Warning).count("ANEC-CHK-043"));
}

// Table 17.1's dtype and interleave rows: bf16 program I/O rejects, fp32 is computed as fp16; the
// interleave factor is a placeholder 1 in every published table, so a table copy sets it to 16.
TEST(Check, DtypeAndInterleaveRows) {
  Graph bf = read_graph_json(
      R"({"format": "anec-graph", "version": 1,
      "inputs": [{"name": "x", "shape": [1, 8, 4, 4], "dtype": "bf16"}],
      "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})",
      "b");
  infer_shapes(bf, catalog());
  EXPECT_TRUE(rejects(bf, "h17s", "ANEC-CHK-016"));
  EXPECT_FALSE(rejects(one_op("relu", {1, 8, 4, 4}), "h17s", "ANEC-CHK-016"));
  hal::Target t = target("h13");
  t.values.at("channel_interleave").value = uint64_t(16);
  EXPECT_FALSE(
      codes(check(one_op("conv", {1, 8, 8, 8}, R"({"out_channels": 32})"), catalog(), t), Severity::Warning)
          .count("ANEC-CHK-040"));
  auto padded = check(one_op("conv", {1, 8, 8, 8}, R"({"out_channels": 33})"), catalog(), t);
  EXPECT_TRUE(codes(padded, Severity::Warning).count("ANEC-CHK-040"));
  EXPECT_EQ(padded.verdict, Verdict::Native) << "padding is a warning, not a reject";
  // the 16-byte width granule: 8 fp16 elements fill it, 9 pad
  EXPECT_FALSE(codes(check(one_op("relu", {1, 8, 8, 8}), catalog(), target("h13")), Severity::Warning)
                   .count("ANEC-CHK-041"));
  EXPECT_TRUE(codes(check(one_op("relu", {1, 8, 8, 9}), catalog(), target("h13")), Severity::Warning)
                  .count("ANEC-CHK-041"));
}

TEST(Check, FamilyAndCapabilityGates) {
  auto verdict = [](const char *type, const char *t, const std::string &attrs = "{}") {
    return check(one_op(type, {1, 8, 16, 16}, attrs), catalog(), target(t)).ops.at(0).verdict;
  };
  EXPECT_EQ(verdict("sin", "h13"), Verdict::Decompose); // F4
  EXPECT_EQ(verdict("sin", "h15"), Verdict::Native);
  EXPECT_EQ(verdict("softmax", "h11"), Verdict::Decompose); // F2 below A13
  EXPECT_EQ(verdict("softmax", "h13"), Verdict::Native);
  EXPECT_EQ(verdict("resize", "h13", R"({"scale": [2, 2]})"), Verdict::Decompose); // texture engine absent
  EXPECT_EQ(verdict("resize", "h14", R"({"scale": [2, 2]})"), Verdict::Native);
  EXPECT_EQ(verdict("topk", "h13", R"({"k": 4})"), Verdict::Reject); // validator yes, code generation no
  EXPECT_TRUE(rejects(one_op("topk", {1, 8, 16, 16}, R"({"k": 4})"), "h13", "ANEC-CHK-005"));
  EXPECT_EQ(verdict("topk", "h14", R"({"k": 4})"), Verdict::Native);
  EXPECT_EQ(verdict("dropout", "h13"), Verdict::Reject);
  EXPECT_EQ(verdict("dropout", "h16"), Verdict::Native);
  EXPECT_EQ(verdict("tan", "h17s"), Verdict::Reject);
  EXPECT_TRUE(rejects(one_op("frobnicate", {1, 8, 16, 16}), "h13", "ANEC-CHK-001"));
  auto sq = check(one_op("reduce_sum", {1, 8, 16, 16}, R"({"axes": "HW", "square": true})"), catalog(),
                  target("h13"));
  ASSERT_FALSE(sq.ops.empty());
  EXPECT_EQ(sq.ops[0].verdict, Verdict::Decompose);
  CheckResult sq14 = check(one_op("reduce_sum", {1, 8, 16, 16}, R"({"axes": "HW", "square": true})"),
                           catalog(), target("h14"));
  ASSERT_FALSE(sq14.ops.empty());
  EXPECT_EQ(sq14.ops[0].verdict, Verdict::Native);
  auto pad = check(one_op("pad", {1, 8, 16, 16}, R"({"pad": [1, 1, 1, 1], "mode": "reflect"})"), catalog(),
                   target("h13"));
  ASSERT_FALSE(pad.ops.empty());
  EXPECT_EQ(pad.ops[0].verdict, Verdict::Decompose);
  EXPECT_TRUE(rejects(one_op("pad", {1, 8, 16, 16}, R"({"channel_pad": [0, 8]})"), "h17s", "ANEC-CHK-032"));
}

// Seed ch.19, keyed on table flags: slice saturation, dynamic weights, 4CC input, symbolic shapes,
// large-batch trainable conv, wide fan-in.
TEST(Check, PitfallScan) {
  auto slice = [](int64_t max_abs) {
    return one_op("slice", {1, 8, 4, 64},
                  R"({"begin": [0, 0, 0, 0, 16], "end": [-1, -1, -1, -1, 48], "max_abs": )" +
                      std::to_string(max_abs) + "}");
  };
  EXPECT_FALSE(rejects(slice(4094), "h13", "ANEC-CHK-050"));
  EXPECT_TRUE(rejects(slice(4100), "h13", "ANEC-CHK-050"));
  EXPECT_TRUE(rejects(slice(4100), "h14", "ANEC-CHK-050")); // A14 saturates too
  EXPECT_FALSE(rejects(slice(60000), "h17s", "ANEC-CHK-050"));
  Graph unknown = one_op("slice", {1, 8, 4, 64}, R"({"begin": [0, 0, 0, 0, 16]})");
  EXPECT_TRUE(codes(check(unknown, catalog(), target("h13")), Severity::Warning).count("ANEC-CHK-050"));
  auto dyn = [](int64_t n) {
    return one_op("conv", {n, 8, 16, 16}, R"({"out_channels": 8, "weight": "runtime"})");
  };
  EXPECT_FALSE(rejects(dyn(1), "h13", "ANEC-CHK-051"));
  EXPECT_TRUE(rejects(dyn(2), "h13", "ANEC-CHK-051"));
  Graph fourcc = read_graph_json(R"({"format": "anec-graph", "version": 1,
      "inputs": [{"name": "x", "shape": [1, 4, 1080, 1920], "dtype": "uint8", "format": "fourcc"}],
      "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})",
                                 "f");
  infer_shapes(fourcc, catalog());
  EXPECT_TRUE(rejects(fourcc, "h17s", "ANEC-CHK-052"));
  Graph sym = read_graph_json(
      R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 64, 1, "seq"]}],
      "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})",
      "s");
  infer_shapes(sym, catalog());
  EXPECT_TRUE(rejects(sym, "h13", "ANEC-CHK-053"));
  ASSERT_NE(sym.tensor("y"), nullptr);
  EXPECT_EQ(sym.tensor("y")->shape.str(), "[1,1,64,1,seq]");
  Graph train = one_op("conv", {64, 8, 16, 16}, R"({"out_channels": 8, "trainable": true})");
  EXPECT_TRUE(codes(check(train, catalog(), target("h13")), Severity::Warning).count("ANEC-CHK-054"));
  std::string inputs, names;
  for (int i = 0; i < 12; ++i) {
    inputs += std::string(R"(, {"name": "b)") + std::to_string(i) + R"(", "shape": [1, 4, 8, 8]})";
    names += std::string(i ? ", " : "") + "\"b" + std::to_string(i) + "\"";
  }
  Graph fan = read_graph_json(
      R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 4, 8, 8]})" + inputs +
          R"(], "ops": [{"name": "cat", "op": "concat", "inputs": [)" + names +
          R"(], "outputs": ["y"], "attrs": {"axis": "C"}}],
      "outputs": ["y"]})",
      "fan");
  infer_shapes(fan, catalog());
  EXPECT_TRUE(codes(check(fan, catalog(), target("h13")), Severity::Warning).count("ANEC-CHK-055"));
  ASSERT_NE(fan.tensor("y"), nullptr);
  EXPECT_EQ(fan.tensor("y")->shape.d[kC], 48);
}

namespace {
// The first finding of `code` when `g` is checked against target `t` (code "none" when there is none).
Finding finding(const Graph &g, const hal::Target &t, const std::string &code, OpVerdict *verdict = nullptr) {
  CheckResult r = check(g, catalog(), t);
  if (verdict && !r.ops.empty())
    *verdict = r.ops[0];
  for (const Finding &f : r.findings)
    if (f.code == code)
      return f;
  Finding none;
  none.code = "none";
  return none;
}
Finding finding(const Graph &g, const char *t, const std::string &code, OpVerdict *verdict = nullptr) {
  return finding(g, target(t), code, verdict);
}
// x and a second input b of `b_shape`, both graph inputs, into `type`.
Graph two_op(const std::string &type, std::vector<int64_t> x, const std::string &b_shape,
             const std::string &attrs = "{}") {
  return one_op(type, x, attrs, R"(, "b")", R"(, {"name": "b", "shape": )" + b_shape + "}");
}
} // namespace

// Batch and depth rows of the extent table, at the limit and one past it: the pre-A13 tables
// (h11: batch 4096, depth 1) and the A13 ones (h13: batch 65536, depth 16384).
TEST(Check, BatchAndDepthBoundaries) {
  struct Case {
    const char *target;
    int axis; // in the N, D, C, H, W shape
    int64_t limit;
    const char *code, *field;
  } cases[] = {{"h11", 0, 4096, "ANEC-CHK-014", "max_tensor_batch"},
               {"h13", 0, 65536, "ANEC-CHK-014", "max_tensor_batch"},
               {"h11", 1, 1, "ANEC-CHK-013", "max_tensor_depth"},
               {"h13", 1, 16384, "ANEC-CHK-013", "max_tensor_depth"}};
  for (auto &c : cases) {
    SCOPED_TRACE(std::string(c.target) + " " + c.code);
    std::vector<int64_t> at = {1, 1, 1, 1, 8};
    at[c.axis] = c.limit;
    EXPECT_EQ(finding(one_op("relu", at), c.target, c.code).code, "none");
    at[c.axis] = c.limit + 1;
    Finding f = finding(one_op("relu", at), c.target, c.code);
    EXPECT_EQ(f.code, c.code);
    EXPECT_EQ(f.severity, Severity::Decompose);
    EXPECT_EQ(f.value, std::to_string(c.limit + 1));
    EXPECT_EQ(f.limit, std::to_string(c.limit));
    EXPECT_EQ(f.limit_field, c.field);
  }
}

// A reshape to six axes: the engine's tensors have five (an ONNX input of rank 6:
// Check.OnnxInputOfRankSixRejects).
TEST(Check, MoreThanFiveAxesReject) {
  Graph six = one_op("reshape", {1, 8, 4, 4}, R"({"shape": [1, 1, 2, 4, 4, 4]})");
  Finding f = finding(six, "h17s", "ANEC-CHK-015");
  EXPECT_EQ(f.code, "ANEC-CHK-015");
  EXPECT_EQ(f.severity, Severity::Reject);
  EXPECT_EQ(f.value, "6");
  EXPECT_EQ(f.limit, "5");
  Graph five = one_op("reshape", {1, 8, 4, 4}, R"({"shape": [1, 2, 4, 4, 4]})");
  EXPECT_EQ(finding(five, "h17s", "ANEC-CHK-015").code, "none");
}

// An fp32 (or int32) graph input is read as fp16: a warning, the verdict stays native.
TEST(Check, Fp32InputIsComputedInFp16) {
  auto graph = [](const char *dtype) {
    Graph g = read_graph_json(std::string(R"({"format": "anec-graph", "version": 1,
      "inputs": [{"name": "x", "shape": [1, 8, 4, 8], "dtype": ")") +
                                  dtype + R"("}],
      "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})",
                              "d");
    infer_shapes(g, catalog());
    return g;
  };
  for (const char *dtype : {"fp32", "int32"}) {
    SCOPED_TRACE(dtype);
    OpVerdict v;
    Finding f = finding(graph(dtype), "h13", "ANEC-CHK-017", &v);
    EXPECT_EQ(f.code, "ANEC-CHK-017");
    EXPECT_EQ(f.severity, Severity::Warning);
    EXPECT_EQ(f.value, dtype);
    EXPECT_EQ(f.limit, "fp16");
    EXPECT_EQ(v.verdict, Verdict::Native);
  }
  EXPECT_EQ(finding(graph("fp16"), "h13", "ANEC-CHK-017").code, "none");
}

// Below an operation's family floor it decomposes: sin is F4 (A15), h13 is family index 2.
TEST(Check, BelowTheFamilyFloorDecomposes) {
  OpVerdict v;
  Finding f = finding(one_op("sin", {1, 8, 16, 16}), "h13", "ANEC-CHK-003", &v);
  EXPECT_EQ(f.code, "ANEC-CHK-003");
  EXPECT_EQ(f.severity, Severity::Decompose);
  EXPECT_EQ(f.value, "2");
  EXPECT_EQ(f.limit, "4");
  EXPECT_EQ(f.limit_field, "family_index");
  EXPECT_EQ(v.verdict, Verdict::Decompose);
  EXPECT_EQ(finding(one_op("sin", {1, 8, 16, 16}), "h15", "ANEC-CHK-003").code, "none");
}

// Capability gates: resize without the texture engine (h13) decomposes, dropout without the
// random-number block rejects; each names the missing field.
TEST(Check, MissingCapabilityDecomposesOrRejects) {
  OpVerdict v;
  Graph resize2x = one_op("resize", {1, 8, 16, 16}, R"({"scale": [2, 2]})");
  Finding resize = finding(resize2x, "h13", "ANEC-CHK-004", &v);
  EXPECT_EQ(resize.code, "ANEC-CHK-004");
  EXPECT_EQ(resize.severity, Severity::Decompose);
  EXPECT_EQ(resize.limit_field, "texture_engine");
  EXPECT_EQ(v.decompose_with, "deconvolution upsample or transpose plus convolution");
  EXPECT_EQ(finding(resize2x, "h14", "ANEC-CHK-004").code, "none");
  Finding dropout = finding(one_op("dropout", {1, 8, 16, 16}), "h13", "ANEC-CHK-004", &v);
  EXPECT_EQ(dropout.code, "ANEC-CHK-004");
  EXPECT_EQ(dropout.severity, Severity::Reject);
  EXPECT_EQ(dropout.limit_field, "dropout_random");
  EXPECT_EQ(v.verdict, Verdict::Reject);
}

// A reduction with square = true on a family without the fused square (h13) decomposes.
TEST(Check, SquareAfterReductionDecomposes) {
  Graph g = one_op("reduce_sum", {1, 8, 16, 16}, R"({"axes": "HW", "square": true})");
  OpVerdict v;
  Finding f = finding(g, "h13", "ANEC-CHK-033", &v);
  EXPECT_EQ(f.code, "ANEC-CHK-033");
  EXPECT_EQ(f.severity, Severity::Decompose);
  EXPECT_EQ(f.limit_field, "square_after_reduction");
  EXPECT_EQ(v.decompose_with, "the reduction then a separate square");
  EXPECT_EQ(finding(g, "h14", "ANEC-CHK-033").code, "none");
}

// A transpose whose output height passes max_transpose_height (16384 on h13): channels moved to
// height, at the limit and one past it.
TEST(Check, OversizedTransposeDecomposes) {
  auto transpose = [](int64_t channels) {
    return one_op("transpose", {1, 1, channels, 1, 16}, R"({"perm": [0, 1, 3, 2, 4]})");
  };
  EXPECT_EQ(finding(transpose(16384), "h13", "ANEC-CHK-031").code, "none");
  OpVerdict v;
  Finding f = finding(transpose(16385), "h13", "ANEC-CHK-031", &v);
  EXPECT_EQ(f.code, "ANEC-CHK-031");
  EXPECT_EQ(f.severity, Severity::Decompose);
  EXPECT_EQ(f.value, "16385");
  EXPECT_EQ(f.limit, "16384");
  EXPECT_EQ(f.limit_field, "max_transpose_height");
  EXPECT_EQ(v.decompose_with, "multiple transpose passes");
  // h11's transpose limits are placeholders (0: not published): no limit, so no finding; they used
  // to make every transpose "exceed 0".
  ASSERT_NE(target("h11").find("max_transpose_height"), nullptr);
  EXPECT_EQ(target("h11").find("max_transpose_height")->provenance.confidence, hal::Confidence::Placeholder);
  EXPECT_EQ(finding(transpose(8), "h11", "ANEC-CHK-031").code, "none");
}

// Table 17.2's per-operation rules, each on the smallest graph that breaks it.
TEST(Check, OperationShapeRules) {
  // a linear layer on a rank-5 input (depth 2)
  auto linear = [](int64_t depth) {
    return one_op("linear", {1, depth, 8, 4, 4}, R"({"out_features": 16})");
  };
  Finding f = finding(linear(2), "h13", "ANEC-CHK-027");
  EXPECT_EQ(f.code, "ANEC-CHK-027");
  EXPECT_EQ(f.value, "2");
  EXPECT_EQ(finding(linear(1), "h13", "ANEC-CHK-027").code, "none");
  // a concat axis that is no axis letter, and inputs that differ off the concat axis (H 8 vs 9)
  auto concat = [](const char *b, const char *axis) {
    return two_op("concat", {1, 4, 8, 8}, b, std::string(R"({"axis": ")") + axis + "\"}");
  };
  f = finding(concat("[1, 4, 8, 8]", "Q"), "h13", "ANEC-CHK-028");
  EXPECT_EQ(f.code, "ANEC-CHK-028");
  EXPECT_EQ(f.value, "Q");
  f = finding(concat("[1, 4, 9, 8]", "C"), "h13", "ANEC-CHK-028");
  EXPECT_EQ(f.code, "ANEC-CHK-028");
  EXPECT_EQ(f.value, "[1,1,4,9,8]");
  EXPECT_EQ(f.limit, "[1,1,4,8,8]");
  EXPECT_EQ(finding(concat("[1, 5, 8, 8]", "C"), "h13", "ANEC-CHK-028").code, "none");
  // a reshape from 128 elements to 16, and a perm naming axis 0 twice
  f = finding(one_op("reshape", {1, 8, 4, 4}, R"({"shape": [1, 1, 4, 4]})"), "h13", "ANEC-CHK-029");
  EXPECT_EQ(f.code, "ANEC-CHK-029");
  EXPECT_EQ(f.value, "16");
  EXPECT_EQ(f.limit, "128");
  Graph perm = one_op("transpose", {1, 8, 4, 4}, R"({"perm": [0, 0, 2, 3, 4]})");
  EXPECT_EQ(finding(perm, "h13", "ANEC-CHK-029").code, "ANEC-CHK-029");
  // relu given two inputs, matmul given three
  f = finding(two_op("relu", {1, 4, 8, 8}, "[1, 4, 8, 8]"), "h13", "ANEC-CHK-030");
  EXPECT_EQ(f.code, "ANEC-CHK-030");
  EXPECT_EQ(f.value, "2");
  EXPECT_EQ(f.limit, "1");
  Graph mm3 = one_op("matmul", {1, 1, 4, 8, 16}, "{}", R"(, "w", "w")",
                     R"(, {"name": "w", "shape": [1, 1, 16, 4, 4]})");
  f = finding(mm3, "h13", "ANEC-CHK-030");
  EXPECT_EQ(f.code, "ANEC-CHK-030");
  EXPECT_EQ(f.value, "3");
  EXPECT_EQ(f.limit, "2");
  // a 9x9 pooling window on an 8x8 input; one row of padding makes room for a 9-row window
  f = finding(one_op("max_pool", {1, 8, 8, 8}, R"({"kernel": [9, 9]})"), "h13", "ANEC-CHK-034");
  EXPECT_EQ(f.code, "ANEC-CHK-034");
  EXPECT_EQ(f.value, "9x9");
  EXPECT_EQ(f.limit, "[1,1,8,8,8]");
  Graph padded = one_op("avg_pool", {1, 8, 8, 8}, R"({"kernel": [9, 8], "pad": [1, 0, 0, 0]})");
  EXPECT_EQ(finding(padded, "h13", "ANEC-CHK-034").code, "none");
  // add of 4 and 3 channels: neither is one
  f = finding(two_op("add", {1, 4, 8, 8}, "[1, 3, 8, 8]"), "h13", "ANEC-CHK-035");
  EXPECT_EQ(f.code, "ANEC-CHK-035");
  EXPECT_EQ(f.value, "3");
  EXPECT_EQ(f.limit, "4");
  EXPECT_EQ(finding(two_op("add", {1, 4, 8, 8}, "[1, 1, 8, 8]"), "h13", "ANEC-CHK-035").code, "none");
}

// Seed ch.18 table 18.5, analytic column (h13 anchors): within 5% per row.
TEST(Estimate, Table18_5AnalyticColumn) {
  struct Row {
    int64_t c, hw, k;
    double us;
  } rows[] = {{256, 28, 3, 505}, {512, 32, 1, 511}, {1024, 16, 1, 569}, {2048, 8, 1, 1210}};
  std::vector<double> got;
  for (auto &r : rows) {
    Graph g = one_op("conv", {1, r.c, r.hw, r.hw},
                     R"({"out_channels": )" + std::to_string(r.c) + R"(, "kernel": [)" + std::to_string(r.k) +
                         "," + std::to_string(r.k) + R"(], "pad": [)" + std::to_string(r.k / 2) + "," +
                         std::to_string(r.k / 2) + "," + std::to_string(r.k / 2) + "," +
                         std::to_string(r.k / 2) + "]}");
    Estimate e = estimate(g, catalog(), target("h13"));
    EXPECT_NEAR(e.latency_us, r.us, 0.05 * r.us) << r.c << "@" << r.hw;
    EXPECT_EQ(e.peak_tflops.provenance, "anchored");
    got.push_back(e.latency_us);
  }
  // The deep-narrow C2048@8 (about a twentieth of the MACs) is slower than the 3x3 C256@28, and
  // bandwidth-bound where the 3x3 is compute-bound (ch.18).
  EXPECT_GT(got[3], got[0]);
  Graph c256 =
      one_op("conv", {1, 256, 28, 28}, R"({"out_channels": 256, "kernel": [3, 3], "pad": [1, 1, 1, 1]})");
  EXPECT_EQ(estimate(c256, catalog(), target("h13")).bound, "compute");
  Graph c2048 = one_op("conv", {1, 2048, 8, 8}, R"({"out_channels": 2048})");
  EXPECT_EQ(estimate(c2048, catalog(), target("h13")).bound, "bandwidth");
  // The coarse placement roofline of the same table: 1156 us for the 3x3 (engine anchors).
  auto placement = estimate(c256, catalog(), target("h13")).placement;
  ASSERT_EQ(placement.size(), 3u);
  EXPECT_NEAR(placement[0].coarse_us, 1156, 1);
  EXPECT_EQ(placement[0].backend, "engine");
  EXPECT_EQ(placement[0].launch_units, 0.05);
  EXPECT_EQ(placement[1].backend, "gpu"); // 6.7x behind the engine, the CPU 40x (ch.18)
  EXPECT_NEAR(placement[1].coarse_us / placement[0].coarse_us, 800.0 / 120, 0.01);
}

// A partition moves what enters it and what leaves it, each tensor once: `ax`, made on the engine,
// leaves its partition once though the CPU's tan, the next engine partition and the graph's outputs
// (twice) read it; `cx`, named twice among the outputs, leaves once. The engine partitions' times
// are their rooflines over exactly those bytes.
TEST(Place, ATensorLeavesThePartitionThatMadeItOnce) {
  Graph g = read_graph_json(R"({"format": "anec-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 64, 32, 32]}],
    "ops": [{"name": "a", "op": "relu", "inputs": ["x"], "outputs": ["ax"]},
            {"name": "b", "op": "tan", "inputs": ["ax"], "outputs": ["bx"]},
            {"name": "c", "op": "add", "inputs": ["ax", "bx"], "outputs": ["cx"]}],
    "outputs": ["ax", "cx", "ax", "cx"]})",
                            "leaves.json");
  infer_shapes(g, catalog());
  const hal::Target &h13 = target("h13");
  Estimate e = estimate(g, catalog(), h13);
  Placement p = place(g, catalog(), h13, check(g, catalog(), h13), e);
  ASSERT_EQ(p.partitions.size(), 3u);
  ASSERT_EQ(p.partitions[1].backend, "cpu");
  const double tensor = 64 * 32 * 32 * 2, bw = e.bandwidth_gbps.value * 1e9;
  auto roofline = [&](size_t op, double bytes) {
    return std::max(e.ops[op].compute_us, bytes / bw * 1e6) + e.floor_us;
  };
  EXPECT_DOUBLE_EQ(p.partitions[0].latency_us, roofline(0, 2 * tensor)); // x enters, ax leaves
  EXPECT_DOUBLE_EQ(p.partitions[2].latency_us, roofline(2, 3 * tensor)); // ax, bx enter, cx leaves
}

// Across the 28 targets: within a tier (same anchors and clocks), more cores are never slower; a
// tiny op is dispatch-bound.
TEST(Estimate, MoreCoresNeverSlowerAndSmallOpsHitTheFloor) {
  std::vector<Graph> graphs;
  graphs.push_back(
      one_op("conv", {1, 256, 28, 28}, R"({"out_channels": 256, "kernel": [3, 3], "pad": [1, 1, 1, 1]})"));
  graphs.push_back(one_op("conv", {1, 2048, 8, 8}, R"({"out_channels": 2048})"));
  graphs.push_back(one_op("add", {1, 512, 64, 64}, "{}", R"(, "x")"));
  size_t pairs = 0;
  for (const Graph &g : graphs)
    for (const hal::Target &a : registry().targets())
      for (const hal::Target &b : registry().targets()) {
        if (a.text("tier") != b.text("tier") || a.uint("num_nes") <= b.uint("num_nes"))
          continue;
        ++pairs;
        EXPECT_LE(estimate(g, catalog(), a).latency_us, estimate(g, catalog(), b).latency_us)
            << a.name << " (" << a.uint("num_nes") << " cores) vs " << b.name << " (" << b.uint("num_nes")
            << ")";
      }
  EXPECT_GE(pairs, 3u * 20);
  Estimate tiny = estimate(one_op("relu", {1, 8, 1, 8}), catalog(), target("h13"));
  EXPECT_EQ(tiny.bound, "dispatch");
  EXPECT_NEAR(tiny.latency_us, 230, 1);
  // Attention has no analytic form: the estimate is decomposed and says so.
  Graph attn = read_graph_json(R"({"format": "anec-graph", "version": 1,
      "inputs": [{"name": "q", "shape": [1, 8, 128, 64]}, {"name": "k", "shape": [1, 8, 128, 64]},
                 {"name": "v", "shape": [1, 8, 128, 64]}],
      "ops": [{"name": "a", "op": "sdpa", "inputs": ["q", "k", "v"], "outputs": ["o"]}], "outputs": ["o"]})",
                               "a");
  infer_shapes(attn, catalog());
  Estimate ea = estimate(attn, catalog(), target("h17s"));
  EXPECT_EQ(ea.kind, "decomposed");
  EXPECT_NEAR(ea.flops, 8.0 * 128 * 128 * (2 * 64 + 5 + 2 * 64), 1);
  Estimate host = estimate(one_op("tan", {1, 8, 16, 16}), catalog(), target("h13"));
  EXPECT_EQ(host.unestimated, std::vector<std::string>{"op"});
}

// The tensor index finds every name through its growth, refuses a second tensor of a name and
// finds nothing for a name it was not given.
TEST(Graph, TensorIndexFindsEveryNameAndRefusesDuplicates) {
  Graph g;
  for (int i = 0; i < 20000; ++i) {
    Tensor t;
    t.name = "t" + std::to_string(i);
    ASSERT_NE(g.try_add(t), nullptr) << t.name;
    ASSERT_EQ(g.try_add(t), nullptr) << t.name;
  }
  ASSERT_EQ(g.tensors.size(), 20000u);
  for (int i = 0; i < 20000; ++i) {
    const Tensor *t = g.tensor("t" + std::to_string(i));
    ASSERT_NE(t, nullptr) << i;
    EXPECT_EQ(t->name, "t" + std::to_string(i));
  }
  EXPECT_EQ(g.tensor("t20000"), nullptr);
  EXPECT_EQ(g.tensor(""), nullptr);
  EXPECT_EQ(code_of([&] { g.add(g.tensors[7]); }), "ANEC-GRAPH-002");
}

// A summary (a matrix row) has the verdict, the counts and the totals of the full result, on every
// target at once, for ops that pass, decompose and reject.
TEST(Check, SummaryAgreesWithTheFullResult) {
  std::string ops;
  const char *types[] = {"conv", "relu", "tan", "sdpa", "add"};
  for (int i = 0; i < 5; ++i) {
    std::string in = i == 3   ? R"("t3", "t3", "t3")"
                     : i == 4 ? R"("t4", "t0")"
                              : "\"t" + std::to_string(i) + "\"";
    ops += std::string(i ? ", " : "") + R"({"name": "op)" + std::to_string(i) + R"(", "op": ")" + types[i] +
           R"(", "inputs": [)" + in + R"(], "outputs": ["t)" + std::to_string(i + 1) + "\"]" +
           (i == 0 ? R"(, "attrs": {"out_channels": 8, "kernel": [3, 3], "pad": [1, 1, 1, 1]})" : "") + "}";
  }
  Graph g = read_graph_json(
      R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "t0", "shape": [1, 8, 20000, 30]}],
      "ops": [)" +
          ops + R"(], "outputs": ["t5"]})",
      "mix.json");
  infer_shapes(g, catalog());
  std::vector<const hal::Target *> all;
  for (const hal::Target &t : registry().targets())
    all.push_back(&t);
  std::vector<CheckResult> full = check(g, catalog(), all),
                           summary = check(g, catalog(), all, Detail::Summary);
  std::vector<Estimate> estimates = estimate(g, catalog(), all, nullptr),
                        summaries = estimate(g, catalog(), all, nullptr, "", Detail::Summary);
  ASSERT_EQ(full.size(), all.size());
  ASSERT_EQ(summary.size(), all.size());
  ASSERT_EQ(estimates.size(), all.size());
  ASSERT_EQ(summaries.size(), all.size());
  std::set<Verdict> seen;
  for (size_t k = 0; k < all.size(); ++k) {
    EXPECT_EQ(summary[k].verdict, full[k].verdict) << all[k]->name;
    EXPECT_EQ(summary[k].counts, full[k].counts) << all[k]->name;
    EXPECT_TRUE(summary[k].ops.empty() && summary[k].findings.empty());
    EXPECT_EQ(full[k].count(Severity::Reject) + full[k].count(Severity::Decompose) +
                  full[k].count(Severity::Warning),
              full[k].findings.size());
    EXPECT_EQ(full[k].verdict, check(g, catalog(), *all[k]).verdict) << all[k]->name;
    const Estimate &e = estimates[k], &s = summaries[k];
    EXPECT_EQ(e.latency_us, estimate(g, catalog(), *all[k]).latency_us) << all[k]->name;
    EXPECT_EQ(s.latency_us, e.latency_us) << all[k]->name;
    EXPECT_EQ(e.ops.size(), g.ops.size());
    EXPECT_TRUE(s.ops.empty());
    seen.insert(full[k].verdict);
  }
  EXPECT_TRUE(seen.count(Verdict::Reject)); // tan has no engine path
}

TEST(Graph, MalformedModelsHaveReasonCodes) {
  auto parse = [](const std::string &text) {
    Graph g = read_graph_json(text, "m.json");
    infer_shapes(g, catalog());
  };
  EXPECT_EQ(
      code_of([&] { parse(R"({"format": "onnx", "version": 1, "inputs": [], "ops": [], "outputs": []})"); }),
      "ANEC-GRAPH-001");
  EXPECT_EQ(code_of([&] {
              parse(R"({"format": "anec-graph", "version": 2, "inputs": [], "ops": [], "outputs": []})");
            }),
            "ANEC-GRAPH-001");
  EXPECT_EQ(
      code_of([&] {
        parse(
            R"({"format": "anec-graph", "version": 1, "inputs": [], "ops": [], "outputs": [], "extra": 1})");
      }),
      "ANEC-GRAPH-001");
  EXPECT_EQ(code_of([&] {
              parse(
                  R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 2, 3]}],
                "ops": [], "outputs": []})");
            }),
            "ANEC-GRAPH-003");
  EXPECT_EQ(code_of([&] {
              parse(
                  R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 0, 3, 3]}],
                "ops": [], "outputs": []})");
            }),
            "ANEC-GRAPH-003");
  EXPECT_EQ(code_of([&] {
              parse(
                  R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 2, 3, 3]}],
                 "ops": [{"name": "r", "op": "relu", "inputs": ["nope"], "outputs": ["y"]}],
                 "outputs": ["y"]})");
            }),
            "ANEC-GRAPH-002");
  EXPECT_EQ(code_of([&] {
              parse(
                  R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 2, 3, 3]}],
                 "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["x"]}],
                 "outputs": ["x"]})");
            }),
            "ANEC-GRAPH-002");
  EXPECT_EQ(code_of([&] {
              parse(
                  R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 2, 3, 3]}],
                 "ops": [{"name": "c", "op": "conv", "inputs": ["x"], "outputs": ["y"],
                          "attrs": {"kernel": [3, 3]}}], "outputs": ["y"]})");
            }),
            "ANEC-GRAPH-003");
  // The reason code and the message of reading `text`.
  auto failure = [&](const std::string &text) {
    std::string message;
    std::string code = code_of([&] { parse(text); }, &message);
    return std::pair(code, message);
  };
  const std::string x = R"("inputs": [{"name": "x", "shape": [1, 2, 3, 3]}], )";
  // A key given twice, a value of the wrong kind and an unknown op key name the object and the key.
  auto [code, message] = failure(
      R"({"format": "anec-graph", "version": 1, "version": 1, "inputs": [], "ops": [], "outputs": []})");
  EXPECT_EQ(code, "ANEC-GRAPH-001");
  EXPECT_NE(message.find("graph gives 'version' twice"), std::string::npos) << message;
  std::tie(code, message) = failure(R"({"format": "anec-graph", "version": 1, )" + x +
                                    R"("ops": [{"name": "r", "op": "relu", "inputs": "x", "outputs": ["y"]}],
                                       "outputs": ["y"]})");
  EXPECT_EQ(code, "ANEC-GRAPH-001");
  EXPECT_NE(message.find("op 'inputs' must be array, found string"), std::string::npos) << message;
  std::tie(code, message) =
      failure(R"({"format": "anec-graph", "version": 1, )" + x +
              R"("ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"], "attr": {}}],
                 "outputs": ["y"]})");
  EXPECT_EQ(code, "ANEC-GRAPH-001");
  EXPECT_NE(message.find("op has unknown key 'attr'"), std::string::npos) << message;
  // Malformed text is reported at the byte where it goes wrong.
  std::tie(code, message) = failure(R"({"format": "anec-graph", "version": 1,, "inputs": []})");
  EXPECT_EQ(code, "ANEC-JSON-001");
  EXPECT_NE(message.find("m.json: byte 39"), std::string::npos) << message;
  EXPECT_EQ(code_of([&] { load_model("model.tflite", catalog()); }), "ANEC-MODEL-001");
  EXPECT_EQ(code_of([&] { read_network_plist(json::parse(R"({"Version": "1"})", "p"), "p", catalog()); }),
            "ANEC-MODEL-002");
}

namespace {
int cli(const std::string &args, std::string *out) {
  anec::test::ToolRun r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR, args);
  *out = r.out + r.err;
  return r.status;
}
fs::path shared(const char *f) {
  return fs::path(ANEC_TEST_SHARED_DIR) / "testdata" / "external" / "tinygrad" / f;
}
} // namespace

// The real network plist checks and estimates on all 28 targets; the matrix is the reviewed golden.
TEST(Cli, NetPlistOnAllTargetsMatchesGolden) {
  std::string out;
  if (!fs::exists(shared("net.plist")))
    GTEST_SKIP() << "no shared testdata";
  ASSERT_EQ(cli("check " + shared("net.plist").string() + " --target all", &out), 0) << out;
  EXPECT_EQ(out, read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "anec-check-net-plist-all.txt"));
  ASSERT_EQ(cli("estimate " + shared("net.plist").string() + " --target all --format csv", &out), 0) << out;
  EXPECT_EQ(out, read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "anec-estimate-net-plist-all.csv"));
  ASSERT_EQ(cli("estimate " + shared("net.plist").string() + " --target h13 --format json", &out), 0) << out;
  Doc d = json::parse(out, "estimate.json");
  ASSERT_NE(d.find("bound"), nullptr) << out;
  EXPECT_EQ(d.find("bound")->as_string(), "dispatch");
  EXPECT_TRUE(d.find("latency_us"));
}

TEST(Cli, ExitCodes) {
  fs::path dir = fs::temp_directory_path() / ("anec-cli-models-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_output(dir / "bad.json", std::string("{\"format\": \"anec-graph\""));
  write_output(
      dir / "wide.json",
      std::string(
          R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 1, 1, 16385]}],
    "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})"));
  std::string out;
  EXPECT_EQ(cli("check " + (dir / "bad.json").string() + " --target h13", &out), 2);
  EXPECT_NE(out.find("ANEC-JSON-001"), std::string::npos) << out;
  write_output(
      dir / "kernel.json",
      std::string(R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 1, 1, 64]}],
    "ops": [{"name": "c", "op": "conv", "inputs": ["x"], "outputs": ["y"],
             "attrs": {"out_channels": 1, "kernel": [1, 14]}}], "outputs": ["y"]})"));
  // Too wide for h13 is tiled (a decomposition, exit 0); a kernel too wide for h13 rejects (exit 1).
  EXPECT_EQ(cli("check " + (dir / "wide.json").string() + " --target h13", &out), 0);
  EXPECT_NE(out.find("ANEC-CHK-010 decompose"), std::string::npos) << out;
  EXPECT_EQ(cli("check " + (dir / "kernel.json").string() + " --target h13", &out), 1);
  EXPECT_NE(out.find("ANEC-CHK-020"), std::string::npos) << out;
  EXPECT_EQ(cli("check " + (dir / "kernel.json").string() + " --target h16", &out), 0) << out;
  EXPECT_EQ(cli("check " + (dir / "wide.json").string() + " --target h99", &out), 2);
  EXPECT_NE(out.find("ANEC-HAL-006"), std::string::npos) << out;
  EXPECT_EQ(cli("estimate " + (dir / "wide.json").string() + " --target all --format xml", &out), 2);
  EXPECT_EQ(cli("estimate " + (dir / "wide.json").string() + " --target all --format json", &out), 0);
  Doc every = json::parse(out, "m");
  ASSERT_NE(every.find("targets"), nullptr) << out;
  EXPECT_EQ(every.find("targets")->items().size(), 28u);
  // Many models at once: a directory (its .json, .plist, .onnx files) or several paths; one row per
  // file and target and one summary; an unreadable file is a row, and the exit code is the worst.
  EXPECT_EQ(cli("check " + dir.string() + " --target h13", &out), 2) << out;
  EXPECT_NE(out.find("3 file(s): 1 without a reject, 1 with one, 1 unreadable"), std::string::npos) << out;
  EXPECT_NE(out.find("ANEC-JSON-001"), std::string::npos) << out;
  EXPECT_EQ(
      cli("check " + (dir / "wide.json").string() + " " + (dir / "kernel.json").string() + " --target h13",
          &out),
      1)
      << out;
  EXPECT_EQ(cli("estimate " + (dir / "wide.json").string() + " " + (dir / "kernel.json").string() +
                    " --target h16 --format json",
                &out),
            0);
  Doc many = json::parse(out, "many");
  ASSERT_NE(many.find("files"), nullptr) << out;
  EXPECT_EQ(many.find("files")->as_int(), 2);
  ASSERT_NE(many.find("rows"), nullptr) << out;
  EXPECT_EQ(many.find("rows")->items().size(), 2u);
  EXPECT_EQ(
      cli("place " + (dir / "wide.json").string() + " " + (dir / "kernel.json").string() + " --target h16",
          &out),
      2);
  fs::remove_all(dir);
}

namespace {
// Protobuf wire format, just enough to write a one-node ONNX model here without linking libonnx:
// ModelProto{ir_version 1, graph 7, opset_import 8}, GraphProto{node 1, name 2, input 11, output 12},
// NodeProto{input 1, output 2, op_type 4}, ValueInfoProto{name 1, type 2}, TypeProto{tensor_type 1},
// TypeProto.Tensor{elem_type 1, shape 2}, TensorShapeProto{dim 1}, Dimension{dim_value 1, dim_param 2}.
std::string varint(uint64_t v) {
  std::string s;
  do {
    s += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return s;
}
std::string number(int field, uint64_t v) {
  return varint(uint64_t(field) << 3) + varint(v);
}
std::string bytes(int field, const std::string &b) {
  return varint(uint64_t(field) << 3 | 2) + varint(b.size()) + b;
}

// A float tensor value: each dim a value (> 0) or, for 0, the symbol `param`.
std::string value_info(const std::string &name, const std::vector<int64_t> &dims,
                       const std::string &param = "") {
  std::string shape;
  for (int64_t d : dims)
    shape += bytes(1, d ? number(1, uint64_t(d)) : bytes(2, param));
  std::string tensor = number(1, 1) + (dims.empty() ? "" : bytes(2, shape)); // elem_type FLOAT
  return bytes(1, name) + bytes(2, bytes(1, tensor));
}
// x -> Relu -> y, x of `dims`.
std::string relu_onnx(const std::vector<int64_t> &dims, const std::string &param = "") {
  std::string node = bytes(1, "x") + bytes(2, "y") + bytes(4, "Relu");
  std::string graph = bytes(1, node) + bytes(2, "g") + bytes(11, value_info("x", dims, param)) +
                      bytes(12, value_info("y", dims, param));
  return number(1, 8) + bytes(7, graph) + bytes(8, bytes(1, "") + number(2, 17));
}

std::string graph_json(const std::string &shape, const std::string &op = "relu",
                       const std::string &attrs = "{}") {
  return R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": )" + shape + R"(}],
    "ops": [{"name": "op", "op": ")" +
         op + R"(", "inputs": ["x"], "outputs": ["y"],
             "attrs": )" +
         attrs + R"(}],
    "outputs": ["y"]})";
}
std::string graph_code(const std::string &text, std::string *message = nullptr) {
  return code_of(
      [&] {
        Graph g = read_graph_json(text, "big.json");
        infer_shapes(g, catalog());
        for (const hal::Target &t : registry().targets())
          estimate(g, catalog(), t);
      },
      message);
}
} // namespace

// Sizes that do not fit in 64 bits are bad input (ANEC-GRAPH-003 naming the tensor or op and the
// operands), never a wrapped, negative element count: the issue's 65536^4 shape, and each place
// shape inference multiplies or adds a model's attribute values.
TEST(Graph, SizeOverflowIsBadInput) {
  std::string msg;
  EXPECT_EQ(graph_code(graph_json("[65536, 65536, 65536, 65536]"), &msg), "ANEC-GRAPH-003");
  EXPECT_NE(msg.find("tensor 'x' [65536,1,65536,65536,65536]"), std::string::npos) << msg;
  EXPECT_EQ(graph_code(graph_json("[1, 65536, 65536, 65536]")), "none"); // 2^48 elements, 2^49 bytes: fits
  EXPECT_EQ(graph_code(graph_json("[1, 1, 1, 1099511627776]")), "none"); // the 2^40 cap itself
  EXPECT_EQ(graph_code(graph_json("[1, 1, 1, 1099511627777]"), &msg), "ANEC-GRAPH-003");
  EXPECT_NE(msg.find("up to 2^40"), std::string::npos) << msg;
  struct Case {
    const char *shape, *op, *attrs, *operands;
  } cases[] = {
      {"[1, 1, 1099511627776, 1]", "tile", R"({"reps": [1, 1, 1, 1099511627776, 1]})",
       "1099511627776 x 1099511627776"},
      {"[1, 1, 1099511627776, 1]", "resize", R"({"scale": [9223372036854775807, 1]})",
       "1099511627776 x 9223372036854775807"},
      {"[1, 1, 8, 8]", "pad", R"({"pad": [9223372036854775807, 1, 0, 0]})", "9223372036854775807 + 1"},
      {"[1, 1, 8, 8]", "slice",
       R"({"begin": [0, 0, 0, -9223372036854775807, 0], "end": [-1, -1, -1, 4, -1]})",
       "4 - -9223372036854775807"},
      {"[1, 1, 8, 8]", "conv",
       R"({"out_channels": 1, "kernel": [3, 3], "dilation": [9223372036854775807, 1]})",
       "9223372036854775807 x 2"},
      {"[1, 1, 8, 8]", "deconv",
       R"({"out_channels": 1, "kernel": [1, 1], "stride": [9223372036854775807, 1]})",
       "7 x 9223372036854775807"},
      {"[1, 1, 8, 8]", "reshape", R"({"shape": [1, 1, 1, 1099511627777]})", "exceeds the limit"}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.op);
    EXPECT_EQ(graph_code(graph_json(c.shape, c.op, c.attrs), &msg), "ANEC-GRAPH-003");
    EXPECT_NE(msg.find("op 'op' (" + std::string(c.op) + ")"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.operands), std::string::npos) << msg;
  }
  // A 2^40 x 2^40 window is a large cost (2^80), not an int64 product wrapped to 0 or below.
  Graph g = one_op("max_pool", {1, 1, 1099511627776, 1},
                   R"({"kernel": [1099511627776, 1099511627776], "pad": [0, 0, 0, 1099511627775]})");
  ASSERT_NE(g.tensor("y"), nullptr);
  EXPECT_EQ(g.tensor("y")->shape.str(), "[1,1,1,1,1]");
  EXPECT_GT(estimate(g, catalog(), target("h13")).flops, 1e24);
}

// Degenerate window attributes are bad input (ANEC-GRAPH-003 naming the op, the attribute and the
// value, from ops.toml's `min`): a stride, kernel or dilation of 0 had a conv "native" and evaluated
// to infinities, and a non-integer stride read as 0.
TEST(Graph, DegenerateWindowAttributesAreBadInput) {
  struct Case {
    const char *op, *attrs, *expected;
  } cases[] = {
      {"conv", R"({"out_channels": 1, "kernel": [3, 3], "stride": [0, 1]})", "stride holds 0"},
      {"conv", R"({"out_channels": 1, "kernel": [0, 3]})", "kernel holds 0"},
      {"conv", R"({"out_channels": 1, "kernel": [3, 3], "dilation": [1, 0]})", "dilation holds 0"},
      {"conv", R"({"out_channels": 1, "kernel": [3, 3], "groups": 0})", "groups holds 0"},
      {"conv", R"({"out_channels": 1, "kernel": [3, 3], "pad": [0, -1, 0, 0]})", "pad holds -1"},
      {"conv", R"({"out_channels": 1, "kernel": [3, 3], "stride": [1.5, 1]})", "stride holds a non-integer"},
      {"deconv", R"({"out_channels": 1, "kernel": [2, 2], "stride": [0, 0]})", "stride holds 0"},
      {"max_pool", R"({"kernel": [2, 2], "dilation": [0, 1]})", "dilation holds 0"},
      {"avg_pool", R"({"kernel": [2, 2], "stride": [2, -3]})", "stride holds -3"}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.attrs);
    std::string msg;
    EXPECT_EQ(graph_code(graph_json("[1, 1, 8, 8]", c.op, c.attrs), &msg), "ANEC-GRAPH-003");
    EXPECT_NE(msg.find("op 'op' (" + std::string(c.op) + "): " + c.expected), std::string::npos) << msg;
  }
  // The least values themselves, and a pool's stride taken from its kernel, are fine.
  EXPECT_EQ(graph_code(graph_json(
                "[1, 1, 8, 8]", "conv",
                R"({"out_channels": 1, "kernel": [1, 1], "stride": [1, 1], "pad": [0, 0, 0, 0]})")),
            "none");
  EXPECT_EQ(graph_code(graph_json("[1, 1, 8, 8]", "max_pool", R"({"kernel": [2, 2]})")), "none");
}

// A dimension no input determines ("?", an ONNX shape divided by zero) is not one --dim binds: the
// hint said "bind the input dimensions it derives from" (issue 33, item 10).
TEST(Graph, AnUndeterminedDimensionIsNotCalledBindable) {
  Graph g = read_graph_json(graph_json(R"(["n", 1, 1, 4])"), "test.json");
  EXPECT_EQ(binding_hint(g, "n"), "--dim n=N");
  EXPECT_EQ(binding_hint(g, "n*m"), "--dim n=N, and bind the input dimensions it derives from");
  std::string unknown = binding_hint(g, "?");
  EXPECT_EQ(unknown.find("derives from"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("no --dim binds it: the model does not determine it"), std::string::npos) << unknown;
}

TEST(Graph, NetworkPlistDimensionsAreCapped) {
  auto net = [](const std::string &width) {
    return json::parse(R"({"Networks": ["n"], "n": {"Inputs": ["x"], "x": {"BatchSize": 1, "InputChannels": 1,
      "InputHeight": 1, "InputWidth": )" +
                           width + R"(}, "Units": [], "Outputs": []}})",
                       "net.plist");
  };
  EXPECT_EQ(read_network_plist(net("1099511627776"), "net.plist", catalog()).inputs.size(), 1u);
  std::string msg;
  EXPECT_EQ(code_of([&] { read_network_plist(net("9223372036854775807"), "net.plist", catalog()); }, &msg),
            "ANEC-GRAPH-003");
  EXPECT_NE(msg.find("W = 9223372036854775807"), std::string::npos) << msg;
}

TEST(Graph, OnnxDimensionsAreCapped) {
  std::string msg;
  EXPECT_EQ(code_of(
                [&] {
                  read_onnx(relu_onnx({1, 9223372036854775807}), "big.onnx", catalog());
                },
                &msg),
            "ANEC-GRAPH-003");
  EXPECT_NE(msg.find("tensor 'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("9223372036854775807 exceeds the limit"), std::string::npos) << msg;
  // Each dimension within the cap, the element count (2^80) not.
  const int64_t cap = int64_t(1) << 40;
  EXPECT_EQ(code_of(
                [&] {
                  read_onnx(relu_onnx({0, cap}, "n"), "big.onnx", catalog(), {{"n", cap}});
                },
                &msg),
            "ANEC-GRAPH-003");
  EXPECT_NE(msg.find("does not fit in 64 bits"), std::string::npos) << msg;
  Graph g = read_onnx(relu_onnx({0, 16}, "n"), "ok.onnx", catalog(), {{"n", 2}});
  ASSERT_NE(g.tensor("x"), nullptr);
  EXPECT_EQ(g.tensor("x")->shape.str(), "[2,1,16,1,1]");
}

// An ONNX input of rank 6 keeps its source rank; the check rejects it.
TEST(Check, OnnxInputOfRankSixRejects) {
  Graph g = read_onnx(relu_onnx({1, 2, 2, 2, 2, 2}), "rank6.onnx", catalog());
  infer_shapes(g, catalog());
  ASSERT_NE(g.tensor("x"), nullptr);
  EXPECT_EQ(g.tensor("x")->source_rank, 6);
  Finding f = finding(g, "h17s", "ANEC-CHK-015");
  EXPECT_EQ(f.code, "ANEC-CHK-015");
  EXPECT_EQ(f.severity, Severity::Reject);
  EXPECT_EQ(f.value, "6");
  EXPECT_EQ(f.limit, "5");
  // A rank past what a tensor holds (32,767) is refused with its count, never wrapped to a small one.
  std::string msg;
  EXPECT_EQ(
      code_of([] { read_onnx(relu_onnx(std::vector<int64_t>(32768, 1)), "wide.onnx", catalog()); }, &msg),
      "ANEC-GRAPH-003");
  EXPECT_NE(msg.find("has 32768 dimensions"), std::string::npos) << msg;
}

// The issue's command lines: exit 2 with the reason code, never a negative MFLOP with exit 0.
TEST(Cli, OversizedShapesAndDimsExitTwo) {
  fs::path dir = fs::temp_directory_path() / ("anec-cli-big-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_output(dir / "big.json", graph_json("[65536, 65536, 65536, 65536]"));
  write_output(dir / "sym.json", graph_json(R"(["N", 1, 8, 8])"));
  write_output(dir / "big.onnx", relu_onnx({1, 9223372036854775807}));
  write_output(dir / "sym.onnx", relu_onnx({0, 1099511627776}, "N"));
  std::string out;
  for (const char *cmd : {"check", "estimate"}) {
    SCOPED_TRACE(cmd);
    EXPECT_EQ(cli(std::string(cmd) + " " + (dir / "big.json").string() + " --target h13", &out), 2) << out;
    EXPECT_NE(out.find("ANEC-GRAPH-003"), std::string::npos) << out;
    EXPECT_EQ(out.find("MFLOP"), std::string::npos) << out;
    EXPECT_EQ(cli(std::string(cmd) + " " + (dir / "big.onnx").string() + " --target h13", &out), 2) << out;
    EXPECT_NE(out.find("ANEC-GRAPH-003"), std::string::npos) << out;
  }
  std::string sym = "estimate " + (dir / "sym.json").string() + " --target h13 --format json --dim N=";
  for (const char *value :
       {"9223372036854775807", "1099511627777", "0", "-1", "18446744073709551617", "8x", ""}) {
    SCOPED_TRACE(value);
    EXPECT_EQ(cli(sym + value, &out), 2) << out;
    EXPECT_NE(out.find("ANEC-CLI-002: --dim N '" + std::string(value) + "'"), std::string::npos) << out;
  }
  ASSERT_EQ(cli(sym + "1099511627776", &out), 0) << out; // the cap itself binds
  Doc e = json::parse(out, "estimate.json");
  auto value = [&](const char *key) {
    const Doc *x = e.find(key);
    if (!x) {
      ADD_FAILURE() << "no " << key << " in " << out;
      return 0.0;
    }
    return x->is(Doc::Kind::Int) ? double(x->as_int()) : x->as_float();
  };
  EXPECT_GT(value("flops"), 0);
  EXPECT_GT(value("bytes"), 0);
  std::string onnx = "estimate " + (dir / "sym.onnx").string() + " --target h13 --dim N=1099511627776";
  EXPECT_EQ(cli(onnx, &out), 2) << out;
  EXPECT_NE(out.find("ANEC-GRAPH-003"), std::string::npos) << out;
  fs::remove_all(dir);
}

// Issue 33's hostile runs through the tool: a memory budget refused before allocating (eval of every
// tensor of a relu chain kept, a report on many targets), a degenerate stride, a constant file that
// climbs out of the graph's folder, and -o naming a regular file.
TEST(Cli, BudgetsAndPathsOfHostileModels) {
  fs::path dir = fs::temp_directory_path() / ("anec-cli-hostile-" + std::to_string(::getpid()));
  fs::create_directories(dir / "model");
  std::string ops, outputs = R"("x")";
  for (int i = 0; i < 30; ++i) {
    std::string in = i ? "t" + std::to_string(i - 1) : "x", o = "t" + std::to_string(i);
    ops += std::string(i ? ", " : "") + R"({"name": "r)" + std::to_string(i) +
           R"(", "op": "relu", "inputs": [")" + in + R"("], "outputs": [")" + o + R"("]})";
    outputs += R"(, ")" + o + R"(")";
  }
  write_output(dir / "chain.json", R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x",
    "shape": [1, 1, 16383, 16384], "dtype": "fp32"}], "ops": [)" +
                                       ops + R"(], "outputs": [)" + outputs + "]}");
  std::string out;
  EXPECT_EQ(cli("eval " + (dir / "chain.json").string(), &out), 2) << out;
  EXPECT_NE(out.find("ANEC-MEM-001"), std::string::npos) << out;
  EXPECT_NE(out.find("needs 31.0 GiB, more than the memory budget of 2.0 GiB (--max-memory)"),
            std::string::npos)
      << out;
  EXPECT_EQ(
      cli("eval " + (dir / "chain.json").string() + " --max-memory 40G -o " + (dir / "npy").string(), &out),
      2)
      << out; // the files -o would write count too: 31 GiB of tensors and 33 GiB of files
  EXPECT_FALSE(fs::exists(dir / "npy"));
  EXPECT_NE(out.find("given or to be written"), std::string::npos) << out;
  EXPECT_EQ(cli("eval " + (dir / "chain.json").string() + " --max-memory 4X", &out), 2) << out;
  EXPECT_NE(out.find("ANEC-CLI-002: --max-memory '4X'"), std::string::npos) << out;
  fs::path report = fs::path(ANEC_TEST_GOLDEN_DIR).parent_path() / "tools" / "report_graph.json";
  EXPECT_EQ(
      cli("report " + report.string() + " --target all -o " + (dir / "r.html").string() + " --max-memory 1K",
          &out),
      2)
      << out;
  EXPECT_NE(out.find("ANEC-MEM-001"), std::string::npos) << out;
  EXPECT_NE(out.find("on 28 target(s) needs about"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "r.html"));
  // The per-op rows of a graph read whole count against the budget; one target's check or placement
  // of an anec-graph file, printed while it is read, holds none.
  EXPECT_EQ(cli("place " + (dir / "chain.json").string() + " --target all --max-memory 20K", &out), 2) << out;
  EXPECT_NE(out.find("the placement of 30 operation(s) on 28 target(s) needs about 1.0 MiB"),
            std::string::npos)
      << out;
  for (const char *cmd : {"check ", "place "})
    EXPECT_EQ(cli(cmd + (dir / "chain.json").string() + " --target h13 --max-memory 20K", &out), 0) << out;
  write_output(dir / "stride0.json",
               graph_json("[1, 1, 8, 8]", "conv", R"({"out_channels": 1, "stride": [0, 1]})"));
  EXPECT_EQ(cli("eval " + (dir / "stride0.json").string(), &out), 2) << out;
  EXPECT_NE(out.find("ANEC-GRAPH-003"), std::string::npos) << out;
  write_output(dir / "w.npy", npy::write(npy::Array{"f4", {1}, std::vector<uint8_t>(4, 0)}));
  write_output(dir / "model" / "up.json", R"({"format": "anec-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 1, 1, 1]}],
    "constants": [{"name": "w", "shape": [1, 1, 1, 1], "file": "../w.npy"}],
    "ops": [{"name": "a", "op": "add", "inputs": ["x", "w"], "outputs": ["y"]}], "outputs": ["y"]})");
  EXPECT_EQ(cli("eval " + (dir / "model" / "up.json").string(), &out), 2) << out;
  EXPECT_NE(out.find("ANEC-GRAPH-001"), std::string::npos) << out;
  EXPECT_NE(out.find("file '../w.npy' leaves the graph's folder"), std::string::npos) << out;
  fs::create_symlink("../w.npy", dir / "model" / "link.npy");
  write_output(dir / "model" / "link.json", R"({"format": "anec-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 1, 1, 1]}],
    "constants": [{"name": "w", "shape": [1, 1, 1, 1], "file": "link.npy"}],
    "ops": [{"name": "a", "op": "add", "inputs": ["x", "w"], "outputs": ["y"]}], "outputs": ["y"]})");
  EXPECT_EQ(cli("eval " + (dir / "model" / "link.json").string(), &out), 2) << out;
  EXPECT_NE(out.find("ANEC-EVAL-003"), std::string::npos) << out;
  EXPECT_NE(out.find("resolves outside the model's folder"), std::string::npos) << out;
  write_output(dir / "plain", "x");
  EXPECT_EQ(cli("eval " + (dir / "stride0.json").string() + " -o " + (dir / "plain").string(), &out), 2)
      << out;
  write_output(dir / "relu.json", graph_json("[1, 1, 1, 4]"));
  EXPECT_EQ(cli("eval " + (dir / "relu.json").string() + " -o " + (dir / "plain").string(), &out), 2) << out;
  EXPECT_NE(out.find("it is a regular file"), std::string::npos) << out;
  fs::remove_all(dir);
}

// `anec explain CODE` prints the catalogue entry of any tool's code; an unknown code is bad input.
TEST(Cli, ExplainPrintsTheCatalogueEntry) {
  anec::test::ToolRun r =
      anec::test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR, "explain ANEC-CHK-010");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ANEC-CHK-010 (verdict): ", 0), 0u) << r.out;
  r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR, "explain ANEC-NOPE-999");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ANEC-RSN-002"), std::string::npos) << r.err;
}

// An unnamed input dimension gets the symbol INPUT:AXIS and binds as --dim INPUT:AXIS=N; the axis is
// counted in the input's own shape, and a fixed axis cannot be bound to another value.
TEST(Onnx, UnnamedDimensionsBindByInputAndAxis) {
  Graph open = read_onnx(relu_onnx({0, 16}), "open.onnx", catalog());
  ASSERT_NE(open.tensor("x"), nullptr);
  EXPECT_EQ(open.tensor("x")->shape.str(), "[x:0,1,16,1,1]");
  Finding f = finding(open, "h13", "ANEC-CHK-053");
  EXPECT_NE(f.fix.find("--dim x:0=N"), std::string::npos) << f.fix;
  Graph bound = read_onnx(relu_onnx({0, 16}), "ok.onnx", catalog(), {{"x:0", 2}});
  ASSERT_NE(bound.tensor("y"), nullptr);
  EXPECT_EQ(bound.tensor("y")->shape.str(), "[2,1,16,1,1]");
  std::string msg;
  EXPECT_EQ(code_of(
                [&] {
                  read_onnx(relu_onnx({0, 16}), "bad.onnx", catalog(), {{"x:5", 2}});
                },
                &msg),
            "ANEC-MODEL-003");
  EXPECT_NE(msg.find("has 2 axes"), std::string::npos) << msg;
  EXPECT_EQ(code_of(
                [&] {
                  read_onnx(relu_onnx({0, 16}), "bad.onnx", catalog(), {{"x:1", 3}});
                },
                &msg),
            "ANEC-MODEL-003");
  EXPECT_NE(msg.find("fixed at 16"), std::string::npos) << msg;
  // The same syntax on an anec-graph input, the axis counted in its 4-D shape.
  Graph g = read_graph_json(graph_json(R"(["n", 8, 4, 4])"), "g.json");
  ASSERT_NE(g.tensor("x"), nullptr);
  EXPECT_EQ(g.tensor("x")->source_rank, 4);
}

// Operations the guide's appendix A lists without an engine unit of their own lower to a native
// sequence on every family (ANEC-CHK-006); gather keeps to the software envelope without the
// texture engine (ANEC-CHK-036).
TEST(Check, LoweredOperationsAndTheGatherEnvelope) {
  CheckResult hs = check(one_op("hard_swish", {1, 8, 4, 4}), catalog(), target("h13"));
  ASSERT_FALSE(hs.ops.empty());
  EXPECT_EQ(hs.ops[0].verdict, Verdict::Decompose);
  EXPECT_EQ(hs.ops[0].decompose_with, "sigmoid_hard then mul");
  EXPECT_TRUE(codes(hs, Severity::Decompose).count("ANEC-CHK-006"));
  EXPECT_EQ(check(one_op("hard_sigmoid", {1, 8, 4, 4}), catalog(), target("h13")).ops.at(0).verdict,
            Verdict::Native);
  EXPECT_TRUE(rejects(one_op("gather", {2, 8, 4, 4}), "h13", "ANEC-CHK-036"));
  EXPECT_FALSE(rejects(one_op("gather", {1, 8, 4, 4}), "h13", "ANEC-CHK-036"));
  EXPECT_FALSE(rejects(one_op("gather", {2, 8, 4, 4}), "h14", "ANEC-CHK-036"));
}

// The front-end maps are tables: names match without regard to case or underscores, every row names
// a catalogue operation, and a name is mapped once.
TEST(OpCatalog, FrontEndMapsAreStrictTables) {
  ASSERT_NE(catalog().front_end("onnx", "HardSigmoid"), nullptr);
  EXPECT_EQ(catalog().front_end("onnx", "HardSigmoid")->op, "hard_sigmoid");
  ASSERT_NE(catalog().front_end("onnx", "If"), nullptr);
  EXPECT_EQ(catalog().front_end("onnx", "If")->op, "cond");
  ASSERT_NE(catalog().front_end("plist", "neuron/exp2"), nullptr);
  EXPECT_EQ(catalog().front_end("plist", "neuron/exp2")->op, "exp2");
  ASSERT_NE(catalog().front_end("plist", "Neuron/Sign"), nullptr);
  EXPECT_EQ(catalog().front_end("plist", "Neuron/Sign")->op, "sign");
  ASSERT_NE(catalog().front_end("plist", "InputView"), nullptr);
  EXPECT_EQ(catalog().front_end("plist", "InputView")->params.at("Offset"), "offset");
  EXPECT_EQ(catalog().front_end("onnx", "NoSuchOp"), nullptr);
  OpCatalog c = catalog();
  Doc unknown = toml::parse("schema = \"anec-frontend\"\nversion = \"1\"\nfront_end = \"x\"\n[[map]]\nfrom = "
                            "[\"A\"]\nop = \"nope\"\n",
                            "f.toml");
  EXPECT_EQ(code_of([&] { c.add_front_end(unknown, "f.toml"); }), "ANEC-OPS-001");
  Doc twice = toml::parse("schema = \"anec-frontend\"\nversion = \"1\"\nfront_end = \"x\"\n[[map]]\nfrom = "
                          "[\"A\", \"a\"]\nop = \"relu\"\n",
                          "f.toml");
  EXPECT_EQ(code_of([&] { c.add_front_end(twice, "f.toml"); }), "ANEC-OPS-001");
  // Every catalogue row's shape function is implemented, and found by its place (shape_index).
  for (const auto &[name, spec] : catalog().ops()) {
    ASSERT_LT(spec.shape_index, known_shapes().size()) << name;
    EXPECT_EQ(known_shapes()[spec.shape_index], spec.shape) << name;
  }
}

namespace {
// A one-unit network plist (as the JSON form of the property list): input x [1, 32, 8, 16] with
// InputInterleave `interleave`, one unit of `type` with `params`.
Doc one_unit(const std::string &type, const std::string &params, int64_t interleave = 1) {
  return json::parse(R"({"Networks": ["n"], "n": {"Inputs": ["x"], "x": {"BatchSize": 1, "InputChannels": 30,
    "InputHeight": 8, "InputWidth": 16, "InputInterleave": )" +
                         std::to_string(interleave) + R"(}, "Units": ["u"],
    "u": {"Bottom": "x", "Type": ")" +
                         type + R"(", "OutputChannels": 30, "Params": )" + params + R"(},
    "Outputs": ["y"], "y": {"Bottom": "u"}}})",
                     "unit.plist");
}
} // namespace

// Every layer type the guide names for the network plist (ch.22 table c22-netplist, appendix B's
// hidden-layer catalogue, appendix C's unit and non-linear-mode tables), among them the eight the
// issue found unmapped: each maps to a catalogue operation, infers a shape and is checked on an
// early and a late family; the verdicts follow the family gates.
TEST(PlistNet, EveryDocumentedLayerTypeMaps) {
  struct Case {
    const char *type, *params, *op;
  } cases[] = {
      {"Conv",
       R"({"KernelHeight": 3, "KernelWidth": 3, "PadTop": 1, "PadBot": 1, "PadLeft": 1, "PadRight": 1})",
       "conv"},
      {"Conv", R"({"Type": "Deconv"})", "deconv"},
      {"Pool", R"({"Type": "Max", "KernelHeight": 2, "KernelWidth": 2})", "max_pool"},
      {"ElementWise", R"({"Type": "Add"})", "add"},
      {"ScaledElementWise", R"({"Type": "Add", "Scale": 15360})", "scaled_elementwise"},
      {"Neuron", R"({"Type": "Exp2"})", "exp2"},
      {"Neuron", R"({"Type": "Sign"})", "sign"},
      {"Neuron", R"({"Type": "SigmoidHard"})", "hard_sigmoid"},
      {"Neuron", R"({"Type": "Atan"})", "atan"},
      {"Reshape", "{}", "reshape"},
      {"Flatten", "{}", "reshape"},
      {"Broadcast", R"({"Dimension": "Height", "Size": 8})", "broadcast_to"},
      {"InputView", R"({"Dimension": "Width", "Offset": 4, "Size": 8, "Step": 1})", "input_view"},
      {"Softmax", R"({"Dimension": "Channel"})", "softmax"},
      {"LocalResponseNormalization", "{}", "lrn"},
      {"MinMaxNormalization", R"({"Dimension": "Width"})", "min_max_norm"},
      {"PixelShuffle", R"({"FactorX": 1, "FactorY": 1})", "depth_to_space"},
      {"GlobalArgMinMax", R"({"Type": "Max"})", "global_argmax"},
      {"Sort", "{}", "sort"},
      {"TopK", R"({"K": 2})", "topk"},
      {"CrossCorrelation", "{}", "cross_correlation"},
      {"Dropout", "{}", "identity"},
      {"GOC", "{}", "goc"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.type) + " " + c.params);
    Graph g = read_network_plist(one_unit(c.type, c.params), "unit.plist", catalog());
    ASSERT_EQ(g.ops.size(), 1u);
    EXPECT_EQ(g.ops[0].type, c.op);
    infer_shapes(g, catalog());
    for (const char *t : {"h13", "h17s"}) {
      CheckResult r = check(g, catalog(), target(t));
      EXPECT_FALSE(codes(r, Severity::Reject).count("ANEC-CHK-001")) << t;
    }
  }
  // The view and broadcast read their Params: a width-8 view, a broadcast to height 8.
  Graph view = read_network_plist(one_unit("InputView", R"({"Dimension": "Width", "Offset": 4, "Size": 8})"),
                                  "v.plist", catalog());
  infer_shapes(view, catalog());
  ASSERT_NE(view.tensor("u"), nullptr);
  EXPECT_EQ(view.tensor("u")->shape.str(), "[1,1,30,8,8]");
  // The global arg reduction is native from A15 (family index 4), decomposed below.
  Graph arg = read_network_plist(one_unit("GlobalArgMinMax", "{}"), "a.plist", catalog());
  infer_shapes(arg, catalog());
  EXPECT_EQ(check(arg, catalog(), target("h13")).ops.at(0).verdict, Verdict::Decompose);
  EXPECT_EQ(check(arg, catalog(), target("h17s")).ops.at(0).verdict, Verdict::Native);
  // An undocumented type stays unmapped and is reported.
  Graph odd = read_network_plist(one_unit("Neuron", R"({"Type": "NoSuchMode"})"), "o.plist", catalog());
  ASSERT_FALSE(odd.ops.empty());
  EXPECT_EQ(odd.ops[0].type, "plist:Neuron/NoSuchMode");
}

// A port's declared InputInterleave is the interleave its channels pad to (ANEC-CHK-040): 30
// channels at interleave 4 pad; at 1 (what every real H13 and H15 descriptor uses) they do not.
TEST(PlistNet, DeclaredInterleavePadsChannels) {
  for (int interleave : {1, 4}) {
    Graph g = read_network_plist(one_unit("Neuron", R"({"Type": "ReLU"})", interleave), "i.plist", catalog());
    infer_shapes(g, catalog());
    CheckResult r = check(g, catalog(), target("h13"));
    EXPECT_EQ(codes(r, Severity::Warning).count("ANEC-CHK-040"), interleave == 4 ? 1u : 0u) << interleave;
  }
  // One past 32 bits is refused with its value, never wrapped to a small interleave.
  std::string msg;
  EXPECT_EQ(
      code_of([&] { read_network_plist(one_unit("Neuron", "{}", int64_t(1) << 32), "i.plist", catalog()); },
              &msg),
      "ANEC-MODEL-002");
  EXPECT_NE(msg.find("InputInterleave 4294967296"), std::string::npos) << msg;
}

// A conv that reads no input (a Core ML layer with its input list emptied, found by the coreml fuzz
// target) is a bad model, ANEC-GRAPH-003, not an internal error out of the kernel rule.
TEST(Check, AConvWithoutItsInputIsABadModel) {
  Graph g;
  g.source = "no-input";
  Tensor y;
  y.name = "y";
  y.shape.d = {1, 1, 8, 4, 4};
  g.add(y);
  Op conv;
  conv.name = "c";
  conv.type = "conv";
  conv.outputs = {"y"};
  g.ops.push_back(conv);
  g.outputs = {"y"};
  EXPECT_EQ(code_of([&] { check(g, catalog(), registry().get("h13")); }), "ANEC-GRAPH-003");
}

// A window op whose kernel or pad is shorter than a 2-D window is a bad model, not a read past them.
TEST(Check, AWindowShorterThanTwoDimensionsIsABadModel) {
  Graph g;
  g.source = "short-kernel";
  for (const char *n : {"x", "y"}) {
    Tensor t;
    t.name = n;
    t.shape.d = {1, 1, 8, 4, 4};
    g.add(t);
  }
  Op pool;
  pool.name = "p";
  pool.type = "max_pool";
  pool.inputs = {"x"};
  pool.outputs = {"y"};
  pool.attrs.set("kernel", Doc::array());
  g.ops.push_back(pool);
  g.inputs = {"x"};
  g.outputs = {"y"};
  EXPECT_EQ(code_of([&] { check(g, catalog(), registry().get("h13")); }), "ANEC-GRAPH-003");
}

// A name is printed as the text form's reader sees it, its control characters escaped: ESC could
// recolour the terminal and CR LF forge a finding line (they were printed raw by check and eval).
TEST(Cli, ControlCharactersInNamesAreEscapedInText) {
  fs::path g = fs::temp_directory_path() / ("anec-ctrl-" + std::to_string(::getpid()) + ".json");
  write_output(g, R"({"format": "anec-graph", "version": 1,
    "inputs": [{"name": "x\u001b[31m", "shape": [1, 1, 16, 8, 8]}],
    "ops": [{"name": "r\r\nANEC-CHK-999 reject: forged", "op": "relu", "inputs": ["x\u001b[31m"],
             "outputs": ["y\u0000z"]}], "outputs": ["y\u0000z"]})");
  for (const char *command : {"check", "eval"}) {
    anec::test::ToolRun r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR,
                                                 std::string(command) + " " + g.string() +
                                                     (command[0] == 'c' ? " --target h16" : ""));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\nANEC-CHK-999"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("x\\x1b[31m"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("y\\x00z"), std::string::npos) << r.out;
  }
  anec::test::ToolRun bad = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR,
                                                 "check " + g.string() + " --target h\x1b[31m");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err.find('\x1b'), std::string::npos) << bad.err;
  fs::remove(g);
}
