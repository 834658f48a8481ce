// The anec-graph front-end: the project's own JSON graph format, read whole or one op at a time,
// and written back.
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"
#include "anec/support/job_thread.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace anec::compiler {

// The versioned JSON graph format (docs/graph-format.md): {"format": "anec-graph", "version": 1,
// "inputs": [...], "constants": [...], "ops": [...], "outputs": [...]}. Errors: ANEC-GRAPH-001
// malformed document, ANEC-GRAPH-002 a tensor used before it is defined or defined twice,
// ANEC-GRAPH-003 a bad shape or attribute (a dimension above kMaxDimension, a shape whose size
// overflows 64 bits).
Graph read_graph_json(std::string text, const std::string &source);

// A graph as an anec-graph document (read_graph_json reads it back): 5-D shapes, a symbolic
// dimension by its name; a constant's values as its "file" (made relative to `base`, the folder the
// document will be written to, from `source_dir`, the folder it was relative to) or its "data".
Doc graph_doc(const Graph &g, const std::filesystem::path &source_dir = {},
              const std::filesystem::path &base = {});

// The same format read one op at a time (support/json_stream.hpp), in memory that grows with the
// tensors, not with the ops or the file: graph() holds the inputs, constants, the outputs' names and
// every tensor the ops read so far define; its op list stays empty. The same checks and errors as
// read_graph_json, in the same order; the outputs are checked after the last op. Each op's
// attributes are also checked against `catalog`'s bounds as it is parsed (check_attribute_bounds,
// which infer_shapes leaves to the reader), so an op with a bad attribute may end the reading a
// run of ops early. An ops array of 4,096 ops or more is parsed on a thread of its own, up to two
// runs of ops ahead of next()'s (support/made_ahead.hpp); the graph is only touched by the caller's
// thread (the parsing thread asks the kernel to page in the storage its tensors will take, ahead:
// populate, support/huge_pages.hpp).
class GraphReader {
public:
  // nullopt when the file cannot be read this way (json::ArrayStream::open): read it whole.
  // `catalog` must outlive the reader.
  static std::optional<GraphReader> open(const std::filesystem::path &path, const OpCatalog &catalog);
  GraphReader(GraphReader &&) noexcept;
  ~GraphReader();
  Graph &graph();
  // The next op, its output tensors added to graph() (shapes not inferred) and the positions of its
  // tensors into `tensors` (as find_tensors gives them), valid until the next call; nullptr after
  // the last.
  Op *next(OpTensors &tensors);
  // A long ops array parsed ahead on `jobs` (which must outlive this), not on a thread of the
  // reader's own; before the first next().
  void parse_on(JobThread &jobs);

private:
  struct State;
  explicit GraphReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace anec::compiler
