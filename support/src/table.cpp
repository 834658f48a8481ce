#include "anec/support/table.hpp"

#include <algorithm>

namespace anec {

namespace {
size_t cap(const Table &t, size_t column) {
  return column < t.max_width.size() && t.max_width[column] ? t.max_width[column] : std::string::npos;
}
} // namespace

namespace {
std::vector<size_t> widths(const Table &t) {
  std::vector<size_t> width(t.columns.size(), 0);
  auto measure = [&](const std::vector<std::string> &row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], std::min(row[i].size(), cap(t, i)));
  };
  measure(t.columns);
  for (const auto &r : t.rows)
    measure(r);
  return width;
}

std::string line(const std::vector<std::string> &row, const std::vector<size_t> &width) {
  std::string l;
  for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
    std::string v = row[i].size() > width[i] ? row[i].substr(0, width[i] - 1) + "~" : row[i];
    l += v + std::string(width[i] + 2 - v.size(), ' ');
  }
  while (!l.empty() && l.back() == ' ')
    l.pop_back();
  return l + "\n";
}
} // namespace

void Table::add(std::vector<Cell> cells) {
  std::vector<std::string> text;
  std::vector<Doc> docs;
  for (Cell &c : cells) {
    text.push_back(std::move(c.text));
    docs.push_back(std::move(c.value));
  }
  values.resize(rows.size());
  rows.push_back(std::move(text));
  values.push_back(std::move(docs));
}

void print(Printer &p, const Table &t, std::string_view key) {
  std::vector<size_t> width = p.text_form() ? widths(t) : std::vector<size_t>();
  p.columns(t.columns);
  if (p.text_form())
    p.text(line(t.columns, width));
  List rows(p, key);
  const std::vector<std::string> &keys = t.keys.empty() ? t.columns : t.keys;
  for (size_t k = 0; k < t.rows.size(); ++k) {
    const std::vector<std::string> &r = t.rows[k];
    const std::vector<Doc> *values = k < t.values.size() && !t.values[k].empty() ? &t.values[k] : nullptr;
    Object row(p);
    // The text form shows the cells laid out in columns, below; CSV, their text.
    for (size_t i = 0; i < r.size() && i < keys.size(); ++i)
      if (values && p.form() != Form::Csv)
        p.data(keys[i], (*values)[i]);
      else
        p.data(keys[i], r[i]);
    if (p.text_form())
      p.text(line(r, width));
  }
}

} // namespace anec
