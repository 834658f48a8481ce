#include <anec/hal/registry.hpp>

#include <cstdio>

int main() {
  namespace fs = std::filesystem;
  fs::path t = TABLES;
  auto schema = anec::hal::Schema::load(t / "schema" / "hal.toml");
  auto lineup = anec::hal::load_lineup(t / "reference" / "lineup.toml");
  auto reg = anec::hal::Registry::load(schema, lineup, t / "targets");
  std::printf("%zu targets; m1 -> %s with %llu NE cores\n", reg.targets().size(), reg.get("m1").name.c_str(),
              static_cast<unsigned long long>(reg.get("m1").uint("num_nes")));
  return reg.targets().size() == 28 ? 0 : 1;
}
