#include "anec/layout/layout.hpp"

#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <bit>
#include <optional>

namespace anec::layout {

namespace {

// Element number of `index` in a field's row-major array; ANEC-LAYOUT-002 when out of range.
uint32_t element_of(const Struct &s, const Field &f, std::initializer_list<uint32_t> index) {
  if (index.size() != f.dims.size())
    throw Error("ANEC-LAYOUT-002", s.name + "." + f.name + " takes " + std::to_string(f.dims.size()) +
                                       " index(es), given " + std::to_string(index.size()));
  uint64_t e = 0;
  size_t d = 0;
  for (uint32_t i : index) {
    if (i >= f.dims[d])
      throw Error("ANEC-LAYOUT-002", s.name + "." + f.name + " index " + std::to_string(i) + " past " +
                                         std::to_string(f.dims[d]));
    e = e * f.dims[d++] + i;
  }
  return uint32_t(e);
}

uint64_t sign_extend(const Field &f, uint64_t v) {
  if (f.type == Type::I32)
    return uint64_t(int64_t(int32_t(uint32_t(v))));
  return v;
}

bool is_integer(Type t) {
  return t != Type::Chars && t != Type::Bytes;
}

uint64_t load(const Struct &s, std::span<const uint8_t> b, uint64_t off, uint32_t width) {
  if (!s.big_endian)
    return load_le(b, off, width);
  uint64_t v = 0;
  for (uint32_t i = 0; i < width; ++i)
    v = v << 8 | b[off + i];
  return v;
}

void store(const Struct &s, std::span<uint8_t> b, uint64_t off, uint64_t v, uint32_t width) {
  if (!s.big_endian)
    return store_le(b, off, v, width);
  for (uint32_t i = 0; i < width; ++i)
    b[off + width - 1 - i] = uint8_t(v >> (8 * i));
}

// Stores a raw value into element `e` of `f`, keeping the other bits of a shared word.
void put(const Struct &s, std::span<uint8_t> out, const Field &f, uint64_t e, uint64_t raw) {
  uint64_t at = f.offset + e * f.width;
  if (f.bits)
    raw = (load(s, out, at, f.width) & ~(f.mask() << f.bits->second)) | raw << f.bits->second;
  store(s, out, at, raw, f.width);
}

} // namespace

uint64_t Modifier::decode(uint64_t raw) const {
  switch (kind) {
  case Kind::Shl:
    return raw << n;
  case Kind::Scale:
    return raw * n;
  case Kind::Minus:
    return raw + n;
  case Kind::None:
    break;
  }
  return raw;
}

std::optional<uint64_t> Modifier::encode(uint64_t real) const {
  uint64_t raw = real;
  switch (kind) {
  case Kind::Shl:
    raw = real >> n;
    break;
  case Kind::Scale:
    raw = real / n;
    break;
  case Kind::Minus:
    if (real < n)
      return std::nullopt;
    raw = real - n;
    break;
  case Kind::None:
    break;
  }
  if (decode(raw) != real)
    return std::nullopt;
  return raw;
}

std::string Modifier::text() const {
  static const char *names[] = {"", "shl", "scale", "minus"};
  return kind == Kind::None ? "" : std::string(names[int(kind)]) + "(" + std::to_string(n) + ")";
}

View::View(const Struct &s, std::span<const uint8_t> bytes, uint64_t at, std::string code)
    : s_(&s), b_(bytes), at_(at), code_(std::move(code)) {
  if (at > bytes.size() || bytes.size() - at < s.bytes)
    throw Error(code_, s.name + " at " + hex(at) + " needs " + hex(s.bytes) + " bytes; the data ends at " +
                           hex(bytes.size()));
}

uint64_t View::raw(const Field &f, uint32_t element) const {
  return sign_extend(f, f.extract(load(*s_, b_, at_ + f.offset + uint64_t(element) * f.width, f.width)));
}

uint64_t View::get(std::string_view name, std::initializer_list<uint32_t> index) const {
  const Field &f = s_->at(name);
  if (!is_integer(f.type))
    throw Error("ANEC-LAYOUT-002", s_->name + "." + f.name + " is not an integer field");
  return f.modifier.decode(raw(f, element_of(*s_, f, index)));
}

std::string View::chars(std::string_view name) const {
  const Field &f = s_->at(name);
  std::string s(reinterpret_cast<const char *>(&b_[at_ + f.offset]), f.width);
  return s.substr(0, s.find('\0'));
}

uint64_t View::offset_of(std::string_view name, std::initializer_list<uint32_t> index) const {
  const Field &f = s_->at(name);
  return at_ + f.offset + uint64_t(element_of(*s_, f, index)) * f.width;
}

Writer::Writer(const Struct &s) : s_(&s), bytes_(s.bytes, 0) {
  for (const Field &f : s.fields)
    if (f.value)
      for (uint64_t e = 0; e < f.elements(); ++e)
        put(s, bytes_, f, e, *f.value);
}

Writer &Writer::set(std::string_view name, uint64_t value, std::initializer_list<uint32_t> index) {
  const Field &f = s_->at(name);
  auto fail = [&](const std::string &why) {
    return Error("ANEC-LAYOUT-003",
                 s_->name + "." + f.name + " cannot hold " + std::to_string(value) + ": " + why);
  };
  if (!is_integer(f.type))
    throw fail("not an integer field");
  std::optional<uint64_t> raw = f.modifier.encode(value);
  if (!raw)
    throw fail("its encoding " + f.modifier.text() + " would lose it");
  if (f.type == Type::I32 ? int64_t(*raw) != int64_t(int32_t(uint32_t(*raw)))
                          : f.type != Type::I64 && (*raw & ~f.mask()))
    throw fail("it does not fit the field's " + std::to_string(std::popcount(f.mask())) + " bits");
  put(*s_, bytes_, f, element_of(*s_, f, index), *raw);
  return *this;
}

Writer &Writer::set_chars(std::string_view name, std::string_view text) {
  const Field &f = s_->at(name);
  if (f.type != Type::Chars || text.size() > f.width || text.find('\0') != std::string_view::npos)
    throw Error("ANEC-LAYOUT-003", s_->name + "." + f.name + " cannot hold the " +
                                       std::to_string(text.size()) + "-character text '" + excerpt(text, 40) +
                                       "'");
  std::copy(text.begin(), text.end(), bytes_.begin() + f.offset);
  return *this;
}

void Writer::write_to(std::span<uint8_t> out, uint64_t at) const {
  std::copy(bytes_.begin(), bytes_.end(), out.begin() + long(at));
}

namespace {

// A value as its field's type and role show it: signed and count fields in decimal, others in hex.
Scalar number(const Field &f, uint64_t v) {
  if (f.type == Type::I32 || f.type == Type::I64)
    return int64_t(v);
  if (f.role == Role::Count)
    return v;
  return Hex{v};
}

// One value of `f` (`raw` as stored): the member `key` of the object being printed or, with no key,
// an element of the list. An enum's value reads "NAME (0xN)" in text and {name, value} in a
// document; where a modifier applies, the text adds the stored value.
void print_value(Printer &p, std::string_view key, const Field &f, uint64_t raw, const Database &db) {
  uint64_t v = f.modifier.decode(raw);
  if (const Enum *e = f.enumeration.empty() ? nullptr : db.enumeration(f.enumeration)) {
    Object named(p, key);
    p.field("name", e->name_of(v));
    p.text(" (");
    p.field("value", number(f, v));
    p.text(")");
  } else if (key.empty()) {
    p.item(number(f, v));
  } else {
    p.field(key, number(f, v));
  }
  if (f.modifier.kind != Modifier::Kind::None && p.text_form())
    p.text(" [stored " + hex(raw) + ", " + f.modifier.text() + "]");
}

bool all_zero(const View &v, const Field &f) {
  if (f.bits) {
    for (uint32_t e = 0; e < f.elements(); ++e)
      if (v.raw(f, e))
        return false;
    return true;
  }
  auto b = v.bytes().subspan(v.at() + f.offset, f.bytes());
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
}

std::string bytes_hex(std::span<const uint8_t> b) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b)
    s += {digits[x >> 4], digits[x & 15]};
  return s;
}

} // namespace

