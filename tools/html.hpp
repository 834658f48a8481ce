// What the HTML reports (`anec report`, `anec-desc dump --format html`) share: escaping and one
// self-contained page. A page refers to nothing outside itself (no URL, no font, no script file),
// so that it opens offline and can be mailed as one file.
#pragma once
#include "anec/support/text_out.hpp"

#include <string>
#include <string_view>

namespace anec::tools::html {

// Text for an element's content or a quoted attribute value: & < > " ' escaped.
std::string escape(std::string_view text);

// Short text for a number: "%.3g"-like, without the locale.
std::string number(double v, int digits = 3);

// An element: <tag attrs>content</tag>; `attrs` is written as given (its values escaped by the
// caller through attr()), `content` too (escaped by the caller through escape()).
std::string element(std::string_view tag, std::string_view attrs, std::string_view content);
// The same in two halves, for content written between them: <tag attrs> and </tag>.
std::string open_tag(std::string_view tag, std::string_view attrs);
std::string close_tag(std::string_view tag);
// ` name="value"`, the value escaped.
std::string attr(std::string_view name, std::string_view value);

// The whole page: <!doctype html>, the title (escaped), the style sheet, the body and the script.
// The style sheet and the script are the tools' own text (data goes into the body's attributes).
std::string page(std::string_view title, std::string_view css, std::string_view body, std::string_view js);
// The same written to `out` around a body written between them (a page too large to hold twice).
void page_begin(TextOut &out, std::string_view title, std::string_view css);
void page_end(TextOut &out, std::string_view js);

} // namespace anec::tools::html
