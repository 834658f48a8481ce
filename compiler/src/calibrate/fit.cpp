// `anec calibrate`: fits the calibrated cost model to measured latencies with a robust (Huber) loss
// on log(predicted / measured), leaves out machines that disagree with their siblings, carries the
// fit to unmeasured targets by a ridge regression on target features, and checks the whole by
// leaving each chip out in turn.
#include "anec/compiler/calibrate/fit.hpp"

#include "anec/compiler/cost/cost.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <set>

namespace anec::compiler {

using anec::detail::Strict;

namespace {
constexpr size_t kFitted = 4; // matmul_tflops, weight and activation bandwidth, call floor (log units)
const double kStart[kFitted] = {5.0, 50.0, 10.0, 0.15};
constexpr double kChipPriorSigma = 3.0; // where a chip's rows do not decide a rate, it stays near kStart

double quantile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t i = size_t(pos);
  return i + 1 < v.size() ? v[i] + (pos - double(i)) * (v[i + 1] - v[i]) : v[i];
}

// Solves A x = b (A symmetric positive definite after damping) by Gaussian elimination with pivoting.
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c]))
        p = r;
    std::swap(a[c], a[p]);
    std::swap(b[c], b[p]);
    if (std::fabs(a[c][c]) < 1e-300)
      continue;
    for (size_t r = c + 1; r < n; ++r) {
      double f = a[r][c] / a[c][c];
      for (size_t k = c; k < n; ++k)
        a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n, 0);
  for (size_t c = n; c-- > 0;) {
    double s = b[c];
    for (size_t k = c + 1; k < n; ++k)
      s -= a[c][k] * x[k];
    x[c] = std::fabs(a[c][c]) < 1e-300 ? 0 : s / a[c][c];
  }
  return x;
}

// A fit in progress: which rows, chips and families take part, and where each lives in θ.
struct Problem {
  const ModelSpec &spec;
  std::vector<const Row *> rows;
  struct Leaf {
    int family = -1;
    double count = 0; // identical ops of the row (a decode stack's layers), costed once
    OpTerms terms;
  };
  std::vector<std::vector<Leaf>> ops; // per row, decompositions flattened
  std::vector<size_t> row_chip;
  std::vector<std::string> chips, families;
  std::vector<double> working_set;                    // per chip
  std::vector<std::string> chip_target;               // per chip
  std::vector<int> compute_at, stream_at, falloff_at; // θ index per family, -1 when fixed
  size_t gain_at = 0, size = 0;

  Problem(const ModelSpec &s) : spec(s) {}
  size_t chip_at(size_t c, size_t p) const { return c * kFitted + p; }

  std::vector<Family> factors(const std::vector<double> &th) const {
    std::vector<Family> out(families.size());
    for (size_t f = 0; f < families.size(); ++f) {
      if (compute_at[f] >= 0)
        out[f].compute = std::exp(th[size_t(compute_at[f])]);
      if (stream_at[f] >= 0)
        out[f].stream = std::exp(th[size_t(stream_at[f])]);
      if (falloff_at[f] >= 0)
        out[f].falloff_bytes = std::exp(th[size_t(falloff_at[f])]);
    }
    return out;
  }
  Calibration calibration(const std::vector<double> &th) const {
    Calibration c;
    std::vector<Family> f = factors(th);
    for (size_t i = 0; i < families.size(); ++i)
      c.families[families[i]] = f[i];
    c.on_chip_gain = std::exp(th[gain_at]);
    return c;
  }
  Rates rates(const std::vector<double> &th, size_t chip) const {
    Rates r;
    for (size_t p = 0; p < kFitted; ++p)
      r.v[p] = std::exp(th[chip_at(chip, p)]);
    r.v[4] = working_set[chip];
    return r;
  }
  // log(predicted / measured) per row; with `only_chip`, rows of other chips keep their `base` value
  // (a chip's rates move only its own rows).
  std::vector<double> residuals(const std::vector<double> &th, const std::vector<double> *base = nullptr,
                                size_t only_chip = SIZE_MAX) const {
    std::vector<Family> f = factors(th);
    double gain = std::exp(th[gain_at]);
    std::vector<double> r(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      if (only_chip != SIZE_MAX && row_chip[i] != only_chip) {
        r[i] = (*base)[i];
        continue;
      }
      Rates rt = rates(th, row_chip[i]);
      double us = rows[i]->w.dispatches * rt.floor_ms() * 1e3;
      for (const Leaf &o : ops[i])
        us += o.count * op_time(o.terms, rt, f[size_t(o.family)], gain).us();
      r[i] = std::log(us / (rows[i]->m.lat_ms * 1e3));
    }
    return r;
  }
  // Prior residuals (already divided by their sigma): published facts, factors near 1, rates near the start.
  std::vector<double> priors(const std::vector<double> &th) const {
    std::vector<double> out;
    for (size_t c = 0; c < chips.size(); ++c) {
      for (size_t p = 0; p < kFitted; ++p)
        out.push_back((th[chip_at(c, p)] - std::log(kStart[p])) / kChipPriorSigma);
      for (const Prior &pr : spec.priors) {
        if (pr.target != chip_target[c])
          continue;
        size_t p = size_t(std::find(std::begin(kRateFields), std::end(kRateFields), pr.parameter) -
                          std::begin(kRateFields));
        out.push_back((th[chip_at(c, p)] - std::log(pr.value)) / pr.sigma);
      }
    }
    for (size_t k = chips.size() * kFitted; k < size; ++k) {
      double centre = k == gain_at ? std::log(4.0) : 0; // on-chip traffic: a few times DRAM's rate
      bool falloff = std::find(falloff_at.begin(), falloff_at.end(), int(k)) != falloff_at.end();
      out.push_back((th[k] - (falloff ? std::log(100e6) : centre)) / spec.factor_prior_sigma);
    }
    return out;
  }
};

