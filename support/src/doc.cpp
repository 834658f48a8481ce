#include "anec/support/doc.hpp"

namespace anec {

Doc::Doc() = default;
Doc::~Doc() = default;
Doc::Doc(const Doc &) = default;
Doc::Doc(Doc &&) noexcept = default;
Doc &Doc::operator=(const Doc &) = default;
Doc &Doc::operator=(Doc &&) noexcept = default;

Doc Doc::boolean(bool v) {
  Doc d;
  d.kind_ = Kind::Bool;
  d.b_ = v;
  return d;
}
Doc Doc::integer(int64_t v, bool hex) {
  Doc d;
  d.kind_ = Kind::Int;
  d.i_ = v;
  d.hex = hex;
  return d;
}
Doc Doc::number(double v) {
  Doc d;
  d.kind_ = Kind::Float;
  d.f_ = v;
  return d;
}
Doc Doc::string(std::string v) {
  Doc d;
  d.kind_ = Kind::String;
  d.s_ = std::move(v);
  return d;
}
Doc Doc::array(std::vector<Doc> items) {
  Doc d;
  d.kind_ = Kind::Array;
  d.items_ = std::move(items);
  return d;
}
Doc Doc::table() {
  Doc d;
  d.kind_ = Kind::Table;
  return d;
}

const char *Doc::kind_name(Kind k) {
  switch (k) {
  case Kind::Null: return "nothing";
  case Kind::Bool: return "boolean";
  case Kind::Int: return "integer";
  case Kind::Float: return "float";
  case Kind::String: return "string";
  case Kind::Array: return "array";
  case Kind::Table: return "table";
  }
  return "?";
}

const Doc *Doc::find(std::string_view key) const {
  for (const auto &m : members_)
    if (m.key == key) return &m.value;
  return nullptr;
}

Doc &Doc::set(std::string key, Doc value) {
  kind_ = Kind::Table;
  for (auto &m : members_)
    if (m.key == key) return m.value = std::move(value);
  members_.push_back({std::move(key), std::move(value)});
  return members_.back().value;
}

Doc &Doc::push(Doc value) {
  kind_ = Kind::Array;
  items_.push_back(std::move(value));
  return items_.back();
}

} // namespace anec
