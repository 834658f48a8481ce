#include "report_html.hpp"

#include "anec/compiler/pipeline/documents.hpp"
#include "html.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <numbers>
#include <string_view>
#include <unordered_map>

namespace anec::tools {

namespace {

using namespace compiler;
using html::attr;
using html::element;
using html::escape;
using html::number;

// An operation's time in the estimate: its standalone roofline, the larger of its two terms.
double op_us(const OpCost &c) {
  return std::max(c.compute_us, c.memory_us);
}

std::string target_anchor(const std::string &name) {
  return "t-" + name;
}
std::string code_anchor(const std::string &code) {
  return "code-" + code;
}

std::string us_text(double us) {
  return number(us) + " µs";
}

// Names as a list, the first dozen of a long one.
std::string join_names(const std::vector<std::string> &names, size_t most = 12) {
  std::string out;
  for (size_t k = 0; k < names.size() && k < most; ++k)
    out += (k ? ", " : "") + names[k];
  if (names.size() > most)
    out += " … and " + std::to_string(names.size() - most) + " more";
  return out;
}

// --- the heat map: one cell per target, coloured by its latency over the fastest's -------------

double fastest_us(const std::vector<Estimate> &es) {
  double best = 0;
  for (const Estimate &e : es)
    if (e.complete() && e.latency_us > 0 && (best == 0 || e.latency_us < best))
      best = e.latency_us;
  return best;
}

// Green for the fastest through yellow to red for the slowest, on a log scale of the ratio.
std::string heat_colour(double ratio, double worst) {
  double t = worst > 1 ? std::log(ratio) / std::log(worst) : 0;
  long hue = std::lround(120 * (1 - std::clamp(t, 0.0, 1.0)));
  return "hsl(" + std::to_string(hue) + ",70%,80%)";
}

// Where an estimate's rates come from: every one fitted to the target's own measurements, some, or
// none (the others predicted from other targets or from the tables; ch.18, docs/calibration.md).
std::string rates_source(const Estimate &e) {
  std::vector<const Param *> rates;
  for (const auto &[name, p] : e.rates) // the calibrated model's
    rates.push_back(&p);
  if (rates.empty()) // the analytic model's
    rates = {&e.peak_tflops, &e.bandwidth_gbps, &e.floor_ms};
  size_t predicted = std::count_if(rates.begin(), rates.end(), [](const Param *p) {
    return p->provenance.find("predicted") != std::string::npos;
  });
  return predicted == 0 ? "measured" : predicted == rates.size() ? "predicted" : "partly predicted";
}

// The cell's note: the calibrated model's band and where its rates come from.
std::string estimate_note(const Estimate &e) {
  std::string band = e.model == "calibrated" && e.latency_high_us > 0
                         ? number(e.latency_low_us) + "–" + number(e.latency_high_us) + " µs, "
                         : "";
  return band + rates_source(e) + " rates";
}

std::string heat_cell(const CheckResult &c, const Estimate &e, double best, double worst) {
  bool known = e.complete() && e.latency_us > 0 && best > 0;
  double ratio = known ? e.latency_us / best : 0;
  bool rejected = c.verdict == Verdict::Reject;
  std::string counts;
  for (auto [severity, what] : {std::pair{Severity::Reject, " rejected"},
                                {Severity::Decompose, " decomposed"},
                                {Severity::Warning, " warning(s)"}})
    if (size_t n = c.count(severity))
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + what;
  if (counts.empty())
    counts = "no findings";
  std::string body =
      element("span", attr("class", "name"), escape(c.target)) +
      element("span", attr("class", "verdict"), rejected ? "✕ reject" : verdict_name(c.verdict)) +
      element("span", attr("class", "lat"), known ? us_text(e.latency_us) : "unknown") +
      element("span", attr("class", "ratio"), known ? "×" + number(ratio) : "") +
      element("span", attr("class", "band"), known ? estimate_note(e) : "") +
      element("span", attr("class", "counts"), counts);
  std::string attrs =
      attr("class", rejected ? "heat-cell rejected" : "heat-cell") +
      attr("href", "#" + target_anchor(c.target)) + attr("data-target", c.target) +
      attr("data-verdict", verdict_name(c.verdict)) +
      attr("data-latency-us", known ? number(e.latency_us, 6) : "") + attr("data-rates", rates_source(e)) +
      attr("style", known ? "background:" + heat_colour(ratio, worst) : "background:#ddd") +
      attr("title", c.target + ": " + verdict_name(c.verdict) + ", " +
                        (known ? us_text(e.latency_us) + ", " + e.bound + "-bound" : "unknown"));
  return element("a", attrs, body);
}

std::string heat_map(const ReportInput &in) {
  double best = fastest_us(in.estimates), worst = 1;
  for (const Estimate &e : in.estimates)
    if (e.complete() && e.latency_us > 0 && best > 0)
      worst = std::max(worst, e.latency_us / best);
  std::string cells;
  for (size_t i = 0; i < in.targets.size(); ++i)
    cells += heat_cell(in.checks[i], in.estimates[i], best, worst);
  auto swatch = [&](double ratio) {
    return element("span", attr("class", "swatch") + attr("style", "background:" + heat_colour(ratio, worst)),
                   "");
  };
  std::string legend;
  if (best > 0) // the scale only where there are latencies to compare
    legend = swatch(1) + " fastest (" + us_text(best) + ") " +
             (worst > 1 ? swatch(worst) + " ×" + number(worst) + " the fastest's latency " : "");
  else
    legend = "no latency is known (unbound dimensions); ";
  legend += element("span", attr("class", "swatch rejected-swatch"), "") + " rejected on the target. " +
            "Under each latency: the calibrated model's error band, and whether the target's rates were " +
            "fitted to its own measurements or predicted from other targets' (docs/calibration.md).";
  return element("section", attr("id", "matrix"),
                 "<h2>Target matrix</h2>" + element("div", attr("class", "heat-map"), cells) +
                     element("p", attr("class", "legend"), legend));
}

// --- the roofline of one target --------------------------------------------------------------

// The roofs: the estimate's own rates (the calibrated model's compute rate and two bandwidths, or
// the analytic model's peak and bandwidth, ch.18 table 18.1), each in FLOP/s or byte/s.
struct Ceiling {
  std::string name, label, provenance;
  bool compute = false;
  double value = 0;
};
struct CeilingSpec {
  std::string_view field, label; // the table field, and its short name on the chart
  bool compute;
  double scale;
};
constexpr CeilingSpec kCeilings[] = {{"peak_tflops", "peak", true, 1e12},
                                     {"bandwidth_gbps", "DRAM", false, 1e9},
                                     {"matmul_tflops", "matmul", true, 1e12},
                                     {"weight_bandwidth_gbps", "weights", false, 1e9},
                                     {"activation_bandwidth_gbps", "activations", false, 1e9}};

std::vector<Ceiling> ceilings(const Estimate &e) {
  std::vector<std::pair<std::string, Param>> params = e.rates;
  if (e.model != "calibrated")
    params = {{"peak_tflops", e.peak_tflops}, {"bandwidth_gbps", e.bandwidth_gbps}};
  std::vector<Ceiling> out;
  for (const auto &[name, p] : params)
    for (const CeilingSpec &s : kCeilings)
      if (s.field == name && p.value > 0)
        out.push_back({name, std::string(s.label), p.provenance, s.compute, p.value * s.scale});
  return out;
}

struct Point {
  const OpCost *op;
  std::string backend;
  double intensity, throughput; // FLOP/byte, FLOP/s
};

// A chart draws at most this many points (the most expensive operations) and a table or list at
// most this many rows; each says how many it leaves out, so that a model of ten thousand operations
// still gives a page a browser opens (anec estimate|place --format json lists them all).
constexpr size_t kMostPoints = 400, kMostRows = 200;

// The note under a list cut at `most` of its `total` items ("" when nothing was cut).
std::string left_out(size_t total, size_t most, const std::string &what,
                     const std::string &lists_all = "anec estimate or place") {
  return total <= most ? ""
                       : element("p", attr("class", "note left-out"),
                                 "… and " + std::to_string(total - most) + " more " + what +
                                     " (--format json of " + lists_all + " lists them all)");
}

// The `most` most expensive of `ps` (the first in order among equals), in their order.
std::vector<Point> most_expensive(const std::vector<Point> &ps, size_t most) {
  std::vector<size_t> order(ps.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return op_us(*ps[a].op) > op_us(*ps[b].op); });
  order.resize(std::min(most, order.size()));
  std::sort(order.begin(), order.end());
  std::vector<Point> out;
  for (size_t i : order)
    out.push_back(ps[i]);
  return out;
}

std::vector<Point> points(const Estimate &e, const Placement &p, std::vector<std::string> *unplotted) {
  std::unordered_map<std::string_view, std::string_view> backend;
  for (const PlacedOp &o : p.ops)
    backend[o.op] = o.backend;
  std::vector<Point> out;
  for (const OpCost &c : e.ops) {
    if (!c.estimated || c.flops <= 0 || c.bytes <= 0 || op_us(c) <= 0) {
      unplotted->push_back(c.op);
      continue;
    }
    auto b = backend.find(c.op);
    out.push_back({&c, b == backend.end() ? "engine" : std::string(b->second), c.flops / c.bytes,
                   c.flops / (op_us(c) * 1e-6)});
  }
  return out;
}

// A log-scale axis over whole decades, mapped onto pixels [px0, px1].
struct Axis {
  double lo = 0, hi = 1, px0 = 0, px1 = 1; // log10 of the ends
  double at(double log_v) const { return px0 + (log_v - lo) / (hi - lo) * (px1 - px0); }
};

Axis axis_over(const std::vector<double> &values, double px0, double px1) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) {
      lo = std::min(lo, std::log10(v));
      hi = std::max(hi, std::log10(v));
    }
  if (!std::isfinite(lo))
    lo = 0, hi = 1;
  Axis a{std::floor(lo), std::ceil(hi), px0, px1};
  if (a.hi - a.lo < 2) // at least two decades, so the roof's corner has room
    a.lo -= 1, a.hi += 1;
  return a;
}

