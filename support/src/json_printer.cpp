#include "anec/support/json_printer.hpp"

#include "anec/support/document.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/list_spool.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

namespace anec {

namespace {
constexpr size_t kIndent = 2;   // json::write's
constexpr size_t kInline = 256; // a key, or an indent, up to this long is written in one piece

[[noreturn]] void misuse(const std::string &what) {
  throw Error("ANEC-INTERNAL", "printer: " + what);
}

// As json::write writes them: nlohmann's string escapes (invalid UTF-8 replaced) and numbers. Plain
// printable ASCII and integers, nearly every value, are written here; the rest by nlohmann.
void nlohmann_scalar(TextOut &out, const nlohmann::ordered_json &j) {
  out << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}
// A number as nlohmann's serializer writes it (its shortest round trip; null when not finite),
// without a json value made for it.
void float_value(TextOut &out, double v) {
  if (!std::isfinite(v)) {
    out << "null";
    return;
  }
  // A whole number of up to 15 digits is its digits and ".0" in the serializer's shortest form
  // (no shorter decimal rounds to it); written here without the search for the shortest digits.
  if (v == std::trunc(v) && std::fabs(v) < 1e15 && !(v == 0 && std::signbit(v))) {
    if (v < 0)
      out << "-";
    out.dec(uint64_t(std::fabs(v)));
    out << ".0";
    return;
  }
  std::array<char, 64> digits; // the serializer's number buffer
  char *end = nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), v);
  out << std::string_view(digits.data(), size_t(end - digits.data()));
}
// The bytes a string holds as they are: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x7f; ++c)
    plain[size_t(c)] = c != '"' && c != '\\';
  return plain;
}();
bool plain(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return kPlain[uint8_t(c)]; });
}
void string_value(TextOut &out, std::string_view s) {
  if (plain(s))
    out.quoted(s);
  else
    nlohmann_scalar(out, std::string(s));
}
void integer_value(TextOut &out, int64_t v) {
  if (v < 0)
    out << "-";
  out.dec(v < 0 ? 0 - uint64_t(v) : uint64_t(v));
}

void scalar(TextOut &out, const Doc &d) {
  switch (d.kind()) {
  case Doc::Kind::Null:
    out << "null";
    break;
  case Doc::Kind::Bool:
    out << (d.as_bool() ? "true" : "false");
    break;
  case Doc::Kind::Int:
    integer_value(out, d.as_int());
    break;
  case Doc::Kind::Float:
    float_value(out, d.as_float());
    break;
  case Doc::Kind::String:
    string_value(out, d.as_string());
    break;
  default:
    misuse("a scalar that is a table or an array");
  }
}
} // namespace

JsonPrinter::JsonPrinter(TextOut &out, std::string_view schema) : out_(out), schema_(schema) {
  scopes_.push_back({}); // the root object, until a first keyless scope takes its place
}

JsonPrinter::JsonPrinter(TextOut &out, size_t depth)
    : out_(out), scopes_(depth), root_explicit_(true), started_(true) {
  if (depth < 2)
    misuse("a list's items spooled outside a list");
  scopes_.back().list = true;
}

void JsonPrinter::splice(std::FILE *items, size_t depth) {
  if (depth != scopes_.size() || !scopes_.back().list)
    misuse("items spooled " + std::to_string(depth) + " scopes deep spliced " +
           std::to_string(scopes_.size()) + " deep or outside a list");
  int first = std::fgetc(items);
  if (first == EOF)
    return;
  std::ungetc(first, items);
  if (!scopes_.back().empty) // after items printed here: the spool's first item follows them
    out_ << ",";
  copy_into(items, out_);
  scopes_.back().empty = false;
}

