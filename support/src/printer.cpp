#include "anec/support/printer.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/list_spool.hpp"

#include <charconv>
#include <type_traits>

namespace anec {

namespace {
// The shortest text that reads back as the same double.
std::string shortest(double v) {
  char b[32];
  auto [end, ec] = std::to_chars(b, b + sizeof b, v);
  return ec == std::errc() ? std::string(b, end) : std::to_string(v);
}

std::string scalar_text(const Doc &d) {
  switch (d.kind()) {
  case Doc::Kind::String:
    return d.as_string();
  case Doc::Kind::Int:
    return d.hex ? hex(uint64_t(d.as_int())) : std::to_string(d.as_int());
  case Doc::Kind::Float:
    return shortest(d.as_float());
  case Doc::Kind::Bool:
    return d.as_bool() ? "true" : "false";
  default:
    return "";
  }
}
} // namespace

void Scalar::write_text(TextOut &out) const {
  std::visit(
      [&](const auto &v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string_view>)
          out.safe(v);
        else if constexpr (std::is_same_v<T, bool>)
          out << (v ? "true" : "false");
        else if constexpr (std::is_same_v<T, int64_t>)
          out << std::to_string(v);
        else if constexpr (std::is_same_v<T, uint64_t>)
          out.dec(v);
        else if constexpr (std::is_same_v<T, double>)
          out << shortest(v);
        else if constexpr (std::is_same_v<T, Hex>)
          out.hex(v.value, v.width);
        else if constexpr (std::is_same_v<T, Named>)
          out << v.name;
        else if (v->is(Doc::Kind::Int) && v->hex) // a register field's value: no string made
          out.hex(uint64_t(v->as_int()));
        else
          out << scalar_text(*v);
      },
      v_);
}

Doc Scalar::doc() const {
  return std::visit(
      [](const auto &v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string_view>)
          return Doc::string(std::string(v));
        else if constexpr (std::is_same_v<T, bool>)
          return Doc::boolean(v);
        else if constexpr (std::is_same_v<T, int64_t>)
          return Doc::integer(v);
        else if constexpr (std::is_same_v<T, uint64_t>) // TOML's integers are signed 64-bit
          return v <= uint64_t(INT64_MAX) ? Doc::integer(int64_t(v)) : Doc::number(double(v));
        else if constexpr (std::is_same_v<T, double>)
          return Doc::number(v);
        else if constexpr (std::is_same_v<T, Hex>)
          return v.value <= uint64_t(INT64_MAX) ? Doc::integer(int64_t(v.value), true)
                                                : Doc::string(hex(v.value));
        else if constexpr (std::is_same_v<T, Named>)
          return Doc::string(std::string(v.name));
        else
          return *v;
      },
      v_);
}

void Scalar::set_in(Doc &table, std::string_view key) const {
  table.set(std::string(key), doc());
  if (const Named *n = std::get_if<Named>(&v_))
    table.set(std::string(key) + "_value", Doc::integer(n->value));
}

void Printer::text_fixed(double v, int digits) {
  if (text_form())
    text(fixed(v, digits));
}

void TextPrinter::text_fixed(double v, int digits) {
  char b[kFixedRoom];
  out_ << std::string_view(b, fixed_to(b, v, digits));
}

void Printer::splice(std::FILE *, size_t) {
  throw Error("ANEC-INTERNAL", "a spooled list is spliced into a text or JSON printer only");
}

void TextPrinter::splice(std::FILE *items, size_t) {
  copy_into(items, out_);
}

void TextPrinter::field(std::string_view, const Scalar &v, int width) {
  std::string cell;
  {
    TextOut text(cell);
    v.write_text(text);
  }
  out_ << cell << std::string(cell.size() < size_t(width) ? size_t(width) - cell.size() : 1, ' ');
}

DocPrinter::DocPrinter() {
  stack_.push_back({"", Doc::table()});
}