double huber(double r, double d) {
  return std::fabs(r) <= d ? 0.5 * r * r : d * (std::fabs(r) - 0.5 * d);
}

double cost(const Problem &p, const std::vector<double> &th) {
  double s = 0;
  for (double r : p.residuals(th))
    s += huber(r, p.spec.huber_delta);
  for (double r : p.priors(th))
    s += 0.5 * r * r * p.spec.huber_delta * p.spec.huber_delta;
  return s;
}

// Levenberg-Marquardt on the Huber loss by iteratively reweighted least squares, forward-difference
// Jacobian. Deterministic: the same rows give the same θ.
std::vector<double> minimise(const Problem &p, std::vector<double> th) {
  double lambda = 1e-2, current = cost(p, th);
  const double d = p.spec.huber_delta, h = 1e-5;
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<double> r = p.residuals(th), q = p.priors(th);
    size_t m = r.size() + q.size(), n = th.size();
    std::vector<double> w(m, d * d), res(m);
    for (size_t i = 0; i < r.size(); ++i)
      w[i] = std::fabs(r[i]) <= d ? 1 : d / std::fabs(r[i]);
    std::copy(r.begin(), r.end(), res.begin());
    std::copy(q.begin(), q.end(), res.begin() + long(r.size()));
    std::vector<std::vector<double>> jt(n);
    for (size_t k = 0; k < n; ++k) {
      std::vector<double> t = th;
      t[k] += h;
      bool chip_rate = k < p.chips.size() * kFitted;
      std::vector<double> r2 = p.residuals(t, &r, chip_rate ? k / kFitted : SIZE_MAX), q2 = p.priors(t);
      jt[k].resize(m);
      for (size_t i = 0; i < m; ++i)
        jt[k][i] = ((i < r2.size() ? r2[i] : q2[i - r2.size()]) - res[i]) / h;
    }
    std::vector<std::vector<double>> a(n, std::vector<double>(n, 0));
    std::vector<double> g(n, 0);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i; j < n; ++j) {
        double s = 0;
        for (size_t k = 0; k < m; ++k)
          s += jt[i][k] * w[k] * jt[j][k];
        a[i][j] = a[j][i] = s;
      }
      for (size_t k = 0; k < m; ++k)
        g[i] -= jt[i][k] * w[k] * res[k];
    }
    bool improved = false;
    for (int tries = 0; tries < 12 && !improved; ++tries) {
      auto damped = a;
      for (size_t i = 0; i < n; ++i)
        damped[i][i] += lambda * (a[i][i] + 1e-9);
      std::vector<double> step = solve(damped, g), next = th;
      for (size_t i = 0; i < n; ++i)
        next[i] += std::clamp(step[i], -2.0, 2.0);
      double c = cost(p, next);
      if (c < current) {
        improved = current - c > 1e-10 * (1 + current);
        th = std::move(next);
        current = c;
        lambda = std::max(lambda / 3, 1e-9);
      } else {
        lambda *= 4;
      }
    }
    if (!improved)
      break;
  }
  return th;
}

