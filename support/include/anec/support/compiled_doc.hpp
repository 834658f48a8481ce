// Compiled tables: a Doc in a compact binary form, named by a hash of the text it was parsed from,
// so that a tool can read a table without running the text parser. The text stays the source of
// truth: a compiled form is used only for a text whose hash and length it records, and anything
// malformed in it reads as "no compiled form".
#pragma once
#include "anec/support/doc.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace anec::compiled {

uint64_t text_hash(std::string_view text);
// The file name a text's compiled form has in a compiled-tables directory.
std::string file_name(std::string_view text);

std::string encode(const Doc &doc, std::string_view text);
// The Doc, or nullopt when bytes are not the compiled form of text (another text, a damaged or
// truncated file, another format version).
std::optional<Doc> decode(std::string_view bytes, std::string_view text);

} // namespace anec::compiled