void DocPrinter::data(std::string_view key, const Scalar &v) {
  Doc &top = stack_.back().doc;
  if (!top.is(Doc::Kind::Table))
    throw Error("ANEC-INTERNAL", "printer: member '" + std::string(key) + "' given inside a list");
  root_used_ = true;
  v.set_in(top, key);
}

void DocPrinter::item(const Scalar &v) {
  Doc &top = stack_.back().doc;
  if (!top.is(Doc::Kind::Array))
    throw Error("ANEC-INTERNAL", "printer: a list item given outside a list");
  top.push(v.doc());
}

void DocPrinter::open(std::string_view key, Doc scope) {
  // The first scope opened without a key, before anything else, is the document itself.
  if (stack_.size() == 1 && key.empty() && !root_used_) {
    stack_.front().doc = std::move(scope);
    root_used_ = root_open_ = true;
    return;
  }
  root_used_ = true;
  stack_.push_back({std::string(key), std::move(scope)});
}

void DocPrinter::begin_object(std::string_view key) {
  open(key, Doc::table());
}
void DocPrinter::begin_list(std::string_view key) {
  open(key, Doc::array());
}

void DocPrinter::end() {
  if (stack_.size() == 1) {
    if (!root_open_)
      throw Error("ANEC-INTERNAL", "printer: end() without an open scope");
    root_open_ = false;
    return;
  }
  Open done = std::move(stack_.back());
  stack_.pop_back();
  Doc &parent = stack_.back().doc;
  if (parent.is(Doc::Kind::Array))
    parent.push(std::move(done.doc));
  else
    parent.set(done.key, std::move(done.doc));
}

Doc DocPrinter::take() {
  if (stack_.size() != 1 || root_open_)
    throw Error("ANEC-INTERNAL", "printer: the document was taken with a scope still open");
  return std::move(stack_.front().doc);
}

void CsvPrinter::columns(const std::vector<std::string> &names) {
  for (size_t i = 0; i < names.size(); ++i)
    out_ << (i ? "," : "") << csv_field(names[i]);
  out_ << "\n";
}

void CsvPrinter::begin_object(std::string_view) {
  if (in_row_)
    throw Error("ANEC-INTERNAL", "printer: a CSV row holds no nested object");
  in_row_ = !lists_.empty() && lists_.back();
  first_cell_ = true;
  row_.clear();
  lists_.push_back(false);
}

void CsvPrinter::data(std::string_view, const Scalar &v) {
  if (!in_row_)
    return; // a member outside the rows: not part of the CSV form
  std::string cell;
  TextOut text(cell);
  v.write_text(text);
  text.flush();
  row_ += (first_cell_ ? "" : ",") + csv_field(cell);
  first_cell_ = false;
}

void CsvPrinter::item(const Scalar &) {}

void CsvPrinter::end() {
  bool list = !lists_.empty() && lists_.back();
  lists_.pop_back();
  if (in_row_ && !list) {
    out_ << row_ << "\n";
    in_row_ = false;
  }
}

void print_list(Printer &p, std::string_view key, const std::vector<std::string> &items,
                std::string_view lead) {
  List list(p, key);
  for (const std::string &item : items) {
    p.text(lead);
    p.item(item);
    p.text("\n");
  }
}

Doc printed_doc(const PrintFn &print) {
  DocPrinter p;
  print(p);
  return p.take();
}

std::string printed_text(const PrintFn &print) {
  std::string out;
  {
    TextOut text(out);
    TextPrinter p(text);
    print(p);
  }
  return out;
}

Form form_named(std::string_view name) {
  static const std::pair<std::string_view, Form> forms[] = {
      {"text", Form::Text}, {"json", Form::Json}, {"csv", Form::Csv}, {"toml", Form::Toml}};
  for (auto [n, f] : forms)
    if (n == name)
      return f;
  throw Error("ANEC-INTERNAL", "no output form is named '" + std::string(name) + "'");
}

} // namespace anec
