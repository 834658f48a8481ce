// How much a result over a graph keeps, for the reports that read the IR (check, cost).
#pragma once

namespace anec::compiler {

// How much a result keeps: everything, or (a row of a matrix over targets or files) the verdict,
// the counts and the totals only, in memory that does not grow with the graph.
enum class Detail { Full, Summary };

} // namespace anec::compiler