// 10^k as text: 0.01, 0.1, 1, 10, 100, 1k, 10k, ... 1T.
std::string decade_label(int k) {
  static const char *const kPrefix[] = {"", "k", "M", "G", "T", "P", "E"};
  if (k < 0)
    return k >= -3 ? "0." + std::string(size_t(-k - 1), '0') + "1" : "1e" + std::to_string(k);
  if (k / 3 >= 7)
    return "1e" + std::to_string(k);
  return std::string("1") + std::string(size_t(k % 3), '0') + kPrefix[k / 3];
}

constexpr double kW = 380, kH = 260, kLeft = 48, kRight = 12, kTop = 12, kBottom = 36;

std::string line(double x1, double y1, double x2, double y2, const std::string &cls) {
  return "<line class=\"" + cls + "\" x1=\"" + number(x1, 4) + "\" y1=\"" + number(y1, 4) + "\" x2=\"" +
         number(x2, 4) + "\" y2=\"" + number(y2, 4) + "\"/>";
}

std::string grid(const Axis &x, const Axis &y) {
  std::string out;
  for (int k = int(x.lo); k <= int(x.hi); ++k) {
    std::string px = number(x.at(k), 4);
    out += line(x.at(k), kTop, x.at(k), kH - kBottom, "grid");
    out += "<text class=\"tick\" x=\"" + px + "\" y=\"" + number(kH - kBottom + 14) +
           "\" text-anchor=\"middle\">" + decade_label(k) + "</text>";
  }
  for (int k = int(y.lo); k <= int(y.hi); ++k) {
    std::string py = number(y.at(k), 4);
    out += line(kLeft, y.at(k), kW - kRight, y.at(k), "grid");
    out += "<text class=\"tick\" x=\"" + number(kLeft - 4) + "\" y=\"" + py +
           "\" text-anchor=\"end\" dominant-baseline=\"middle\">" + decade_label(k) + "</text>";
  }
  out += "<text class=\"axis-label\" x=\"" + number((kLeft + kW - kRight) / 2) + "\" y=\"" + number(kH - 4) +
         "\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>";
  out += "<text class=\"axis-label\" transform=\"translate(11 " + number((kTop + kH - kBottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">throughput (FLOP/s)</text>";
  return out;
}

std::string ceiling_value(const Ceiling &c) {
  return c.compute ? number(c.value / 1e12) + " TFLOP/s" : number(c.value / 1e9) + " GB/s";
}

// Each roof is a straight line in log space: a compute roof is flat, a bandwidth roof has slope 1.
// The highest of each kind makes the roof (solid); the others are drawn dashed up to it.
std::string roofs(const std::vector<Ceiling> &cs, const Axis &x, const Axis &y) {
  double top = 0, fastest_bw = 0;
  for (const Ceiling &c : cs) {
    double &most = c.compute ? top : fastest_bw;
    most = std::max(most, c.value);
  }
  std::string out;
  for (const Ceiling &c : cs) {
    double lv = std::log10(c.value);
    bool main = c.value == (c.compute ? top : fastest_bw);
    std::string cls = main ? "roof" : "roof minor";
    double x0, x1, y0, y1;
    if (c.compute) {
      x0 = fastest_bw > 0 ? std::max(x.lo, lv - std::log10(fastest_bw)) : x.lo;
      x1 = x.hi;
      y0 = y1 = lv;
    } else {
      x0 = std::max(x.lo, y.lo - lv);
      x1 = std::min(x.hi, (top > 0 ? std::log10(top) : y.hi) - lv);
      y0 = x0 + lv;
      y1 = x1 + lv;
    }
    if (x1 <= x0 || y0 < y.lo - 1e-9 || y1 > y.hi + 1e-9)
      continue;
    out += "<g class=\"ceiling\"" + attr("data-field", c.name) + "><title>" +
           escape(c.name + " = " + ceiling_value(c) + " (" + c.provenance + ")") + "</title>" +
           line(x.at(x0), y.at(y0), x.at(x1), y.at(y1), cls);
    // The label runs along its line, just above it: a compute roof's at its right end, a bandwidth
    // roof's at its left end.
    double angle = std::atan2(y.at(y1) - y.at(y0), x.at(x1) - x.at(x0)) * 180 / std::numbers::pi;
    double lx = c.compute ? x.at(x1) : x.at(x0), ly = c.compute ? y.at(y1) : y.at(y0);
    out += "<text class=\"roof-label\" text-anchor=\"" + std::string(c.compute ? "end" : "start") +
           "\" transform=\"translate(" + number(lx, 4) + " " + number(ly, 4) + ") rotate(" +
           number(angle, 3) + ") translate(" + (c.compute ? "-4" : "8") + " -4)\">" +
           escape(c.label + " " + ceiling_value(c)) + "</text></g>";
  }
  return out;
}

std::string point_svg(const Point &p, const Axis &x, const Axis &y) {
  const OpCost &c = *p.op;
  std::string title = c.op + " (" + c.type + ", on the " + p.backend + "): " + number(p.intensity) +
                      " FLOP/byte, " + number(p.throughput / 1e9) + " GFLOP/s, " + us_text(op_us(c)) + ", " +
                      c.bound + "-bound";
  return "<circle" + attr("class", "op-point backend-" + p.backend) + attr("data-op", c.op) +
         attr("data-x", number(p.intensity, 6)) + attr("data-y", number(p.throughput, 6)) +
         attr("cx", number(x.at(std::log10(p.intensity)), 4)) +
         attr("cy", number(y.at(std::log10(p.throughput)), 4)) + " r=\"4\"><title>" + escape(title) +
         "</title></circle>";
}

std::string roofline(const Estimate &e, const Placement &p) {
  std::vector<std::string> unplotted;
  std::vector<Point> all = points(e, p, &unplotted);
  std::vector<Point> ps = most_expensive(all, kMostPoints);
  std::vector<Ceiling> cs = ceilings(e);
  std::vector<double> xs, ys;
  for (const Point &pt : ps)
    xs.push_back(pt.intensity), ys.push_back(pt.throughput);
  for (const Ceiling &c : cs)
    for (const Ceiling &d : cs)
      if (c.compute && !d.compute)
        xs.push_back(c.value / d.value), ys.push_back(c.value); // the ridge points
  Axis x = axis_over(xs, kLeft, kW - kRight), y = axis_over(ys, kH - kBottom, kTop);
  std::string svg = "<svg" + attr("class", "roofline") + attr("data-target", e.target) +
                    attr("data-points", std::to_string(ps.size())) + " viewBox=\"0 0 " + number(kW) + " " +
                    number(kH) + "\" width=\"" + number(kW) + "\" height=\"" + number(kH) +
                    "\" role=\"img\">" + grid(x, y) + roofs(cs, x, y);
  for (const Point &pt : ps)
    svg += point_svg(pt, x, y);
  svg += "</svg>";
  std::string caption =
      element("a", attr("href", "#" + target_anchor(e.target)), escape(e.target)) + " " +
      (e.complete() ? us_text(e.latency_us) + ", " + escape(e.bound) + "-bound" : "unknown");
  std::string note =
      unplotted.empty()
          ? ""
          : element("p", attr("class", "note"),
                    "not plotted (no FLOPs, bytes or estimate): " + escape(join_names(unplotted, 6)));
  return element("figure", attr("class", "roofline-card") + attr("id", "roof-" + e.target),
                 element("figcaption", "", caption) + svg + note +
                     left_out(all.size(), kMostPoints, "cheaper operation(s), not plotted"));
}

std::string rooflines(const ReportInput &in) {
  std::string cards;
  for (size_t i = 0; i < in.targets.size(); ++i)
    cards += roofline(in.estimates[i], in.placements[i]);
  std::string legend =
      "Each point is one operation, alone: its FLOPs over the bytes it moves, and its FLOPs over "
      "its estimated time. Lines are the estimate's rates (solid: the roof). Colour: where "
      "it runs — " +
      element("span", attr("class", "dot backend-engine"), "") + " engine " +
      element("span", attr("class", "dot backend-gpu"), "") + " GPU " +
      element("span", attr("class", "dot backend-cpu"), "") + " CPU." +
      (in.estimates.front().model == "calibrated"
           ? " Under the calibrated model an intermediate that stays on chip moves at the on-chip "
             "rate and each operation family has its own fitted factors, so a point may sit "
             "above the drawn rates; --model analytic puts every point on the guide's single "
             "roof (ch.18)."
           : "");
  return element("section", attr("id", "rooflines"),
                 "<h2>Rooflines</h2>" + element("p", attr("class", "legend"), legend) +
                     element("div", attr("class", "roofline-grid"), cards));
}

// --- per target: the most expensive operations and the placement ----------------------------

std::string row(const std::vector<std::string> &cells, std::string_view attrs = "", bool head = false) {
  std::string out;
  for (const std::string &c : cells)
    out += element(head ? "th" : "td", "", c);
  return element("tr", attrs, out);
}

std::string top_costs(const Estimate &e, size_t top) {
  std::vector<const OpCost *> ops;
  for (const OpCost &c : e.ops)
    if (c.estimated)
      ops.push_back(&c);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpCost *a, const OpCost *b) { return op_us(*a) > op_us(*b); });
  if (ops.size() > top)
    ops.resize(top);
  double first = ops.empty() ? 0 : op_us(*ops.front());
  std::string rows = row({"#", "operation", "type", "time", "share", "MFLOP", "MB", "bound"}, "", true);
  for (size_t k = 0; k < ops.size(); ++k) {
    const OpCost &c = *ops[k];
    double share = e.complete() && e.latency_us > 0 ? op_us(c) / e.latency_us : 0;
    std::string bar = element(
        "span",
        attr("class", "bar") + attr("style", "width:" + number(first > 0 ? 60 * op_us(c) / first : 0) + "px"),
        "");
    rows += row({std::to_string(k + 1), escape(c.op), escape(c.type), bar + us_text(op_us(c)),
                 number(100 * share) + "%", number(c.flops / 1e6), number(c.bytes / 1e6), escape(c.bound)},
                attr("class", "cost-row") + attr("data-op", c.op));
  }
  return "<h3>Top costs</h3>" + element("table", attr("class", "costs"), rows) +
         element("p", attr("class", "note"),
                 "Each operation's time alone (the larger of its compute and memory terms, " +
                     escape(e.model) + " model); the share is of the program's " +
                     (e.complete() ? us_text(e.latency_us) : std::string("unknown latency")) + ".");
}

