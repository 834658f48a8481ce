// The measured-latency rows as graphs: every row of ../shared/data/ane-measured/train.tsv builds, and
// where the row records its work the graph's FLOPs equal it. Data: ANEForge roofline runs
// (sbryngelson/ANEForge), CC BY 4.0. Malformed files and rows are rejected with their reason code.
#include "anec/compiler/calibrate/workload.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"

#include "../errors.hpp"
#include "tables.hpp"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <set>

using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
namespace fs = std::filesystem;

namespace {

const fs::path kTrain = fs::path(ANEC_TEST_SHARED_DIR) / "data" / "ane-measured" / "train.tsv";
const char *kHeader = "chip\tmodel_id\top\tparams\tgflop\tlat_ms\tsource_file\n";

const std::vector<Measurement> &train() {
  static const std::vector<Measurement> rows = read_measurements(read_text_file(kTrain), kTrain.string());
  return rows;
}

// The FLOPs the ANEForge runs counted: only the engine's matrix and convolution work (the
// elementwise ops of a graph, biases, activations, scales, norms, add up to 0.8%, in wc_mha at
// S = 512). The attention form includes its softmax, 5 FLOPs per score: the in-graph `sdpa` row
// counts them (0.821035008 = 4 S^2 D H + 5 S^2 H exactly), the netplist bridge's `bridge_sdpa` rows
// count only the two products (4 S^2 D H exactly), so there the softmax is taken out.
double counted_flops(const Workload &w, const std::string &row_op) {
  double total = 0;
  for (const Op &op : w.graph.ops) {
    OpCost c = op_cost(w.graph, op, catalog());
    if (c.form != "conv" && c.form != "matmul" && c.form != "attention")
      continue;
    if (c.form == "attention" && row_op == "bridge_sdpa") {
      const Tensor *qt = op.inputs.size() >= 2 ? w.graph.tensor(op.inputs[0]) : nullptr,
                   *kt = op.inputs.size() >= 2 ? w.graph.tensor(op.inputs[1]) : nullptr;
      if (!qt || !kt) {
        ADD_FAILURE() << "op " << op.name << ": no q and k tensors";
        return 0;
      }
      const Shape &q = qt->shape, &k = kt->shape;
      c.flops -= 5.0 * double(q.elements()) / double(q.d[kW]) * double(k.d[kH]);
    }
    total += c.flops;
  }
  return total * w.dispatches;
}

// The decimals a recorded value carries: the wc_ rows give gflop to three or four decimals
// (wc_dft_matmul_2nets: 0.004 for 2 x 2 x 1024^2 = 0.0041943), so half a unit in the last place is
// the recording's own error.
int decimals(double v) {
  char buf[64];
  for (int d = 0; d < 17; ++d) {
    std::snprintf(buf, sizeof buf, "%.*f", d, v);
    if (std::strtod(buf, nullptr) == v)
      return d;
  }
  return 17;
}

std::string row_text(const std::string &op, const std::string &params, const std::string &gflop = "NA",
                     const std::string &lat = "1.5") {
  return std::string(kHeader) + "Apple M1\tNA\t" + op + "\t" + params + "\t" + gflop + "\t" + lat +
         "\tf.json\n";
}

std::string build_error(const std::string &op, const std::string &params, std::string *message) {
  return code_of([&] { build_workload(read_measurements(row_text(op, params), "t.tsv").at(0), catalog()); },
                 message);
}

} // namespace

TEST(Workload, TrainFileReads) {
  ASSERT_EQ(train().size(), 271u);
  const Measurement &first = train().front();
  EXPECT_EQ(first.chip, "Apple M1");
  EXPECT_EQ(first.model_id, "MacBookAir10,1");
  EXPECT_EQ(first.op, "gemm");
  EXPECT_EQ(first.params, "N=1024");
  EXPECT_DOUBLE_EQ(first.gflop, 2.147483648);
  EXPECT_NEAR(first.lat_ms, 0.99333, 1e-5);
  EXPECT_EQ(first.line, 2u);
  EXPECT_EQ(train().back().line, 272u);
}

TEST(Workload, EveryRowBuildsWithKnownOps) {
  std::set<std::string> known;
  for (const std::string &op : workload_ops())
    known.insert(op);
  for (const Measurement &m : train()) {
    EXPECT_TRUE(known.count(m.op)) << m.op;
    Workload w;
    ASSERT_EQ(code_of([&] { w = build_workload(m, catalog()); }), "none") << "line " << m.line << " " << m.op;
    ASSERT_FALSE(w.graph.ops.empty());
    for (const Op &op : w.graph.ops) {
      EXPECT_TRUE(catalog().find(op.type)) << m.op << ": " << op.type;
      for (const std::string &o : op.outputs) {
        ASSERT_NE(w.graph.tensor(o), nullptr) << m.op << ": " << o;
        EXPECT_GT(w.graph.tensor(o)->shape.elements(), 0) << m.op;
      }
    }
  }
}

// The decisive check: the graph is the program whose work the row recorded.
TEST(Workload, GraphFlopsEqualTheRecordedGflop) {
  int compared = 0;
  for (const Measurement &m : train()) {
    if (m.gflop < 0)
      continue;
    Workload w = build_workload(m, catalog());
    double recorded = m.gflop * 1e9,
           tolerance = std::max(0.005 * recorded, 0.5e9 * std::pow(10.0, -decimals(m.gflop)));
    EXPECT_NEAR(counted_flops(w, m.op), recorded, tolerance)
        << "line " << m.line << " " << m.op << " " << m.params;
    ++compared;
  }
  EXPECT_EQ(compared, 120);
}

