#include <anec/decode/binary.hpp>
#include <anec/hal/extract.hpp>
#include <anec/hal/registry.hpp>

#include <cstdio>

// argv[1], when given: a compiler binary to extract the m1 table from (through the installed
// decode module).
int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  fs::path t = TABLES;
  auto schema = anec::hal::Schema::load(t / "schema" / "hal.toml");
  auto lineup = anec::hal::load_lineup(t / "reference" / "lineup.toml");
  auto reg = anec::hal::Registry::load(schema, lineup, t / "targets");
  std::printf("%zu targets; m1 -> %s with %llu NE cores\n", reg.targets().size(), reg.get("m1").name.c_str(),
              static_cast<unsigned long long>(reg.get("m1").uint("num_nes")));
  if (reg.targets().size() != 28)
    return 1;
  if (argc > 1) {
    anec::decode::Binary binary = anec::decode::Binary::load(argv[1]);
    anec::hal::ExtractOptions options;
    options.targets = {"m1"};
    auto tables = anec::hal::extract(schema, reg, binary, options);
    std::printf("extracted %zu table(s): %s\n", tables.size(),
                tables.empty() ? "" : tables[0].target.c_str());
    return tables.size() == 1 ? 0 : 1;
  }
  return 0;
}
