// Core ML bundles (coreml.hpp): a .mlpackage (Manifest.json names the root model, usually
// Data/com.apple.CoreML/model.mlmodel, and its weights folder), a compiled .mlmodelc (model.mil and
// weights/ for an mlProgram; model.espresso.net, .shape and .weights for a NeuralNetwork;
// metadata.json for the inputs and outputs). Every path a manifest names is resolved inside the
// bundle, symbolic links followed, and refused when it leaves it.
#include "anec/compiler/frontends/coreml.hpp"

#include "anec/compiler/ir/shapes.hpp"
#include "anec/support/corpus.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/inside.hpp"
#include "anec/support/json.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace anec::compiler {

namespace fs = std::filesystem;

namespace {
constexpr uint64_t kMaxJson = 16ull << 20; // a manifest, metadata.json or espresso net

const Doc *member(const Doc &d, const char *key, Doc::Kind kind) {
  const Doc *x = d.is(Doc::Kind::Table) ? d.find(key) : nullptr;
  return x && x->is(kind) ? x : nullptr;
}
std::string text(const Doc &d, const char *key) {
  const Doc *x = member(d, key, Doc::Kind::String);
  return x ? x->as_string() : "";
}

// `relative` resolved under `root` (a folder of the bundle), every link followed (one that leads
// nowhere too), refused when it leaves the bundle.
fs::path inside(const fs::path &bundle, const fs::path &root, const std::string &relative) {
  fs::path rel(relative);
  std::optional<fs::path> full;
  if (!rel.is_absolute() && !rel.has_root_name())
    full = resolve_inside(bundle, root.lexically_relative(bundle) / rel);
  if (!full)
    throw Error("ANEC-COREML-004", bundle.string() + ": the path '" + relative +
                                       "' leaves the bundle; a bundle's files stay inside it");
  return *full;
}

// The bundle holds an entry of that name (a link counts, wherever it leads: inside() decides, before
// anything it leads to is looked at).
bool present(const fs::path &entry) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(entry, ec));
}
} // namespace

bool is_bundle(const fs::path &path) {
  return is_bundle_dir(path, kBundleExtensions);
}

namespace {
// What a compiled bundle (.mlmodelc) holds, by the file that marks it: an mlProgram's MIL text, or a
// NeuralNetwork compiled for Espresso; and where its weights are.
struct CompiledModel {
  const char *file, *format, *weights;
};
constexpr CompiledModel kCompiledModels[] = {{"model.mil", "mil", "weights"},
                                             {"model.espresso.net", "espresso", "model.espresso.weights"}};
} // namespace

BundleModel resolve_bundle(const fs::path &bundle) {
  BundleModel out;
  fs::path dir = bundle.filename().empty() ? bundle.parent_path() : bundle;
  if (dir.extension() == ".mlpackage") {
    if (!present(dir / "Manifest.json"))
      throw Error("ANEC-COREML-005", dir.string() + ": a .mlpackage without Manifest.json");
    fs::path manifest = inside(dir, dir, "Manifest.json");
    Doc m = json::parse(read_text_file(manifest, kMaxJson), manifest.string());
    std::string root = text(m, "rootModelIdentifier");
    const Doc *items = member(m, "itemInfoEntries", Doc::Kind::Table);
    const Doc *item = items && !root.empty() ? member(*items, root.c_str(), Doc::Kind::Table) : nullptr;
    if (!item || text(*item, "path").empty())
      throw Error("ANEC-COREML-005", manifest.string() + ": rootModelIdentifier '" + root +
                                         "' names no item with a path in itemInfoEntries");
    out.file = inside(dir, dir / "Data", text(*item, "path"));
    out.format = "coreml";
    for (const DocMember &e : items->members())
      if (e.value.is(Doc::Kind::Table) && text(e.value, "name") == "weights")
        out.weights = inside(dir, dir / "Data", text(e.value, "path"));
    if (!fs::is_regular_file(out.file))
      throw Error("ANEC-COREML-005",
                  dir.string() + ": the root model '" + text(*item, "path") + "' is missing");
    return out;
  }
  for (const CompiledModel &c : kCompiledModels) {
    if (!present(dir / c.file))
      continue;
    out.file = inside(dir, dir, c.file);
    out.format = c.format;
    if (present(dir / c.weights))
      out.weights = inside(dir, dir, c.weights);
    return out;
  }
  throw Error("ANEC-COREML-005", dir.string() + ": the bundle holds no model (no Manifest.json, model.mil "
                                                "or model.espresso.net)");
}

