#include "anec/support/json.hpp"

#include <nlohmann/json.hpp>

namespace anec::json {
namespace {

nlohmann::ordered_json convert(const Doc &d) {
  switch (d.kind()) {
  case Doc::Kind::Null: return nullptr;
  case Doc::Kind::Bool: return d.as_bool();
  case Doc::Kind::Int: return d.as_int();
  case Doc::Kind::Float: return d.as_float();
  case Doc::Kind::String: return d.as_string();
  case Doc::Kind::Array: {
    auto a = nlohmann::ordered_json::array();
    for (auto &i : d.items()) a.push_back(convert(i));
    return a;
  }
  case Doc::Kind::Table: {
    auto o = nlohmann::ordered_json::object();
    for (auto &m : d.members()) o[m.key] = convert(m.value);
    return o;
  }
  }
  return nullptr;
}

} // namespace

std::string write(const Doc &doc) {
  // Replace invalid UTF-8 rather than throw: a string decoded from a blob may hold any byte.
  return convert(doc).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

} // namespace anec::json
