#include "anec/support/json.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

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

Doc from_json(const nlohmann::ordered_json &j, int depth = 0) {
  if (depth > 256) throw Error("ANEC-JSON-001", "nesting deeper than 256 levels");
  switch (j.type()) {
  case nlohmann::ordered_json::value_t::null: return Doc();
  case nlohmann::ordered_json::value_t::boolean: return Doc::boolean(j.get<bool>());
  case nlohmann::ordered_json::value_t::number_integer: return Doc::integer(j.get<int64_t>());
  case nlohmann::ordered_json::value_t::number_unsigned: {
    uint64_t u = j.get<uint64_t>();
    return u <= uint64_t(INT64_MAX) ? Doc::integer(int64_t(u)) : Doc::number(double(u));
  }
  case nlohmann::ordered_json::value_t::number_float: return Doc::number(j.get<double>());
  case nlohmann::ordered_json::value_t::string: return Doc::string(j.get<std::string>());
  case nlohmann::ordered_json::value_t::array: {
    Doc a = Doc::array();
    for (auto &i : j) a.push(from_json(i, depth + 1));
    return a;
  }
  case nlohmann::ordered_json::value_t::object: {
    Doc t = Doc::table();
    for (auto &[k, v] : j.items()) t.set(k, from_json(v, depth + 1));
    return t;
  }
  default: return Doc();
  }
}

} // namespace

Doc parse(std::string_view text, const std::string &source_name) {
  try {
    return from_json(nlohmann::ordered_json::parse(text.begin(), text.end()));
  } catch (const nlohmann::ordered_json::parse_error &e) {
    // The parser's message quotes the token it was reading, which may be most of the input.
    throw Error("ANEC-JSON-001",
                source_name + ": byte " + std::to_string(e.byte) + ": " + excerpt(e.what(), 160));
  } catch (const nlohmann::ordered_json::exception &e) {
    throw Error("ANEC-JSON-001", source_name + ": " + excerpt(e.what(), 160));
  }
}

std::string write(const Doc &doc) {
  // Replace invalid UTF-8 rather than throw: a string decoded from a blob may hold any byte.
  return convert(doc).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

} // namespace anec::json
