// Target validation: each rule a named check with a stable reason code (docs/target-format.md).
#pragma once
#include "anec/hal/reference.hpp"
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"
#include "anec/support/diagnostic.hpp"

#include <string>
#include <vector>

namespace anec::hal {

// A validation finding (support/diagnostic.hpp): code ANEC-HAL-1xx, the target's canonical name as
// the object, the field it is about.
using Finding = Diagnostic;

// Rules on one target: value ranges, completeness, suffix letter vs core count, family vs hardware
// version, capability vs family floor, format count vs tag list, clock order, core count shape.
std::vector<Finding> validate_target(const Schema &schema, const Lineup &lineup, const Target &target);
// Rules across targets: limits marked monotone never fall from one hardware generation to the next
// (targets ordered by generation_tag; targets without one are not in the H line).
std::vector<Finding> validate_line(const Schema &schema, const std::vector<Target> &targets);

} // namespace anec::hal
