#include "anec/support/diagnostic.hpp"

#include "anec/support/format.hpp"
#include "anec/support/print_later.hpp"

#include <string_view>
#include <tuple>

namespace anec {

const char *severity_name(Severity s) {
  static const char *names[] = {"error", "reject", "decompose", "warn", "note"};
  return names[static_cast<int>(s)];
}

namespace {
// A diagnostic as print() shows it, packed by print_later (support/print_later.hpp).
struct DiagnosticRow {
  std::string_view code, message, object, field, value, limit, limit_field, confidence, fix;
  Severity severity = Severity::Warning;
  uint64_t offset = 0;
  DiagnosticContext context;
  auto tie() {
    return std::tie(code, message, object, field, value, limit, limit_field, confidence, fix, severity,
                    offset, context);
  }
};
void print_row(Printer &p, const DiagnosticRow &d) {
  const DiagnosticContext &c = d.context;
  p.field("code", d.code);
  p.text(" ");
  p.field("severity", severity_name(d.severity));
  std::string where(c.object_shown ? "" : d.object);
  if (!c.object_shown && !d.object.empty() && !d.field.empty())
    where += ".";
  where += d.field;
  if (!where.empty())
    p.text(" " + where);
  if (c.in_file)
    p.text(" at " + hex(d.offset));
  p.text(": ");
  p.field("message", d.message);
  if (!d.limit_field.empty())
    p.text(" [" + std::string(d.limit_field) + " = " + std::string(d.limit) + ", " +
           std::string(d.confidence) + "]");
  if (!d.fix.empty())
    p.text("; fix: " + std::string(d.fix));
  const std::pair<const char *, std::string_view> parts[] = {{"object", d.object},
                                                             {"field", d.field},
                                                             {"value", d.value},
                                                             {"limit", d.limit},
                                                             {"limit_field", d.limit_field},
                                                             {"limit_confidence", d.confidence},
                                                             {"fix", d.fix}};
  for (auto [key, value] : parts)
    if (!value.empty())
      p.data(key, value);
  if (c.in_file || d.offset)
    p.data("offset", Hex{d.offset});
}
} // namespace

void print(Printer &p, const Diagnostic &d, const DiagnosticContext &c) {
  print_later<DiagnosticRow, print_row>(p, {d.code, d.message, d.object, d.field, d.value, d.limit,
                                            d.limit_field, d.confidence, d.fix, d.severity, d.offset, c});
}

std::string diagnostic_text(const Diagnostic &d, const DiagnosticContext &c) {
  return printed_text([&](Printer &p) { print(p, d, c); });
}

Table diagnostic_table() {
  return Table{{"code", "severity", "object", "field", "offset", "message", "value", "limit", "limit_field",
                "limit_confidence", "fix"},
               {},
               {}};
}

void add_row(Table &t, const Diagnostic &d) {
  t.rows.push_back({d.code, severity_name(d.severity), d.object, d.field, hex(d.offset), d.message, d.value,
                    d.limit, d.limit_field, d.confidence, d.fix});
}

void print(Printer &p, std::span<const Diagnostic> findings, std::string_view key,
           const DiagnosticContext &c) {
  if (p.form() == Form::Csv) {
    Table t = diagnostic_table();
    for (const Diagnostic &f : findings)
      add_row(t, f);
    print(p, t, key);
    return;
  }
  List list(p, key);
  for (const Diagnostic &f : findings) {
    Object o(p);
    print(p, f, c);
    p.text("\n");
  }
}

} // namespace anec
