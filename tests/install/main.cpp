#include <anec/compiler/check/check.hpp>
#include <anec/compiler/frontends/anec_graph.hpp>
#include <anec/compiler/ir/graph.hpp>
#include <anec/compiler/ir/ops.hpp>
#include <anec/decode/binary.hpp>
#include <anec/hal/extract.hpp>
#include <anec/hal/registry.hpp>
#include <anec/support/error.hpp>
#include <anec/support/plugin.hpp>
#include <anec/support/tables_path.hpp>

#include <cstdio>
#include <string>

// A small model in the anec-graph format (docs/graph-format.md).
const char *const kModel = R"({"format": "anec-graph", "version": 1,
  "inputs": [{"name": "x", "shape": [1, 64, 28, 28], "dtype": "fp16"}],
  "ops": [{"name": "conv", "op": "conv", "inputs": ["x"], "outputs": ["y"],
           "attrs": {"out_channels": 64, "kernel": [3, 3], "pad": [1, 1, 1, 1]}},
          {"name": "act", "op": "relu", "inputs": ["y"], "outputs": ["z"]}],
  "outputs": ["z"]})";

// A consumer of the installed package, run from the install prefix: it finds the tables without
// being told (`--tables DIR` as its first arguments overrides), loads one target table, checks a
// small anec-graph model on it, then reads the line-up. A remaining argument: a compiler binary to
// extract the m1 table from (through the installed decode module).
int main(int argc, char **argv) try {
  int arg = 1;
  std::string option;
  if (argc > 2 && std::string(argv[1]) == "--tables") {
    option = argv[2];
    arg = 3;
  }
  std::filesystem::path t = anec::use_tables(option);
  std::printf("tables: %s\n", t.c_str());
  auto schema = anec::hal::Schema::load(t / "schema" / "hal.toml");
  anec::hal::TargetTables tables(schema, t);
  const anec::hal::Target &h16 = tables.get("h16");
  auto catalog = anec::compiler::OpCatalog::load(t / "schema" / "ops.toml");
  auto graph = anec::compiler::read_graph_json(kModel, "consumer.json");
  auto result = anec::compiler::check(graph, catalog, h16);
  std::printf("check on %s: %s, %zu ops\n", h16.name.c_str(), anec::compiler::verdict_name(result.verdict),
              result.ops.size());
  const anec::hal::Registry &reg = tables.all();
  std::printf("%zu targets; m1 -> %s with %llu NE cores\n", reg.targets().size(), reg.get("m1").name.c_str(),
              static_cast<unsigned long long>(reg.get("m1").uint("num_nes")));
  if (reg.targets().size() != 28 || result.verdict != anec::compiler::Verdict::Native)
    return 1;
  if (arg < argc) {
    std::vector<std::filesystem::path> modules = anec::plugin::search_path();
    std::printf("modules: %s\n", modules.empty() ? "(none)" : modules.front().c_str());
    anec::decode::Binary binary = anec::decode::Binary::load(argv[arg]);
    anec::hal::ExtractOptions options;
    options.targets = {"m1"};
    auto extracted = anec::hal::extract(schema, reg, binary, options);
    std::printf("extracted %zu table(s): %s\n", extracted.size(),
                extracted.empty() ? "" : extracted[0].target.c_str());
    return extracted.size() == 1 ? 0 : 1;
  }
  return 0;
} catch (const anec::Error &e) {
  std::fprintf(stderr, "consumer: %s\n", e.what());
  return 2;
}
