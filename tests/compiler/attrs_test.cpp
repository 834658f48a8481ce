// Operation attributes as tables/schema/ops.toml declares them: the declared defaults (a window
// op's kernel and stride, a pool's stride defaulting to its kernel), ANEC-INTERNAL for an attribute
// the table does not declare, and the catalogue loader's strictness on attribute declarations.
#include "anec/compiler/ir/attrs.hpp"
#include "anec/compiler/ir/ops.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"
#include "tables.hpp"
#include <cmath>
#include <gtest/gtest.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;

namespace {

Op op_of(const std::string &type, Doc attrs = Doc::table()) {
  Op op;
  op.name = "op";
  op.type = type;
  op.attrs = std::move(attrs);
  return op;
}

Doc ints(std::vector<int64_t> values) {
  Doc a = Doc::array();
  for (int64_t v : values)
    a.push(Doc::integer(v));
  return a;
}

// A one-op catalogue whose op declares `attrs` (the lines of its [op.attrs] table).
std::string catalogue_with(const std::string &attrs) {
  return "schema = \"anec-ops\"\nversion = \"1\"\n[[op]]\nname = \"x\"\nunit = \"PE\"\nfloor = \"F0\"\n"
         "rules = []\ncost = \"none\"\nsource = \"s\"\n[op.attrs]\n" +
         attrs + "\n";
}
std::string load_code(const std::string &attrs) {
  Doc doc = toml::parse(catalogue_with(attrs), "attrs.toml");
  return code_of([&] { OpCatalog::from_doc(doc, "attrs.toml"); });
}

} // namespace

TEST(OpAttrs, ConvWithoutWindowAttributesHasUnitKernelAndStride) {
  Op conv = op_of("conv");
  OpAttrs attrs(conv, catalog());
  EXPECT_EQ(attrs.ints("kernel"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(attrs.ints("stride"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(attrs.ints("pad"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(attrs.ints("dilation"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(attrs.integer("groups"), 1);
}

TEST(OpAttrs, ConvStrideStaysOneWithALargerKernel) {
  Doc a = Doc::table();
  a.set("kernel", ints({3, 3}));
  Op conv = op_of("conv", std::move(a));
  EXPECT_EQ(OpAttrs(conv, catalog()).ints("stride"), (std::vector<int64_t>{1, 1}));
}

TEST(OpAttrs, PoolStrideDefaultsToItsKernel) {
  for (const char *type : {"max_pool", "avg_pool"}) {
    Doc a = Doc::table();
    a.set("kernel", ints({3, 2}));
    Op pool = op_of(type, std::move(a));
    OpAttrs attrs(pool, catalog());
    EXPECT_EQ(attrs.ints("stride"), (std::vector<int64_t>{3, 2})) << type;
    EXPECT_EQ(OpAttrs(op_of(type), catalog()).ints("stride"), (std::vector<int64_t>{1, 1})) << type;
  }
}

TEST(OpAttrs, AGivenValueWinsAndOneOfAnotherTypeReadsAsTheDefault) {
  Doc a = Doc::table();
  a.set("kernel", ints({3, 3}));
  a.set("stride", ints({2, 2}));
  a.set("groups", Doc::string("four"));
  Op pool = op_of("conv", std::move(a));
  OpAttrs attrs(pool, catalog());
  EXPECT_EQ(attrs.ints("stride"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(attrs.integer("groups"), 1);
}

TEST(OpAttrs, OtherDeclaredDefaults) {
  EXPECT_EQ(OpAttrs(op_of("transpose"), catalog()).ints("perm"), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(OpAttrs(op_of("slice"), catalog()).ints("end"), (std::vector<int64_t>{-1, -1, -1, -1, -1}));
  EXPECT_EQ(OpAttrs(op_of("topk"), catalog()).text("axis"), "W");
  EXPECT_EQ(OpAttrs(op_of("sort"), catalog()).text("axis"), "C");
  EXPECT_EQ(OpAttrs(op_of("pad"), catalog()).text("mode"), "constant");
  EXPECT_DOUBLE_EQ(OpAttrs(op_of("leaky_relu"), catalog()).number("alpha"), 0.01);
  EXPECT_DOUBLE_EQ(OpAttrs(op_of("clamp"), catalog()).number("max"), INFINITY);
  Doc f = Doc::table();
  f.set("factor", Doc::integer(3));
  Op depth_to_space = op_of("depth_to_space", std::move(f));
  OpAttrs shuffle(depth_to_space, catalog());
  EXPECT_EQ(shuffle.integer("factor_x"), 3);
  EXPECT_EQ(shuffle.integer("factor_y"), 3);
}

TEST(OpAttrs, AnUndeclaredAttributeIsAnInternalError) {
  Op conv = op_of("conv");
  OpAttrs attrs(conv, catalog());
  EXPECT_EQ(code_of([&] { attrs.ints("kernal"); }), "ANEC-INTERNAL");
  EXPECT_EQ(code_of([&] { attrs.given("kernal"); }), "ANEC-INTERNAL");
  Op relu = op_of("relu");
  EXPECT_EQ(code_of([&] { OpAttrs(relu, catalog()).ints("kernel"); }), "ANEC-INTERNAL");
  EXPECT_EQ(code_of([&] { attrs.text("kernel"); }), "ANEC-INTERNAL"); // read as another type
}

TEST(OpAttrs, OneWithoutADefaultIsReadOnlyWhenGiven) {
  Op sdpa = op_of("sdpa");
  OpAttrs attrs(sdpa, catalog());
  EXPECT_FALSE(attrs.given("scale"));
  EXPECT_EQ(code_of([&] { attrs.number("scale"); }), "ANEC-INTERNAL");
  EXPECT_FALSE(OpAttrs(op_of("frobnicate"), catalog()).given("weight_elements")); // on every op
}

TEST(OpCatalog, RejectsAMalformedAttributeDeclaration) {
  EXPECT_EQ(load_code("kernel = { type = \"ints\", default = [1, 1] }"), "none");
  EXPECT_EQ(load_code("kernel = { type = \"ints\", default = [1, 1], unit = \"px\" }"), "ANEC-OPS-001");
  EXPECT_EQ(load_code("kernel = { type = \"matrix\", default = [1, 1] }"), "ANEC-OPS-001");
  EXPECT_EQ(load_code("kernel = { default = [1, 1] }"), "ANEC-OPS-001");
  EXPECT_EQ(load_code("kernel = { type = \"ints\", default = 1 }"), "ANEC-OPS-001");
  EXPECT_EQ(load_code("kernel = { type = \"ints\", default = [1, 1.5] }"), "ANEC-OPS-001");
  EXPECT_EQ(load_code("groups = { type = \"int\", default = \"one\" }"), "ANEC-OPS-001");
  EXPECT_EQ(load_code("kernel = [1, 1]"), "ANEC-OPS-001");
  EXPECT_EQ(load_code("stride = { type = \"ints\", default_from = \"kernel\" }"), "ANEC-OPS-001");
  EXPECT_EQ(load_code("kernel = { type = \"ints\", default = [1, 1] }\n"
                      "stride = { type = \"ints\", default = [1, 1], default_from = \"kernel\" }"),
            "ANEC-OPS-001");
  EXPECT_EQ(load_code("kernel = { type = \"ints\", default = [1, 1] }\n"
                      "groups = { type = \"int\", default_from = \"kernel\" }"),
            "ANEC-OPS-001");
}
