#include "anec/support/diagnostic.hpp"

#include "anec/support/format.hpp"

namespace anec {

const char *severity_name(Severity s) {
  static const char *names[] = {"error", "reject", "decompose", "warn", "note"};
  return names[static_cast<int>(s)];
}

std::string diagnostic_text(const Diagnostic &d, bool with_offset) {
  std::string where = d.object + (d.field.empty() ? "" : (d.object.empty() ? "" : ".") + d.field);
  std::string out = d.code + " " + severity_name(d.severity);
  if (!where.empty())
    out += " " + where;
  if (with_offset)
    out += " at " + hex(d.offset);
  return out + ": " + d.message;
}

Doc diagnostic_doc(const Diagnostic &d) {
  Doc out = Doc::table();
  out.set("code", Doc::string(d.code));
  out.set("severity", Doc::string(severity_name(d.severity)));
  out.set("message", Doc::string(d.message));
  const std::pair<const char *, const std::string *> text[] = {{"object", &d.object},
                                                               {"field", &d.field},
                                                               {"value", &d.value},
                                                               {"limit", &d.limit},
                                                               {"limit_field", &d.limit_field},
                                                               {"limit_confidence", &d.confidence},
                                                               {"fix", &d.fix}};
  for (auto [key, value] : text)
    if (!value->empty())
      out.set(key, Doc::string(*value));
  if (d.offset)
    out.set("offset", Doc::integer(int64_t(d.offset), true));
  return out;
}

std::string csv_field(const std::string &s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string diagnostic_csv_header() {
  return "code,severity,object,field,offset,message,value,limit,limit_field,limit_confidence,fix\n";
}

std::string diagnostic_csv_row(const Diagnostic &d) {
  std::string out;
  for (const std::string &f :
       {d.code, std::string(severity_name(d.severity)), d.object, d.field, hex(d.offset), d.message, d.value,
        d.limit, d.limit_field, d.confidence, d.fix})
    out += (out.empty() ? "" : ",") + csv_field(f);
  return out + "\n";
}

} // namespace anec
