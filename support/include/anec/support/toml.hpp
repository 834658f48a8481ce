// TOML adapter: the only place that includes toml++.
#pragma once
#include "anec/support/doc.hpp"
#include <filesystem>
#include <string>
#include <string_view>

namespace anec::toml {

// Parses TOML text. Throws anec::Error ANEC-TOML-001 "<source>:<line>:<column>: <reason>".
// When the directory given to use_compiled_tables holds the compiled form of the text
// (compiled_doc.hpp), that is read instead: the same Doc, without running the parser.
Doc parse(std::string_view text, const std::string &source_name);
Doc parse_file(const std::filesystem::path &path);
// Where parse looks for compiled forms; empty (the default) turns them off. Set once, before any
// thread reads tables.
void use_compiled_tables(std::filesystem::path dir);

// Writes a table as TOML: scalars and inline tables first, then [sub.tables], in member order.
std::string write(const Doc &table);

} // namespace anec::toml
