// Model files to graphs, by front-end: the anec-graph JSON format (.json), the engine network plist
// (.plist). ANEC-MODEL-001 for a file no front-end reads.
#pragma once
#include "anec/compiler/graph.hpp"

#include <filesystem>

namespace anec::compiler {

Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog);

} // namespace anec::compiler
