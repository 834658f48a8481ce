// The tuner (seed ch.18, listing 18.2): enumerate equivalent rewrites, estimate each, keep the
// lowest that holds the tolerance. The rewrites are a table (tables/schema/rewrites.toml: pattern,
// conditions, replacement, source); each is applied where it matches, the candidate is evaluated on
// the host (eval.hpp) against the original graph on the same inputs, checked on the targets and
// estimated, and kept only when its error is within the tolerance, the checker rejects nothing more
// and the estimate (summed over the targets) falls (or stays level with fewer ops). Rewrites are tried in
// table order, all sites of one rewrite together, so the result is deterministic.
#pragma once
#include "anec/compiler/cost/calibration.hpp"
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/ir/graph.hpp"
#include "anec/hal/registry.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace anec::compiler {

struct Rewrite {
  std::string name, pattern, replacement, source;
  std::vector<std::string> conditions;
  std::string to;                            // retype: the new operation
  std::map<std::string, std::string> rename; // retype: attribute renames
  Doc set = Doc::table();                    // retype: attributes set
};

// Strict (ANEC-TUNE-001 with line:column): unknown keys, replacements or conditions.
std::vector<Rewrite> load_rewrites(const std::filesystem::path &path);

enum class Metric { max_abs, cosine };

struct TuneOptions {
  double tolerance = 0; // max_abs: the largest absolute difference; cosine: 1 - cosine similarity
  Metric metric = Metric::max_abs;
  EvalOptions eval; // precision, seed, inputs, constants' folder (its gemm is not used: the tuner
                    // always verifies with the reference GEMM)
  std::filesystem::path source_dir; // the folder the graph's constant files are relative to
};

struct TuneStep {
  std::string rewrite, source;
  std::vector<std::string> sites; // the ops it starts from
  double error = 0;               // the metric against the original graph (when evaluated)
  double before_us = 0, after_us = 0;
  bool kept = false;
  std::string why; // kept, or why not
};

struct TuneResult {
  Graph best;
  std::vector<TuneStep> steps;        // one per rewrite that matched somewhere
  double before_us = 0, after_us = 0; // the estimate summed over the targets
  std::vector<std::string> unchecked; // outputs the evaluator cannot compute (their accuracy is unchecked)
};

// `g` must have concrete shapes. Errors: those of the evaluator and the estimate on `g` itself.
TuneResult tune(const Graph &g, const OpCatalog &catalog, const Numerics &numerics,
                const std::vector<Rewrite> &rewrites, const std::vector<const hal::Target *> &targets,
                const Calibration *calibration, const TuneOptions &options);

} // namespace anec::compiler