std::string partition_rows(const Placement &p) {
  std::string rows = row({"#", "runs on", "operations", "MFLOP", "time"}, "", true);
  for (size_t k = 0; k < p.partitions.size() && k < kMostRows; ++k) {
    const Partition &part = p.partitions[k];
    std::vector<std::string> names;
    for (size_t i = part.first; i < part.first + part.count; ++i)
      names.push_back(p.ops[i].op);
    rows += row({std::to_string(k + 1), escape(part.backend),
                 std::to_string(part.count) + ": " + escape(join_names(names, 8)), number(part.flops / 1e6),
                 p.complete ? us_text(part.latency_us) : "unknown"},
                attr("class", "partition backend-" + part.backend));
  }
  return element("table", attr("class", "partitions"), rows) +
         left_out(p.partitions.size(), kMostRows, "partition(s)");
}

std::string fallbacks(const Placement &p) {
  std::string items;
  size_t off = 0;
  for (const PlacedOp &o : p.ops) {
    if (o.backend == "engine" || ++off > kMostRows)
      continue;
    std::string why;
    for (const Finding *f : o.reasons)
      why += element("li", "",
                     element("a", attr("href", "#" + code_anchor(f->code)), escape(f->code)) + " " +
                         escape(f->message) + (f->fix.empty() ? "" : "; would come back: " + escape(f->fix)));
    if (why.empty())
      why = element("li", "", "no engine path (a host operation, control flow or an unmapped operator)");
    items += element("li", attr("class", "fallback") + attr("data-op", o.op),
                     element("b", "", escape(o.op)) + " (" + escape(o.type) + ") → " + escape(o.backend) +
                         element("ul", "", why));
  }
  if (items.empty())
    return element("p", attr("class", "note"), "Every operation runs on the engine.");
  return element("ul", attr("class", "fallbacks"), items) +
         left_out(off, kMostRows, "operation(s) off the engine");
}

