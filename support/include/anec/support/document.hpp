// The JSON documents the tools print. Each names its schema (docs/schemas/NAME.schema.json) and
// that schema's version in its first two members, so a consumer can tell what it reads; a change to
// a document's members is a change to its schema, and a member removed or retyped raises the version.
#pragma once
#include "anec/support/doc.hpp"
#include "anec/support/error.hpp"
#include "anec/support/json.hpp"
#include "anec/support/json_printer.hpp"
#include "anec/support/printer.hpp"
#include "anec/support/toml.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace anec {

struct SchemaVersion {
  std::string_view name;
  int version;
};

// Every document a tool prints with --format json, and its schema's current version.
inline constexpr SchemaVersion kSchemas[] = {
    {"anec.calibrate", 1},
    {"anec.check", 1},
    {"anec.corpus", 1},
    {"anec.estimate", 1},
    {"anec.eval", 1},
    {"anec.matrix", 1},
    {"anec.place", 1},
    {"anec.place-matrix", 1},
    {"anec.tune", 1},
    {"anec-desc.audit", 1},
    {"anec-desc.audit-corpus", 1},
    {"anec-desc.dump", 2},
    {"anec-fw.command", 1},
    {"anec-fw.commands", 1},
    {"anec-fw.simulate", 1},
    {"anec-fw.tables", 1},
    {"anec-fw.validate", 2},
    {"anec-fw.validate-corpus", 1},
    {"anec-fw.validate-stream", 2},
    {"anec-hal.diff", 1},
    {"anec-hal.extract", 1},
    {"anec-hal.list", 1},
    {"anec-hal.schema", 1},
    {"anec-hal.xref", 1},
};

// `body` (a table) behind the `schema` and `schema_version` members; an unlisted name is a bug.
inline Doc document(std::string_view schema, Doc body) {
  for (const SchemaVersion &s : kSchemas) {
    if (s.name != schema)
      continue;
    body.prepend("schema_version", Doc::integer(s.version));
    body.prepend("schema", Doc::string(std::string(schema)));
    return body;
  }
  throw Error("ANEC-INTERNAL", "no schema is listed for the document '" + std::string(schema) + "'");
}

// A document read back (`anec-desc encode DUMP.json`, `anec-fw encode CMD.json`): when it names a
// schema, that must be `schema` at a version this tool writes. Returns the body, without the two
// members; a document without them is taken as is.
inline Doc document_body(Doc d, std::string_view schema, const std::string &source) {
  const Doc *name = d.find("schema"), *version = d.find("schema_version");
  if (!name && !version)
    return d;
  int current = 0;
  for (const SchemaVersion &s : kSchemas)
    if (s.name == schema)
      current = s.version;
  if (!name || name->as_string() != schema)
    throw Error("ANEC-DOC-001", source + ": the document's schema is '" + (name ? name->as_string() : "") +
                                    "', not '" + std::string(schema) + "'");
  bool integer = version && version->is(Doc::Kind::Int);
  if (!integer || version->as_int() < 1 || version->as_int() > current)
    throw Error("ANEC-DOC-001",
                source + ": schema_version " +
                    (integer ? std::to_string(version->as_int()) : "(missing or not an integer)") +
                    " is not one this tool reads (1 to " + std::to_string(current) + ")");
  d.erase("schema");
  d.erase("schema_version");
  return d;
}

// The document as printed: pretty JSON, newline-terminated.
inline std::string json_document(std::string_view schema, Doc body) {
  return json::write(document(schema, std::move(body)));
}

// `items` (an array) as the document's `key` member.
inline std::string json_list_document(std::string_view schema, const char *key, Doc items) {
  Doc body = Doc::table(1);
  body.append(key, std::move(items));
  return json_document(schema, std::move(body));
}

// What `print` prints, in the form a tool's --format names; the JSON form is the document `schema`
// (with no schema: the document alone), written as it is printed.
inline void render(Form form, std::string_view schema, const PrintFn &print, TextOut &out) {
  if (form == Form::Text) {
    TextPrinter p(out);
    print(p);
  } else if (form == Form::Csv) {
    CsvPrinter p(out);
    print(p);
  } else if (form == Form::Json) {
    JsonPrinter p(out, schema);
    print(p);
    p.finish();
  } else {
    out << toml::write(printed_doc(print));
  }
}
inline std::string render(Form form, std::string_view schema, const PrintFn &print) {
  std::string out;
  {
    TextOut text(out);
    render(form, schema, print, text);
  }
  return out;
}
inline std::string render(std::string_view form, std::string_view schema, const PrintFn &print) {
  return render(form_named(form), schema, print);
}
// The same, written to standard output as it is printed (the text and CSV forms stream).
inline void render_to_stdout(std::string_view form, std::string_view schema, const PrintFn &print) {
  TextOut out(stdout);
  render(form_named(form), schema, print, out);
}

} // namespace anec
