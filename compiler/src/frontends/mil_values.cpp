// A MIL program's constant values (mil_values.hpp): weight-file blobs decoded, the compression ops
// expanded as their op specs define.
#include "mil_values.hpp"

#include "anec/support/half.hpp"

#include <bit>
#include <cstring>
#include <fstream>

namespace anec::compiler::mil_values {

namespace {

uint64_t load_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int b = bytes - 1; b >= 0; --b)
    v = v << 8 | p[b];
  return v;
}

// Bits per element, and whether signed or a float, for a BlobDataType code
// (reference/coreml/milblob/BlobDataType.hpp).
struct BlobType {
  int bits = 0;
  bool is_signed = false;
  char kind = 'i'; // 'i' integer, 'h' fp16, 'f' fp32, 'b' bf16
};
std::optional<BlobType> blob_type(uint32_t code) {
  switch (code) {
  case 1:
    return BlobType{16, true, 'h'};
  case 2:
    return BlobType{32, true, 'f'};
  case 3:
    return BlobType{8, false, 'i'};
  case 4:
    return BlobType{8, true, 'i'};
  case 5:
    return BlobType{16, true, 'b'};
  case 6:
    return BlobType{16, true, 'i'};
  case 7:
    return BlobType{16, false, 'i'};
  case 8:
    return BlobType{4, true, 'i'};
  case 9:
    return BlobType{1, false, 'i'};
  case 10:
    return BlobType{2, false, 'i'};
  case 11:
    return BlobType{4, false, 'i'};
  case 12:
    return BlobType{3, false, 'i'};
  case 13:
    return BlobType{6, false, 'i'};
  case 14:
    return BlobType{32, true, 'i'};
  case 15:
    return BlobType{32, false, 'i'};
  default:
    return std::nullopt; // 16, 17: fp8
  }
}

// The index of each element's block: data.shape / block counts per axis, C order.
std::optional<std::vector<int64_t>> block_of(const std::vector<int64_t> &shape,
                                             const std::vector<int64_t> &blocks) {
  if (blocks.size() != shape.size())
    return std::nullopt;
  int64_t n = 1;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (blocks[a] <= 0 || shape[a] % blocks[a] != 0)
      return std::nullopt;
    n *= shape[a];
  }
  std::vector<int64_t> out(size_t(n), 0), at(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t b = 0;
    for (size_t a = 0; a < shape.size(); ++a)
      b = b * blocks[a] + at[a] / (shape[a] / blocks[a]);
    out[size_t(i)] = b;
    for (size_t a = shape.size(); a-- > 0;)
      if (++at[a] < shape[a])
        break;
      else
        at[a] = 0;
  }
  return out;
}

} // namespace

std::vector<double> unpack(std::span<const uint8_t> bytes, int bits, int64_t count, bool is_signed) {
  std::vector<double> out;
  out.reserve(size_t(count));
  uint64_t bit = 0;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    for (int k = 0; k < bits; ++k, ++bit)
      v |= uint64_t(bytes[bit / 8] >> (bit % 8) & 1) << k;
    int64_t x = int64_t(v);
    if (is_signed && bits < 64 && (v >> (bits - 1) & 1))
      x -= int64_t(1) << bits;
    out.push_back(double(x));
  }
  return out;
}

std::optional<std::vector<double>> read_blob(const std::filesystem::path &file, uint64_t offset,
                                             int64_t count, std::string &why) {
  std::ifstream in(file, std::ios::binary);
  uint8_t rec[64] = {};
  in.seekg(std::streamoff(offset));
  if (!in.read(reinterpret_cast<char *>(rec), 64)) {
    why = "cannot read the blob record";
    return std::nullopt;
  }
  auto type = blob_type(uint32_t(load_le(rec + 4, 4)));
  uint64_t size = load_le(rec + 8, 8), data = load_le(rec + 16, 8);
  if (!type) {
    why = "blob data type " + std::to_string(load_le(rec + 4, 4)) + " (fp8) has no values here";
    return std::nullopt;
  }
  if (count < 0 || count > kMaxElements) {
    why = std::to_string(count) + " elements, more than the " + std::to_string(kMaxElements) + " read";
    return std::nullopt;
  }
  uint64_t need = (uint64_t(count) * uint64_t(type->bits) + 7) / 8;
  if (need > size) {
    why = "the blob holds " + std::to_string(size) + " bytes; " + std::to_string(count) + " elements need " +
          std::to_string(need);
    return std::nullopt;
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(need));
  in.seekg(std::streamoff(data));
  if (!in.read(reinterpret_cast<char *>(bytes.data()), std::streamsize(need))) {
    why = "cannot read the blob's data";
    return std::nullopt;
  }
  if (type->kind == 'i' && type->bits < 8)
    return unpack(bytes, type->bits, count, type->is_signed);
  std::vector<double> out;
  out.reserve(size_t(count));
  int width = type->bits / 8;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t v = load_le(bytes.data() + i * width, width);
    switch (type->kind) {
    case 'h':
      out.push_back(double(from_half(uint16_t(v))));
      break;
    case 'f':
      out.push_back(double(std::bit_cast<float>(uint32_t(v))));
      break;
    case 'b':
      out.push_back(double(std::bit_cast<float>(uint32_t(v) << 16)));
      break;
    default:
      if (type->is_signed && (v >> (type->bits - 1) & 1))
        out.push_back(double(int64_t(v) - (int64_t(1) << type->bits)));
      else
        out.push_back(double(v));
    }
  }
  return out;
}