BundleMetadata read_bundle_metadata(const fs::path &bundle) {
  BundleMetadata out;
  fs::path file = inside(bundle, bundle, "metadata.json");
  if (!fs::exists(file))
    return out;
  Doc d = json::parse(read_text_file(file, kMaxJson), file.string());
  const Doc *top = d.is(Doc::Kind::Array) && !d.items().empty() ? &d.items()[0] : &d;
  if (const Doc *t = member(*top, "modelType", Doc::Kind::Table))
    out.model_type = text(*t, "name");
  if (const Doc *v = member(*top, "specificationVersion", Doc::Kind::Int))
    out.spec_version = v->as_int();
  auto schema = [&](const char *key, std::vector<std::string> &list) {
    if (const Doc *a = member(*top, key, Doc::Kind::Array))
      for (const Doc &f : a->items())
        list.push_back(text(f, "name") + ":" + text(f, "dataType") + text(f, "shape"));
  };
  schema("inputSchema", out.inputs);
  schema("outputSchema", out.outputs);
  return out;
}

namespace {
// "a,b" -> {"a", "b"}
std::vector<std::string> blobs(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty())
      out.push_back(x);
  return out;
}

} // namespace

Graph read_espresso(const fs::path &bundle, const OpCatalog &catalog) {
  fs::path dir = bundle.filename().empty() ? bundle.parent_path() : bundle;
  fs::path net_file = inside(dir, dir, "model.espresso.net");
  std::string source = dir.string();
  Doc net = json::parse(read_text_file(net_file, kMaxJson), net_file.string());
  std::map<std::string, std::vector<int64_t>> shapes; // blob -> [n, k, h, w]
  if (fs::path sf = inside(dir, dir, "model.espresso.shape"); fs::exists(sf)) {
    Doc s = json::parse(read_text_file(sf, kMaxJson), sf.string());
    if (const Doc *ls = member(s, "layer_shapes", Doc::Kind::Table))
      for (const DocMember &b : ls->members()) {
        std::vector<int64_t> v;
        for (const char *k : {"n", "k", "h", "w"}) {
          const Doc *x = member(b.value, k, Doc::Kind::Int);
          v.push_back(x && x->as_int() >= 1 && x->as_int() <= kMaxDimension ? x->as_int() : 1);
        }
        shapes[b.key] = v;
      }
  }
  Graph g;
  g.source = source;
  g.front_end = "coreml espresso";
  const Doc *layers = member(net, "layers", Doc::Kind::Array);
  if (!layers)
    throw Error("ANEC-COREML-001", net_file.string() + ": not an espresso net (no layers list)");
  if (const Doc *v = member(net, "format_version", Doc::Kind::Int))
    g.notes.push_back("espresso net format_version " + std::to_string(v->as_int()));
  std::set<std::string> produced, consumed;
  for (const Doc &l : layers->items()) {
    for (const std::string &b : blobs(text(l, "bottom")))
      if (!produced.count(b))
        consumed.insert(b);
    for (const std::string &t : blobs(text(l, "top")))
      produced.insert(t);
  }
  BundleMetadata meta = read_bundle_metadata(dir);
  auto make = [&](const std::string &name) {
    Tensor t;
    t.name = name;
    auto it = shapes.find(name);
    if (it != shapes.end())
      t.shape.d = {it->second[0], 1, it->second[1], it->second[2], it->second[3]};
    t.source_rank = 4;
    return t;
  };
  for (const std::string &in : consumed) // the blobs read before any layer writes them
    g.inputs.push_back(g.add(make(in)).name);
  std::map<std::string, size_t> unmapped;
  for (const Doc &l : layers->items()) {
    Op op;
    std::string type = text(l, "type");
    op.name = text(l, "name");
    const FrontEndOp *row = catalog.front_end("coreml", "espresso:" + type);
    op.type = row ? row->op : "espresso:" + type;
    if (!row)
      ++unmapped[type];
    ++g.source_nodes;
    op.inputs = blobs(text(l, "bottom"));
    for (const std::string &t : blobs(text(l, "top"))) {
      Tensor x = make(t);
      if (g.try_add(std::move(x)))
        op.outputs.push_back(t);
    }
    if (op.type == "linear")
      if (auto it = shapes.find(op.outputs.empty() ? "" : op.outputs[0]); it != shapes.end())
        op.attrs.set("out_features", Doc::integer(it->second[1]));
    if (!op.outputs.empty())
      g.ops.push_back(std::move(op));
  }
  for (const std::string &t : produced) {
    bool read_later = false;
    for (const Doc &l : layers->items())
      for (const std::string &b : blobs(text(l, "bottom")))
        read_later = read_later || b == t;
    if (!read_later)
      g.outputs.push_back(t);
  }
  for (const auto &[type, count] : unmapped)
    g.notes.push_back("unmapped espresso layer " + type + " x" + std::to_string(count));
  for (const std::string &i : meta.inputs)
    g.notes.push_back("metadata.json input " + i);
  for (const std::string &o : meta.outputs)
    g.notes.push_back("metadata.json output " + o);
  return g;
}

} // namespace anec::compiler