// `n` spaces at `at`, in a few word stores rather than a call: an indent is a few bytes, written
// before every member.
[[gnu::always_inline]] inline void spaces_at(char *at, size_t n) {
  constexpr char kEight[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
  if (n >= 8) {
    for (size_t k = 0; k + 8 < n; k += 8)
      std::memcpy(at + k, kEight, 8);
    std::memcpy(at + n - 8, kEight, 8); // the last eight, over what was written
  } else if (n >= 4) {
    std::memcpy(at, kEight, 4);
    std::memcpy(at + n - 4, kEight, 4);
  } else if (n > 0) {
    at[0] = at[n / 2] = at[n - 1] = ' ';
  }
}

// At `at`, a new line and its indent of `spaces`: ",\n" after an earlier entry, else "\n"; past
// them.
[[gnu::always_inline]] inline char *line_at(char *at, bool after, size_t spaces) {
  if (after)
    *at++ = ',';
  *at++ = '\n';
  spaces_at(at, spaces);
  return at + spaces;
}

// A new line `depth` scopes deep and its indent, in one write up to 4 KiB.
[[gnu::always_inline]] inline void JsonPrinter::new_line(bool after, size_t depth) {
  size_t spaces = depth * kIndent;
  if (spaces > kInline)
    return deep_line(after, spaces);
  line_at(out_.room(size_t(after) + 1 + spaces), after, spaces);
}
void JsonPrinter::deep_line(bool after, size_t spaces) {
  out_ << (after ? ",\n" : "\n");
  for (size_t n = spaces; n > 0; n -= std::min(n, kInline))
    std::memset(out_.room(std::min(n, kInline)), ' ', std::min(n, kInline));
}

// The root's bracket and the schema's members, once, when the root's first content comes.
void JsonPrinter::start() {
  started_ = true;
  out_ << (scopes_.front().list ? "[" : "{");
  if (schema_.empty())
    return;
  if (scopes_.front().list)
    misuse("a document with a schema whose root is a list");
  Doc head = document(schema_, Doc::table());
  for (const DocMember &m : head.members()) {
    key(m.key);
    value(m.value);
  }
}

void JsonPrinter::key(std::string_view k) {
  Scope &s = scopes_.back();
  if (s.list)
    misuse("member '" + std::string(k) + "' given inside a list");
  uint64_t hash = text_hash(k);
  uint64_t bit = uint64_t(1) << (hash % 64);
  if ((s.seen & bit) && std::find(keys_.begin() + ptrdiff_t(s.keys_from), keys_.end(), hash) != keys_.end())
    misuse("member '" + std::string(k) + "' given twice");
  s.seen |= bit;
  keys_.push_back(hash);
  bool after = !std::exchange(s.empty, false);
  size_t spaces = scopes_.size() * kIndent;
  if (spaces > kInline || k.size() > kInline || !plain(k)) {
    new_line(after, scopes_.size());
    string_value(out_, k);
    out_ << ": ";
    return;
  }
  // The common key, plain and short: its line, indent, the key and ": " in one write.
  char *at = line_at(out_.room(size_t(after) + 1 + spaces + k.size() + 4), after, spaces);
  *at++ = '"';
  copy_bytes(at, k.data(), k.size());
  std::memcpy(at + k.size(), "\": ", 3);
}

void JsonPrinter::next_item() {
  Scope &s = scopes_.back();
  if (!s.list)
    misuse("a list item given outside a list");
  new_line(!std::exchange(s.empty, false), scopes_.size());
}

JsonPrinter::Scope JsonPrinter::pop() {
  Scope done = scopes_.back();
  scopes_.pop_back();
  keys_.resize(done.keys_from);
  return done;
}

void JsonPrinter::close(const Scope &done) {
  if (!done.empty)
    new_line(false, scopes_.size());
  out_ << (done.list ? "]" : "}");
}

void JsonPrinter::value(const Doc &d) {
  bool list = d.is(Doc::Kind::Array);
  if (!list && !d.is(Doc::Kind::Table))
    return scalar(out_, d);
  out_ << (list ? "[" : "{");
  scopes_.push_back({list, true, keys_.size()});
  if (list)
    for (const Doc &x : d.items()) {
      next_item();
      value(x);
    }
  else
    for (const DocMember &m : d.members()) {
      key(m.key);
      value(m.value);
    }
  close(pop());
}

// Each kind as Scalar::doc() and set_in() put it in a tree.
void JsonPrinter::value(const Scalar &v) {
  std::visit(
      [&](const auto &x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string_view>)
          string_value(out_, x);
        else if constexpr (std::is_same_v<T, bool>)
          out_ << (x ? "true" : "false");
        else if constexpr (std::is_same_v<T, int64_t>)
          integer_value(out_, x);
        else if constexpr (std::is_same_v<T, uint64_t>)
          x <= uint64_t(INT64_MAX) ? integer_value(out_, int64_t(x)) : float_value(out_, double(x));
        else if constexpr (std::is_same_v<T, double>)
          float_value(out_, x);
        else if constexpr (std::is_same_v<T, Hex>)
          x.value <= uint64_t(INT64_MAX) ? integer_value(out_, int64_t(x.value))
                                         : string_value(out_, hex(x.value));
        else if constexpr (std::is_same_v<T, Named>)
          string_value(out_, x.name);
        else
          value(*x);
      },
      v.v_);
}

void JsonPrinter::data(std::string_view k, const Scalar &v) {
  started();
  key(k);
  value(v);
  if (const Named *n = std::get_if<Named>(&v.v_)) { // its raw value beside it
    key(std::string(k) + "_value");
    integer_value(out_, n->value);
  }
}

void JsonPrinter::item(const Scalar &v) {
  started();
  next_item();
  value(v);
}

void JsonPrinter::open(std::string_view k, bool list) {
  if (scopes_.size() == 1 && k.empty() && !started_ && !root_explicit_) {
    scopes_.front().list = list; // the first keyless scope, before anything else, is the document
    root_explicit_ = true;
    return;
  }
  started();
  scopes_.back().list ? next_item() : key(k);
  out_ << (list ? "[" : "{");
  scopes_.push_back({list, true, keys_.size()});
}

void JsonPrinter::begin_object(std::string_view k) {
  open(k, false);
}
void JsonPrinter::begin_list(std::string_view k) {
  open(k, true);
}

void JsonPrinter::end() {
  if (scopes_.size() == 1) {
    if (!root_explicit_ || finished_)
      misuse("end() without an open scope");
    finished_ = true;
    return;
  }
  close(pop());
}

void JsonPrinter::finish() {
  if (scopes_.size() != 1 || (root_explicit_ && !finished_))
    misuse("the document was finished with a scope still open");
  started();
  close(pop());
  out_ << "\n";
}

} // namespace anec
