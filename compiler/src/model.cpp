#include "anec/compiler/model.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/plist.hpp"

namespace anec::compiler {

Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog, const DimBindings &dims) {
  std::string ext = path.extension().string();
  Graph g;
  if (ext == ".onnx") // mapped, not copied: protobuf parses in place; shapes come from ONNX inference
    return read_onnx(InputFile::open(path, 1ull << 30).text(), path.string(), dims);
  if (ext == ".json") {
    g = read_graph_json(json::parse(read_text_file(path, 256ull << 20), path.string()), path.string());
  } else if (ext == ".plist") {
    g = read_network_plist(plist::parse(read_text_file(path, 256ull << 20), path.string()), path.string());
  } else {
    throw Error("ANEC-MODEL-001", path.string() + ": no front-end reads '" + ext + "' files (known: .json anec-graph, .plist network, .onnx)");
  }
  for (const auto &[name, value] : dims) {
    bool used = false;
    for (const std::string &in : g.inputs)
      for (int a = 0; a < 5; ++a) {
        Shape &s = g.tensors[g.index.at(in)].shape;
        if (s.d[a] < 0 && s.symbol[a] == name) {
          s.d[a] = value;
          s.symbol[a].clear();
          used = true;
        }
      }
    if (!used) throw Error("ANEC-MODEL-003", path.string() + ": no input dimension is named '" + name + "'");
  }
  infer_shapes(g, catalog);
  return g;
}

} // namespace anec::compiler
