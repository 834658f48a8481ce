// The second consumer, compiled and linked with `pkg-config --cflags --libs anec` alone: it finds
// the installed tables without being told and reads one target table.
#include <anec/hal/registry.hpp>
#include <anec/support/tables_path.hpp>

#include <cstdio>

int main() {
  std::filesystem::path t = anec::use_tables();
  auto schema = anec::hal::Schema::load(t / "schema" / "hal.toml");
  anec::hal::TargetTables tables(schema, t);
  const anec::hal::Target &m1 = tables.get("m1");
  std::printf("pkg-config consumer: %s, m1 -> %s with %llu NE cores\n", t.c_str(), m1.name.c_str(),
              static_cast<unsigned long long>(m1.uint("num_nes")));
  return 0;
}
