// The MIL text front-end: every MIL program in shared/testdata/coreml/mil read, with the facts of its
// SOURCES.tsv row checked (program version, function, inputs and their shapes, outputs, op counts by
// type, BLOBFILE references); malformed text rejected with its reason code at line:column; BLOBFILE
// paths kept inside the model's folder; the compression ops carried as stored weight bytes.
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/mil.hpp"
#include "anec/support/error.hpp"

#include "tables.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace anec::compiler {
namespace {

const std::filesystem::path kShared = ANEC_TEST_SHARED_DIR;

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep))
    out.push_back(item);
  return out;
}

std::string slurp(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A SOURCES.tsv row's facts ("program=1.3; func=main<ios18>; inputs=...") by key.
std::map<std::string, std::string> facts_of(const std::string &facts) {
  std::map<std::string, std::string> out;
  for (std::string f : split(facts, ';')) {
    while (!f.empty() && f[0] == ' ')
      f.erase(0, 1);
    for (std::string part : split(f, ' ')) { // "blobfile_refs=3 paths=a|b path_form=string"
      size_t eq = part.find('=');
      if (eq != std::string::npos)
        out[part.substr(0, eq)] = part.substr(eq + 1);
    }
  }
  return out;
}

struct Row {
  std::string path;
  std::map<std::string, std::string> facts;
};

std::vector<Row> mil_rows() {
  std::vector<Row> rows;
  std::ifstream in(kShared / "testdata" / "coreml" / "SOURCES.tsv");
  std::string line;
  while (std::getline(in, line)) {
    auto cols = split(line, '\t');
    if (cols.size() > 6 && cols[0].rfind("mil/", 0) == 0 && cols[5] == "mil")
      rows.push_back({cols[0], facts_of(cols[6])});
  }
  return rows;
}

void blobs(const MilValue &v, std::vector<std::string> &paths) {
  if (v.kind == MilValue::Kind::Blob)
    paths.push_back(v.text);
  for (const MilValue &x : v.items)
    blobs(x, paths);
}

std::string dims_text(const MilType &t) {
  std::string out;
  for (int64_t d : t.dims)
    out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

TEST(Mil, EveryTestdataProgramMatchesItsSourcesFacts) {
  std::vector<Row> rows = mil_rows();
  ASSERT_EQ(rows.size(), 27u);
  size_t ops = 0, mapped = 0;
  std::map<std::string, size_t> unmapped;
  for (const Row &row : rows) {
    SCOPED_TRACE(row.path);
    std::filesystem::path file = kShared / "testdata" / "coreml" / row.path;
    MilProgram p = parse_mil(slurp(file), row.path);
    const auto &f = row.facts;
    EXPECT_EQ(p.version, f.at("program"));
    ASSERT_EQ(p.functions.size(), 1u);
    const MilFunction &fn = p.functions[0];
    EXPECT_EQ(fn.name + "<" + fn.opset + ">", f.at("func"));
    // inputs=x:fp32[1x4x1x2],W:fp32[1x6x4]
    std::string inputs;
    for (const MilVar &v : fn.inputs)
      inputs += (inputs.empty() ? "" : ",") + v.name + ":" + v.type.dtype + "[" + dims_text(v.type) + "]";
    EXPECT_EQ(inputs, f.at("inputs"));
    std::string outputs;
    for (const std::string &o : fn.outputs)
      outputs += (outputs.empty() ? "" : ",") + o;
    EXPECT_EQ(outputs, f.at("outputs"));
    // ops=11(non_const=3); op_types=const:8,cast:2,conv:1
    std::map<std::string, size_t> counts;
    size_t non_const = 0;
    std::vector<std::string> refs;
    for (const MilOp &o : fn.ops) {
      ++counts[o.type];
      non_const += o.type != "const";
      for (const MilNamed &n : o.inputs)
        blobs(n.value, refs);
      for (const MilNamed &n : o.attributes)
        blobs(n.value, refs);
    }
    EXPECT_EQ(std::to_string(fn.ops.size()) + "(non_const=" + std::to_string(non_const) + ")", f.at("ops"));
    std::map<std::string, size_t> expected;
    for (const std::string &t : split(f.at("op_types"), ',')) {
      size_t colon = t.rfind(':');
      expected[t.substr(0, colon)] = std::stoul(t.substr(colon + 1));
    }
    EXPECT_EQ(counts, expected);
    if (f.count("blobfile_refs")) {
      EXPECT_EQ(std::to_string(refs.size()), f.at("blobfile_refs"));
      std::set<std::string> distinct(refs.begin(), refs.end()), want;
      for (const std::string &x : split(f.at("paths"), '|'))
        want.insert(x);
      EXPECT_EQ(distinct, want);
    } else {
      EXPECT_TRUE(refs.empty());
    }

    // As a graph, through the front-end table: the inputs, the outputs, every non-const op.
    Graph g = load_model(file, test::catalog());
    EXPECT_EQ(g.inputs.size(), fn.inputs.size());
    EXPECT_EQ(g.outputs, fn.outputs);
    for (const MilVar &v : fn.inputs)
      EXPECT_EQ(g.tensor(v.name)->shape.elements(), v.type.elements());
    for (const Op &o : g.ops) {
      ++ops;
      if (o.type.rfind("mil:", 0) == 0)
        ++unmapped[o.type];
      else
        ++mapped;
    }
    bool absent = std::any_of(g.notes.begin(), g.notes.end(), [](const std::string &n) {
      return n.find("bytes absent") != std::string::npos;
    });
    EXPECT_EQ(absent, f.count("blobfile_refs") > 0); // the weight files are not in the test data
  }
  std::string left;
  for (const auto &[type, n] : unmapped)
    left += " " + type + "x" + std::to_string(n);
  std::cout << "MIL ops mapped: " << mapped << " of " << ops << " ("
            << (ops ? 100.0 * double(mapped) / double(ops) : 0) << "%)"
            << (left.empty() ? "" : "; unmapped:" + left) << "\n";
  EXPECT_EQ(mapped, ops) << left;
}

const Op &op_named(const Graph &g, const std::string &name) {
  for (const Op &o : g.ops)
    if (o.name == name)
      return o;
  throw std::runtime_error("no op " + name);
}
double weight_of(const Graph &g, const Op &op) {
  OpTensors tensors;
  find_tensors(g, op, tensors);
  return weight_bytes(g, op, tensors, test::catalog());
}

TEST(Mil, ConvAttributesAndWeights) {
  Graph g = load_model(kShared / "testdata/coreml/mil/espresso/conv.mil", test::catalog());
  EXPECT_EQ(g.front_end, "mil 1.3 ios18");
  EXPECT_EQ(g.tensor("x")->shape.str(), "[1,1,4,1,2]");
  EXPECT_EQ(g.tensor("x")->dtype, "fp32");
  ASSERT_EQ(g.ops.size(), 3u);
  const Op &conv = op_named(g, "conv");
  EXPECT_EQ(conv.type, "conv");
  EXPECT_EQ(conv.inputs, std::vector<std::string>{"x16"});
  EXPECT_EQ(conv.attrs.find("weight_elements")->as_int(), 24);
  EXPECT_EQ(conv.attrs.find("out_channels")->as_int(), 6);
  EXPECT_EQ(conv.attrs.find("groups")->as_int(), 1);
  EXPECT_EQ(weight_of(g, conv), 48);
  EXPECT_EQ(g.tensor("y")->shape.str(), "[1,1,6,1,2]");
}

TEST(Mil, CompressedWeightsCarryTheirStoredSize) {
  Graph g = load_model(kShared / "testdata/coreml/mil/milhwx/w8a8_conv_chain.mil", test::catalog());
  const Op &c0 = op_named(g, "c0");
  EXPECT_EQ(c0.attrs.find("weight_elements")->as_int(), 64 * 64);
  EXPECT_EQ(c0.attrs.find("weight_bytes")->as_int(), 64 * 64); // int8: one byte each
  EXPECT_EQ(weight_of(g, c0), 4096);
  const Op &q0 = op_named(g, "q0");
  EXPECT_EQ(q0.type, "quantize");
  EXPECT_DOUBLE_EQ(q0.attrs.find("scale")->as_float(), 0.125); // fp16(0x1p-3)
  EXPECT_EQ(g.tensor("q0")->dtype, "int8");
}

TEST(Mil, PalettizedAndSparseWeights) {
  const char *text = R"(program(1.0)
{
  func main<ios16>(tensor<fp16, [1, 32, 1, 8]> x) {
    tensor<fp16, [64, 32, 1, 1]> w = constexpr_lut_to_dense()[
      indices = tensor<uint8, [512]>(BLOBFILE(path = string("@model_path/weights/weight.bin"),
                                              offset = uint64(64))),
      lut = tensor<fp16, [16]>([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]), name = string("w"),
      shape = tensor<uint32, [4]>([64, 32, 1, 1])];
    tensor<fp16, [1, 64, 1, 8]> y = conv(weight = w, x = x)[name = string("y")];
    tensor<fp16, [64, 64, 1, 1]> s = constexpr_sparse_to_dense()[
      mask = tensor<uint8, [512]>(BLOBFILE(path = string("@model_path/weights/weight.bin"),
                                           offset = uint64(704))),
      name = string("s"),
      nonzero_data = tensor<fp16, [100]>(BLOBFILE(path = string("@model_path/weights/weight.bin"),
                                                  offset = uint64(1280))),
      shape = tensor<uint32, [4]>([64, 64, 1, 1])];
    tensor<fp16, [1, 64, 1, 8]> z = conv(weight = s, x = y)[name = string("z")];
  } -> (z);
})";
  Graph g = read_mil(text, "lut.mil", test::catalog());
  // 4-bit palette: 512 bytes of indices, a 16-entry fp16 table, the shape (4 x uint32)
  EXPECT_EQ(op_named(g, "y").attrs.find("weight_bytes")->as_int(), 512 + 32 + 16);
  EXPECT_EQ(op_named(g, "z").attrs.find("weight_bytes")->as_int(), 512 + 200 + 16);
  EXPECT_EQ(op_named(g, "z").attrs.find("weight_elements")->as_int(), 64 * 64);
}

TEST(Mil, BothValueSyntaxesHexFloatsAndMultilineCalls) {
  Graph ln = load_model(kShared / "testdata/coreml/mil/milhwx/real_ln.mil", test::catalog());
  const Op &norm = op_named(ln, "input_21_cast_fp16"); // name = tensor<string, []>("...")
  EXPECT_EQ(norm.type, "layer_norm");
  EXPECT_EQ(norm.attrs.find("axes")->as_string(), "W");
  Graph d2s = load_model(kShared / "testdata/coreml/mil/milhwx/d2s.mil", test::catalog());
  EXPECT_EQ(op_named(d2s, "unpack").attrs.find("factor")->as_int(), 4);
  EXPECT_EQ(d2s.tensor("y")->shape.str(), "[1,1,16,128,128]");
  MilProgram p =
      parse_mil("program(1.1) { func main<ios15>() { fp16 a = const()[name = string(\"a\"), val = "
                "fp16(-0x1.8p+2)]; fp32 b = const()[name = string(\"b\"), val = fp32(1.5e-3)]; } -> (a); }",
                "hex.mil");
  EXPECT_DOUBLE_EQ(p.functions[0].ops[0].attribute("val")->unwrapped().f, -6.0);
  EXPECT_DOUBLE_EQ(p.functions[0].ops[1].attribute("val")->unwrapped().f, 1.5e-3);
}

TEST(Mil, TransposeSliceSoftmaxAndMatmulAttributes) {
  Graph g = load_model(kShared / "testdata/coreml/mil/milhwx/attention.mil", test::catalog());
  size_t transposes = 0, slices = 0;
  for (const Op &o : g.ops) {
    transposes += o.type == "transpose" && o.attrs.find("perm");
    slices += o.type == "slice" && o.attrs.find("begin");
    if (o.type == "softmax") {
      EXPECT_TRUE(o.attrs.find("axis"));
    }
    if (o.type == "matmul") {
      EXPECT_GT(o.attrs.find("flops")->as_int(), 0);
    }
  }
  EXPECT_EQ(transposes, 4u);
  EXPECT_EQ(slices, 3u);
  Graph mlp = load_model(kShared / "testdata/coreml/mil/milhwx/mlp_768_1024_768.mil", test::catalog());
  size_t linear = 0;
  for (const Op &o : mlp.ops)
    if (o.type == "linear") {
      ++linear;
      EXPECT_GT(o.attrs.find("weight_elements")->as_int(), 768 * 1024 - 1);
    }
  EXPECT_EQ(linear, 2u);
}

TEST(Mil, FlexibleDimensionsBindWithDim) {
  const char *text = R"(program(1.3)
[buildInfo = dict<string, string>({{"coremltools-version", "9.0"}})]
{
  func main<ios18>(tensor<fp16, [1, 64, 1, S]> x) {
    tensor<fp16, [1, 64, 1, S]> y = relu(x = x)[name = string("y")];
  } -> (y);
  func prefill<ios18>(tensor<fp16, [1, 64, 1, 128]> x) {
    tensor<fp16, [1, 64, 1, 128]> y = relu(x = x)[name = string("y")];
  } -> (y);
})";
  Graph g = read_mil(text, "flex.mil", test::catalog(), {{"S", 256}});
  EXPECT_EQ(g.tensor("x")->shape.str(), "[1,1,64,1,256]");
  EXPECT_EQ(g.tensor("y")->shape.str(), "[1,1,64,1,256]");
  bool listed = false;
  for (const std::string &n : g.notes)
    listed |= n.find("prefill<ios18>") != std::string::npos;
  EXPECT_TRUE(listed);
  Graph open = read_mil(text, "flex.mil", test::catalog());
  EXPECT_TRUE(open.tensor("x")->shape.symbolic());
  EXPECT_EQ(open.tensor("x")->shape.symbol[kW], "S");
  try {
    read_mil(text, "flex.mil", test::catalog(), {{"T", 2}});
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), "ANEC-MODEL-003");
  }
}

