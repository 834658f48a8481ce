// The calibrated cost model: the shipped calibration is what `anec calibrate` makes of the training
// file, its error on the training rows and with each chip left out, the chip line-up, the error
// band, the attention decomposition, and the tables' errors. Measurements: ANEForge roofline runs
// (sbryngelson/ANEForge), CC BY 4.0 (../shared/data/ane-measured/train.tsv).
#include "anec/compiler/calibrate/fit.hpp"
#include "anec/compiler/cost/calibration.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"
#include "../run_tool.hpp"
#include "tables.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using namespace anec;
using namespace anec::compiler;
using anec::test::catalog;
using anec::test::code_of;
using anec::test::registry;

namespace {
const fs::path kTables = ANEC_TEST_TABLES_DIR;
const fs::path kTrain = fs::path(ANEC_TEST_SHARED_DIR) / "data" / "ane-measured" / "train.tsv";

bool is_target(std::string_view name) {
  return registry().find(name);
}

const std::vector<Chip> &chips() {
  static const std::vector<Chip> c = load_chips(kTables / "reference" / "chips.toml", is_target);
  return c;
}

const Calibration &shipped() {
  static const Calibration c = Calibration::load(kTables / "calibration" / "fitted.toml");
  return c;
}

struct Fitted {
  std::vector<Row> rows;
  std::vector<std::string> skipped;
  FitReport report;
};

// One fit of the training file, shared by the tests below (it takes a few seconds).
const Fitted &fitted() {
  static const Fitted f = [] {
    Fitted x;
    x.rows = measured_rows(read_measurements(read_text_file(kTrain), kTrain.string()), chips(), catalog(),
                           &x.skipped);
    x.report = calibrate(x.rows, ModelSpec::load(kTables / "calibration" / "model.toml"), chips(), registry(),
                         shipped().source);
    return x;
  }();
  return f;
}

// Every number of a parsed TOML document equal to the other's within a relative 1e-3 (the fit runs
// in floating point; another compiler may round its last digits differently), every other value equal.
void expect_same(const Doc &a, const Doc &b, const std::string &where) {
  bool numbers =
      (a.is(Doc::Kind::Float) || a.is(Doc::Kind::Int)) && (b.is(Doc::Kind::Float) || b.is(Doc::Kind::Int));
  if (numbers) {
    double x = a.is(Doc::Kind::Int) ? double(a.as_int()) : a.as_float(),
           y = b.is(Doc::Kind::Int) ? double(b.as_int()) : b.as_float();
    EXPECT_NEAR(x, y, 1e-3 * std::max(std::fabs(x), std::fabs(y)) + 1e-9) << where;
    return;
  }
  ASSERT_EQ(a.kind(), b.kind()) << where;
  if (a.is(Doc::Kind::String)) {
    EXPECT_EQ(a.as_string(), b.as_string()) << where;
  }
  if (a.is(Doc::Kind::Bool)) {
    EXPECT_EQ(a.as_bool(), b.as_bool()) << where;
  }
  if (a.is(Doc::Kind::Array)) {
    ASSERT_EQ(a.items().size(), b.items().size()) << where;
    for (size_t i = 0; i < a.items().size(); ++i)
      expect_same(a.items()[i], b.items()[i], where + "[" + std::to_string(i) + "]");
  }
  if (a.is(Doc::Kind::Table)) {
    ASSERT_EQ(a.members().size(), b.members().size()) << where;
    for (const DocMember &m : a.members()) {
      const Doc *o = b.find(m.key);
      ASSERT_NE(o, nullptr) << where << "." << m.key;
      expect_same(m.value, *o, where + "." + m.key);
    }
  }
}

double ratio_error(double predicted, double measured) {
  return std::max(predicted / measured, measured / predicted);
}
} // namespace

// The shipped table is what `anec calibrate` makes of the training file: regenerate and compare.
TEST(Calibration, ShippedTableIsTheFitOfTheTrainingFile) {
  if (!fs::exists(kTrain))
    GTEST_SKIP() << "no shared data";
  Doc made = toml::parse(fitted_toml(fitted().report, fitted().rows), "regenerated");
  Doc ship = toml::parse_file(kTables / "calibration" / "fitted.toml");
  expect_same(made, ship, "fitted.toml");
}

