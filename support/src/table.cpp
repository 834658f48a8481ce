#include "anec/support/table.hpp"

#include "anec/support/diagnostic.hpp"

#include <algorithm>

namespace anec {

namespace {
size_t cap(const Table &t, size_t column) {
  return column < t.max_width.size() && t.max_width[column] ? t.max_width[column] : std::string::npos;
}
} // namespace

std::string table_text(const Table &t) {
  std::vector<size_t> width(t.columns.size(), 0);
  auto measure = [&](const std::vector<std::string> &row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], std::min(row[i].size(), cap(t, i)));
  };
  measure(t.columns);
  for (const auto &r : t.rows) measure(r);
  std::string out;
  auto line = [&](const std::vector<std::string> &row) {
    std::string l;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      std::string v = row[i].size() > width[i] ? row[i].substr(0, width[i] - 1) + "~" : row[i];
      l += v + std::string(width[i] + 2 - v.size(), ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(t.columns);
  for (const auto &r : t.rows) line(r);
  return out;
}

std::string table_csv(const Table &t) {
  std::string out;
  auto line = [&](const std::vector<std::string> &row) {
    for (size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_field(row[i]);
    out += "\n";
  };
  line(t.columns);
  for (const auto &r : t.rows) line(r);
  return out;
}

Doc table_doc(const Table &t) {
  Doc out = Doc::array();
  for (const auto &r : t.rows) {
    Doc row = Doc::table();
    for (size_t i = 0; i < r.size() && i < t.columns.size(); ++i) row.set(t.columns[i], Doc::string(r[i]));
    out.push(std::move(row));
  }
  return out;
}

} // namespace anec