TEST(Mil, UnmappedOpsStayWithAReason) {
  Graph g = read_mil("program(1.3) { func main<ios18>(tensor<fp16, [1, 8]> x) {"
                     " tensor<fp16, [1, 8]> y = frobnicate(x = x)[name = string(\"y\")]; } -> (y); }",
                     "u.mil", test::catalog());
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].type, "mil:frobnicate");
  bool noted = false;
  for (const std::string &n : g.notes)
    noted |= n.find("unmapped MIL op 'frobnicate'") != std::string::npos;
  EXPECT_TRUE(noted);
}

// A program built in memory, as the Core ML reader builds one from a spec, may hold what MIL text
// cannot: an op with no output, a slice with no input (found by fuzz/coreml_fuzz.cpp: the reader
// read past the op's lists, which ASan reports). Each is read and checked, or refused with a reason
// code; neither reads outside the op.
TEST(Mil, ASpecOpWithoutOutputsOrInputsIsABadModel) {
  auto program = [](MilOp op) {
    MilProgram p;
    p.version = "1.0";
    MilFunction f;
    f.name = "main";
    f.inputs.push_back(MilVar{"x", MilType{"fp16", true, {1, 4, 8, 8}, {"", "", "", ""}, false}});
    f.ops.push_back(std::move(op));
    f.outputs.push_back("x");
    p.functions.push_back(std::move(f));
    return p;
  };
  MilValue x;
  x.kind = MilValue::Kind::Name;
  x.text = "x";
  MilOp conv;
  conv.type = "conv";
  conv.inputs.push_back(MilNamed{"x", x});
  MilOp slice;
  slice.type = "slice_by_index";
  slice.outputs.push_back(MilVar{"y", MilType{"fp16", true, {1, 4, 8, 8}, {"", "", "", ""}, false}});
  for (const MilOp &op : {conv, slice}) {
    std::string code = "read and checked";
    try {
      Graph g = mil_to_graph(program(op), "spec.mlmodel", test::catalog(), {});
      check(g, test::catalog(), test::registry().get("h16"));
    } catch (const Error &e) {
      code = e.code();
    }
    EXPECT_TRUE(code == "read and checked" || code.rfind("ANEC-", 0) == 0) << op.type << ": " << code;
  }
}

