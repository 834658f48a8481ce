// One printer for tabular output, used by every tool that prints a table (target lists, command
// lists, check matrices, findings): a header and rows of cells, rendered as aligned text, as CSV
// (RFC 4180: a cell with a comma, quote or line break is quoted, quotes doubled) or as a document of
// one object per row.
#pragma once
#include "anec/support/doc.hpp"

#include <string>
#include <vector>

namespace anec {

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  // Per column, the widest a text cell may print (longer ones are cut and end in '~'); 0: no cap.
  std::vector<size_t> max_width;
};

// Columns as wide as their widest cell (within max_width), two spaces apart, no trailing blanks.
std::string table_text(const Table &t);
std::string table_csv(const Table &t);
// An array of tables, one per row, keyed by the column names.
Doc table_doc(const Table &t);

} // namespace anec
