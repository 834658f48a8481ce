// A MIL program's constant values, for the evaluator (MilContext::keep_values): the elements of a
// blob in a weight file (milblob layout, reference/coreml/milblob: a 64-byte record at the offset the
// text names: u32 sentinel 0xDEADBEEF, u32 data type (BlobDataType), u64 size in bytes, u64 data
// offset) and the compression ops' dense values as their op specs define them
// (reference/coreml/mil-ops iOS16 constexpr_ops.py, iOS18 compression.py).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace anec::compiler::mil_values {

// The largest constant whose values are read (elements): above it the evaluator seeds the values and
// says so, rather than the reader allocating without bound.
inline constexpr int64_t kMaxElements = int64_t(1) << 28;

// The `count` elements of the blob whose record is at `offset` of `file`, decoded by the record's
// data type (fp16, fp32, bf16, int8/16/32, uint8/16/32, the packed int4 and uint1/2/3/4/6: least
// significant bits first). Empty for a data type with no exact value here (fp8) or a count the blob
// does not hold; `why` says which. The record itself was checked when the text was read.
std::optional<std::vector<double>> read_blob(const std::filesystem::path &file, uint64_t offset,
                                             int64_t count, std::string &why);

// Packed unsigned (or two's-complement `is_signed`) `bits`-wide fields, least significant bit first.
std::vector<double> unpack(std::span<const uint8_t> bytes, int bits, int64_t count, bool is_signed);

// (data - zero_point) * scale, zero_point and scale one value or one per index along `axis`
// (constexpr_affine_dequantize).
std::optional<std::vector<double>> affine_dequantize(const std::vector<double> &data,
                                                     const std::vector<int64_t> &shape,
                                                     const std::vector<double> &zero_point,
                                                     const std::vector<double> &scale, int64_t axis);

// scale * (data - offset), scale and offset of data's rank, each repeated over blocks of
// data.shape / scale.shape (constexpr_blockwise_shift_scale; no offset: empty).
std::optional<std::vector<double>> blockwise_shift_scale(const std::vector<double> &data,
                                                         const std::vector<int64_t> &shape,
                                                         const std::vector<double> &scale,
                                                         const std::vector<int64_t> &scale_shape,
                                                         const std::vector<double> &offset);

// lut[index] per element: iOS16 one palette (`lut` of 2^n entries, indices of the output's shape);
// iOS18 palettes per block (lut [b0, ..., bK-1, 2^n, 1]: the block of each index, data.shape / b).
std::optional<std::vector<double>> lut_to_dense(const std::vector<double> &indices,
                                                const std::vector<int64_t> &shape,
                                                const std::vector<double> &lut,
                                                const std::vector<int64_t> &lut_shape);

// The output's elements: zero, and where the mask's bit is set the next nonzero value
// (constexpr_sparse_to_dense; `mask` one value per element).
std::optional<std::vector<double>> sparse_to_dense(const std::vector<double> &mask,
                                                   const std::vector<double> &nonzero, int64_t count);

} // namespace anec::compiler::mil_values