// Median, 90th percentile and worst relative error on the training rows and with each chip's rows
// left out (predicted from its target's other chips or the rule across chips). The goals of the fit
// are median <= 20%, p90 <= 50%, worst within 3x; leave-one-chip-out is reported and held to what it
// reaches now, so a change that makes prediction for unseen chips worse fails.
TEST(Calibration, ErrorOnTrainingRowsAndLeavingEachChipOut) {
  if (!fs::exists(kTrain))
    GTEST_SKIP() << "no shared data";
  const Fitted &f = fitted();
  ErrorTable by_chip = error_table(f.report, f.rows, "chip"),
             by_family = error_table(f.report, f.rows, "family");
  for (const auto &[k, s] : by_chip.fit)
    std::printf("chip %-8s rows %3zu fit median %5.1f%% p90 %5.1f%% worst %6.1f%% | loco median %5.1f%% p90 "
                "%5.1f%% worst %6.1f%%\n",
                k.c_str(), s.rows, 100 * s.median, 100 * s.p90, 100 * s.worst, 100 * by_chip.loco[k].median,
                100 * by_chip.loco[k].p90, 100 * by_chip.loco[k].worst);
  for (const auto &[k, s] : by_family.fit)
    std::printf("family %-11s rows %3zu fit median %5.1f%% p90 %5.1f%% worst %6.1f%% | loco median %5.1f%% "
                "p90 %5.1f%% worst %6.1f%%\n",
                k.c_str(), s.rows, 100 * s.median, 100 * s.p90, 100 * s.worst, 100 * by_family.loco[k].median,
                100 * by_family.loco[k].p90, 100 * by_family.loco[k].worst);
  const ErrorStats &all = by_chip.fit.at("all"), &loco = by_chip.loco.at("all");
  EXPECT_GE(all.rows, 230u);
  EXPECT_LE(all.median, 0.20);
  EXPECT_LE(all.p90, 0.50);
  double worst = 0;
  for (const RowResult &r : f.report.rows) {
    ASSERT_LT(r.row, f.rows.size());
    if (r.left_out.empty())
      worst = std::max(worst, ratio_error(r.predicted_ms, f.rows[r.row].m.lat_ms));
  }
  EXPECT_LE(worst, 3.0);
  EXPECT_EQ(loco.rows, all.rows);
  EXPECT_LE(loco.median, 0.35);
  EXPECT_LE(loco.p90, 0.85);
}

// The MacBookPro17,1 runs 2-10x slower than the MacBookAir10,1 with the same chip (the data's README):
// the robust fit leaves that machine out instead of following it.
TEST(Calibration, MachineThatDisagreesWithItsSiblingIsLeftOut) {
  if (!fs::exists(kTrain))
    GTEST_SKIP() << "no shared data";
  const std::vector<std::string> &out = fitted().report.outlier_machines;
  EXPECT_EQ(out, std::vector<std::string>{"M1 MacBookPro17,1"});
  // Its rows are reported, not fitted: the M1's rates follow the MacBookAir (gemm N=1024 in 0.99 ms).
  for (const RowResult &r : fitted().report.rows) {
    ASSERT_LT(r.row, fitted().rows.size());
    const Row &row = fitted().rows[r.row];
    if (row.machine == "M1 MacBookAir10,1" && row.m.op == "gemm") {
      EXPECT_LT(ratio_error(r.predicted_ms, row.m.lat_ms), 1.25);
    }
  }
  // Rows of chips the line-up does not know ("unrecorded") are skipped and counted.
  EXPECT_EQ(fitted().skipped.size(), 7u);
}

// A row whose program cannot be built, or whose chip is unknown, is skipped with its reason; the
// others are kept.
TEST(Calibration, RowsThatCannotBeUsedAreSkippedWithTheirReason) {
  std::string tsv = "chip\tmodel_id\top\tparams\tgflop\tlat_ms\tsource_file\n"
                    "Apple M4\tMac16,12\tgemm\tN=512\t0.268435456\t0.2086\tf.json\n"
                    "Apple M4\tMac16,12\twarp_drive\tN=512\tNA\t0.2\tf.json\n"
                    "Apple M9\tNA\tgemm\tN=512\tNA\t0.2\tf.json\n";
  std::vector<std::string> skipped;
  std::vector<Row> rows = measured_rows(read_measurements(tsv, "t.tsv"), chips(), catalog(), &skipped);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].chip, "M4");
  EXPECT_EQ(rows[0].chip_target, "h16");
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped[0].find("ANEC-CAL-002"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("line 4: chip 'Apple M9'"), std::string::npos) << skipped[1];
}

