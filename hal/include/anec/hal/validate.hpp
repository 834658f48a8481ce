// Target validation: each rule a named check with a stable reason code (docs/target-format.md).
#pragma once
#include "anec/hal/reference.hpp"
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"

#include <string>
#include <vector>

namespace anec::hal {

struct Finding {
  std::string code;   // ANEC-HAL-1xx
  std::string target; // canonical target name
  std::string field;  // field the finding is about
  std::string message;
};

// Rules on one target: value ranges, completeness, suffix letter vs core count, family vs hardware
// version, capability vs family floor, format count vs tag list, clock order, core count shape.
std::vector<Finding> validate_target(const Schema &schema, const Lineup &lineup, const Target &target);
// Rules across targets: limits marked monotone never fall from one hardware generation to the next
// (targets ordered by generation_tag; targets without one are not in the H line).
std::vector<Finding> validate_line(const Schema &schema, const std::vector<Target> &targets);

} // namespace anec::hal