std::string boundaries(const Graph &g, const Placement &p) {
  if (p.boundaries.empty())
    return "";
  std::string rows = row({"tensor", "shape", "from → to", "kB", "transfer"}, "", true);
  for (size_t k = 0; k < p.boundaries.size() && k < kMostRows; ++k) {
    const Boundary &b = p.boundaries[k];
    rows += row({escape(b.tensor), escape(g.tensor(b.tensor)->shape.str()), escape(b.from + " → " + b.to),
                 number(b.bytes / 1e3), us_text(b.transfer_us)});
  }
  return "<h4>Boundaries</h4>" + element("table", attr("class", "boundaries"), rows) +
         left_out(p.boundaries.size(), kMostRows, "boundary tensor(s)");
}

std::string placement(const Graph &g, const Placement &p) {
  std::string share = p.flops > 0 ? number(100 * p.engine_flops / p.flops) + "%" : "-";
  std::string summary = printed_text([&](Printer &printer) { print_place_summary(printer, p, share); }) +
                        "; placed: " + (p.complete ? us_text(p.latency_us) : std::string("unknown")) + ".";
  return "<h3>Placement</h3>" + element("p", "", summary) + partition_rows(p) +
         "<h4>Off the engine, and why</h4>" + fallbacks(p) + boundaries(g, p);
}

