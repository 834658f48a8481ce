#include "anec/support/json_view.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/json.hpp"

#include <algorithm>
#include <new>
#include <type_traits>

#include <simdjson.h>

namespace anec::json {
namespace {
using simdjson::dom::element;
using simdjson::dom::element_type;
static_assert(sizeof(element) <= 16 && alignof(element) <= 8 && std::is_trivially_copyable_v<element>);

} // namespace

struct detail::ViewAccess {
  static View view(const element &e) {
    View v;
    new (v.element_) element(e);
    return v;
  }
  static const element &of(const View &v) {
    return *std::launder(reinterpret_cast<const element *>(v.element_));
  }
};

namespace {
View view(const element &e) {
  return detail::ViewAccess::view(e);
}
const element &of(const View &v) {
  return detail::ViewAccess::of(v);
}
} // namespace

struct Document::Impl {
  simdjson::dom::parser parser;
  element root;
  std::string buffer; // parse(): the text with the parser's padding
};

Doc::Kind View::kind() const {
  switch (of(*this).type()) {
  case element_type::ARRAY:
    return Doc::Kind::Array;
  case element_type::OBJECT:
    return Doc::Kind::Table;
  case element_type::INT64:
    return Doc::Kind::Int;
  case element_type::UINT64:
  case element_type::DOUBLE:
    return Doc::Kind::Float;
  case element_type::STRING:
    return Doc::Kind::String;
  case element_type::BOOL:
    return Doc::Kind::Bool;
  case element_type::NULL_VALUE:
    break;
  }
  return Doc::Kind::Null;
}

std::string_view View::string() const {
  std::string_view s;
  return of(*this).get_string().get(s) ? std::string_view() : s;
}

int64_t View::integer() const {
  int64_t v = 0;
  return of(*this).get_int64().get(v) ? 0 : v;
}

std::vector<View> View::items() const {
  std::vector<View> out;
  items(out);
  return out;
}
void View::items(std::vector<View> &out) const {
  out.clear();
  simdjson::dom::array items;
  if (of(*this).get_array().get(items))
    return;
  out.reserve(items.size());
  for (element e : items)
    out.push_back(view(e));
}

std::vector<std::pair<std::string_view, View>> View::members() const {
  std::vector<std::pair<std::string_view, View>> out;
  members(out);
  return out;
}
void View::members(std::vector<std::pair<std::string_view, View>> &out) const {
  out.clear();
  simdjson::dom::object members;
  if (of(*this).get_object().get(members))
    return;
  out.reserve(members.size());
  for (simdjson::dom::key_value_pair m : members)
    out.emplace_back(m.key, view(m.value));
}

Doc View::doc() const {
  Doc d;
  doc_into(d);
  return d;
}

void View::doc_into(Doc &out) const {
  const element &e = of(*this);
  switch (kind()) {
  case Doc::Kind::Int:
    out.refill_int(integer());
    return;
  case Doc::Kind::Float:
    out.refill_float(double(e));
    return;
  case Doc::Kind::String:
    out.refill_string() = string();
    return;
  case Doc::Kind::Bool:
    out.refill_bool(bool(e));
    return;
  case Doc::Kind::Array: {
    simdjson::dom::array items = e.get_array().value_unsafe();
    std::vector<Doc> &into = out.refill_items(items.size());
    size_t k = 0;
    for (element x : items)
      view(x).doc_into(into[k++]);
    return;
  }
  case Doc::Kind::Table: { // a key given again replaces its value where it was first given
    simdjson::dom::object members = e.get_object().value_unsafe();
    std::vector<DocMember> &into = out.refill_members(members.size());
    size_t n = 0;
    for (simdjson::dom::key_value_pair m : members) {
      auto at = std::find_if(into.begin(), into.begin() + long(n),
                             [&](const DocMember &x) { return same_text(x.key, m.key); });
      if (at == into.begin() + long(n)) {
        at->key = m.key;
        ++n;
      }
      view(m.value).doc_into(at->value);
    }
    into.resize(n);
    return;
  }
  case Doc::Kind::Null:
    break;
  }
  out.refill_null();
}

void Document::parse_buffer(const std::string &source_name) {
  const std::string &text = impl_->buffer;
  if (auto error = impl_->parser.parse(text.data(), text.size(), false).get(impl_->root)) {
    json::parse(text, source_name); // the position of the syntax error, as every JSON reader reports it
    throw Error("ANEC-JSON-001", source_name + ": " + simdjson::error_message(error));
  }
}

Document::Document(std::string text, const std::string &source_name) : impl_(std::make_unique<Impl>()) {
  impl_->buffer = std::move(text);
  impl_->buffer.reserve(impl_->buffer.size() + simdjson::SIMDJSON_PADDING);
  parse_buffer(source_name);
}

Document::Document() : impl_(std::make_unique<Impl>()) {}

Document::~Document() = default;

void Document::parse(std::string_view text, const std::string &source_name, size_t enclosing) {
  size_t depth = simdjson::DEFAULT_MAX_DEPTH > enclosing ? simdjson::DEFAULT_MAX_DEPTH - enclosing : 1;
  if (impl_->parser.max_depth() != depth &&
      impl_->parser.allocate(std::max(impl_->parser.capacity(), text.size()), depth))
    throw Error("ANEC-JSON-001", source_name + ": out of memory for the parser");
  impl_->buffer.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  impl_->buffer.assign(text);
  parse_buffer(source_name);
}

View Document::root() const {
  return view(impl_->root);
}

} // namespace anec::json