// The reason code and "line:column" of the error `text` raises.
std::pair<std::string, std::string> error_of(const std::string &text) {
  try {
    read_mil(text, "bad.mil", test::catalog());
  } catch (const Error &e) {
    std::string m = e.what();
    size_t at = m.find("bad.mil:");
    std::string where = at == std::string::npos ? "" : m.substr(at + 8, m.find(": ", at + 8) - at - 8);
    return {e.code(), where};
  }
  return {"", ""};
}

TEST(Mil, MalformedTextIsRejectedAtLineAndColumn) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(error_of("program(1.3)\n{\n  func main<ios18>(tensor<fp16, [1]> x) {\n    $\n"),
            P("ANEC-MIL-001", "4:5"));
  EXPECT_EQ(
      error_of("program(1.3) {\n func main(tensor<fp16, [1]> x) {\n  tensor<fp16, [1]> y = relu(x = x)\n"
               " } -> (y);\n}"),
      P("ANEC-MIL-002", "4:2")); // the ';' missing after the call
  EXPECT_EQ(error_of("program(1.3) { func main() { string s = const()[val = string(\"open\n"),
            P("ANEC-MIL-001", "1:62"));
  EXPECT_EQ(
      error_of(
          "program(1.3) { func main() { int32 a = const()[val = int32(99999999999999999999)]; } -> (a); }"),
      P("ANEC-MIL-003", "1:60"));
  EXPECT_EQ(error_of("program(1.3) { func main() { fp16 a = const()[val = fp16(0x1q)]; } -> (a); }"),
            P("ANEC-MIL-003", "1:58"));
  EXPECT_EQ(error_of("program(1.3) { }"), P("ANEC-MIL-005", " the program has no function"));
  EXPECT_EQ(error_of("program(1.3) { func main(tensor<fp16, [1]> x) { tensor<fp16, [1]> y = relu(x = z)"
                     "[name = string(\"y\")]; } -> (y); }"),
            P("ANEC-MIL-006", "1:80"));
  EXPECT_EQ(error_of("program(1.3) { func main(tensor<fp16, [1]> x) { } -> (nothing); }"),
            P("ANEC-MIL-006", "1:16"));
  std::string deep = "program(1.3) { func main() { int32 a = const()[val = " + std::string(100, '[');
  EXPECT_EQ(error_of(deep).first, "ANEC-MIL-004");
  std::string wide = "program(1.3) { func main() { tensor<fp16, [" + std::string(200, '1') + "]> x";
  EXPECT_EQ(error_of(wide).first, "ANEC-MIL-003");
  try {
    read_mil("program(1.3)\n{ func main() { @", "bad.mil", test::catalog());
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("near '@'"), std::string::npos) << e.what();
  }
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("anec-mil-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path / "model" / "weights");
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string conv_program(const std::string &path, uint64_t offset) {
  return "program(1.3) { func main<ios18>(tensor<fp16, [1, 4, 1, 2]> x) {\n"
         "  tensor<fp16, [6, 4, 1, 1]> W = const()[name = string(\"W\"), val = tensor<fp16, [6, 4, 1, "
         "1]>(BLOBFILE("
         "path = string(\"" +
         path + "\"), offset = uint64(" + std::to_string(offset) +
         ")))];\n"
         "  tensor<fp16, [1, 6, 1, 2]> y = conv(weight = W, x = x)[name = string(\"y\")];\n} -> (y); }";
}

// A milblob weight file: the 64-byte header, then one record (sentinel, fp16, size, data offset) and
// its data.
void write_blob(const std::filesystem::path &p, uint32_t sentinel, uint64_t bytes) {
  std::string f(64, '\0');
  f[0] = 1;
  f[4] = 2;
  std::string rec(64, '\0');
  auto put = [&](size_t at, uint64_t v, int n) {
    for (int k = 0; k < n; ++k)
      rec[at + size_t(k)] = char((v >> (8 * k)) & 0xff);
  };
  put(0, sentinel, 4);
  put(4, 1, 4);
  put(8, bytes, 8);
  put(16, 128, 8);
  std::ofstream(p, std::ios::binary) << f << rec << std::string(bytes, '\x3c');
}

TEST(Mil, BlobfilePathsStayInsideTheModelFolder) {
  TempDir d;
  std::filesystem::path mil = d.path / "model" / "conv.mil";
  write_blob(d.path / "model" / "weights" / "weight.bin", 0xDEADBEEF, 48);
  std::ofstream(mil) << conv_program("@model_path/weights/weight.bin", 64);
  Graph g = load_model(mil, test::catalog());
  EXPECT_EQ(op_named(g, "y").attrs.find("weight_elements")->as_int(), 24);
  for (const std::string &n : g.notes)
    EXPECT_EQ(n.find("bytes absent"), std::string::npos) << n;

  auto code = [&](const std::string &path, uint64_t offset = 64) {
    std::ofstream(mil) << conv_program(path, offset);
    try {
      load_model(mil, test::catalog());
    } catch (const Error &e) {
      return e.code();
    }
    return std::string();
  };
  EXPECT_EQ(code("@model_path/../outside.bin"), "ANEC-MIL-007");
  EXPECT_EQ(code("/etc/passwd"), "ANEC-MIL-007");
  EXPECT_EQ(code("@model_path/weights/../../x.bin"), "ANEC-MIL-007");
  std::ofstream(d.path / "outside.bin") << std::string(256, '\0');
  std::filesystem::create_symlink(d.path / "outside.bin", d.path / "model" / "weights" / "link.bin");
  EXPECT_EQ(code("@model_path/weights/link.bin"), "ANEC-MIL-007");
  // A link out to nothing is refused as well: treated as an absent file, it told whether the file
  // outside exists (a link to one that does was refused).
  std::filesystem::create_symlink(d.path / "absent.bin", d.path / "model" / "weights" / "nowhere.bin");
  EXPECT_EQ(code("@model_path/weights/nowhere.bin"), "ANEC-MIL-007");
  std::filesystem::create_symlink("weight.bin", d.path / "model" / "weights" / "alias.bin");
  EXPECT_EQ(code("@model_path/weights/alias.bin"), "");                    // a link inside is followed
  EXPECT_EQ(code("@model_path/weights/weight.bin", 4096), "ANEC-MIL-008"); // past the end
  write_blob(d.path / "model" / "weights" / "weight.bin", 0x12345678, 48);
  EXPECT_EQ(code("@model_path/weights/weight.bin"), "ANEC-MIL-008"); // no sentinel
  write_blob(d.path / "model" / "weights" / "weight.bin", 0xDEADBEEF, 16);
  EXPECT_EQ(code("@model_path/weights/weight.bin"), "ANEC-MIL-008"); // smaller than the type
  EXPECT_EQ(code("@model_path/weights/missing.bin"), "");            // absent: the size comes from the type
}

} // namespace
} // namespace anec::compiler
