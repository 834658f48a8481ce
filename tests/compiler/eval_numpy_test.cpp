// `anec eval` in fp32 against NumPy (Debian's python3-numpy) in float64: eval_reference.py writes
// each case's graph, its float32 inputs and weights (.npy files and inline "data", nothing seeded)
// and the expected outputs; the tool's outputs must agree within 1e-5 relative error. float32
// rounding scales with the terms a value sums, not with what is left after they cancel, so each
// element is judged against the larger of its own magnitude and a tenth of its tensor's largest.
#include "anec/support/file.hpp"
#include "anec/support/npy.hpp"

#include "../numpy_test.hpp"
#include "../run_tool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

using namespace anec;
namespace fs = std::filesystem;

namespace {

class EvalNumpy : public test::NumpyTest {
protected:
  EvalNumpy() : NumpyTest("anec-eval-numpy") {}

  // Writes the case with the reference script, evaluates its graph, compares every expected output.
  void check(const std::string &name) {
    fs::path dir = dir_ / name;
    std::string script = std::string(ANEC_TEST_NUMPY_PYTHON) + " " + ANEC_TEST_EVAL_REFERENCE + " ";
    ASSERT_EQ(std::system((script + dir.string() + " " + name).c_str()), 0);
    std::string args = "eval " + (dir / "graph.json").string() + " -o " + (dir / "got").string();
    compare(name, dir, args + input_args(dir));
  }

  // Runs `anec ARGS` and compares every expected output with the one it wrote.
  void compare(const std::string &name, const fs::path &dir, const std::string &args) {
    test::ToolRun r = test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR, args);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("seeded"), std::string::npos) << r.out; // every value came from the files
    size_t outputs = 0;
    for (const fs::directory_entry &e : fs::directory_iterator(dir / "expected")) {
      std::string file = e.path().filename().string();
      SCOPED_TRACE(name + "/" + file);
      npy::Array want = load(e.path()), got = load(dir / "got" / file);
      ASSERT_EQ(got.dtype, "f4");
      ASSERT_EQ(got.shape, want.shape);
      std::vector<double> w = want.values(), g = got.values();
      ASSERT_EQ(g.size(), w.size());
      double scale = 0, worst = 0, alone = 0;
      for (double x : w) scale = std::max(scale, std::fabs(x) / 10);
      for (size_t i = 0; i < w.size(); ++i) {
        double error = std::fabs(g[i] - w[i]);
        worst = std::max(worst, error / std::max(std::fabs(w[i]), scale));
        alone = std::max(alone, error / std::fabs(w[i]));
      }
      EXPECT_LE(worst, 1e-5);
      std::cout << name << "/" << file << ": max relative error " << worst << " (" << alone
                << " against each element alone)\n";
      ++outputs;
    }
    EXPECT_GT(outputs, 0u);
  }

  // The --input arguments the reference's inputs.txt (NAME=FILE.npy a line) names.
  static std::string input_args(const fs::path &dir) {
    std::string args;
    std::ifstream inputs(dir / "inputs.txt");
    for (std::string line; std::getline(inputs, line);) {
      size_t eq = line.find('=');
      args += " --input " + line.substr(0, eq) + "=" + (dir / line.substr(eq + 1)).string();
    }
    return args;
  }

  // A real MIL program with its weights (mil_eval_reference.py copies the bundle, cuts the program
  // at the case's output and computes it in float64 with a reader of its own), evaluated on the
  // reference GEMM path.
  void check_mil(const std::string &name) {
    fs::path dir = dir_ / name;
    std::string script = std::string(ANEC_TEST_NUMPY_PYTHON) + " " + ANEC_TEST_MIL_EVAL_REFERENCE + " ";
    ASSERT_EQ(
        std::system((script + dir.string() + " " + name + " " + ANEC_TEST_SHARED_DIR "/testdata").c_str()),
        0);
    std::string args =
        "eval " + (dir / "model.mlmodelc").string() + " --gemm reference -o " + (dir / "got").string();
    compare(name, dir, args + input_args(dir));
  }

  // A real Core ML NeuralNetwork model with its weights (coreml_eval_reference.py decodes it with
  // protoc against the Core ML schema and computes it in float64), evaluated on the reference GEMM.
  void check_coreml(const std::string &name, const fs::path &model) {
    fs::path dir = dir_ / name;
    std::string format = std::string(ANEC_TEST_SHARED_DIR) + "/reference/coreml/format";
    std::string script = std::string(ANEC_TEST_NUMPY_PYTHON) + " " + ANEC_TEST_COREML_EVAL_REFERENCE + " ";
    ASSERT_EQ(std::system((script + dir.string() + " " + model.string() + " " + format).c_str()), 0);
    std::string args = "eval " + model.string() + " --gemm reference -o " + (dir / "got").string();
    compare(name, dir, args + input_args(dir));
  }
};

} // namespace

// conv 3x3 stride 2 pad 1, batch_norm, relu, a depthwise dilated conv with a residual add, a grouped
// pointwise conv, max_pool with padding, avg_pool with uneven padding (excluded from the count).
TEST_F(EvalNumpy, ConvNet) { check("conv"); }

// linear layers (weights from .npy files, biases inline) over C with rows along H, gelu, sigmoid,
// softmax over C.
TEST_F(EvalNumpy, Mlp) { check("mlp"); }

// Two heads along H, 6 queries and 5 keys: matmul(q, transpose(k)), scale, softmax over W, matmul
// with v; the fused sdpa; layer_norm over W with gamma and beta, and (the default) over C of the scores.
TEST_F(EvalNumpy, Attention) { check("attention"); }

// Real compiled Core ML programs (.mlmodelc, model.mil with weights/weight.bin) against an independent
// NumPy reading: coremltools' add_model (a mul of two inputs), and the Silero VAD encoder (reflect
// pad, STFT as a conv, magnitude by pow/add/sqrt, four conv + relu + clip layers, with biases) with
// fp16 weights and with int8 weights (constexpr_affine_dequantize per output channel).
TEST_F(EvalNumpy, MilAddModel) {
  check_mil("add_model");
}
TEST_F(EvalNumpy, MilSileroFp16Weights) {
  check_mil("silero_fp16");
}
TEST_F(EvalNumpy, MilSileroInt8Weights) {
  check_mil("silero_int8");
}

// A NeuralNetwork model with its fp32 weights in the spec: coremltools' TinyDrawingEmbedding (three
// conv + ReLU + max-pool stages, a channel-last flatten, an inner product).
TEST_F(EvalNumpy, CoreMlTinyDrawingEmbedding) {
  check_coreml("tiny_drawing", fs::path(ANEC_TEST_SHARED_DIR) /
                                   "testdata/coreml/mlmodel/coremltools/TinyDrawingEmbedding.mlmodel");
}
