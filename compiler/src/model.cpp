#include "anec/compiler/model.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/plist.hpp"

namespace anec::compiler {

Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog) {
  std::string ext = path.extension().string();
  Graph g;
  if (ext == ".json") {
    g = read_graph_json(json::parse(read_text_file(path, 256ull << 20), path.string()), path.string());
  } else if (ext == ".plist") {
    g = read_network_plist(plist::parse(read_text_file(path, 256ull << 20), path.string()), path.string());
  } else {
    throw Error("ANEC-MODEL-001", path.string() + ": no front-end reads '" + ext + "' files (known: .json anec-graph, .plist network)");
  }
  infer_shapes(g, catalog);
  return g;
}

} // namespace anec::compiler