namespace {

bool row_zero(const View &v, const Field &f, uint32_t row, uint32_t columns) {
  for (uint32_t j = 0; j < columns; ++j)
    if (v.raw(f, row * columns + j))
      return false;
  return true;
}

// Element `e` of an array: in text a line when it is nonzero, named by its index ("nchw[3][1]").
void print_element(Printer &p, const View &v, const Field &f, uint32_t e, const Database &db,
                   std::string_view indent) {
  uint64_t raw = v.raw(f, e);
  if (!p.text_form()) {
    print_value(p, {}, f, raw, db);
    return;
  }
  if (!raw)
    return;
  std::string index = f.elements() > 1 ? v.layout().field_at(f.offset + uint64_t(e) * f.width) : f.name;
  p.text(std::string(indent) + index + " = ");
  print_value(p, {}, f, raw, db);
  p.text("\n");
}

// An array: in a document a list (of rows, for two dimensions) without its trailing zero rows.
void print_array(Printer &p, const View &v, const Field &f, const Database &db, std::string_view indent) {
  uint32_t columns = f.dims.size() == 2 ? f.dims[1] : 1, rows = f.dims[0];
  while (rows > 0 && row_zero(v, f, rows - 1, columns))
    --rows;
  List elements(p, f.name);
  for (uint32_t i = 0; i < rows; ++i) {
    std::optional<List> row;
    if (f.dims.size() == 2)
      row.emplace(p);
    for (uint32_t j = 0; j < columns; ++j)
      print_element(p, v, f, i * columns + j, db, indent);
  }
}

} // namespace

void print(Printer &p, const View &v, const Database &db, std::string_view indent) {
  for (const Field &f : v.layout().fields) {
    if (all_zero(v, f) && (f.elements() > 1 || p.text_form()))
      continue; // the text shows the nonzero fields, a document every field but an all-zero array
    if (!f.dims.empty() && f.type != Type::Chars && f.type != Type::Bytes) {
      print_array(p, v, f, db, indent);
      continue;
    }
    p.text(std::string(indent) + f.name + " = ");
    if (f.type == Type::Chars) {
      p.text("\"");
      p.field(f.name, v.chars(f.name));
      p.text("\"");
    } else if (f.type == Type::Bytes) {
      p.field(f.name, bytes_hex(v.bytes().subspan(v.at() + f.offset, f.width)));
    } else {
      print_value(p, f.name, f, v.raw(f), db);
    }
    p.text("\n");
  }
}

} // namespace anec::layout