TEST(Workload, Shapes) {
  auto built = [](const std::string &op, const std::string &params) {
    return build_workload(read_measurements(row_text(op, params), "t.tsv").at(0), catalog());
  };
  Workload conv = built("conv", "C=128,B=1,H=32,W=32,k=3,stride=2,pad=NA");
  ASSERT_FALSE(conv.graph.outputs.empty());
  ASSERT_NE(conv.graph.tensor(conv.graph.outputs[0]), nullptr);
  EXPECT_EQ(conv.graph.tensor(conv.graph.outputs[0])->shape.str(), "[1,1,128,16,16]");
  ASSERT_EQ(conv.assumptions.size(), 1u);
  EXPECT_NE(conv.assumptions[0].find("pad 1"), std::string::npos);
  Workload dft = built("wc_dft_matmul_2nets", "N=1024");
  EXPECT_EQ(dft.dispatches, 2);
  Workload int8 =
      built("decode_stack_int8w", "d_model=64,n_layers=2,n_heads=4,d_head=16,d_ff=128,vocab=100,s_kv=8,B=3");
  int weights = 0;
  for (const Tensor &t : int8.graph.tensors)
    if (t.constant && t.dtype == "int8")
      ++weights;
  EXPECT_EQ(weights, 2 * 7 + 1); // q, k, v, o, gate, up, down per layer, and the vocab projection
  EXPECT_EQ(int8.graph.inputs.size(), 1u + 2 * 2); // x and each layer's K and V caches
  ASSERT_FALSE(int8.graph.outputs.empty());
  ASSERT_NE(int8.graph.tensor(int8.graph.outputs[0]), nullptr);
  EXPECT_EQ(int8.graph.tensor(int8.graph.outputs[0])->shape.str(), "[3,1,100,1,1]");
  EXPECT_EQ(built("group_norm", "B=1,C=64,H=8,W=8").assumptions.size(), 1u);
  EXPECT_TRUE(built("wc_group_norm", "B=1,C=64,H=8,W=8,groups=8").assumptions.empty());
}

TEST(Workload, MalformedFilesAreRejected) {
  std::string message;
  auto read = [&](const std::string &text) {
    return code_of([&] { read_measurements(text, "t.tsv"); }, &message);
  };
  EXPECT_EQ(read(std::string(kHeader) + "Apple M1\tNA\tgemm\tN=8\t1.0\t0.5\n"), "ANEC-CAL-001");
  EXPECT_NE(message.find("t.tsv:2: 6 column(s)"), std::string::npos) << message;
  EXPECT_EQ(read(row_text("gemm", "N=8", "NA", "1.5\textra")), "ANEC-CAL-001");
  EXPECT_NE(message.find("8 column(s)"), std::string::npos) << message;
  EXPECT_EQ(read(row_text("gemm", "N=8", "NA", "abc")), "ANEC-CAL-001");
  EXPECT_NE(message.find("t.tsv:2: lat_ms 'abc'"), std::string::npos) << message;
  EXPECT_EQ(read(row_text("gemm", "N=8", "NA", "-0.25")), "ANEC-CAL-001");
  EXPECT_NE(message.find("'-0.25'"), std::string::npos) << message;
  EXPECT_EQ(read(row_text("gemm", "N=8", "NA", "inf")), "ANEC-CAL-001");
  EXPECT_EQ(read(row_text("gemm", "N=8", "1.0x")), "ANEC-CAL-001");
  EXPECT_NE(message.find("gflop '1.0x'"), std::string::npos) << message;
  EXPECT_EQ(read("chip\tmodel_id\top\tparams\tlat_ms\tgflop\tsource_file\n"), "ANEC-CAL-001");
  EXPECT_NE(message.find("t.tsv:1: header"), std::string::npos) << message;
  EXPECT_EQ(read(""), "ANEC-CAL-001");
  EXPECT_EQ(read(row_text("gemm", "N=8")), "none");
}

TEST(Workload, UnbuildableRowsAreRejected) {
  std::string message;
  EXPECT_EQ(build_error("winograd", "N=8", &message), "ANEC-CAL-002");
  EXPECT_NE(message.find("'winograd'"), std::string::npos) << message;
  EXPECT_NE(message.find("gemm"), std::string::npos) << message; // the known ops are listed
  EXPECT_EQ(build_error("gemm", "N=NA", &message), "ANEC-CAL-002");
  EXPECT_NE(message.find("'N', which the row records as NA"), std::string::npos) << message;
  EXPECT_EQ(build_error("matmul", "M=1,K=8", &message), "ANEC-CAL-002");
  EXPECT_NE(message.find("'N', which the row does not give"), std::string::npos) << message;
  EXPECT_EQ(build_error("wc_group_norm", "B=1,C=64,H=8,W=8,groups=NA", &message), "ANEC-CAL-002");
  EXPECT_NE(message.find("'groups'"), std::string::npos) << message;
  EXPECT_EQ(build_error("gemm", "N=eight", &message), "ANEC-CAL-002");
  EXPECT_NE(message.find("'N=eight'"), std::string::npos) << message;
  EXPECT_EQ(build_error("gemm", "N=0", &message), "ANEC-CAL-002");
  EXPECT_EQ(build_error("gemm", "N=8,N=9", &message), "ANEC-CAL-002");
  EXPECT_EQ(build_error("wc_group_norm", "B=1,C=64,H=8,W=8,groups=5", &message), "ANEC-CAL-002");
  EXPECT_EQ(build_error("decode_stack_fp16",
                        "d_model=64,n_layers=1,n_heads=3,d_head=16,d_ff=8,vocab=9,s_kv=4,B=1", &message),
            "ANEC-CAL-002");
  EXPECT_NE(message.find("d_model 64"), std::string::npos) << message;
  EXPECT_EQ(build_error("wc_jacobi_fused", "n=8,iters=100000", &message), "ANEC-CAL-002");
}
