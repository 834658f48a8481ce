// TOML adapter: the only place that includes toml++.
#pragma once
#include "anec/support/doc.hpp"
#include <filesystem>
#include <string>
#include <string_view>

namespace anec::toml {

// Parses TOML text. Throws anec::Error ANEC-TOML-001 "<source>:<line>:<column>: <reason>".
Doc parse(std::string_view text, const std::string &source_name);
Doc parse_file(const std::filesystem::path &path);

// Writes a table as TOML: scalars and inline tables first, then [sub.tables], in member order.
std::string write(const Doc &table);

} // namespace anec::toml
