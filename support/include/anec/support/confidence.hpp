// How well a fact is known, the one scale every table uses (CONVENTIONS.md "Every number carries
// provenance"): HAL fields, layouts, register databases.
#pragma once
#include <optional>
#include <string_view>

namespace anec {

enum class Confidence { Measured, Decoded, Predicted, Inferred, Placeholder };

inline constexpr const char *kConfidenceNames[] = {"measured", "decoded", "predicted", "inferred",
                                                   "placeholder"};

inline const char *confidence_name(Confidence c) {
  return kConfidenceNames[static_cast<int>(c)];
}

inline std::optional<Confidence> parse_confidence(std::string_view s) {
  for (int i = 0; i < 5; ++i)
    if (s == kConfidenceNames[i])
      return static_cast<Confidence>(i);
  return std::nullopt;
}

} // namespace anec
