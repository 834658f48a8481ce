// A print function called later, with its row packed: where the printer records its calls to print
// them on a thread of its own (support/print_behind.hpp), a report's row is handed over whole, its
// texts and numbers copied once, and its print function runs on that thread; elsewhere it runs at
// once. A row is a struct of texts (std::string_view) and trivially copyable values whose tie()
// gives them all, in one order, as std::tie does.
#pragma once
#include "anec/support/error.hpp"
#include "anec/support/printer.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace anec {

// Values packed one after another: a trivially copyable value as it is, a text as its length and
// then its bytes. PackedSize counts what a PackedWriter writes; PackedReader reads it back in order.
struct PackedWriter {
  char *at;
  template <class T> void put(const T &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(at, &v, sizeof v);
    at += sizeof v;
  }
  void put(std::string_view s) {
    put(uint32_t(s.size()));
    if (!s.empty()) // an empty view may hold no address at all
      std::memcpy(at, s.data(), s.size());
    at += s.size();
  }
};
struct PackedSize {
  size_t n = 0;
  template <class T> void put(const T &) { n += sizeof(T); }
  void put(std::string_view s) {
    if (s.size() > UINT32_MAX)
      throw Error("ANEC-INTERNAL", "a packed text of 4 GiB or more");
    n += 4 + s.size();
  }
};
class PackedReader {
public:
  explicit PackedReader(const char *at) : at_(at) {}
  template <class T> T get() {
    if constexpr (std::is_same_v<T, std::string_view>) {
      auto n = get<uint32_t>();
      std::string_view s(at_, n);
      at_ += n;
      return s;
    } else {
      T v;
      std::memcpy(&v, at_, sizeof v);
      at_ += sizeof v;
      return v;
    }
  }
  const char *at() const { return at_; }

private:
  const char *at_;
};

namespace detail {
template <class Row, void (*print)(Printer &, const Row &)> void print_packed(Printer &p, PackedReader &in) {
  Row row;
  std::apply([&in](auto &...field) { ((field = in.get<std::decay_t<decltype(field)>>()), ...); }, row.tie());
  print(p, row);
}
} // namespace detail

// print(p, row), now or on p's thread.
template <class Row, void (*print)(Printer &, const Row &)> void print_later(Printer &p, Row row) {
  auto fields = row.tie();
  PackedSize size;
  std::apply([&size](const auto &...field) { (size.put(field), ...); }, fields);
  char *room = p.later(&detail::print_packed<Row, print>, size.n);
  if (!room)
    return print(p, row);
  PackedWriter out{room};
  std::apply([&out](const auto &...field) { (out.put(field), ...); }, fields);
}

} // namespace anec
