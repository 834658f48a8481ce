// Modules loaded on first use. A third-party library that only some commands need (LIEF, Capstone
// and Unicorn for reading compiler binaries, ONNX and protobuf for .onnx models) is wrapped in a
// module (a shared object built with the project, not linked by any tool), so that the dynamic
// loader and the library's static initialisers cost nothing to a command that never uses it.
//
// A module exports one extern "C" entry function returning its table of function pointers; the
// table starts with a Header, whose interface version and size are checked at load. Module and
// caller are built together from one interface header, so the table may use C++ types. A loaded
// module stays loaded for the life of the process (its functions are called through the table).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

namespace anec::plugin {

// The first member of every module's table.
struct Header {
  uint32_t version = 0; // the interface version the module was built with
  uint32_t size = 0;    // sizeof the table
};

// The file a module is loaded from: "<name>.so".
std::string file_name(const std::string &name);

// The folders searched for a module, in order: $ANEC_PLUGIN_DIR when set, <libdir>/anec beside the
// running program (<bindir>/../lib/anec) when there is one (a program installed in a prefix that
// was moved), the folder the build tree puts modules in, the install folder (<libdir>/anec).
std::vector<std::filesystem::path> search_path();

// Loads module `name` from the first folder of search_path() that holds it (RTLD_NOW |
// RTLD_LOCAL), calls its entry function `entry` and checks the table it returns.
// Errors (anec::Error): ANEC-PLUGIN-001 the module is in none of the folders (each one tried is
// named), ANEC-PLUGIN-002 no entry function, or a table of another version or size,
// ANEC-PLUGIN-003 the dynamic loader refuses the file (a library it needs is missing, ...).
const Header &load(const std::string &name, const char *entry, uint32_t version, uint32_t size);

template <class Table> const Table &load(const std::string &name, const char *entry, uint32_t version) {
  // The Header is the table's first member, so the two addresses are the same.
  static_assert(std::is_standard_layout_v<Table> && std::is_same_v<decltype(Table::header), Header>);
  static_assert(offsetof(Table, header) == 0);
  return *reinterpret_cast<const Table *>(&load(name, entry, version, sizeof(Table)));
}

} // namespace anec::plugin
