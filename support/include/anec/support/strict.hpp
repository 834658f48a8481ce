// Strict reading of a Doc table: every key must be consumed, types are checked, and every error
// names the file, line and column; shared by the table loaders.
#pragma once
#include "anec/support/doc.hpp"
#include "anec/support/error.hpp"

#include <set>
#include <string>

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
    used_.insert(key);
    const Doc *d = t_.find(key);
    if (d && !d->is(kind) && !(kind == Doc::Kind::Float && d->is(Doc::Kind::Int)))
      fail(*d, ctx_ + "." + key + " must be " + Doc::kind_name(kind) + ", found " + Doc::kind_name(d->kind()));
    return d;
  }
  const Doc &req(const std::string &key, Doc::Kind kind) {
    const Doc *d = opt(key, kind);
    if (!d) fail(t_, ctx_ + " lacks required key '" + key + "'");
    return *d;
  }
  const Doc &req_any(const std::string &key) {
    used_.insert(key);
    const Doc *d = t_.find(key);
    if (!d) fail(t_, ctx_ + " lacks required key '" + key + "'");
    return *d;
  }
  // Any key not asked for is an error.
  void finish() const {
    for (auto &m : t_.members())
      if (!used_.count(m.key)) fail(m.value, "unknown key '" + m.key + "' in " + ctx_);
  }
  [[noreturn]] void fail(const Doc &at, const std::string &msg) const {
    throw Error(code_, where(source_, at) + ": " + msg);
  }
  const std::string &source() const { return source_; }

private:
  const Doc &t_;
  std::string source_, code_, ctx_;
  std::set<std::string> used_;
};

inline double as_number(const Doc &d) { return d.is(Doc::Kind::Int) ? double(d.as_int()) : d.as_float(); }

} // namespace anec::detail
