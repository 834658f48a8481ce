// Binary layouts as data (tables/schema/layout/*.toml, docs/layout-format.md): the containers,
// load commands, thread states and firmware records every decoder reads, each described once —
// typed fields at byte offsets, arrays, enums, roles, encoding modifiers and variants — and read,
// written and printed by this one engine. A decoder asks for a struct by name, lays it over bytes
// with a bounds-checked View, and builds bytes with a Writer: no byte offset is written in code.
#pragma once
#include "anec/support/confidence.hpp"
#include "anec/support/doc.hpp"
#include "anec/support/printer.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace anec::layout {

enum class Type { U8, U16, U32, U64, I32, I64, Chars, Bytes };

// What a field is for: lets audits and printers treat fields by role, never by their name.
enum class Role { Value, Magic, Size, Count, Offset, Address, Stride, Reserved, Version, Flags, Kind };

const char *type_name(Type t);
const char *role_name(Role r);

// The stored value is a transform of the real one (CONVENTIONS.md: Panfrost's modifiers):
// shl(n) stores real >> n, scale(n) stores real / n, minus(n) stores real - n. Writing checks that
// the real value survives the round trip.
struct Modifier {
  enum class Kind { None, Shl, Scale, Minus } kind = Kind::None;
  uint64_t n = 0;
  uint64_t decode(uint64_t raw) const;
  std::optional<uint64_t> encode(uint64_t real) const; // nullopt when `real` is not representable
  std::string text() const;
};

struct Field {
  std::string name;
  uint32_t offset = 0; // bytes from the struct's start
  Type type = Type::U32;
  uint32_t width = 0;         // bytes of one element (Chars/Bytes: the declared length)
  std::vector<uint32_t> dims; // array extents, outermost first; empty for a scalar
  Role role = Role::Value;
  std::optional<uint64_t> value; // a magic's or a reserved field's required (raw) value
  std::string enumeration;       // the enum naming its values, or ""
  Modifier modifier;
  // A bit range within each element ("hi:lo"): fields sharing a word each take their own bits.
  std::optional<std::pair<uint32_t, uint32_t>> bits;
  std::string meaning, source;
  Confidence confidence = Confidence::Decoded;

  uint64_t elements() const; // product of dims (1 for a scalar)
  uint64_t bytes() const { return width * elements(); }
  uint64_t mask() const; // of the value within an element (all bits without `bits`)
  uint64_t extract(uint64_t element) const;
};

// A struct applies when every condition holds on the bytes (variants: `variant_of` names the family,
// `when` the fields of the family's head that select this member).
struct Condition {
  std::string field;
  uint64_t equals = 0;
  std::optional<uint64_t> at_least; // the field's value >= at_least instead of == equals
};

struct Struct {
  std::string name, meaning, source;
  uint32_t bytes = 0;      // fixed size; a variable-sized record's fixed head
  bool big_endian = false; // integers are little-endian unless the struct says `endian = "big"`
  Confidence confidence = Confidence::Decoded;
  std::string variant_of;
  std::vector<Condition> when;
  std::vector<Field> fields;                       // in offset order
  std::unordered_map<std::string, uint32_t> index; // field name -> position, built by reindex()

  // Call after filling `fields`: names are then found without a scan.
  void reindex();
  const Field *find(std::string_view name) const;
  const Field &at(std::string_view name) const; // throws ANEC-LAYOUT-002 when absent
  // "nchw[3][1]" for the byte at `offset` from the struct's start, "" where no field lies.
  std::string field_at(uint64_t offset) const;
};

struct Enum {
  std::string name;
  std::vector<std::pair<std::string, uint64_t>> values;
  // The value's name, or "unknown(0xN)".
  std::string name_of(uint64_t v) const;
};

class Database {
public:
  // Strict (ANEC-LAYOUT-001, with file:line:column): unknown keys, duplicate names, a field past its
  // struct, overlapping fields, an unknown type, role, enum or confidence, a variant of no family.
  static Database from_docs(const std::vector<std::pair<Doc, std::string>> &docs);
  // The layouts of tables/schema/layout/, compiled into the library when it was built.
  static const Database &builtin();

  const Struct &get(std::string_view name) const; // throws ANEC-LAYOUT-002
  const Enum *enumeration(std::string_view name) const;
  // The member of family `family` whose conditions hold at `at`, or nullptr.
  const Struct *variant(std::string_view family, std::span<const uint8_t> bytes, uint64_t at) const;
  const std::vector<Struct> &structs() const { return structs_; }
  const std::vector<Enum> &enums() const { return enums_; }

private:
  std::vector<Struct> structs_;
  std::vector<Enum> enums_;
  std::unordered_map<std::string, size_t> by_name_; // struct name -> position
};

// A struct laid over bytes at an offset. Construction checks that the whole struct lies inside the
// bytes (else throws `code`, naming the struct, its offset and the end), so every read is in bounds.
class View {
public:
  View(const Struct &s, std::span<const uint8_t> bytes, uint64_t at, std::string code);

  // The real value (modifier applied) of an integer field; `index` addresses array elements.
  uint64_t get(std::string_view field, std::initializer_list<uint32_t> index = {}) const;
  uint64_t raw(const Field &f, uint32_t element = 0) const;
  // A Chars field up to its first NUL.
  std::string chars(std::string_view field) const;
  // Byte offset of a field (element) in the underlying bytes.
  uint64_t offset_of(std::string_view field, std::initializer_list<uint32_t> index = {}) const;
  uint64_t at() const { return at_; }
  uint64_t end() const { return at_ + s_->bytes; }
  const Struct &layout() const { return *s_; }
  std::span<const uint8_t> bytes() const { return b_; }

private:
  const Struct *s_;
  std::span<const uint8_t> b_;
  uint64_t at_;
  std::string code_;
};

// Builds a struct's bytes: zero-filled, magics and required values preset, then set() per field.
class Writer {
public:
  explicit Writer(const Struct &s);
  // Throws ANEC-LAYOUT-003 when the value does not fit the field or its modifier.
  Writer &set(std::string_view field, uint64_t value, std::initializer_list<uint32_t> index = {});
  Writer &set_chars(std::string_view field, std::string_view text);
  const std::vector<uint8_t> &bytes() const { return bytes_; }
  // Copies the struct's bytes into `out` at `at` (the caller sized `out`).
  void write_to(std::span<uint8_t> out, uint64_t at) const;

private:
  const Struct *s_;
  std::vector<uint8_t> bytes_;
};

// Every field with its value, as members of the object being printed. The text shows a line per
// nonzero field after `indent`: "name = value" (enum names, "[stored 0x7, shl(6)]" where a modifier
// applies), arrays by element ("nchw[3][1] = 0x40"). A document holds integers (enums as {name,
// value}), arrays as lists without their trailing zero rows (an all-zero array left out), Chars as
// strings and Bytes as hex.
void print(Printer &p, const View &v, const Database &db, std::string_view indent = "  ");

} // namespace anec::layout
