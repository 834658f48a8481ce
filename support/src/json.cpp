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

// Builds the Doc while nlohmann's SAX parser reads (no intermediate JSON tree): a stack of open
// containers and, per open object, the key of the value that comes next. A duplicate key replaces
// the earlier value, as the tree parser did.
class DocBuilder {
public:
  Doc root;

  bool null() { return put(Doc()); }
  bool boolean(bool v) { return put(Doc::boolean(v)); }
  bool number_integer(int64_t v) { return put(Doc::integer(v)); }
  bool number_unsigned(uint64_t v) {
    return put(v <= uint64_t(INT64_MAX) ? Doc::integer(int64_t(v)) : Doc::number(double(v)));
  }
  bool number_float(double v, const std::string &) { return put(Doc::number(v)); }
  bool string(std::string &v) { return put(Doc::string(std::move(v))); }
  bool binary(nlohmann::ordered_json::binary_t &) { return put(Doc()); }
  bool start_object(std::size_t) { return open(Doc::table()); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Doc::array()); }
  bool end_array() { return close(); }
  bool key(std::string &k) {
    keys_.back() = std::move(k);
    return true;
  }
  bool parse_error(std::size_t byte, const std::string &, const nlohmann::detail::exception &e) {
    throw Error("ANEC-JSON-001", "byte " + std::to_string(byte) + ": " + excerpt(e.what(), 160));
  }

private:
  std::vector<Doc> open_;
  std::vector<std::string> keys_;

  bool put(Doc v) {
    if (open_.empty())
      root = std::move(v);
    else if (open_.back().is(Doc::Kind::Table))
      open_.back().set(std::move(keys_.back()), std::move(v));
    else
      open_.back().push(std::move(v));
    return true;
  }
  bool open(Doc container) {
    if (open_.size() >= 256) throw Error("ANEC-JSON-001", "nesting deeper than 256 levels");
    open_.push_back(std::move(container));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    Doc done = std::move(open_.back());
    open_.pop_back();
    keys_.pop_back();
    return put(std::move(done));
  }
};

} // namespace

Doc parse(std::string_view text, const std::string &source_name) {
  try {
    DocBuilder b;
    nlohmann::ordered_json::sax_parse(text.begin(), text.end(), &b);
    return std::move(b.root);
  } catch (const Error &e) { // the builder's, without the source: "CODE: message"
    throw Error(e.code(), source_name + ": " + std::string(e.what()).substr(e.code().size() + 2));
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