std::string target_details(const ReportInput &in, size_t i) {
  const CheckResult &c = in.checks[i];
  const Estimate &e = in.estimates[i];
  std::string head = element("span", attr("class", "name"), escape(c.target)) + " " +
                     escape(in.targets[i]->text("family")) + " · " + verdict_name(c.verdict) + " · " +
                     (e.complete() ? us_text(e.latency_us) + " (" + escape(e.bound) + "-bound)" : "unknown") +
                     (e.chip.empty() ? "" : " · " + escape(e.chip));
  std::string body = element("div", attr("class", "cols"),
                             element("div", "", top_costs(e, in.top)) +
                                 element("div", "", placement(in.graph, in.placements[i])));
  return element("details",
                 attr("class", "target") + attr("id", target_anchor(c.target)) + (i == 0 ? " open" : ""),
                 element("summary", "", head) + body);
}

std::string targets_section(const ReportInput &in) {
  std::string out;
  for (size_t i = 0; i < in.targets.size(); ++i)
    out += target_details(in, i);
  return element("section", attr("id", "targets"), "<h2>Per target: top costs and placement</h2>" + out);
}

// --- the findings, grouped over the targets that share them, and their catalogue entries -------

struct FindingGroup {
  const Finding *first;
  std::vector<std::string> targets;
};