std::vector<double> features(const hal::Target &t, const std::vector<std::string> &names) {
  std::vector<double> x{1.0};
  for (const std::string &n : names) {
    bool log2 = n.rfind("log2:", 0) == 0;
    std::string field = log2 ? n.substr(5) : n;
    const hal::Entry *e = t.find(field);
    double v = 0;
    if (e && std::holds_alternative<uint64_t>(e->value))
      v = double(std::get<uint64_t>(e->value));
    else if (e && std::holds_alternative<double>(e->value))
      v = std::get<double>(e->value);
    else
      throw Error("ANEC-CAL-003", "rule feature '" + field + "' is not a number on target " + t.name);
    bool unknown = e->provenance.confidence == Confidence::Placeholder;
    x.push_back(unknown ? NAN : log2 ? std::log2(std::max(v, 1.0)) : v);
  }
  return x;
}

// A target whose feature is not published (a placeholder: T1 and M11 have no H-number) is taken at
// the mean of the fitted targets' values.
std::vector<double> known_or_mean(std::vector<double> x, const std::vector<std::vector<double>> &fitted) {
  for (size_t j = 0; j < x.size(); ++j) {
    if (!std::isnan(x[j]))
      continue;
    x[j] = 0;
    for (const auto &f : fitted)
      x[j] += f[j] / double(fitted.size());
  }
  return x;
}

// Ridge regression y ≈ X β with the intercept free: the rule that carries a parameter across targets.
std::vector<double> fit_rule(const std::vector<std::vector<double>> &x, const std::vector<double> &y,
                             double ridge) {
  size_t n = x.empty() ? 1 : x[0].size();
  std::vector<std::vector<double>> a(n, std::vector<double>(n, 0));
  std::vector<double> b(n, 0);
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < n; ++j) {
      b[j] += x[i][j] * y[i];
      for (size_t k = 0; k < n; ++k)
        a[j][k] += x[i][j] * x[i][k];
    }
  for (size_t j = 1; j < n; ++j)
    a[j][j] += ridge;
  return solve(a, b);
}

double apply_rule(const std::vector<double> &beta, const std::vector<double> &x) {
  return std::inner_product(beta.begin(), beta.end(), x.begin(), 0.0);
}

// The working set per target: published where the table has it measured, else carried along the rule.
std::map<std::string, std::pair<double, bool>> working_sets(const hal::Registry &reg, const ModelSpec &spec) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const hal::Target &t : reg.targets())
    if (const hal::Entry *e = t.find("working_set_bytes");
        e && e->provenance.confidence == Confidence::Measured) {
      x.push_back(features(t, spec.working_set_features));
      y.push_back(std::log(std::get<double>(e->value)));
    }
  if (y.empty())
    throw Error("ANEC-CAL-004", "no target publishes working_set_bytes: nothing to carry to the others");
  std::vector<double> beta = fit_rule(x, y, 0);
  std::map<std::string, std::pair<double, bool>> out;
  for (const hal::Target &t : reg.targets()) {
    const hal::Entry *e = t.find("working_set_bytes");
    bool published = e && e->provenance.confidence == Confidence::Measured;
    out[t.name] = {published
                       ? std::get<double>(e->value)
                       : std::exp(apply_rule(beta, known_or_mean(features(t, spec.working_set_features), x))),
                   published};
  }
  return out;
}

struct Context {
  const ModelSpec &spec;
  const std::vector<Chip> &chips;
  const hal::Registry &reg;
  std::map<std::string, std::pair<double, bool>> ws;
  std::string target_of(const std::string &chip) const { return find_chip(chips, chip)->target; }
};

// Adds an op to a row's list, counting it where an identical one is there already.
void add_leaf(std::vector<Problem::Leaf> &row, const OpTerms &t) {
  auto same = [&](const Problem::Leaf &l) {
    const OpTerms &o = l.terms;
    return o.family == t.family && o.flops == t.flops && o.weight_bytes == t.weight_bytes &&
           o.dram_bytes == t.dram_bytes && o.chip_bytes == t.chip_bytes && o.operand_bytes == t.operand_bytes;
  };
  auto it = std::find_if(row.begin(), row.end(), same);
  if (it != row.end())
    it->count += 1;
  else
    row.push_back({-1, 1, t});
}

