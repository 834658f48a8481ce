#include "anec/support/npy.hpp"

#include "anec/support/checked.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/half.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

namespace anec::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

[[noreturn]] void bad(const std::string &source, const std::string &why) {
  throw Error("ANEC-NPY-001", source + ": " + why);
}

std::string trimmed(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

// The value after `'key':` in the header's dictionary, up to the next top-level comma.
std::string entry(const std::string &header, const std::string &key, const std::string &source) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    bad(source, "the header has no '" + key + "': " + excerpt(header, 120));
  size_t colon = header.find(':', at), end = colon;
  if (colon == std::string::npos)
    bad(source, "the header's '" + key + "' has no value: " + excerpt(header, 120));
  for (int depth = 0; ++end < header.size();) {
    char c = header[end];
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (depth == 0 && (c == ',' || c == '}'))
      break;
  }
  if (end >= header.size())
    bad(source, "the header's '" + key + "' has no value: " + excerpt(header, 120));
  return trimmed(header.substr(colon + 1, end - colon - 1));
}

std::vector<int64_t> shape_of(const std::string &text, const std::string &source) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    bad(source, "shape " + excerpt(text, 60) + " is not a tuple");
  std::vector<int64_t> shape;
  std::string inner = text.substr(1, text.size() - 2);
  for (size_t at = 0; at < inner.size();) {
    size_t comma = std::min(inner.find(',', at), inner.size());
    std::string item = trimmed(inner.substr(at, comma - at));
    if (!item.empty()) {
      if (item.find_first_not_of("0123456789") != std::string::npos || item.size() > 15)
        bad(source, "shape " + excerpt(text, 60) + " holds " + excerpt(item, 20) + ", not a size");
      shape.push_back(std::stoll(item));
    }
    at = comma + 1;
  }
  return shape;
}

size_t bytes_of(const std::string &dtype) {
  static const std::string kKinds = "fiub";
  if (dtype.size() != 2 || kKinds.find(dtype[0]) == std::string::npos)
    return 0;
  size_t n = size_t(dtype[1] - '0');
  bool ok = dtype[0] == 'f'   ? n == 2 || n == 4 || n == 8
            : dtype[0] == 'b' ? n == 1
                              : n == 1 || n == 2 || n == 4 || n == 8;
  return ok ? n : 0;
}

// C order from Fortran order: element (i0, i1, ...) is at sum i_k * stride_k, strides growing.
std::vector<uint8_t> c_order(const std::vector<uint8_t> &f, const std::vector<int64_t> &shape, size_t item) {
  std::vector<uint8_t> out(f.size());
  size_t n = f.size() / std::max<size_t>(item, 1);
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t c = 0; c < n; ++c) { // index counts in C order (last axis fastest)
    size_t at = 0, stride = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
      at += size_t(index[k]) * stride;
      stride *= size_t(shape[k]);
    }
    std::memcpy(out.data() + c * item, f.data() + at * item, item);
    for (size_t k = shape.size(); k-- > 0;)
      if (++index[k] < shape[k])
        break;
      else
        index[k] = 0;
  }
  return out;
}

} // namespace

size_t Array::item_bytes() const {
  return bytes_of(dtype);
}

size_t Array::count() const {
  size_t n = 1;
  for (int64_t d : shape)
    n *= size_t(d);
  return n;
}

std::vector<double> Array::values() const {
  std::vector<double> out(count());
  size_t item = item_bytes();
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, data.data() + i * item, item);
    switch (dtype[0]) {
    case 'f':
      out[i] = item == 2   ? from_half(uint16_t(raw))
               : item == 4 ? std::bit_cast<float>(uint32_t(raw))
                           : std::bit_cast<double>(raw);
      break;
    case 'i':
      out[i] = double(int64_t(raw << (64 - 8 * item)) >> (64 - 8 * item));
      break;
    default:
      out[i] = double(raw);
      break;
    }
  }
  return out;
}

Array read(std::span<const uint8_t> b, const std::string &source) {
  if (b.size() < kMagicBytes + 4 || std::memcmp(b.data(), kMagic, kMagicBytes) != 0)
    bad(source, "not an .npy file (no \\x93NUMPY magic)");
  int major = b[6];
  if (major < 1 || major > 3)
    bad(source,
        "format version " + std::to_string(major) + "." + std::to_string(b[7]) + " is not 1.0 to 3.0");
  size_t length_bytes = major == 1 ? 2 : 4, start = 8 + length_bytes;
  if (b.size() < start)
    bad(source, "truncated in the header length");
  size_t header_len = b[8] | size_t(b[9]) << 8;
  if (length_bytes == 4)
    header_len |= size_t(b[10]) << 16 | size_t(b[11]) << 24;
  if (header_len > b.size() - start)
    bad(source, "the header of " + std::to_string(header_len) + " bytes runs past the end");
  std::string header(reinterpret_cast<const char *>(b.data() + start), header_len);
  Array a;
  std::string descr = entry(header, "descr", source), order = entry(header, "fortran_order", source);
  if (descr.size() < 3 || descr.front() != '\'' || descr.back() != '\'')
    bad(source, "descr " + excerpt(descr, 40) + " is not a quoted type string");
  descr = descr.substr(1, descr.size() - 2);
  char endian = descr[0];
  a.dtype = descr.substr(1);
  size_t item = bytes_of(a.dtype);
  if (!item || std::string_view("<>|=").find(endian) == std::string_view::npos)
    throw Error("ANEC-NPY-002",
                source + ": dtype '" + descr + "' is not read (bool, integers and floats only)");
  if (order != "True" && order != "False")
    bad(source, "fortran_order is " + excerpt(order, 20) + ", not True or False");
  a.shape = shape_of(entry(header, "shape", source), source);
  uint64_t count = 1;
  for (int64_t d : a.shape)
    if (auto c = checked_mul(count, uint64_t(d)))
      count = *c;
    else
      throw Error("ANEC-NPY-002", source + ": shape's element count does not fit in 64 bits");
  size_t data_at = start + header_len;
  auto bytes = checked_mul(count, uint64_t(item));
  if (!bytes || uint64_t(*bytes) != b.size() - data_at)
    throw Error("ANEC-NPY-002", source + ": " + std::to_string(b.size() - data_at) + " data bytes for " +
                                    std::to_string(count) + " elements of " + std::to_string(item) +
                                    " bytes");
  a.data.assign(b.begin() + long(data_at), b.end());
  if (endian == '>' && item > 1)
    for (size_t i = 0; i < a.data.size(); i += item)
      std::reverse(a.data.begin() + long(i), a.data.begin() + long(i + item));
  if (order == "True")
    a.data = c_order(a.data, a.shape, item);
  return a;
}

std::vector<uint8_t> write(const Array &a) {
  std::string shape;
  for (size_t k = 0; k < a.shape.size(); ++k)
    shape += (k ? ", " : "") + std::to_string(a.shape[k]);
  shape = "(" + shape + (a.shape.size() == 1 ? ",)" : ")");
  std::string header = "{'descr': '" + std::string(a.item_bytes() == 1 ? "|" : "<") + a.dtype +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic, version and length, then the header padded with spaces and a newline to a multiple of 64.
  bool wide = header.size() + 64 > 65535;
  size_t prefix = wide ? 12 : 10, total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicBytes);
  out.push_back(wide ? 2 : 1);
  out.push_back(0);
  for (size_t k = 0; k < (wide ? 4u : 2u); ++k)
    out.push_back(uint8_t(header.size() >> (8 * k)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

} // namespace anec::npy
