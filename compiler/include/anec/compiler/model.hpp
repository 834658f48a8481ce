// Model files to graphs, by front-end: the anec-graph JSON format (.json), the engine network plist
// (.plist), read through the support adapters. ANEC-MODEL-001 for a file no front-end reads.
#pragma once
#include "anec/compiler/graph.hpp"

#include <filesystem>

namespace anec::compiler {

// The engine network plist (the ANECompiler input, as tinygrad's net.plist): the first network of
// `Networks`, its `Inputs` (BatchSize, InputChannels, InputHeight, InputWidth, InputType), its
// `Units` in order (Bottom, Type, OutputChannels, Params) and its `Outputs` (name@output -> Bottom).
// Unit types map to catalogue operations (Conv -> conv or deconv, GOC -> goc, Neuron -> its
// activation, ElementWise -> add/mul/..., Pool -> max_pool/avg_pool, Concat, Softmax, Reshape);
// any other type is kept as "plist:<Type>" so the checker reports it unmapped.
// ANEC-MODEL-002 for a plist that is not a network description.
Graph read_network_plist(const Doc &doc, const std::string &source);

Graph load_model(const std::filesystem::path &path, const OpCatalog &catalog);

} // namespace anec::compiler