Problem build(const Context &cx, const std::vector<const Row *> &rows) {
  Problem p(cx.spec);
  std::set<std::string> chip_set, fam_set;
  for (const Row *r : rows)
    chip_set.insert(r->chip);
  p.chips.assign(chip_set.begin(), chip_set.end());
  for (const std::string &c : p.chips) {
    p.chip_target.push_back(cx.target_of(c));
    p.working_set.push_back(cx.ws.at(p.chip_target.back()).first);
  }
  for (const Row *r : rows) {
    size_t c = size_t(std::find(p.chips.begin(), p.chips.end(), r->chip) - p.chips.begin());
    p.rows.push_back(r);
    p.row_chip.push_back(c);
    p.ops.emplace_back();
    for (const OpTerms &t : r->terms) {
      if (!t.estimated)
        continue;
      for (const OpTerms &leaf : t.parts.empty() ? std::vector<OpTerms>{t} : t.parts) {
        fam_set.insert(leaf.family);
        add_leaf(p.ops.back(), leaf);
      }
    }
  }
  p.families.assign(fam_set.begin(), fam_set.end());
  for (auto &row : p.ops)
    for (Problem::Leaf &o : row)
      o.family = int(std::find(p.families.begin(), p.families.end(), o.terms.family) - p.families.begin());
  p.size = p.chips.size() * kFitted;
  for (const std::string &f : p.families) {
    p.compute_at.push_back(f == cx.spec.reference_compute ? -1 : int(p.size++));
    p.stream_at.push_back(f == cx.spec.reference_stream ? -1 : int(p.size++));
    bool falloff = std::count(cx.spec.falloff_families.begin(), cx.spec.falloff_families.end(), f) > 0;
    p.falloff_at.push_back(falloff ? int(p.size++) : -1);
  }
  p.gain_at = p.size++;
  return p;
}

std::vector<double> start(const Problem &p) {
  std::vector<double> th(p.size, 0);
  for (size_t c = 0; c < p.chips.size(); ++c)
    for (size_t k = 0; k < kFitted; ++k)
      th[p.chip_at(c, k)] = std::log(kStart[k]);
  for (int k : p.falloff_at)
    if (k >= 0)
      th[size_t(k)] = std::log(100e6);
  th[p.gain_at] = std::log(4.0);
  return th;
}

// Per machine, the median log error; a machine beyond outlier_factor whose chip has another machine
// within sibling_factor is an outlier.
std::set<std::string> outliers(const Problem &p, const std::vector<double> &r) {
  std::map<std::string, std::vector<double>> by_machine;
  std::map<std::string, std::string> chip_of;
  for (size_t i = 0; i < p.rows.size(); ++i) {
    by_machine[p.rows[i]->machine].push_back(r[i]);
    chip_of[p.rows[i]->machine] = p.rows[i]->chip;
  }
  std::map<std::string, double> median;
  for (auto &[m, v] : by_machine)
    median[m] = std::fabs(quantile(v, 0.5));
  std::set<std::string> out;
  for (auto &[m, e] : median) {
    if (e <= std::log(p.spec.outlier_factor))
      continue;
    for (auto &[other, e2] : median)
      if (other != m && chip_of[other] == chip_of[m] && e2 <= std::log(p.spec.sibling_factor))
        out.insert(m);
  }
  return out;
}

struct Fit {
  Problem problem;
  std::vector<double> theta;
  std::set<std::string> outlier_machines;
};

Fit fit(const Context &cx, const std::vector<const Row *> &rows) {
  std::set<std::string> left_out;
  for (int round = 0;; ++round) {
    std::vector<const Row *> kept;
    for (const Row *r : rows)
      if (!left_out.count(r->machine))
        kept.push_back(r);
    Problem p = build(cx, kept);
    std::vector<double> th = minimise(p, start(p));
    std::set<std::string> more = outliers(p, p.residuals(th));
    if (more.empty() || round == 2)
      return {std::move(p), std::move(th), left_out};
    left_out.insert(more.begin(), more.end());
  }
}

