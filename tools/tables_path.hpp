// Where the command-line tools find tables/ and their compiled forms: the library's lookup
// (anec/support/tables_path.hpp), --tables DIR first.
#pragma once
#include "anec/support/tables_path.hpp"

#include <filesystem>
#include <string>

namespace anec::tools {

inline std::filesystem::path find_tables(const std::string &option) {
  return anec::use_tables(option);
}

} // namespace anec::tools
