// Where the tables are (tables/: the schema, the target tables, the references), for the tools and
// for a program built on the library, without being told: `option` when not empty (a tool's
// --tables), else $ANEC_TABLES, else the tables installed beside the running program
// (<bindir>/../<datadir>/anec/tables: an installed tool or a program installed in anec's prefix
// reads that prefix's tables, wherever the prefix was moved), else the source tree the library was
// built from, else the install prefix it was configured for (<datadir>/anec/tables). A folder other
// than `option`, $ANEC_TABLES and the last is taken only when it holds schema/.
#pragma once
#include <filesystem>
#include <string>

namespace anec {

std::filesystem::path find_tables(const std::string &option = {});

// Where the compiled forms of the tables (compiled_doc.hpp) are read from for the tables in
// `tables`: $ANEC_COMPILED_TABLES when set (empty: none), else compiled-tables/ beside `tables`
// when there is one (the install layout), else the build tree's, else the install prefix's. A table
// whose text has no compiled form there is parsed.
std::filesystem::path compiled_tables_dir(const std::filesystem::path &tables = {});

// find_tables(option), with the compiled forms of what it finds turned on (toml::use_compiled_tables):
// what the tools call once, before reading any table.
std::filesystem::path use_tables(const std::string &option = {});

} // namespace anec