// Every target's rates: the mean over its measured chips (weighted by rows), else the rule.
struct TargetRates {
  std::map<std::string, Rates> rates;
  std::map<std::string, bool> measured;
};

TargetRates carry(const Context &cx, const Fit &f) {
  const Problem &p = f.problem;
  std::map<std::string, std::vector<std::pair<size_t, double>>> chips_of; // target -> (chip, rows)
  std::vector<double> rows_per_chip(p.chips.size(), 0);
  for (size_t c : p.row_chip)
    rows_per_chip[c] += 1;
  for (size_t c = 0; c < p.chips.size(); ++c)
    chips_of[p.chip_target[c]].push_back({c, rows_per_chip[c]});
  std::vector<std::vector<double>> x;
  for (size_t c = 0; c < p.chips.size(); ++c) {
    x.push_back(features(cx.reg.get(p.chip_target[c]), cx.spec.rule_features));
    if (std::any_of(x.back().begin(), x.back().end(), [](double v) { return std::isnan(v); }))
      throw Error("ANEC-CAL-003", "target " + p.chip_target[c] + " of measured chip " + p.chips[c] +
                                      " does not publish the rule features");
  }
  TargetRates out;
  for (size_t k = 0; k < kFitted; ++k) {
    std::vector<double> y;
    for (size_t c = 0; c < p.chips.size(); ++c)
      y.push_back(f.theta[p.chip_at(c, k)]);
    std::vector<double> beta = fit_rule(x, y, cx.spec.rule_ridge);
    for (const hal::Target &t : cx.reg.targets()) {
      Rates &r = out.rates[t.name];
      r.v[4] = cx.ws.at(t.name).first;
      auto it = chips_of.find(t.name);
      out.measured[t.name] = it != chips_of.end();
      if (it == chips_of.end()) {
        r.v[k] = std::exp(apply_rule(beta, known_or_mean(features(t, cx.spec.rule_features), x)));
        continue;
      }
      double sum = 0, n = 0;
      for (auto [c, rows] : it->second) {
        sum += rows * f.theta[p.chip_at(c, k)];
        n += rows;
      }
      r.v[k] = std::exp(sum / n);
    }
  }
  return out;
}

} // namespace

// The family that takes most of a row's predicted time ("dispatch" when the floor does).
std::string dominant_family(const std::vector<OpTerms> &ops, const Rates &r, const Calibration &c,
                            int dispatches) {
  std::vector<double> per_op;
  predict_us(ops, r, c, dispatches, &per_op);
  std::map<std::string, double> share{{"dispatch", dispatches * r.floor_ms() * 1e3}};
  for (size_t i = 0; i < ops.size(); ++i)
    share[ops[i].family] += per_op[i];
  return std::max_element(share.begin(), share.end(), [](auto &a, auto &b) { return a.second < b.second; })
      ->first;
}

namespace {
void set_bands(Calibration &c, const std::vector<RowResult> &rows, const std::vector<Row> &all) {
  std::map<std::string, std::vector<double>> fit, loco;
  std::vector<double> all_fit, all_loco;
  for (const RowResult &r : rows) {
    if (!r.left_out.empty())
      continue;
    double meas = all[r.row].m.lat_ms;
    fit[r.family].push_back(std::log(meas / r.predicted_ms));
    all_fit.push_back(fit[r.family].back());
    if (r.loco_ms > 0) {
      loco[r.family].push_back(std::log(meas / r.loco_ms));
      all_loco.push_back(loco[r.family].back());
    }
  }
  auto band = [&](Family &f, const std::vector<double> &a, const std::vector<double> &b) {
    f.fit_low = quantile(a, 0.1);
    f.fit_high = quantile(a, 0.9);
    f.loco_low = quantile(b.empty() ? all_loco : b, 0.1);
    f.loco_high = quantile(b.empty() ? all_loco : b, 0.9);
    f.rows = a.size();
  };
  for (auto &[name, f] : c.families)
    band(f, fit[name], loco[name]);
  band(c.families["dispatch"], fit["dispatch"], loco["dispatch"]);
  band(c.fallback, all_fit, all_loco);
  c.fallback.fit_low = std::min(quantile(all_fit, 0.05), c.fallback.fit_low);
  c.fallback.fit_high = std::max(quantile(all_fit, 0.95), c.fallback.fit_high);
}

} // namespace

