// The inputs and outputs as the engine holds them (compiler/check/wire.hpp): channels padded to the
// interleave (the target's, or the one a port declares), rows to the DMA granule, fp16 whatever the
// model's type; unknown while a dimension is symbolic.
#include "anec/compiler/check/check.hpp"

#include "tables.hpp"
#include <gtest/gtest.h>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::registry;

namespace {

Tensor tensor(const std::string &name, std::array<int64_t, 5> d, const std::string &dtype = "fp16") {
  Tensor t;
  t.name = name;
  t.shape.d = d;
  t.dtype = dtype;
  return t;
}

} // namespace

TEST(Wire, ChannelsPadToTheInterleaveAndRowsToTheGranule) {
  const hal::Target &h13 = registry().get("h13");
  Graph g;
  g.add(tensor("x", {1, 1, 6, 3, 5}, "fp32"));
  Tensor y = tensor("y", {2, 1, 6, 1, 8});
  y.interleave = 4; // the port's own, as a plist declares it
  g.add(y);
  Tensor z = tensor("z", {1, 1, 3, 1, 7});
  z.shape.d[kN] = -1;
  z.shape.symbol[kN] = "batch";
  g.add(z);
  g.inputs = {"x"};
  g.outputs = {"y", "z"};
  Wire w = wire_of(g, h13);
  ASSERT_EQ(w.granule, 16);   // h13's dram_alignment (guide ch.24 table 24.1)
  ASSERT_EQ(w.interleave, 1); // h13's channel_interleave, measured on its descriptors
  EXPECT_EQ(w.interleave_provenance, "measured");
  ASSERT_EQ(w.ports.size(), 3u);
  const WirePort &x = w.ports[0];
  EXPECT_TRUE(x.input);
  EXPECT_EQ(x.dtype, "fp32");
  EXPECT_EQ(x.row_bytes, 10);
  EXPECT_EQ(x.padded_row_bytes, 16);
  EXPECT_EQ(x.padded_channels, 6);
  EXPECT_EQ(x.bytes, 6 * 3 * 16);
  const WirePort &out = w.ports[1];
  EXPECT_FALSE(out.input);
  EXPECT_EQ(out.padded_channels, 8);
  EXPECT_EQ(out.padded_row_bytes, 16);
  EXPECT_EQ(out.bytes, 2 * 8 * 16);
  EXPECT_EQ(w.ports[2].bytes, -1); // symbolic: unknown, not a guess
}

TEST(Wire, ACheckCarriesItAndASummaryDoesNot) {
  Graph g;
  g.add(tensor("x", {1, 1, 8, 1, 8}));
  g.add(tensor("y", {1, 1, 8, 1, 8}));
  g.inputs = {"x"};
  g.outputs = {"y"};
  Op relu;
  relu.name = "r";
  relu.type = "relu";
  relu.inputs = {"x"};
  relu.outputs = {"y"};
  g.ops.push_back(relu);
  const hal::Target *t = &registry().get("h16");
  EXPECT_EQ(check(g, catalog(), {t}, Detail::Full)[0].wire.ports.size(), 2u);
  EXPECT_TRUE(check(g, catalog(), {t}, Detail::Summary)[0].wire.ports.empty());
}