TEST(Calibration, ChipLineUp) {
  const Chip *m5 = find_chip(chips(), "Apple M5"), *m5p = find_chip(chips(), "M5 Pro");
  ASSERT_TRUE(m5 && m5p);
  EXPECT_EQ(m5->target, "h17");   // ch.34 resolver: T8142 -> H17
  EXPECT_EQ(m5p->target, "h17s"); // T605x -> H17s
  ASSERT_NE(find_chip(chips(), "Mac16,12"), nullptr);
  EXPECT_EQ(find_chip(chips(), "Mac16,12")->name, "M4");
  ASSERT_NE(find_chip(chips(), "apple m4 max"), nullptr);
  EXPECT_EQ(find_chip(chips(), "apple m4 max")->target, "h16g");
  ASSERT_NE(find_chip(chips(), "M6"), nullptr);
  EXPECT_EQ(find_chip(chips(), "M6")->target, "h18");
  EXPECT_EQ(find_chip(chips(), "M9 Ultra"), nullptr);
  // The target tables' aliases (anec-hal show) agree with the line-up wherever they name a chip.
  for (const Chip &c : chips()) {
    EXPECT_NE(registry().find(c.target), nullptr) << c.name;
    if (const hal::Target *t = registry().find(c.name)) {
      EXPECT_EQ(t->name, c.target) << c.name;
    }
  }
  fs::path file = fs::temp_directory_path() / "anec-chips-test.toml";
  auto load = [&](const std::string &body) {
    std::ofstream(file) << "format = \"anec-chips/1\"\n" << body;
    std::string message;
    return code_of([&] { load_chips(file, is_target); }, &message) + " " + message;
  };
  std::string chip = "[[chip]]\nname = \"X1\"\nsoc = \"\"\nmodel_ids = [\"Mac99,1\"]\nsource = \"s\"\n";
  EXPECT_EQ(load(chip + "target = \"h13\"\n"), "none ");
  EXPECT_EQ(load(chip + "target = \"h99\"\n").substr(0, 12), "ANEC-CAL-003");
  EXPECT_NE(load(chip + "target = \"h13\"\n" + chip + "target = \"h14\"\n").find("names two chips"),
            std::string::npos);
  fs::remove(file);
}

namespace {
Graph conv_graph() {
  Doc d = toml::parse(R"(
format = "anec-graph"
version = 1
inputs = [{ name = "x", shape = [1, 1, 256, 28, 28] }]
outputs = ["y"]
[[ops]]
name = "c"
op = "conv"
inputs = ["x"]
outputs = ["y"]
attrs = { out_channels = 256, kernel = [3, 3], pad = [1, 1, 1, 1] }
)",
                      "conv");
  Graph g = read_graph_json(json::write(d), "conv");
  infer_shapes(g, catalog());
  return g;
}
} // namespace

// The calibrated estimate: measured targets and chips with tight bands, predicted ones with the
// leave-one-chip-out band; the band holds the estimate; each rate carries its provenance.
TEST(Calibration, EstimateBandsFollowProvenance) {
  Graph g = conv_graph();
  Estimate m4 = estimate(g, catalog(), registry().get("h16"), shipped());
  Estimate m2 = estimate(g, catalog(), registry().get("h14"), shipped());
  Estimate m4max = estimate(g, catalog(), registry().get("h16g"), shipped(), "M4 Max");
  Estimate m4pro = estimate(g, catalog(), registry().get("h16g"), shipped(), "M4 Pro");
  for (const Estimate *e : {&m4, &m2, &m4max}) {
    EXPECT_EQ(e->model, "calibrated");
    EXPECT_LE(e->latency_low_us, e->latency_us);
    EXPECT_GE(e->latency_high_us, e->latency_us);
    ASSERT_EQ(e->rates.size(), 5u);
  }
  EXPECT_EQ(m4.rates[0].second.provenance, "measured-fit");
  EXPECT_EQ(m2.rates[0].second.provenance, "predicted-by-rule");
  EXPECT_EQ(m4max.rates[0].second.provenance, "measured-fit on M4 Max");
  EXPECT_EQ(m4max.chip, "M4 Max");
  EXPECT_NE(m4max.latency_us, m4pro.latency_us); // two chips of one target, each its own fit
  EXPECT_GT(m2.latency_high_us / m2.latency_low_us, m4.latency_high_us / m4.latency_low_us);
  // The analytic form keeps the guide's parameters.
  Estimate analytic = estimate(g, catalog(), registry().get("h13"));
  EXPECT_EQ(analytic.model, "analytic");
  EXPECT_TRUE(analytic.rates.empty());
}