std::vector<Row> measured_rows(const std::vector<Measurement> &ms, const std::vector<Chip> &chips,
                               const OpCatalog &catalog, std::vector<std::string> *skipped) {
  std::vector<Row> out;
  for (const Measurement &m : ms) {
    const Chip *c = find_chip(chips, m.chip);
    if (!c)
      c = find_chip(chips, m.model_id);
    if (!c) {
      if (skipped)
        skipped->push_back("line " + std::to_string(m.line) + ": chip '" + m.chip + "' (" + m.model_id +
                           ") is not in the line-up");
      continue;
    }
    try {
      Workload w = build_workload(m, catalog);
      std::vector<OpTerms> terms = op_terms(w.graph, catalog);
      out.push_back({m, c->name, c->target, c->name + " " + m.model_id, std::move(w), std::move(terms)});
    } catch (const Error &e) { // a program the builder cannot make: reported, not fatal
      if (skipped)
        skipped->push_back(e.what());
    }
  }
  return out;
}

FitReport calibrate(const std::vector<Row> &rows, const ModelSpec &spec, const std::vector<Chip> &chips,
                    const hal::Registry &registry, const std::string &source) {
  if (rows.empty())
    throw Error("ANEC-CAL-004", "no measured row on a known chip: nothing to calibrate");
  Context cx{spec, chips, registry, working_sets(registry, spec)};
  auto unmodelled = [&](const Row &r) {
    return std::count(spec.unmodelled_ops.begin(), spec.unmodelled_ops.end(), r.m.op) > 0;
  };
  std::vector<const Row *> all;
  for (const Row &r : rows)
    if (!unmodelled(r))
      all.push_back(&r);
  Fit f = fit(cx, all);
  FitReport rep;
  rep.calibration = f.problem.calibration(f.theta);
  rep.calibration.source = source;
  TargetRates tr = carry(cx, f);
  for (size_t c = 0; c < f.problem.chips.size(); ++c)
    rep.calibration.chips[f.problem.chips[c]] = f.problem.rates(f.theta, c);
  rep.outlier_machines.assign(f.outlier_machines.begin(), f.outlier_machines.end());
  // Leave each chip out: refit without its rows, predict them from its target's remaining chips or the rule.
  std::vector<double> loco_ms(rows.size(), 0);
  for (const std::string &chip : f.problem.chips) {
    std::vector<const Row *> rest;
    for (const Row *r : all)
      if (r->chip != chip)
        rest.push_back(r);
    if (rest.empty())
      continue;
    Fit g = fit(cx, rest);
    Calibration gc = g.problem.calibration(g.theta);
    Rates r = carry(cx, g).rates.at(cx.target_of(chip));
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].chip == chip)
        loco_ms[i] = predict_us(rows[i].terms, r, gc, rows[i].w.dispatches) / 1e3;
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &row = rows[i];
    Rates r = rep.calibration.chips.count(row.chip) ? rep.calibration.chips.at(row.chip)
                                                    : tr.rates.at(cx.target_of(row.chip));
    RowResult rr;
    rr.row = i;
    rr.predicted_ms = predict_us(row.terms, r, rep.calibration, row.w.dispatches) / 1e3;
    rr.loco_ms = loco_ms[i];
    rr.left_out = unmodelled(row)                         ? "path not modelled"
                  : f.outlier_machines.count(row.machine) ? "outlier machine"
                                                          : "";
    rr.family = dominant_family(row.terms, r, rep.calibration, row.w.dispatches);
    rep.rows.push_back(rr);
  }
  set_bands(rep.calibration, rep.rows, rows);
  rep.rule = join(spec.rule_features, ", ");
  rep.working_set_rule = join(spec.working_set_features, ", ");
  for (auto &[t, w] : cx.ws)
    if (w.second)
      rep.working_set_published.insert(t);
  for (auto &[t, r] : tr.rates) {
    for (size_t k = 0; k < 5; ++k)
      rep.target_rates[t][kRateFields[k]] = r.v[k];
    rep.target_provenance[t] = tr.measured[t] ? "measured" : "predicted";
  }
  return rep;
}

} // namespace anec::compiler

