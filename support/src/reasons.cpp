#include "anec/support/reasons.hpp"

#include "anec/support/error.hpp"
#include "anec/support/strict.hpp"
#include "anec/support/toml.hpp"

#include <algorithm>
#include <set>

namespace anec {

namespace {

const std::set<std::string> kSeverities = {"error", "verdict", "finding", "warning"};

// "ANEC-IO-001" -> "ANEC-IO"; "ANEC-INTERNAL" stays whole.
std::string prefix_of(const std::string &code) {
  size_t dash = code.rfind('-');
  bool numbered =
      dash != std::string::npos && dash + 4 == code.size() &&
      std::all_of(code.begin() + long(dash) + 1, code.end(), [](char c) { return c >= '0' && c <= '9'; });
  return numbered ? code.substr(0, dash) : code;
}

Reason read_reason(const Doc &d, const std::string &source) {
  detail::Strict s(d, source, "ANEC-RSN-001", "[[reason]]");
  Reason r{s.req("code", Doc::Kind::String).as_string(), s.req("severity", Doc::Kind::String).as_string(),
           s.req("title", Doc::Kind::String).as_string(), s.req("meaning", Doc::Kind::String).as_string(),
           s.req("fix", Doc::Kind::String).as_string()};
  s.finish();
  if (r.code.rfind("ANEC-", 0) != 0)
    s.fail(d, "code '" + r.code + "' does not start with ANEC-");
  if (!kSeverities.count(r.severity))
    s.fail(d, r.code + ": severity '" + r.severity + "' is not one of error, verdict, finding, warning");
  if (r.title.empty() || r.meaning.empty())
    s.fail(d, r.code + ": title and meaning must not be empty");
  return r;
}

// Edit distance, for suggesting codes close to a mistyped one.
size_t distance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// A Markdown table cell: pipes escaped, line breaks folded.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c == '\n' ? ' ' : c;
  }
  return out;
}

} // namespace

ReasonCatalog ReasonCatalog::load(const std::filesystem::path &file) {
  const std::string source = file.string();
  Doc doc = toml::parse_file(file);
  detail::Strict top(doc, source, "ANEC-RSN-001", "the catalogue");
  if (top.req("schema", Doc::Kind::String).as_string() != "anec-reasons")
    top.fail(doc, "schema must be \"anec-reasons\"");
  top.req("version", Doc::Kind::Int);
  ReasonCatalog c;
  std::set<std::string> prefixes, codes;
  for (const Doc &a : top.req("area", Doc::Kind::Array).items()) {
    detail::Strict s(a, source, "ANEC-RSN-001", "[[area]]");
    ReasonArea area{s.req("prefix", Doc::Kind::String).as_string(),
                    s.req("title", Doc::Kind::String).as_string()};
    s.finish();
    if (!prefixes.insert(area.prefix).second)
      s.fail(a, "area " + area.prefix + " is listed twice");
    c.areas_.push_back(std::move(area));
  }
  for (const Doc &d : top.req("reason", Doc::Kind::Array).items()) {
    Reason r = read_reason(d, source);
    if (!codes.insert(r.code).second)
      top.fail(d, r.code + " is listed twice");
    if (!c.reasons_.empty() && c.reasons_.back().code > r.code)
      top.fail(d, r.code + " comes after " + c.reasons_.back().code + "; keep the codes sorted");
    if (!prefixes.count(prefix_of(r.code)))
      top.fail(d, r.code + ": no [[area]] has the prefix " + prefix_of(r.code));
    c.reasons_.push_back(std::move(r));
  }
  top.finish();
  return c;
}

const Reason *ReasonCatalog::find(const std::string &code) const {
  auto it = std::lower_bound(reasons_.begin(), reasons_.end(), code,
                             [](const Reason &r, const std::string &c) { return r.code < c; });
  return it != reasons_.end() && it->code == code ? &*it : nullptr;
}

std::string ReasonCatalog::explain(const std::string &code_arg) const {
  std::string code = code_arg;
  std::transform(code.begin(), code.end(), code.begin(),
                 [](unsigned char ch) { return char(std::toupper(ch)); });
  if (const Reason *r = find(code))
    return r->code + " (" + r->severity + "): " + r->title + "\n\n" + r->meaning + "\n" +
           (r->fix.empty() ? std::string() : "\nWhat to do: " + r->fix + "\n");
  std::vector<std::pair<size_t, std::string>> near;
  for (const Reason &r : reasons_)
    near.push_back({distance(code, r.code), r.code});
  std::sort(near.begin(), near.end());
  std::string list;
  for (size_t i = 0; i < std::min<size_t>(3, near.size()); ++i)
    list += (i ? ", " : "") + near[i].second;
  throw Error("ANEC-RSN-002",
              "no reason code '" + code_arg.substr(0, 40) + "' in the catalogue; closest: " + list);
}

std::string ReasonCatalog::markdown() const {
  std::string out =
      "# Reason codes\n\nEvery code anec reports, generated from `tables/schema/reasons.toml` "
      "(`anec explain CODE` prints one). Severity: *error* stops the run (exit 2), *verdict* is a "
      "failed check (exit 1), *finding* and *warning* are reported while the run goes on.\n";
  for (const ReasonArea &a : areas_) {
    out += "\n## " + a.prefix + ": " + a.title +
           "\n\n| code | severity | title | meaning | what to do |\n|---|---|---|---|---|\n";
    for (const Reason &r : reasons_)
      if (prefix_of(r.code) == a.prefix)
        out += "| " + r.code + " | " + r.severity + " | " + cell(r.title) + " | " + cell(r.meaning) + " | " +
               cell(r.fix) + " |\n";
  }
  return out;
}

} // namespace anec
