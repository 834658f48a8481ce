#include "anec/support/doc.hpp"
#include "anec/support/format.hpp"

#include <algorithm>

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
  d.scalar_.b = v;
  return d;
}
Doc Doc::integer(int64_t v, bool hex) {
  Doc d;
  d.kind_ = Kind::Int;
  d.scalar_.i = v;
  d.hex = hex;
  return d;
}
Doc Doc::number(double v) {
  Doc d;
  d.kind_ = Kind::Float;
  d.scalar_.f = v;
  return d;
}
Doc Doc::string(std::string v) {
  Doc d;
  d.kind_ = Kind::String;
  d.payload_ = std::move(v);
  return d;
}
Doc Doc::array(std::vector<Doc> items) {
  Doc d;
  d.kind_ = Kind::Array;
  d.payload_ = std::move(items);
  return d;
}
Doc Doc::table(size_t capacity) {
  Doc d;
  d.kind_ = Kind::Table;
  std::vector<DocMember> members;
  members.reserve(capacity);
  d.payload_ = std::move(members);
  return d;
}

namespace {
// The payload of kind T, or an empty T.
template <typename T, typename Payload> const T &held(const Payload &p) {
  static const T none;
  const T *v = std::get_if<T>(&p);
  return v ? *v : none;
}
} // namespace

const std::string &Doc::as_string() const {
  return held<std::string>(payload_);
}
const std::vector<Doc> &Doc::items() const {
  return held<std::vector<Doc>>(payload_);
}
const std::vector<DocMember> &Doc::members() const {
  return held<std::vector<DocMember>>(payload_);
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
  for (const auto &m : members())
    if (same_text(m.key, key))
      return &m.value;
  return nullptr;
}

Doc &Doc::set(std::string key, Doc value) {
  if (auto *members = std::get_if<std::vector<DocMember>>(&payload_))
    for (auto &m : *members)
      if (same_text(m.key, key))
        return m.value = std::move(value);
  return add_member(std::move(key), std::move(value));
}

Doc &Doc::append(std::string key, Doc value) {
  return add_member(std::move(key), std::move(value));
}

Doc &Doc::add_member(std::string &&key, Doc &&value) {
  if (!std::holds_alternative<std::vector<DocMember>>(payload_))
    payload_ = std::vector<DocMember>();
  kind_ = Kind::Table;
  auto &members = std::get<std::vector<DocMember>>(payload_);
  members.push_back({std::move(key), std::move(value)});
  return members.back().value;
}

template <typename T> T &Doc::refill(Kind k) {
  kind_ = k;
  scalar_.i = 0;
  line = column = 0;
  hex = inline_table = false;
  if (!std::holds_alternative<T>(payload_))
    payload_.emplace<T>();
  return std::get<T>(payload_);
}

void Doc::refill_null() {
  refill<std::monostate>(Kind::Null);
}
void Doc::refill_bool(bool v) {
  refill<std::monostate>(Kind::Bool);
  scalar_.b = v;
}
void Doc::refill_int(int64_t v) {
  refill<std::monostate>(Kind::Int);
  scalar_.i = v;
}
void Doc::refill_float(double v) {
  refill<std::monostate>(Kind::Float);
  scalar_.f = v;
}

std::string &Doc::refill_string() {
  std::string &s = refill<std::string>(Kind::String);
  s.clear();
  return s;
}

std::vector<Doc> &Doc::refill_items(size_t n) {
  std::vector<Doc> &items = refill<std::vector<Doc>>(Kind::Array);
  items.resize(n);
  return items;
}

std::vector<DocMember> &Doc::refill_members(size_t n) {
  std::vector<DocMember> &members = refill<std::vector<DocMember>>(Kind::Table);
  members.resize(n);
  return members;
}

Doc &Doc::prepend(std::string key, Doc value) {
  append(std::move(key), std::move(value));
  auto &members = std::get<std::vector<DocMember>>(payload_);
  std::rotate(members.begin(), members.end() - 1, members.end());
  return members.front().value;
}

bool Doc::erase(std::string_view key) {
  auto *members = std::get_if<std::vector<DocMember>>(&payload_);
  if (!members)
    return false;
  auto it = std::find_if(members->begin(), members->end(), [&](const DocMember &m) { return m.key == key; });
  if (it == members->end())
    return false;
  members->erase(it);
  return true;
}

Doc &Doc::push(Doc value) {
  if (!std::holds_alternative<std::vector<Doc>>(payload_))
    payload_ = std::vector<Doc>();
  kind_ = Kind::Array;
  auto &items = std::get<std::vector<Doc>>(payload_);
  items.push_back(std::move(value));
  return items.back();
}

} // namespace anec