// A target whose table lacks the calibrated rates is an error that says what to run.
TEST(Calibration, TargetWithoutRatesIsAnError) {
  hal::Target t = registry().get("h13");
  t.values.erase("matmul_tflops");
  EXPECT_EQ(code_of([&] { estimate(conv_graph(), catalog(), t, shipped()); }), "ANEC-CAL-005");
}

// The estimates on several targets at once, whose ops' terms are worked out once for all of them,
// agree with each target's own.
TEST(Calibration, EstimatesOnSeveralTargetsAgreeWithEachAlone) {
  Graph g = conv_graph();
  std::vector<const hal::Target *> targets{&registry().get("h13"), &registry().get("h16"),
                                           &registry().get("h17s")};
  std::vector<Estimate> together = estimate(g, catalog(), targets, &shipped());
  ASSERT_EQ(together.size(), targets.size());
  for (size_t k = 0; k < targets.size(); ++k) {
    Estimate alone = estimate(g, catalog(), *targets[k], shipped());
    EXPECT_EQ(together[k].target, alone.target);
    EXPECT_EQ(together[k].latency_us, alone.latency_us) << alone.target;
    EXPECT_EQ(together[k].latency_high_us, alone.latency_high_us) << alone.target;
  }
}

// Attention is costed as its decomposition: the score matmul, a softmax over the score matrix, the
// value matmul, with the op's FLOPs split between them.
TEST(Calibration, AttentionIsCostedAsItsDecomposition) {
  Doc d = toml::parse(R"(
format = "anec-graph"
version = 1
inputs = [{ name = "q", shape = [1, 1, 12, 512, 64] },
          { name = "k", shape = [1, 1, 12, 512, 64] },
          { name = "v", shape = [1, 1, 12, 512, 64] }]
ops = [{ name = "a", op = "sdpa", inputs = ["q", "k", "v"], outputs = ["y"] }]
outputs = ["y"]
)",
                      "attention");
  Graph g = read_graph_json(json::write(d), "attention");
  infer_shapes(g, catalog());
  std::vector<OpTerms> terms = op_terms(g, catalog());
  ASSERT_EQ(terms.size(), 1u);
  ASSERT_EQ(terms[0].parts.size(), 3u);
  EXPECT_EQ(terms[0].parts[0].family, "matmul");
  EXPECT_EQ(terms[0].parts[1].family, "softmax");
  EXPECT_EQ(terms[0].parts[2].family, "matmul");
  double flops = 0;
  for (const OpTerms &p : terms[0].parts)
    flops += p.flops;
  EXPECT_NEAR(flops, terms[0].flops, 1e-6 * flops);
  EXPECT_DOUBLE_EQ(terms[0].parts[1].chip_bytes, 2.0 * 12 * 512 * 512 * 2); // the score matrix in and out
  Estimate e = estimate(g, catalog(), registry().get("h17s"), shipped());
  EXPECT_EQ(e.kind, "decomposed");
}

