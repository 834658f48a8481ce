// The engine network plist front-end.
#pragma once
#include "anec/compiler/ir/graph.hpp"
#include "anec/compiler/ir/ops.hpp"

#include <string>
#include <string_view>

namespace anec::compiler {

// The engine network plist (the ANECompiler input, as tinygrad's net.plist): the first network of
// `Networks`, its `Inputs` (BatchSize, InputChannels, InputHeight, InputWidth, InputType), its
// `Units` in order (Bottom, Type, OutputChannels, Params) and its `Outputs` (name@output -> Bottom).
// Unit types map to catalogue operations through the front-end map (tables/schema/frontend/
// plist.toml: Conv -> conv or deconv, Neuron/Exp2 -> exp2, ElementWise/Add -> add, InputView,
// Broadcast, ...); any other type is kept as "plist:<Type>" so the checker reports it unmapped.
// A port's InputInterleave is kept on its tensor. ANEC-MODEL-002 for a plist that is not a
// network description.
Graph read_network_plist(const Doc &doc, const std::string &source, const OpCatalog &catalog);

} // namespace anec::compiler