std::vector<FindingGroup> group_findings(const std::vector<CheckResult> &checks) {
  std::vector<FindingGroup> groups;
  std::map<std::string, size_t> index;
  for (const CheckResult &c : checks)
    for (const Finding &f : c.findings) {
      std::string key = f.code + '\x1f' + f.object + '\x1f' + f.message + '\x1f' + severity_name(f.severity);
      auto [it, fresh] = index.emplace(key, groups.size());
      if (fresh)
        groups.push_back({&f, {}});
      std::vector<std::string> &on = groups[it->second].targets;
      if (on.empty() || on.back() != c.target) // a target that reports it twice is one target
        on.push_back(c.target);
    }
  std::stable_sort(groups.begin(), groups.end(), [](const FindingGroup &a, const FindingGroup &b) {
    return a.first->severity < b.first->severity;
  });
  return groups;
}

std::string finding_row(const FindingGroup &g, size_t all) {
  const Finding &f = *g.first;
  std::string targets =
      g.targets.size() == all && all > 1 ? "all " + std::to_string(all) : join_names(g.targets, 28);
  std::string limit =
      f.limit_field.empty() ? "" : f.limit_field + " = " + f.limit + " (" + f.confidence + ")";
  std::string names;
  for (const std::string &t : g.targets)
    names += (names.empty() ? "" : " ") + t;
  return row({element("span", attr("class", std::string("sev sev-") + severity_name(f.severity)),
                      severity_name(f.severity)),
              element("a", attr("href", "#" + code_anchor(f.code)), escape(f.code)),
              escape(f.object.empty() ? "(graph)" : f.object), escape(f.message), escape(limit),
              escape(f.fix), escape(targets)},
             attr("class", "finding") + attr("data-code", f.code) + attr("data-object", f.object) +
                 attr("data-targets", names));
}

