#include "anec/compiler/model.hpp"
#include "anec/compiler/skip.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/plist.hpp"

namespace anec::compiler {

namespace {
// Binds a symbolic input dimension by name, or by "INPUT:AXIS" with the axis counted in the shape
// the model gives (4-D N,C,H,W or 5-D N,D,C,H,W).
void bind_dimension(Graph &g, const std::string &name, int64_t value, const std::string &source) {
  size_t colon = name.rfind(':');
  bool used = false;
  for (const std::string &in : g.inputs) {
    Tensor &t = *g.tensor(in);
    for (int a = 0; a < 5; ++a)
      if (t.shape.d[a] < 0 && t.shape.symbol[a] == name) {
        t.shape.d[a] = value;
        t.shape.symbol[a].clear();
        t.dynamic = used = true;
      }
    if (colon == std::string::npos || name.substr(0, colon) != in) continue;
    std::string axis = name.substr(colon + 1);
    int rank = t.source_rank == 4 ? 4 : 5;
    int k = axis.size() == 1 && axis[0] >= '0' && axis[0] < char('0' + rank) ? axis[0] - '0' : -1;
    if (k < 0)
      throw Error("ANEC-MODEL-003", source + ": input '" + in + "' has " + std::to_string(rank) +
                                        " axes; --dim " + name + " names axis " + axis);
    int a = rank == 4 && k > 0 ? k + 1 : k;
    if (t.shape.d[a] >= 0 && t.shape.d[a] != value)
      throw Error("ANEC-MODEL-003", source + ": input '" + in + "' axis " + axis + " is fixed at " +
                                        std::to_string(t.shape.d[a]) + "; --dim gives " +
                                        std::to_string(value));
    t.shape.d[a] = value;
    t.shape.symbol[a].clear();
    t.dynamic = used = true;
  }
  if (!used)
    throw Error("ANEC-MODEL-003",
                source + ": no input dimension is named '" + name + "' (an unnamed one binds as INPUT:AXIS)");
}
} // namespace

Graph read_model(std::string_view bytes, std::string_view format, const std::string &source,
                 const OpCatalog &catalog, const DimBindings &dims, bool keep_values) {
  if (format == "onnx")
    return read_onnx(bytes, source, catalog, dims, keep_values);
  Graph g;
  if (format == "json")
    g = read_graph_json(std::string(bytes), source);
  else if (format == "plist")
    g = read_network_plist(plist::parse(bytes, source), source, catalog);
  else
    throw Error("ANEC-MODEL-001", source + ": no front-end reads '" + std::string(format) +
                                      "' models (known: json anec-graph, plist network, onnx)");
  for (const auto &[name, value] : dims)
    bind_dimension(g, name, value, source);
  infer_shapes(g, catalog);
  mark_skippable(g, catalog);
  return g;
}

Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog, const DimBindings &dims,
                 bool keep_values) {
  std::string ext = path.extension().string();
  if (ext == ".onnx") // mapped, not copied: protobuf parses in place; shapes come from ONNX inference
    return read_onnx(InputFile::open(path, 1ull << 30).text(), path.string(), catalog, dims, keep_values);
  if (ext != ".json" && ext != ".plist")
    throw Error("ANEC-MODEL-001", path.string() + ": no front-end reads '" + ext + "' files (known: .json anec-graph, .plist network, .onnx)");
  return read_model(read_text_file(path, 256ull << 20), ext.substr(1), path.string(), catalog, dims,
                    keep_values);
}

namespace {
std::optional<ModelSummary> summarize_while_reading(const std::filesystem::path &path,
                                                    const OpCatalog &catalog, const DimBindings &dims,
                                                    const std::vector<const hal::Target *> &targets,
                                                    const Calibration *calibration, const std::string &chip) {
  if (path.extension() != ".json")
    return std::nullopt;
  std::optional<GraphReader> reader = GraphReader::open(path);
  if (!reader)
    return std::nullopt;
  Graph &g = reader->graph();
  for (const auto &[name, value] : dims)
    bind_dimension(g, name, value, path.string());
  infer_shapes(g, catalog); // no ops yet: the inputs' and constants' sizes
  GraphCheck checks(g, catalog, targets, Detail::Summary);
  GraphEstimate estimates(g, catalog, targets, calibration, chip, Detail::Summary);
  while (Op *op = reader->next()) {
    infer_shapes(g, *op, catalog);
    mark_skippable(g, *op, catalog);
    checks.add(*op);
    estimates.add(*op);
  }
  return ModelSummary{checks.finish(), estimates.finish(), true};
}
} // namespace

ModelSummary summarize_model(const std::filesystem::path &path, const OpCatalog &catalog,
                             const DimBindings &dims, const std::vector<const hal::Target *> &targets,
                             const Calibration *calibration, const std::string &chip) {
  try {
    if (auto summary = summarize_while_reading(path, catalog, dims, targets, calibration, chip))
      return std::move(*summary);
  } catch (const Error &) {
    // Read whole below: the whole-document reader reports the error as it reports it for any file.
  }
  Graph g = load_model(path, catalog, dims);
  return {check(g, catalog, targets, Detail::Summary),
          estimate(g, catalog, targets, calibration, chip, Detail::Summary)};
}

} // namespace anec::compiler
