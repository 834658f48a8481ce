#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/frontends/anec_graph.hpp"
#include "anec/compiler/frontends/coreml.hpp"
#include "anec/compiler/frontends/mil.hpp"
#include "anec/compiler/frontends/onnx.hpp"
#include "anec/compiler/frontends/plist.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/compiler/ir/skip.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/plist.hpp"

#include <optional>

namespace anec::compiler {

namespace {
// Binds a symbolic input dimension by name, or by "INPUT:AXIS" with the axis counted in the shape
// the model gives (4-D N,C,H,W or 5-D N,D,C,H,W).
void bind_dimension(Graph &g, const std::string &name, int64_t value, const std::string &source) {
  size_t colon = name.rfind(':');
  bool used = false;
  for (const std::string &in : g.inputs) {
    Tensor &t = *g.tensor(in);
    bool named = false; // a symbol of that name ("x:1", as the MIL reader names an unnamed `?`)
    for (int a = 0; a < 5; ++a)
      if (t.shape.d[a] < 0 && t.shape.symbol[a] == name) {
        t.shape.d[a] = value;
        t.shape.symbol[a].clear();
        t.dynamic = used = named = true;
      }
    if (named || colon == std::string::npos || name.substr(0, colon) != in)
      continue;
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

void bind_dimensions(Graph &g, const DimBindings &dims) {
  for (const auto &[name, value] : dims)
    bind_dimension(g, name, value, g.source);
}

namespace {
Graph read_anec_graph(const ReadRequest &r) {
  return read_graph_json(std::string(r.bytes), r.source);
}
Graph read_plist(const ReadRequest &r) {
  return read_network_plist(plist::parse(r.bytes, r.source), r.source, r.catalog);
}
// A MIL program's BLOBFILE weights are found under @model_path: the .mil's own folder (a .mlmodelc
// bundle reads its model.mil with the bundle as the folder, which is the same). From memory there
// is no folder: the weights' sizes come from their types.
Graph read_mil_program(const ReadRequest &r) {
  MilContext context;
  std::filesystem::path p(r.source);
  std::error_code ec;
  if (!r.model_folder.empty())
    context.model_path = r.model_folder;
  else if (!r.source.empty() && std::filesystem::is_regular_file(p, ec))
    context.model_path = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  context.keep_values = r.keep_values;
  return read_mil(r.bytes, r.source, r.catalog, r.dims, context);
}
Graph read_onnx_model(const ReadRequest &r) {
  return read_onnx(r.bytes, r.source, r.catalog, r.dims, r.keep_values, r.model_folder, r.max_memory);
}
Graph read_coreml_model(const ReadRequest &r) {
  return read_coreml(r.bytes, r.source, r.catalog, r.dims, r.model_folder, r.keep_values);
}

// The formats a front-end reads, each as "FORMAT KIND" (for ANEC-MODEL-001).
std::string known(const char *FrontEnd::*name) {
  std::string out;
  for (const FrontEnd &f : front_ends())
    out += (out.empty() ? "" : ", ") + std::string(f.*name) + (*f.kind ? std::string(" ") + f.kind : "");
  return out;
}

Graph read_normalised(const FrontEnd &f, const ReadRequest &r) {
  Graph g = f.read(r);
  normalise(g, f, r.catalog, r.dims);
  return g;
}
} // namespace

const std::vector<FrontEnd> &front_ends() {
  static const std::vector<FrontEnd> table = {
      {"json", ".json", "anec-graph", 256ull << 20, false, false, false, read_anec_graph},
      {"plist", ".plist", "network", 256ull << 20, false, false, false, read_plist},
      // Mapped, not copied: protobuf parses in place; shapes come from ONNX inference.
      // External data is found in the model file's folder, and only there.
      {"onnx", ".onnx", "", 1ull << 30, true, true, true, read_onnx_model},
      // Shapes are the text's own types (bound by --dim in the reader), so only skip marking remains.
      {"mil", ".mil", "program", kMilMaxBytes, false, true, true, read_mil_program},
      // Mapped, not copied, as ONNX; bundles (.mlpackage, .mlmodelc) are folders: load_model. The
      // reader binds and infers (a NeuralNetwork through the catalogue, an mlProgram from its types).
      // A bare .mlmodel has no folder of its own: only a bundle's weights are read.
      {"coreml", ".mlmodel", "", 1ull << 30, true, true, false, read_coreml_model},
  };
  return table;
}

std::set<std::string> model_extensions() {
  std::set<std::string> out;
  for (const FrontEnd &f : front_ends())
    out.insert(f.extension);
  return out;
}

void normalise(Graph &g, const FrontEnd &front_end, const OpCatalog &catalog, const DimBindings &dims) {
  if (!front_end.binds_and_infers) {
    bind_dimensions(g, dims);
    infer_shapes(g, catalog);
  }
  mark_skippable(g, catalog);
}

Graph read_model(std::string_view bytes, std::string_view format, const std::string &source,
                 const OpCatalog &catalog, const DimBindings &dims, bool keep_values, double max_memory) {
  for (const FrontEnd &f : front_ends())
    if (format == f.format)
      return read_normalised(f, {bytes, source, catalog, dims, keep_values, {}, max_memory});
  throw Error("ANEC-MODEL-001", source + ": no front-end reads '" + std::string(format) +
                                    "' models (known: " + known(&FrontEnd::format) + ")");
}

namespace {
const FrontEnd *front_end_named(std::string_view format) {
  for (const FrontEnd &f : front_ends())
    if (format == f.format)
      return &f;
  return nullptr;
}

// A Core ML bundle is one model: the model its manifest (.mlpackage) or its files (.mlmodelc) name,
// read by the front-end of that model's format, its weights resolved inside the bundle (the folder
// that holds the model file: @model_path of its BLOBFILEs), named as the user named the bundle.
Graph load_bundle(const std::filesystem::path &path, const OpCatalog &catalog, const DimBindings &dims,
                  bool keep_values, double max_memory) {
  BundleModel b = resolve_bundle(path);
  std::filesystem::path dir = path.filename().empty() ? path.parent_path() : path;
  std::error_code ec;
  std::string inner = b.file.lexically_relative(std::filesystem::weakly_canonical(dir, ec)).generic_string();
  std::string what =
      "bundle " + dir.filename().string() + ": reads " + (inner.empty() ? b.file.string() : inner);
  Graph g;
  if (b.format == "espresso") {
    g = read_espresso(path, catalog);
    bind_dimensions(g, dims);
    infer_shapes(g, catalog);
    mark_skippable(g, catalog);
    what += " (a NeuralNetwork compiled for Espresso)";
  } else {
    const FrontEnd *f = front_end_named(b.format);
    if (!f)
      throw Error("ANEC-MODEL-001", path.string() + ": the bundle holds " + b.file.filename().string() +
                                        " and no front-end reads '" + b.format +
                                        "' models (known: " + known(&FrontEnd::format) + ")");
    std::string text = f->mapped ? std::string() : read_text_file(b.file, f->max_bytes);
    std::optional<InputFile> mapped;
    if (f->mapped)
      mapped.emplace(InputFile::open(b.file, f->max_bytes));
    g = read_normalised(*f, {f->mapped ? mapped->text() : std::string_view(text), b.file.string(), catalog,
                             dims, keep_values, b.file.parent_path(), max_memory});
    if (!b.weights.empty())
      what += ", weights in " + b.weights.lexically_relative(b.file.parent_path()).generic_string();
  }
  g.source = dir.string();
  g.notes.insert(g.notes.begin(), what);
  return g;
}
} // namespace

Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog, const DimBindings &dims,
                 bool keep_values, double max_memory) {
  if (is_bundle(path))
    return load_bundle(path, catalog, dims, keep_values, max_memory);
  std::string ext = path.extension().string(), source = path.string();
  for (const FrontEnd &f : front_ends()) {
    if (ext != f.extension)
      continue;
    std::filesystem::path folder;
    if (f.own_folder)
      folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    if (f.mapped)
      return read_normalised(f, {InputFile::open(path, f.max_bytes).text(), source, catalog, dims,
                                 keep_values, folder, max_memory});
    return read_normalised(
        f, {read_text_file(path, f.max_bytes), source, catalog, dims, keep_values, folder, max_memory});
  }
  throw Error("ANEC-MODEL-001", source + ": no front-end reads '" + ext +
                                    "' files (known: " + known(&FrontEnd::extension) + ")");
}

} // namespace anec::compiler
