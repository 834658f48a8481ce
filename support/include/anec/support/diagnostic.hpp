// One diagnostic model for every tool: a finding of a check, an audit, a validation or a decoder,
// with its reason code (catalogued in tables/schema/reasons.toml, shown by `anec explain CODE`),
// severity, message, where it is, the offending value, the limit it breaks, where the limit comes
// from, and what to change. One printer renders it as a text line, a document (JSON/TOML) or a CSV
// row, so every tool reports findings the same way.
#pragma once
#include "anec/support/printer.hpp"
#include "anec/support/table.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace anec {

// error: the input is wrong; reject / decompose: an operation does not run as written on a target;
// warning: decodable or runnable but odd; note: for information.
enum class Severity { Error, Reject, Decompose, Warning, Note };
const char *severity_name(Severity s); // "error", "reject", "decompose", "warn", "note"

struct Diagnostic {
  std::string code; // ANEC-<AREA>-<NNN>
  Severity severity = Severity::Warning;
  std::string message;
  // Where: the object it is about (an operation, a target, a register, a command, a section), the
  // field of it, and the byte offset in the input file (0 when the input is not a file).
  std::string object, field;
  uint64_t offset = 0;
  // The offending value, the limit it breaks, the table field that limit comes from and that
  // field's confidence, and what to change ("" where none applies).
  std::string value, limit, limit_field, confidence, fix;
};

// A decoder's or an audit's finding at a file offset.
inline Diagnostic finding_at(std::string code, uint64_t offset, std::string message,
                             Severity severity = Severity::Warning) {
  Diagnostic d;
  d.code = std::move(code);
  d.severity = severity;
  d.message = std::move(message);
  d.offset = offset;
  return d;
}
// A finding about a field of an object (a target's field, an operation's attribute).
inline Diagnostic finding_about(std::string code, std::string object, std::string field, std::string message,
                                Severity severity = Severity::Warning) {
  Diagnostic d = finding_at(std::move(code), 0, std::move(message), severity);
  d.object = std::move(object);
  d.field = std::move(field);
  return d;
}

// What the reader of a diagnostic has already: the object (findings listed under it); and whether
// the diagnostic is about a place in a file (a decoder's, an audit's), whose offset is then shown.
struct DiagnosticContext {
  bool object_shown = false;
  bool in_file = false;
};

// The text form: "CODE severity object.field at 0xOFFSET: message [limit_field = limit, confidence];
// fix: FIX" with the parts that are set (the object unless shown, the offset of a diagnostic in a
// file). The document form: every set member, keyed by its name (severity by name), and the offset
// of a diagnostic in a file.
void print(Printer &p, const Diagnostic &d, const DiagnosticContext &c = {});
std::string diagnostic_text(const Diagnostic &d, const DiagnosticContext &c = {});

// Findings as a table (a CSV row each): every part a column, unset ones empty.
Table diagnostic_table();
void add_row(Table &t, const Diagnostic &d);

// Findings: a line each, a list (under `key`) of their documents, or in the CSV form their table.
void print(Printer &p, std::span<const Diagnostic> findings, std::string_view key,
           const DiagnosticContext &c = {});

} // namespace anec
