#include "html.hpp"

#include <charconv>
#include <cmath>

namespace anec::tools::html {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string number(double v, int digits) {
  if (!std::isfinite(v))
    return "-";
  char b[64];
  // Fixed notation for the ordinary range, scientific outside it.
  double a = std::fabs(v);
  bool fixed = a == 0 || (a >= 1e-3 && a < 1e7);
  int decimals = a == 0 ? 0 : std::max(0, digits - 1 - int(std::floor(std::log10(a))));
  auto [end, ec] = fixed ? std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, decimals)
                         : std::to_chars(b, b + sizeof b, v, std::chars_format::scientific, digits - 1);
  std::string s = ec == std::errc() ? std::string(b, end) : std::to_string(v);
  if (fixed && s.find('.') != std::string::npos) { // "2.50" -> "2.5", "3.00" -> "3"
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}

std::string element(std::string_view tag, std::string_view attrs, std::string_view content) {
  std::string out = open_tag(tag, attrs);
  out.append(content).append(close_tag(tag));
  return out;
}

std::string open_tag(std::string_view tag, std::string_view attrs) {
  std::string out = "<";
  out.append(tag).append(attrs).append(">");
  return out;
}

std::string close_tag(std::string_view tag) {
  std::string out = "</";
  out.append(tag).append(">");
  return out;
}

std::string attr(std::string_view name, std::string_view value) {
  std::string out = " ";
  out.append(name).append("=\"").append(escape(value)).append("\"");
  return out;
}

std::string page(std::string_view title, std::string_view css, std::string_view body, std::string_view js) {
  std::string out;
  {
    TextOut text(out);
    page_begin(text, title, css);
    text << body;
    page_end(text, js);
  }
  return out;
}

void page_begin(TextOut &out, std::string_view title, std::string_view css) {
  out << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
      << escape(title) << "</title>\n<style>\n"
      << css << "</style>\n</head>\n<body>\n";
}

void page_end(TextOut &out, std::string_view js) {
  out << "<script>\n" << js << "</script>\n</body>\n</html>\n";
}

} // namespace anec::tools::html