std::string catalogue_entry(const ReasonCatalog &reasons, const std::string &code) {
  const Reason *r = reasons.find(code);
  std::string title = r ? code + " — " + r->title : code;
  std::string text = r ? reasons.explain(code) : code + " is not in the reason catalogue\n";
  return element("div", attr("class", "reason") + attr("id", code_anchor(code)) + attr("data-code", code),
                 element("h3", "", escape(title)) + element("pre", "", escape(text)));
}

std::string findings(const ReportInput &in) {
  std::vector<FindingGroup> groups = group_findings(in.checks);
  if (groups.empty())
    return element("section", attr("id", "findings"), "<h2>Findings</h2><p>The check found nothing.</p>");
  std::string rows = row({"severity", "code", "operation", "message", "limit", "fix", "targets"}, "", true);
  std::vector<std::string> codes;
  for (size_t k = 0; k < groups.size(); ++k) {
    const FindingGroup &g = groups[k];
    if (k < kMostRows)
      rows += finding_row(g, in.targets.size());
    if (std::find(codes.begin(), codes.end(), g.first->code) == codes.end())
      codes.push_back(g.first->code);
  }
  std::sort(codes.begin(), codes.end());
  std::string catalogue;
  for (const std::string &c : codes)
    catalogue += catalogue_entry(in.reasons, c);
  return element("section", attr("id", "findings"),
                 "<h2>Findings</h2>" + element("table", attr("class", "findings"), rows) +
                     left_out(groups.size(), kMostRows, "finding(s)", "anec check") +
                     "<h2>What the codes mean</h2>" + element("div", attr("class", "catalogue"), catalogue));
}

// --- the page --------------------------------------------------------------------------------

std::string header(const ReportInput &in) {
  const Estimate &e = in.estimates.front();
  std::string facts = std::to_string(in.graph.ops.size()) + " operation(s), " +
                      std::to_string(in.graph.tensors.size()) + " tensor(s); " +
                      std::to_string(in.targets.size()) + " target(s); estimates from the " +
                      escape(e.model) + " model" + (e.chip.empty() ? "" : " of " + escape(e.chip)) +
                      "; placement as anec place gives it.";
  std::string notes;
  for (const std::string &n : in.graph.notes)
    notes += element("li", "", escape(n));
  std::string nav = "<a href=\"#matrix\">matrix</a> · <a href=\"#rooflines\">rooflines</a> · <a "
                    "href=\"#targets\">top costs and placement</a> · <a href=\"#findings\">findings</a>";
  return element("header", "",
                 element("h1", "", "anec report: " + escape(in.model)) + element("p", "", facts) +
                     (notes.empty() ? "" : element("ul", attr("class", "notes"), notes)) +
                     element("nav", "", nav));
}

const char *kCss =
    R"(body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 24px 40px;color:#1d2330;
