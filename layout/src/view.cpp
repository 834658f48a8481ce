#include "anec/layout/layout.hpp"

#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <bit>

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

Doc value_doc(const Field &f, uint64_t raw, const Database &db) {
  uint64_t v = f.modifier.decode(raw);
  Doc n = f.type == Type::I32 || f.type == Type::I64 ? Doc::integer(int64_t(v))
                                                     : Doc::integer(int64_t(v), f.role != Role::Count);
  const Enum *e = f.enumeration.empty() ? nullptr : db.enumeration(f.enumeration);
  if (!e)
    return n;
  Doc t = Doc::table();
  t.set("name", Doc::string(e->name_of(v)));
  t.set("value", std::move(n));
  return t;
}

std::string value_text(const Field &f, uint64_t raw, const Database &db) {
  uint64_t v = f.modifier.decode(raw);
  std::string s = f.type == Type::I32 || f.type == Type::I64 ? std::to_string(int64_t(v))
                  : f.role == Role::Count                    ? std::to_string(v)
                                                             : hex(v);
  if (const Enum *e = f.enumeration.empty() ? nullptr : db.enumeration(f.enumeration))
    s = e->name_of(v) + " (" + s + ")";
  if (f.modifier.kind != Modifier::Kind::None)
    s += " [stored " + hex(raw) + ", " + f.modifier.text() + "]";
  return s;
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

Doc to_doc(const View &v, const Database &db, bool skip_zero) {
  Doc d = Doc::table();
  for (const Field &f : v.layout().fields) {
    if (skip_zero && f.elements() > 1 && all_zero(v, f))
      continue;
    if (f.type == Type::Chars) {
      d.set(f.name, Doc::string(v.chars(f.name)));
    } else if (f.type == Type::Bytes) {
      d.set(f.name, Doc::string(bytes_hex(v.bytes().subspan(v.at() + f.offset, f.width))));
    } else if (f.dims.empty()) {
      d.set(f.name, value_doc(f, v.raw(f), db));
    } else {
      uint32_t inner = f.dims.size() == 2 ? f.dims[1] : 1, rows = f.dims[0];
      auto row_zero = [&](uint32_t i) {
        for (uint32_t j = 0; j < inner; ++j)
          if (v.raw(f, i * inner + j))
            return false;
        return true;
      };
      while (skip_zero && rows > 0 && row_zero(rows - 1)) // trailing zero rows are left out
        --rows;
      Doc outer = Doc::array();
      for (uint32_t i = 0; i < rows; ++i) {
        if (f.dims.size() == 1) {
          outer.push(value_doc(f, v.raw(f, i), db));
          continue;
        }
        Doc row = Doc::array();
        for (uint32_t j = 0; j < inner; ++j)
          row.push(value_doc(f, v.raw(f, i * inner + j), db));
        outer.push(std::move(row));
      }
      d.set(f.name, std::move(outer));
    }
  }
  return d;
}

std::string to_text(const View &v, const Database &db, const std::string &indent) {
  std::string out;
  for (const Field &f : v.layout().fields) {
    if (all_zero(v, f))
      continue;
    if (f.type == Type::Chars) {
      out += indent + f.name + " = \"" + v.chars(f.name) + "\"\n";
    } else if (f.type == Type::Bytes) {
      out += indent + f.name + " = " + bytes_hex(v.bytes().subspan(v.at() + f.offset, f.width)) + "\n";
    } else {
      for (uint32_t e = 0; e < f.elements(); ++e) {
        uint64_t raw = v.raw(f, e);
        if (f.elements() > 1 && !raw)
          continue;
        out += indent + f.name +
               (f.elements() > 1 ? v.layout().field_at(f.offset + uint64_t(e) * f.width).substr(f.name.size())
                                 : "") +
               " = " + value_text(f, raw, db) + "\n";
      }
    }
  }
  return out;
}

} // namespace anec::layout
