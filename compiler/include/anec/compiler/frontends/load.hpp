// Models to graphs: one pipeline over every front-end. A reader (anec_graph.hpp, plist.hpp, onnx.hpp)
// turns a format into a graph; read_model and load_model then take every reader's graph through the
// same steps: bind the dimensions (--dim), infer the shapes, mark what is skippable at run time
// (skip.hpp). ANEC-MODEL-001 for a file no front-end reads.
#pragma once
#include "anec/compiler/ir/budget.hpp"
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace anec::compiler {

// What a reader is given.
struct ReadRequest {
  std::string_view bytes;
  const std::string &source; // the model's name in messages
  const OpCatalog &catalog;
  const DimBindings &dims;
  bool keep_values = false; // read_onnx's: the weights' values for the evaluator
  // The folder a model's external weights are resolved in (a bundle's, an ONNX or MIL file's own; ""
  // from memory or for a bare .mlmodel); a MIL file's own folder is used when this is empty.
  std::filesystem::path model_folder = {};
  double max_memory = kDefaultMaxMemory; // the run's budget (ANEC-MEM-001), for what the reader makes
};

// One front-end: its format name, its file extension, its largest file, and what its reader does
// itself. A reader that binds the dimensions and infers the shapes (ONNX: libonnx's inference,
// which must see the bound values) leaves only the skip marking to the pipeline.
struct FrontEnd {
  const char *format;    // "json", "plist", "onnx"
  const char *extension; // ".json"
  const char *kind;      // "anec-graph", "network", "" (named in the list of known formats)
  uint64_t max_bytes;    // a larger file is refused (ANEC-IO-*)
  bool mapped;           // read from the mapped file, not a copy
  bool binds_and_infers; // the reader binds `dims` and infers the shapes itself
  bool own_folder;       // read from a file, its weights are found in the file's folder (model_folder)
  Graph (*read)(const ReadRequest &request);
};
const std::vector<FrontEnd> &front_ends();
// The file extensions the front-ends read (".json", ".plist", ...): the files a corpus folder holds.
std::set<std::string> model_extensions();

// Binds symbolic input dimensions by name, or by "INPUT:AXIS" with the axis counted in the shape the
// model gives (4-D N,C,H,W or 5-D N,D,C,H,W); ANEC-MODEL-003 as below.
void bind_dimensions(Graph &g, const DimBindings &dims);

// The steps after a reader: bind the dimensions (ANEC-MODEL-003 for a name no input dimension
// carries, an axis the input lacks, or a fixed axis bound otherwise), infer the shapes, mark the
// skippable operations.
void normalise(Graph &g, const FrontEnd &front_end, const OpCatalog &catalog, const DimBindings &dims);

// A model file, by its extension. `keep_values`: as read_onnx's (the other front-ends read the
// values they are given); `max_memory`: the budget of what the ONNX reader makes (read_onnx).
Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog, const DimBindings &dims = {},
                 bool keep_values = false, double max_memory = kDefaultMaxMemory);
// The same from memory (the Python module's bytes): `format` is the front-end, "json", "plist" or
// "onnx" (ANEC-MODEL-001 for another), `source` names the model in messages.
Graph read_model(std::string_view bytes, std::string_view format, const std::string &source,
                 const OpCatalog &catalog, const DimBindings &dims = {}, bool keep_values = false,
                 double max_memory = kDefaultMaxMemory);

} // namespace anec::compiler