TEST(Calibration, MalformedTablesAreErrors) {
  fs::path file = fs::temp_directory_path() / "anec-calibration-test.toml";
  auto code = [&](const std::string &text, const std::function<void(const fs::path &)> &load) {
    std::ofstream(file) << text;
    return code_of([&] { load(file); });
  };
  auto spec_load = [](const fs::path &p) { ModelSpec::load(p); };
  auto cal_load = [](const fs::path &p) { Calibration::load(p); };
  auto edited = [](std::string text, const std::string &from, const std::string &to) {
    return text.replace(text.find(from), from.size(), to);
  };
  std::string spec = read_text_file(kTables / "calibration" / "model.toml");
  EXPECT_EQ(code(spec, spec_load), "none");
  EXPECT_EQ(code(edited(spec, "parameter = \"call_floor_ms\"", "parameter = \"peak_tflops\""), spec_load),
            "ANEC-CAL-003");
  EXPECT_EQ(code(edited(spec, "huber_delta = 0.2", "huber_delta = -1"), spec_load), "ANEC-CAL-003");
  std::string fitted = read_text_file(kTables / "calibration" / "fitted.toml");
  EXPECT_EQ(code(fitted, cal_load), "none");
  EXPECT_EQ(code(edited(fitted, "anec-calibration/1", "anec-calibration/9"), cal_load), "ANEC-CAL-003");
  EXPECT_EQ(code(edited(fitted, "compute = ", "compute = -"), cal_load), "ANEC-CAL-003");
  EXPECT_EQ(code(edited(fitted, "on_chip_gain", "on_chip_gains"), cal_load), "ANEC-CAL-003");
  fs::remove(file);
  EXPECT_EQ(code_of([] {
              calibrate({}, ModelSpec::load(kTables / "calibration" / "model.toml"), chips(), registry(),
                        "none");
            }),
            "ANEC-CAL-004");
}

namespace {
int cli(const std::string &args, std::string *out) {
  anec::test::ToolRun r = anec::test::run_tool(ANEC_TEST_ANEC_TOOL, ANEC_TEST_TABLES_DIR, args);
  *out = r.out + r.err;
  return r.status;
}
} // namespace

TEST(Calibration, Cli) {
  if (!fs::exists(kTrain))
    GTEST_SKIP() << "no shared data";
  std::string out;
  ASSERT_EQ(cli("calibrate " + kTrain.string() + " --check", &out), 0) << out;
  EXPECT_NE(out.find("relative error by chip"), std::string::npos) << out;
  EXPECT_NE(out.find("M4 Max"), std::string::npos) << out;
  EXPECT_EQ(cli("calibrate " + kTrain.string() + " --check --out /tmp/x.toml", &out), 2) << out;
  EXPECT_EQ(cli("calibrate /nonexistent.tsv", &out), 2) << out;
  // The guide's analytic form on the same rows, for comparison: far off (about 50% median).
  ASSERT_EQ(cli("calibrate " + kTrain.string() + " --check --model analytic --format json", &out), 0) << out;
  Doc analytic = json::parse(out, "check.json");
  const Doc *all = nullptr;
  ASSERT_NE(analytic.find("by_chip"), nullptr) << out;
  for (const Doc &r : analytic.find("by_chip")->items()) {
    ASSERT_NE(r.find("chip"), nullptr) << out;
    if (r.find("chip")->as_string() == "all")
      all = &r;
  }
  ASSERT_NE(all, nullptr);
  ASSERT_NE(all->find("median"), nullptr) << out;
  EXPECT_GT(std::stod(all->find("median")->as_string()), 30.0);
  EXPECT_EQ(cli("calibrate " + kTrain.string() + " --model analytic", &out), 2) << out;
  fs::path g = fs::temp_directory_path() / "anec-cal-cli.json";
  std::ofstream(g)
      << R"({"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 1, 64, 32, 32]}],
    "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})";
  ASSERT_EQ(cli("estimate " + g.string() + " --target \"M4 Pro\" --format json", &out), 0) << out;
  Doc d = json::parse(out, "estimate.json");
  for (const char *key : {"chip", "target", "latency_low_us", "latency_us", "latency_high_us"})
    ASSERT_NE(d.find(key), nullptr) << key << " in " << out;
  EXPECT_EQ(d.find("chip")->as_string(), "M4 Pro");
  EXPECT_EQ(d.find("target")->as_string(), "h16g");
  EXPECT_LE(d.find("latency_low_us")->as_float(), d.find("latency_us")->as_float());
  EXPECT_GE(d.find("latency_high_us")->as_float(), d.find("latency_us")->as_float());
  ASSERT_EQ(cli("estimate " + g.string() + " --target h13 --model analytic --format json", &out), 0) << out;
  Doc e = json::parse(out, "e.json");
  ASSERT_NE(e.find("parameters"), nullptr) << out;
  EXPECT_NE(e.find("parameters")->find("peak_tflops"), nullptr);
  EXPECT_EQ(cli("estimate " + g.string() + " --target h13 --model guess", &out), 2) << out;
  fs::remove(g);
}
