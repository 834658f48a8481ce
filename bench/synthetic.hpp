// What the compiler and report benchmarks share: the tables, h13, and a synthetic chain of N
// operations (conv, relu and add layers, every seventh a host operation so that the placement has
// partitions and boundaries).
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"
#include "anec/compiler/ir/shapes.hpp"
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"

#include <filesystem>
#include <string>

namespace anec::bench {

inline const std::filesystem::path kTables = ANEC_BENCH_TABLES_DIR;

inline const hal::Target &h13() {
  static const hal::Schema schema = hal::Schema::load(kTables / "schema" / "hal.toml");
  static const hal::Registry r = hal::Registry::load(
      schema, hal::load_lineup(kTables / "reference" / "lineup.toml"), kTables / "targets");
  return r.get("h13");
}
inline const compiler::OpCatalog &catalog() {
  static const compiler::OpCatalog c = compiler::OpCatalog::load(kTables / "schema" / "ops.toml");
  return c;
}

inline compiler::Graph chain(size_t n) {
  using namespace compiler;
  Graph g;
  g.source = "synthetic";
  Tensor x;
  x.name = "t0";
  x.shape.d = {1, 1, 64, 56, 56};
  g.inputs.push_back(g.add(x).name);
  Doc conv = Doc::table();
  conv.set("out_channels", Doc::integer(64));
  Doc k = Doc::array();
  k.push(Doc::integer(3));
  k.push(Doc::integer(3));
  conv.set("kernel", k);
  Doc pad = Doc::array();
  for (int i = 0; i < 4; ++i)
    pad.push(Doc::integer(1));
  conv.set("pad", pad);
  for (size_t i = 0; i < n; ++i) {
    Op op;
    op.name = "op" + std::to_string(i);
    op.type = i % 7 == 6 ? "tan" : i % 3 == 0 ? "conv" : i % 3 == 1 ? "relu" : "add";
    op.inputs.push_back("t" + std::to_string(i));
    if (op.type == "add")
      op.inputs.push_back("t" + std::to_string(i > 1 ? i - 1 : 0));
    if (op.type == "conv")
      op.attrs = conv;
    Tensor t;
    t.name = "t" + std::to_string(i + 1);
    g.add(t);
    op.outputs.push_back(t.name);
    g.ops.push_back(std::move(op));
  }
  g.outputs.push_back("t" + std::to_string(n));
  infer_shapes(g, catalog());
  return g;
}

} // namespace anec::bench