namespace anec::compiler {

FitReport check_calibration(const std::vector<Row> &rows, const Calibration &cal,
                            const hal::Registry &registry, const OpCatalog &catalog, bool analytic) {
  FitReport rep;
  rep.calibration = cal;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &row = rows[i];
    const hal::Target &t = registry.get(row.chip_target);
    Rates r = rates_of(t, cal, row.chip);
    RowResult rr;
    rr.row = i;
    rr.predicted_ms = predict_us(row.terms, r, cal, row.w.dispatches) / 1e3;
    if (analytic) {
      Estimate e = estimate(row.w.graph, catalog, t);
      rr.predicted_ms = (e.latency_us + (row.w.dispatches - 1) * e.floor_us) / 1e3;
    }
    rr.family = dominant_family(row.terms, r, cal, row.w.dispatches);
    rep.rows.push_back(rr);
  }
  return rep;
}

ModelSpec ModelSpec::load(const std::filesystem::path &path) {
  std::string src = path.string();
  Doc doc = toml::parse_file(path);
  Strict top(doc, src, "ANEC-CAL-003", "cost-model structure");
  if (top.req("format", Doc::Kind::String).as_string() != "anec-calibration-model/1")
    top.fail(doc, "format must be \"anec-calibration-model/1\"");
  ModelSpec s;
  s.huber_delta = top.number("huber_delta");
  s.outlier_factor = top.number("outlier_factor");
  s.sibling_factor = top.number("sibling_factor");
  s.factor_prior_sigma = top.number("factor_prior_sigma");
  s.rule_ridge = top.number("rule_ridge");
  s.reference_compute = top.req("reference_compute", Doc::Kind::String).as_string();
  s.reference_stream = top.req("reference_stream", Doc::Kind::String).as_string();
  s.falloff_families = top.strings("falloff_families");
  s.rule_features = top.strings("rule_features");
  s.working_set_features = top.strings("working_set_features");
  s.unmodelled_ops = top.strings("unmodelled_ops");
  for (const Doc &d : top.req("prior", Doc::Kind::Array).items()) {
    Strict r(d, src, "ANEC-CAL-003", "prior");
    Prior p;
    p.target = r.req("target", Doc::Kind::String).as_string();
    p.parameter = r.req("parameter", Doc::Kind::String).as_string();
    p.source = r.req("source", Doc::Kind::String).as_string();
    p.value = r.number("value");
    p.sigma = r.number("sigma");
    r.finish();
    auto known = std::find(std::begin(kRateFields), std::end(kRateFields) - 1, p.parameter);
    if (known == std::end(kRateFields) - 1)
      r.fail(d, "prior on '" + p.parameter + "', which the fit does not fit");
    if (p.value <= 0 || p.sigma <= 0)
      r.fail(d, "a prior's value and sigma must be positive");
    s.priors.push_back(std::move(p));
  }
  top.finish();
  if (s.huber_delta <= 0 || s.outlier_factor <= 1 || s.sibling_factor <= 1 || s.factor_prior_sigma <= 0 ||
      s.rule_ridge < 0)
    top.fail(
        doc,
        "huber_delta and factor_prior_sigma must be positive, the factors above 1, rule_ridge not negative");
  return s;
}

ErrorStats error_stats(const std::vector<double> &e) {
  if (e.empty())
    return {};
  return {e.size(), quantile(e, 0.5), quantile(e, 0.9), *std::max_element(e.begin(), e.end())};
}

ErrorTable error_table(const FitReport &r, const std::vector<Row> &rows, const std::string &by) {
  std::map<std::string, std::vector<double>> fit, loco;
  for (const RowResult &x : r.rows) {
    if (!x.left_out.empty())
      continue;
    const Row &row = rows[x.row];
    double meas = row.m.lat_ms;
    for (const std::string &key : {std::string("all"), by == "chip" ? row.chip : x.family}) {
      fit[key].push_back(std::fabs(x.predicted_ms - meas) / meas);
      if (x.loco_ms > 0)
        loco[key].push_back(std::fabs(x.loco_ms - meas) / meas);
    }
  }
  ErrorTable t;
  for (auto &[k, v] : fit)
    t.fit[k] = error_stats(v);
  for (auto &[k, v] : loco)
    t.loco[k] = error_stats(v);
  return t;
}

