// One diagnostic model for every tool: a finding of a check, an audit, a validation or a decoder,
// with its reason code (catalogued in tables/schema/reasons.toml, shown by `anec explain CODE`),
// severity, message, where it is, the offending value, the limit it breaks, where the limit comes
// from, and what to change. One printer renders it as a text line, a document (JSON/TOML) or a CSV
// row, so every tool reports findings the same way.
#pragma once
#include "anec/support/doc.hpp"

#include <cstdint>
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

// "CODE severity object.field at 0xOFFSET: message" with the parts that are set.
std::string diagnostic_text(const Diagnostic &d, bool with_offset = true);
// Every set member, keyed by its name (severity by name).
Doc diagnostic_doc(const Diagnostic &d);
// CSV: the header line and one row per diagnostic, fields quoted and escaped (RFC 4180).
std::string diagnostic_csv_header();
std::string diagnostic_csv_row(const Diagnostic &d);
// One CSV field: quoted when it holds a comma, quote, CR or LF, quotes doubled.
std::string csv_field(const std::string &s);

} // namespace anec
