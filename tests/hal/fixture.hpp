#pragma once
#include "anec/hal/reference.hpp"
#include "anec/hal/registry.hpp"
#include "anec/hal/schema.hpp"
#include "paths.hpp"

namespace anec::test {

// The real tables, loaded once per test binary.
struct Tables {
  hal::Schema schema = hal::Schema::load(tables() / "schema" / "hal.toml");
  hal::Lineup lineup = hal::load_lineup(tables() / "reference" / "lineup.toml");
  std::vector<hal::Target> reference = hal::load_reference(schema, lineup, tables() / "reference");
  hal::Registry registry = hal::Registry::load(schema, lineup, tables() / "targets");

  static const Tables &get() {
    static const Tables t;
    return t;
  }
};

} // namespace anec::test