namespace {
Doc rounded(double v) {
  if (v == 0 || !std::isfinite(v))
    return Doc::number(0);
  double scale = std::pow(10.0, 4 - std::floor(std::log10(std::fabs(v))));
  return Doc::number(std::round(v * scale) / scale);
}

Doc family_doc(const Family &f) {
  Doc d = Doc::table();
  d.inline_table = true;
  d.set("compute", rounded(f.compute));
  d.set("stream", rounded(f.stream));
  d.set("falloff_bytes", rounded(f.falloff_bytes));
  d.set("fit_low", rounded(f.fit_low));
  d.set("fit_high", rounded(f.fit_high));
  d.set("loco_low", rounded(f.loco_low));
  d.set("loco_high", rounded(f.loco_high));
  d.set("rows", Doc::integer(int64_t(f.rows)));
  return d;
}

Doc stats_doc(const ErrorStats &s) {
  Doc d = Doc::table();
  d.inline_table = true;
  d.set("rows", Doc::integer(int64_t(s.rows)));
  d.set("median", rounded(s.median));
  d.set("p90", rounded(s.p90));
  d.set("worst", rounded(s.worst));
  return d;
}

Doc target_doc(const FitReport &r, const std::string &target, const std::vector<Row> &rows) {
  bool measured = r.target_provenance.at(target) == "measured";
  std::set<std::string> chips;
  for (const Row &row : rows)
    if (row.chip_target == target)
      chips.insert(row.chip);
  std::string from = join(std::vector<std::string>(chips.begin(), chips.end()), ", ");
  std::string source = measured ? "anec calibrate: fit to " + from + " (" + r.calibration.source + ")"
                                : "anec calibrate: rule across the measured chips (" + r.rule + ")";
  Doc d = Doc::table();
  for (size_t k = 0; k < 5; ++k) {
    if (k == 4 && r.working_set_published.count(target))
      continue; // the reference publishes it
    Doc e = Doc::table();
    e.inline_table = true;
    e.set("value", rounded(r.target_rates.at(target).at(kRateFields[k])));
    e.set("source", Doc::string(k == 4 ? "anec calibrate: carried along " + r.working_set_rule +
                                             " from the published working sets"
                                       : source));
    e.set("confidence", Doc::string(measured && k < 4 ? "measured" : "predicted"));
    d.set(kRateFields[k], std::move(e));
  }
  return d;
}
} // namespace

std::string fitted_toml(const FitReport &r, const std::vector<Row> &rows) {
  Doc d = Doc::table();
  d.set("format", Doc::string("anec-calibration/1"));
  d.set("source", Doc::string(r.calibration.source));
  d.set("on_chip_gain", rounded(r.calibration.on_chip_gain));
  Doc fams = Doc::table();
  for (auto &[name, f] : r.calibration.families)
    fams.set(name, family_doc(f));
  d.set("families", std::move(fams));
  d.set("fallback", family_doc(r.calibration.fallback));
  Doc chips = Doc::table();
  for (auto &[name, rates] : r.calibration.chips) {
    Doc c = Doc::table();
    c.inline_table = true;
    std::string target;
    size_t n = 0;
    for (const Row &row : rows)
      if (row.chip == name)
        target = row.chip_target, n += 1;
    c.set("target", Doc::string(target));
    c.set("rows", Doc::integer(int64_t(n)));
    for (size_t k = 0; k < 5; ++k)
      c.set(kRateFields[k], rounded(rates.v[k]));
    chips.set(name, std::move(c));
  }
  d.set("chips", std::move(chips));
  Doc fit = Doc::table();
  Doc outl = Doc::array();
  for (const std::string &m : r.outlier_machines)
    outl.push(Doc::string(m));
  fit.set("outlier_machines", std::move(outl));
  for (const char *by : {"chip", "family"}) {
    ErrorTable t = error_table(r, rows, by);
    for (auto [kind, table] : {std::pair{"fit", &t.fit}, std::pair{"loco", &t.loco}}) {
      Doc g = Doc::table();
      for (auto &[k, s] : *table)
        g.set(k, stats_doc(s));
      fit.set(std::string(kind) + "_by_" + by, std::move(g));
    }
  }
  d.set("fit", std::move(fit));
  Doc targets = Doc::table();
  for (const auto &[t, _] : r.target_rates)
    targets.set(t, target_doc(r, t, rows));
  d.set("targets", std::move(targets));
  return toml::write(d);
}

} // namespace anec::compiler
