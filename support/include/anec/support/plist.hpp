// Property-list adapter: the only place that includes libplist. XML and binary plists become a Doc
// (dict -> table, array -> array, integer, real, boolean, string; data and dates as strings).
#pragma once
#include "anec/support/doc.hpp"

#include <string>
#include <string_view>

namespace anec::plist {

// ANEC-PLIST-001 "<source>: not a property list" when libplist cannot read it.
Doc parse(std::string_view bytes, const std::string &source_name);

} // namespace anec::plist