background:#fafbfc}
header h1{font-size:22px;margin:16px 0 4px;word-break:break-all}
h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #d8dde6;padding-bottom:3px}
h3{font-size:15px;margin:10px 0 6px}h4{font-size:13px;margin:10px 0 4px}
nav a,a{color:#1f5fbf;text-decoration:none}
.heat-map{display:grid;grid-template-columns:repeat(auto-fill,minmax(118px,1fr));gap:6px}
.heat-cell{display:flex;flex-direction:column;padding:6px 8px;border-radius:6px;color:#1d2330;
border:2px solid transparent}
.heat-cell .name{font-weight:600;font-size:15px}.heat-cell .lat{font-variant-numeric:tabular-nums}
.heat-cell .ratio,.heat-cell .counts,.heat-cell .verdict,.heat-cell .band{font-size:11px;color:#3b4352}
.heat-cell.rejected{border-color:#b3261e;
background-image:repeating-linear-gradient(45deg,transparent 0 6px,rgba(179,38,30,.18) 6px 9px)!important}
.heat-cell.rejected .verdict{color:#b3261e;font-weight:600}
.heat-cell:hover{outline:2px solid #1f5fbf}
.legend{font-size:12px;color:#4a5262}
.swatch{display:inline-block;width:14px;height:10px;border-radius:2px;vertical-align:middle}
.rejected-swatch{border:2px solid #b3261e;width:10px;height:6px}
.roofline-grid{display:flex;flex-wrap:wrap;gap:10px}
.roofline-card{margin:0;background:#fff;border:1px solid #d8dde6;border-radius:6px;padding:4px 6px;
  width:380px}
.roofline-card figcaption{font-size:12px}
svg.roofline{display:block;font-size:10px}
.grid{stroke:#e3e7ee;stroke-width:1}.tick{fill:#5b6474}.axis-label{fill:#3b4352;font-size:10px}
.roof{stroke:#1d2330;stroke-width:2}.roof.minor{stroke:#8a93a3;stroke-width:1.2;stroke-dasharray:4 3}
.roof-label{fill:#3b4352;font-size:9px}
.op-point{stroke:#fff;stroke-width:1;opacity:.85}.op-point.hot,.cost-row.hot td{outline:2px solid #f5a623}
.op-point.hot{r:7;opacity:1}
.backend-engine{fill:#2f6fdb;background:#2f6fdb}.backend-gpu{fill:#e8891d;background:#e8891d}
.backend-cpu{fill:#c62f3a;background:#c62f3a}
tr.partition{background:none}.dot{display:inline-block;width:9px;height:9px;border-radius:50%}
.note{font-size:12px;color:#5b6474;margin:4px 0}
table{border-collapse:collapse;font-size:12.5px;margin:4px 0}
th,td{border-bottom:1px solid #e3e7ee;padding:3px 8px;text-align:left;vertical-align:top;
  overflow-wrap:anywhere}
th{background:#eef1f6}
.bar{display:inline-block;height:8px;background:#2f6fdb;margin-right:6px;border-radius:2px}
details.target{background:#fff;border:1px solid #d8dde6;border-radius:6px;margin:6px 0;padding:4px 10px}
details.target summary{cursor:pointer;font-size:14px}details.target summary .name{font-weight:600}
.cols{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:18px}
.fallbacks{padding-left:18px;font-size:12.5px}
.sev{font-size:11px;padding:1px 6px;border-radius:8px;background:#e3e7ee}
.sev-reject,.sev-error{background:#f6d3d0;color:#8c1d16}.sev-decompose{background:#fbe7c6}
.sev-warn{background:#fff3bf}
.reason pre{white-space:pre-wrap;background:#fff;border:1px solid #e3e7ee;padding:8px;font-size:12px;margin:0}
:target{scroll-margin-top:8px}
)";

// Hovering an operation (a point or a row) marks it in every chart and table.
const char *kJs = R"((function () {
  function mark(op, on) {
    document.querySelectorAll('[data-op]').forEach(function (e) {
      if (e.getAttribute('data-op') === op) e.classList.toggle('hot', on);
    });
  }
  document.querySelectorAll('.op-point, .cost-row').forEach(function (e) {
    e.addEventListener('mouseenter', function () { mark(e.getAttribute('data-op'), true); });
    e.addEventListener('mouseleave', function () { mark(e.getAttribute('data-op'), false); });
  });
  // A link to a target opens its details.
  function open_target() {
    var h = location.hash.slice(1);
    try { h = decodeURIComponent(h); } catch (e) { /* a stray '%': read as written */ }
    var t = document.getElementById(h);
    if (t && t.tagName === 'DETAILS') t.open = true;
  }
  window.addEventListener('hashchange', open_target);
  open_target();
})();
)";

} // namespace

std::string report_html(const ReportInput &in) {
  std::string body = header(in) + heat_map(in) + rooflines(in) + findings(in) + targets_section(in);
  return html::page("anec report: " + in.model, kCss, body, kJs);
}

} // namespace anec::tools
