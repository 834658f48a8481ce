// One printer for tabular output, used by every tool that prints a table (target lists, command
// lists, check matrices, findings): a header and rows of cells, rendered as aligned text, as CSV
// (RFC 4180: a cell with a comma, quote or line break is quoted, quotes doubled) or as a document of
// one object per row.
#pragma once
#include "anec/support/printer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace anec {

// A cell: its text (the text and CSV forms), and its value in the document form where that is not
// the text (a number, or null where the text says "unknown").
struct Cell {
  Cell(std::string text) : text(std::move(text)), value(Doc::string(this->text)) {}
  Cell(const char *text) : Cell(std::string(text)) {}
  Cell(std::string text, Doc value) : text(std::move(text)), value(std::move(value)) {}
  Cell(int64_t v) : text(std::to_string(v)), value(Doc::integer(v)) {}
  Cell(size_t v) : Cell(int64_t(v)) {}
  std::string text;
  Doc value;
};

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  // Per column, the widest a text cell may print (longer ones are cut and end in '~'); 0: no cap.
  std::vector<size_t> max_width;
  // The document form's values of the rows' cells (add() fills them; where there are none, the
  // text), and its member names where they are not the columns'.
  std::vector<std::vector<Doc>> values = {};
  std::vector<std::string> keys = {};
  // A row given cell by cell, each with its text and its value.
  void add(std::vector<Cell> cells);
};

// The text form: columns as wide as their widest cell (within max_width), two spaces apart, no
// trailing blanks. The document form: a list (under `key`) of one object per row, keyed by the
// column names. The CSV form: the header and the rows.
void print(Printer &p, const Table &t, std::string_view key = {});

} // namespace anec
