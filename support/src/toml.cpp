#include "anec/support/toml.hpp"

#include "anec/support/compiled_doc.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <toml++/toml.h>

namespace anec::toml {
namespace {

template <typename Node> void set_pos(Doc &d, const Node &n) {
  d.line = n.source().begin.line;
  d.column = n.source().begin.column;
}

Doc convert(const ::toml::node &n, const std::string &source_name) {
  Doc d;
  switch (n.type()) {
  case ::toml::node_type::table: {
    d = Doc::table();
    d.inline_table = n.as_table()->is_inline();
    // toml++ iterates keys in sorted order; members keep the order they were written in.
    std::vector<std::pair<const ::toml::key *, const ::toml::node *>> kv;
    for (auto &&[k, v] : *n.as_table()) kv.push_back({&k, &v});
    std::stable_sort(kv.begin(), kv.end(), [](auto &a, auto &b) {
      auto pa = a.first->source().begin, pb = b.first->source().begin;
      return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
    });
    for (auto &[k, v] : kv)
      d.append(std::string(k->str()), convert(*v, source_name));
    break;
  }
  case ::toml::node_type::array:
    d = Doc::array();
    for (auto &&v : *n.as_array()) d.push(convert(v, source_name));
    break;
  case ::toml::node_type::string: d = Doc::string(n.as_string()->get()); break;
  case ::toml::node_type::integer: {
    auto *v = n.as_integer();
    d = Doc::integer(v->get(), (v->flags() & ::toml::value_flags::format_as_hexadecimal) ==
                                   ::toml::value_flags::format_as_hexadecimal);
    break;
  }
  case ::toml::node_type::floating_point: d = Doc::number(n.as_floating_point()->get()); break;
  case ::toml::node_type::boolean: d = Doc::boolean(n.as_boolean()->get()); break;
  default:
    throw Error("ANEC-TOML-002", source_name + ":" + std::to_string(n.source().begin.line) + ":" +
                                     std::to_string(n.source().begin.column) +
                                     ": dates and times are not used by anec tables");
  }
  set_pos(d, n);
  return d;
}

bool bare_key(std::string_view k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

void put_string(std::string &out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  out += '"';
}

void put_key(std::string &out, std::string_view k) {
  if (bare_key(k))
    out += k;
  else
    put_string(out, k);
}

void put_float(std::string &out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  out += s;
}

bool is_section(const Doc &v) { return v.is(Doc::Kind::Table) && !v.inline_table; }
bool is_table_array(const Doc &v) {
  if (!v.is(Doc::Kind::Array) || v.items().empty()) return false;
  for (auto &i : v.items())
    if (!is_section(i)) return false;
  return true;
}

void put_value(std::string &out, const Doc &v) {
  switch (v.kind()) {
  case Doc::Kind::Null: out += "\"\""; break;
  case Doc::Kind::Bool: out += v.as_bool() ? "true" : "false"; break;
  case Doc::Kind::Int:
    if (v.hex && v.as_int() >= 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v.as_int()));
      out += buf;
    } else {
      out += std::to_string(v.as_int());
    }
    break;
  case Doc::Kind::Float: put_float(out, v.as_float()); break;
  case Doc::Kind::String: put_string(out, v.as_string()); break;
  case Doc::Kind::Array: {
    out += '[';
    bool first = true;
    for (auto &i : v.items()) {
      if (!first) out += ", ";
      first = false;
      put_value(out, i);
    }
    out += ']';
    break;
  }
  case Doc::Kind::Table: {
    if (v.members().empty()) {
      out += "{}";
      break;
    }
    out += "{ ";
    bool first = true;
    for (auto &m : v.members()) {
      if (!first) out += ", ";
      first = false;
      put_key(out, m.key);
      out += " = ";
      put_value(out, m.value);
    }
    out += " }";
    break;
  }
  }
}

void put_table(std::string &out, const Doc &t, const std::string &path) {
  for (auto &m : t.members()) {
    if (is_section(m.value) || is_table_array(m.value)) continue;
    put_key(out, m.key);
    out += " = ";
    put_value(out, m.value);
    out += '\n';
  }
  for (auto &m : t.members()) {
    std::string key;
    put_key(key, m.key);
    std::string sub = path.empty() ? key : path + "." + key;
    if (is_section(m.value)) {
      out += "\n[" + sub + "]\n";
      put_table(out, m.value, sub);
    } else if (is_table_array(m.value)) {
      for (auto &i : m.value.items()) {
        out += "\n[[" + sub + "]]\n";
        put_table(out, i, sub);
      }
    }
  }
}

std::filesystem::path compiled_dir;

// The compiled form of text in compiled_dir, if there is one that matches it.
std::optional<Doc> compiled_form(std::string_view text) {
  if (compiled_dir.empty())
    return std::nullopt;
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(
      std::fopen((compiled_dir / compiled::file_name(text)).c_str(), "rb"), &std::fclose);
  if (!f)
    return std::nullopt;
  std::string bytes;
  char buf[1 << 16];
  while (size_t n = std::fread(buf, 1, sizeof buf, f.get()))
    bytes.append(buf, n);
  return compiled::decode(bytes, text);
}
} // namespace

Doc parse(std::string_view text, const std::string &source_name) {
  if (auto doc = compiled_form(text))
    return std::move(*doc);
  try {
    ::toml::table t = ::toml::parse(text, source_name);
    Doc d = convert(t, source_name);
    d.line = d.column = 1;
    return d;
  } catch (const ::toml::parse_error &e) {
    throw Error("ANEC-TOML-001", source_name + ":" + std::to_string(e.source().begin.line) + ":" +
                                     std::to_string(e.source().begin.column) + ": " +
                                     std::string(e.description()));
  }
}

void use_compiled_tables(std::filesystem::path dir) {
  compiled_dir = std::move(dir);
}

Doc parse_file(const std::filesystem::path &path) { return parse(read_text_file(path), path.string()); }

std::string write(const Doc &table) {
  std::string out;
  put_table(out, table, "");
  return out;
}

} // namespace anec::toml
