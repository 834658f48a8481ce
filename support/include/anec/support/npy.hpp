// NumPy's .npy array files (format versions 1.0 to 3.0): what `anec eval` reads as inputs and
// constants and writes as outputs. An array is held little-endian in C order whatever the file
// held (big-endian data is swapped, a Fortran-order array reordered).
// Errors: ANEC-NPY-001 not an .npy file or a malformed header (the reason and the offending text),
// ANEC-NPY-002 a dtype anec does not read (only bool, integers and floats of 1 to 8 bytes), or data
// whose size disagrees with the shape.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace anec::npy {

struct Array {
  std::string dtype;          // "f2", "f4", "f8", "i1".."i8", "u1".."u8", "b1"
  std::vector<int64_t> shape; // () for a scalar
  std::vector<uint8_t> data;  // little-endian, C order
  size_t item_bytes() const;
  size_t count() const; // elements
  // Every element as a double (a boolean as 0 or 1).
  std::vector<double> values() const;
};

Array read(std::span<const uint8_t> bytes, const std::string &source);
// Format version 1.0 (version 2.0 when the header needs more than 65535 bytes).
std::vector<uint8_t> write(const Array &array);

} // namespace anec::npy
