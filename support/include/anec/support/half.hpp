// IEEE 754 binary16, the engine's activation and weight format (guide ch.3): conversion from
// binary32 rounds to nearest, ties to even; a finite value that rounds past 65504 (the largest half)
// becomes infinity; magnitudes below 2^-14 become subnormal and those at or below 2^-25 zero; a NaN
// stays a (quiet) NaN. The host evaluator rounds through these where the engine rounds.
#pragma once
#include <cstdint>
#include <span>

namespace anec {

uint16_t to_half(float value);
float from_half(uint16_t half);
// The value the engine holds after storing `value` as a half.
inline float round_to_half(float value) {
  return from_half(to_half(value));
}
// The same over an array, in place: with the CPU's half conversions (x86 F16C, which round the same
// way) where it has them, else one value at a time.
void round_to_half(std::span<float> values);

} // namespace anec
