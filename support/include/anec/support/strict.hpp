// Strict reading of a Doc table: every key must be consumed, types are checked, and every error
// names the file, line and column; shared by the table loaders.
#pragma once
#include "anec/support/doc.hpp"
#include "anec/support/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace anec::detail {

inline std::string where(const std::string &source, const Doc &d) {
  return source + ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
}

class Strict {
public:
  Strict(const Doc &table, std::string source, std::string code, std::string context)
      : t_(table), source_(std::move(source)), code_(std::move(code)), ctx_(std::move(context)) {
    if (!t_.is(Doc::Kind::Table)) fail(t_, ctx_ + " must be a table");
  }
  const Doc *opt(const std::string &key, Doc::Kind kind) {
    const Doc *d = use(key);
    if (d && !d->is(kind) && !(kind == Doc::Kind::Float && d->is(Doc::Kind::Int)))
      fail(*d,
           ctx_ + "." + key + " must be " + Doc::kind_name(kind) + ", found " + Doc::kind_name(d->kind()));
    return d;
  }
  const Doc &req(const std::string &key, Doc::Kind kind) {
    const Doc *d = opt(key, kind);
    if (!d) fail(t_, ctx_ + " lacks required key '" + key + "'");
    return *d;
  }
  const Doc &req_any(const std::string &key) {
    const Doc *d = use(key);
    if (!d) fail(t_, ctx_ + " lacks required key '" + key + "'");
    return *d;
  }
  // A number, integer or float (an integer is accepted where a float is asked for).
  double number(const std::string &key) {
    const Doc &d = req(key, Doc::Kind::Float);
    return d.is(Doc::Kind::Int) ? double(d.as_int()) : d.as_float();
  }
  // An array of strings.
  std::vector<std::string> strings(const std::string &key) {
    std::vector<std::string> out;
    for (const Doc &d : req(key, Doc::Kind::Array).items()) {
      if (!d.is(Doc::Kind::String))
        fail(d, key + " must hold strings");
      out.push_back(d.as_string());
    }
    return out;
  }
  // Any key not asked for is an error.
  void finish() const {
    const auto &members = t_.members();
    for (size_t i = 0; i < members.size(); ++i)
      if (i >= used_.size() || !used_[i])
        fail(members[i].value, "unknown key '" + members[i].key + "' in " + ctx_);
  }
  [[noreturn]] void fail(const Doc &at, const std::string &msg) const {
    throw Error(code_, where(source_, at) + ": " + msg);
  }
  const std::string &source() const { return source_; }

private:
  // The member named `key`, marked as read; null when there is none.
  const Doc *use(std::string_view key) {
    const auto &members = t_.members();
    for (size_t i = 0; i < members.size(); ++i)
      if (members[i].key == key) {
        used_.resize(members.size());
        used_[i] = true;
        return &members[i].value;
      }
    return nullptr;
  }

  const Doc &t_;
  std::string source_, code_, ctx_;
  std::vector<bool> used_; // by member position
};

inline double as_number(const Doc &d) { return d.is(Doc::Kind::Int) ? double(d.as_int()) : d.as_float(); }

} // namespace anec::detail
