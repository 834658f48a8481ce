// A small ordered document tree (TOML / JSON shaped) that the table readers and printers share,
// so the third-party parsers and emitters stay behind one adapter each (toml.hpp, json.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace anec {

struct DocMember;

class Doc {
public:
  enum class Kind { Null, Bool, Int, Float, String, Array, Table };

  // Out of line: DocMember is incomplete here.
  Doc();
  ~Doc();
  Doc(const Doc &);
  Doc(Doc &&) noexcept;
  Doc &operator=(const Doc &);
  Doc &operator=(Doc &&) noexcept;
  static Doc boolean(bool v);
  static Doc integer(int64_t v, bool hex = false);
  static Doc number(double v);
  static Doc string(std::string v);
  static Doc array(std::vector<Doc> items = {});
  static Doc table(size_t capacity = 0); // room for `capacity` members

  Kind kind() const { return kind_; }
  bool is(Kind k) const { return kind_ == k; }
  static const char *kind_name(Kind k);

  // Each reads its own kind; another kind reads as false, 0, or empty.
  bool as_bool() const { return kind_ == Kind::Bool && scalar_.b; }
  int64_t as_int() const { return kind_ == Kind::Int ? scalar_.i : 0; }
  double as_float() const { return kind_ == Kind::Float ? scalar_.f : 0; }
  const std::string &as_string() const;
  const std::vector<Doc> &items() const;
  const std::vector<DocMember> &members() const;

  const Doc *find(std::string_view key) const;
  // Appends key (or replaces it, keeping its position).
  Doc &set(std::string key, Doc value);
  // Appends key without looking for it: for readers whose source cannot repeat a key.
  Doc &append(std::string key, Doc value);
  // Puts key first (a table's header members: the JSON documents' schema and version).
  Doc &prepend(std::string key, Doc value);
  // Removes key from a table; whether it was there.
  bool erase(std::string_view key);
  Doc &push(Doc value);

  // This document made a string, an array of n items, a table of n members or a scalar in place,
  // its hints cleared, keeping the storage it already holds (its first n items or members, as they
  // were, to be refilled): for a reader that fills one Doc value after value. The caller fills what
  // is returned.
  std::string &refill_string();
  std::vector<Doc> &refill_items(size_t n);
  std::vector<DocMember> &refill_members(size_t n);
  void refill_null();
  void refill_bool(bool v);
  void refill_int(int64_t v);
  void refill_float(double v);

  // Source position (1-based) when parsed from text; 0 when built in code.
  uint32_t line = 0, column = 0;
  // Printing hints: integers in hexadecimal; a table written inline ({ a = 1 }) in TOML.
  bool hex = false;
  bool inline_table = false;

private:
  Doc &add_member(std::string &&key, Doc &&value); // set() and append() of a new key
  template <typename T> T &refill(Kind k); // kind k holding a T (a scalar: std::monostate), hints cleared
  Kind kind_ = Kind::Null;
  union {
    bool b;
    int64_t i = 0;
    double f;
  } scalar_;
  // A string's text, an array's elements or a table's members: one at a time, so a Doc stays small
  // (a model's attributes hold many).
  std::variant<std::monostate, std::string, std::vector<Doc>, std::vector<DocMember>> payload_;
};

struct DocMember {
  std::string key;
  Doc value;
};

} // namespace anec
