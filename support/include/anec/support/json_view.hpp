// Fast read-only JSON for large documents (model graphs): simdjson parses the text, and readers walk
// it through views without building a Doc. The only place that includes simdjson; json.hpp
// (nlohmann) stays the reader of small documents and the writer.
#pragma once
#include "anec/support/doc.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace anec::json {
namespace detail {
struct ViewAccess; // json_view.cpp: makes and reads views
}

// A value inside a parsed Document, valid while the Document lives.
class View {
public:
  Doc::Kind kind() const;          // Int for an integer that fits int64, Float for any other number
  std::string_view string() const; // "" unless kind() is String
  int64_t integer() const;         // 0 unless kind() is Int
  // An array's elements, an object's members, in document order; empty for other kinds.
  std::vector<View> items() const;
  std::vector<std::pair<std::string_view, View>> members() const;
  // The same into `out`, reusing its storage (a reader of many small values).
  void items(std::vector<View> &out) const;
  void members(std::vector<std::pair<std::string_view, View>> &out) const;
  Doc doc() const; // the value and everything under it as a Doc
  // The same into `out`, reusing the storage it holds (a reader that fills one Doc value after value).
  void doc_into(Doc &out) const;

private:
  friend struct detail::ViewAccess;
  alignas(8) unsigned char element_[16]; // the parser's own element handle
};

class Document {
public:
  // Parses `text` (its capacity is grown by the parser's padding, so it is not copied).
  // ANEC-JSON-001 "<source>: byte <n>: <reason>" on malformed text, as json::parse says it.
  Document(std::string text, const std::string &source_name);
  // An empty document, for parse(): a reader of many small documents reuses one parser.
  Document();
  ~Document();
  // Parses a copy of `text` into this document (the views of the previous one become invalid),
  // reusing the parser's memory; errors as the constructor. `enclosing` is how many levels of a
  // larger document hold the text (an element of a top-level array: 2), so that its nesting is
  // limited as in the whole document.
  void parse(std::string_view text, const std::string &source_name, size_t enclosing = 0);
  View root() const;

private:
  struct Impl;
  void parse_buffer(const std::string &source_name); // Impl::buffer, which has the padding
  std::unique_ptr<Impl> impl_;
};

} // namespace anec::json
