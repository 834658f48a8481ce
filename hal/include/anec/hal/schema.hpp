// The HAL field database (tables/schema/hal.toml): every fact a target definition holds, where it
// lives in the 0x938-byte ZinIrHalParameters blob (guide ch.24) or that it lives outside it.
#pragma once
#include "anec/layout/layout.hpp"
#include "anec/support/confidence.hpp"
#include "anec/support/doc.hpp"
#include "anec/support/format.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace anec::hal {

enum class Type { U8, U16, U32, U64, F64, Ptr, Str24, Bytes, Int, Float, String, Strings, Bool };
using anec::Confidence;
using anec::confidence_name;
using anec::parse_confidence;

const char *type_name(Type t);
bool is_blob_type(Type t);

struct Field {
  std::string name;
  Type type = Type::U64;
  std::optional<uint32_t> offset; // set for fields stored in the blob
  uint32_t width = 0;             // bytes in the blob (0 for outside fields)
  std::string section, unit, meaning, source;
  Confidence confidence = Confidence::Decoded;
  std::optional<double> min, max;
  bool monotone = false;
  std::optional<int> floor; // capability allowed only on family index >= floor
  bool synthesized = false; // an unk_<offset> gap the loader filled in

  bool in_blob() const { return offset.has_value(); }
};

struct Region {
  std::string name;
  uint32_t begin = 0, end = 0;
  std::string meaning;
};

class Schema {
public:
  // Strict: unknown keys, duplicate names, overlapping offsets, a field past the blob end, an
  // unknown type or confidence are ANEC-SCHEMA-001 errors naming the field and position.
  static Schema from_doc(const Doc &doc, const std::string &source);
  static Schema load(const std::filesystem::path &path);

  const std::string &version() const { return version_; }
  uint32_t blob_size() const { return blob_size_; }
  // Blob fields in offset order (gaps filled with unk_<offset>), then outside fields in file order.
  const std::vector<Field> &fields() const { return fields_; }
  const std::vector<Region> &regions() const { return regions_; }
  const Field *find(std::string_view name) const;
  // The blob's fields as a layout (the one engine that reads and writes binary structures; doubles
  // as their 64-bit patterns, strings and byte runs as bytes), built by from_doc.
  const layout::Struct &blob_layout() const { return blob_layout_; }
  // Section names in the order target definitions print them.
  static const std::vector<std::string> &section_order();

private:
  std::string version_;
  uint32_t blob_size_ = 0;
  std::vector<Field> fields_;
  std::vector<size_t> by_name_; // indices into fields_, sorted by the field's name
  std::vector<Region> regions_;
  layout::Struct blob_layout_;
};

} // namespace anec::hal