std::optional<std::vector<double>> affine_dequantize(const std::vector<double> &data,
                                                     const std::vector<int64_t> &shape,
                                                     const std::vector<double> &zero_point,
                                                     const std::vector<double> &scale, int64_t axis) {
  int64_t r = int64_t(shape.size());
  axis = axis < 0 ? axis + r : axis;
  if (axis < 0 || axis >= r || zero_point.empty() || scale.empty())
    return std::nullopt;
  int64_t along = shape[size_t(axis)], inner = 1;
  for (int64_t a = axis + 1; a < r; ++a)
    inner *= shape[size_t(a)];
  auto fits = [&](const std::vector<double> &v) { return v.size() == 1 || int64_t(v.size()) == along; };
  if (!fits(zero_point) || !fits(scale))
    return std::nullopt;
  std::vector<double> out(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    size_t k = size_t((int64_t(i) / inner) % along);
    double zp = zero_point.size() == 1 ? zero_point[0] : zero_point[k];
    double s = scale.size() == 1 ? scale[0] : scale[k];
    out[i] = (data[i] - zp) * s;
  }
  return out;
}

std::optional<std::vector<double>> blockwise_shift_scale(const std::vector<double> &data,
                                                         const std::vector<int64_t> &shape,
                                                         const std::vector<double> &scale,
                                                         const std::vector<int64_t> &scale_shape,
                                                         const std::vector<double> &offset) {
  auto block = block_of(shape, scale_shape);
  if (!block || block->size() != data.size() || (!offset.empty() && offset.size() != scale.size()))
    return std::nullopt;
  std::vector<double> out(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    size_t b = size_t((*block)[i]);
    if (b >= scale.size())
      return std::nullopt;
    out[i] = scale[b] * (data[i] - (offset.empty() ? 0.0 : offset[b]));
  }
  return out;
}

std::optional<std::vector<double>> lut_to_dense(const std::vector<double> &indices,
                                                const std::vector<int64_t> &shape,
                                                const std::vector<double> &lut,
                                                const std::vector<int64_t> &lut_shape) {
  int64_t palette = 0;
  std::vector<int64_t> blocks(shape.size(), 1);
  if (lut_shape.size() == 1) { // iOS16: one palette
    palette = lut_shape[0];
  } else if (lut_shape.size() == shape.size() + 2 && lut_shape.back() == 1) { // iOS18, vector size 1
    palette = lut_shape[lut_shape.size() - 2];
    blocks.assign(lut_shape.begin(), lut_shape.end() - 2);
  } else {
    return std::nullopt;
  }
  auto block = block_of(shape, blocks);
  if (!block || block->size() != indices.size() || palette <= 0)
    return std::nullopt;
  std::vector<double> out(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t k = int64_t(indices[i]);
    size_t at = size_t((*block)[i] * palette + k);
    if (k < 0 || k >= palette || at >= lut.size())
      return std::nullopt;
    out[i] = lut[at];
  }
  return out;
}

std::optional<std::vector<double>> sparse_to_dense(const std::vector<double> &mask,
                                                   const std::vector<double> &nonzero, int64_t count) {
  if (int64_t(mask.size()) < count)
    return std::nullopt;
  std::vector<double> out(size_t(count), 0.0);
  size_t next = 0;
  for (int64_t i = 0; i < count; ++i)
    if (mask[size_t(i)] != 0) {
      if (next >= nonzero.size())
        return std::nullopt;
      out[size_t(i)] = nonzero[next++];
    }
  return out;
}

} // namespace anec::compiler::mil_values
