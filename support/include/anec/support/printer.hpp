// One printer for every document the tools print. A document's print function says once what it
// holds (its members, nested objects and lists) and the words a text reader sees around them; a
// back end renders that: TextPrinter as the lines a person reads, DocPrinter as a document tree
// (written as JSON or TOML). A member given with field() is the same value in both forms, so what
// the text shows the document holds too. Values are rendered here, one way for every document:
// hex values as 0x... in text and as numbers in a document, named values (an enum a table defines)
// as their name in text and as the name and the raw value in a document.
#pragma once
#include "anec/support/doc.hpp"
#include "anec/support/text_out.hpp"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace anec {

class PackedReader;

// An integer shown in hex: "0x" and at least `width` digits in text, a number in a document.
struct Hex {
  uint64_t value = 0;
  int width = 0;
};

// A value of an enumeration: its name, and the raw value it was decoded from. In a document the
// member holds the name and KEY_value the raw value.
struct Named {
  std::string_view name;
  int64_t value = 0;
};

class Scalar {
public:
  Scalar(std::string_view v) : v_(v) {}
  Scalar(const std::string &v) : v_(std::string_view(v)) {}
  Scalar(const char *v) : v_(std::string_view(v)) {}
  Scalar(bool v) : v_(v) {}
  Scalar(int v) : v_(int64_t(v)) {}
  Scalar(long v) : v_(int64_t(v)) {}
  Scalar(long long v) : v_(int64_t(v)) {}
  Scalar(unsigned v) : v_(int64_t(v)) {}
  Scalar(unsigned long v) : v_(uint64_t(v)) {}
  Scalar(unsigned long long v) : v_(uint64_t(v)) {}
  Scalar(double v) : v_(v) {}
  Scalar(Hex v) : v_(v) {}
  Scalar(Named v) : v_(v) {}
  Scalar(const Doc &v) : v_(&v) {} // a value already in document form (text: its scalar)

  // The value as the text form shows it.
  void write_text(TextOut &out) const;
  // The value as a document member (a Named value gives two members: see Named).
  void set_in(Doc &table, std::string_view key) const;
  Doc doc() const; // a list element (a Named value: its name)

private:
  friend class JsonPrinter; // writes each kind as the document form holds it, without a Doc
  friend class PrintBehind; // records each kind, to print it later
  std::variant<std::string_view, bool, int64_t, uint64_t, double, Hex, Named, const Doc *> v_;
};

// How a tool prints a document: the form its --format names ("text", "json", "csv" or "toml"; the
// JSON form carries the document's schema, support/document.hpp).
enum class Form { Text, Json, Csv, Toml };
Form form_named(std::string_view name); // ANEC-INTERNAL for another: the tool checked its choices

class Printer {
public:
  virtual ~Printer() = default;
  // A member both forms show: the text form prints its value where it is called.
  virtual void field(std::string_view key, const Scalar &v) = 0;
  // The same, its text left-aligned in a column `width` characters wide (at least one space after).
  virtual void field(std::string_view key, const Scalar &v, int /*width*/) { field(key, v); }
  // A member the text form does not show (a document's detail, or a value the text shows in another
  // form through text()).
  virtual void data(std::string_view key, const Scalar &v) = 0;
  // Words only the text form shows.
  virtual void text(std::string_view words) = 0;
  // A number only the text form shows, `digits` after the point (as fixed() writes it); made into
  // words only for the text form, and where the text is written (a printer behind: on its thread).
  virtual void text_fixed(double v, int digits);
  // A value of the list being printed, shown in both forms (the text form prints it where called).
  virtual void item(const Scalar &v) = 0;
  // Nested members: an object or a list under `key` (no key inside a list).
  virtual void begin_object(std::string_view key = {}) = 0;
  virtual void begin_list(std::string_view key = {}) = 0;
  virtual void end() = 0;
  // The object being printed is written on one line in TOML ({ a = 1 }).
  virtual void inline_object() {}
  // The names of the columns the rows that follow hold (a CSV header); the other forms ignore it.
  virtual void columns(const std::vector<std::string> &) {}
  // Items a printer of this form printed ahead, `depth` scopes deep, into the file `items` (ListSpool,
  // support/list_spool.hpp), added to the open list after any items it holds. Only the text and JSON
  // forms take them.
  virtual void splice(std::FILE *items, size_t depth);
  // Room for `n` bytes of a row that `replay` prints later, on this printer's thread; nullptr when
  // this printer prints at once (print_later, support/print_later.hpp).
  using Replay = void (*)(Printer &, PackedReader &);
  virtual char *later(Replay, size_t) { return nullptr; }
  // The form being written: a print function may skip work only the text form needs, or print a
  // list of records as a table in the CSV form.
  virtual Form form() const = 0;
  bool text_form() const { return form() == Form::Text; }
};

// An object or a list, open while the scope lives.
class Object {
public:
  explicit Object(Printer &p, std::string_view key = {}) : p_(p) { p_.begin_object(key); }
  ~Object() { p_.end(); }
  Object(const Object &) = delete;
  Object &operator=(const Object &) = delete;

private:
  Printer &p_;
};
class List {
public:
  explicit List(Printer &p, std::string_view key = {}) : p_(p) { p_.begin_list(key); }
  ~List() { p_.end(); }
  List(const List &) = delete;
  List &operator=(const List &) = delete;

private:
  Printer &p_;
};

// The text form, written as it is printed.
class TextPrinter final : public Printer {
public:
  explicit TextPrinter(TextOut &out) : out_(out) {}
  void field(std::string_view, const Scalar &v) override { v.write_text(out_); }
  void field(std::string_view key, const Scalar &v, int width) override;
  void data(std::string_view, const Scalar &) override {}
  void text(std::string_view words) override { out_ << words; }
  void text_fixed(double v, int digits) override; // without a string between
  void item(const Scalar &v) override { v.write_text(out_); }
  void begin_object(std::string_view) override {}
  void begin_list(std::string_view) override {}
  void end() override {}
  void splice(std::FILE *items, size_t depth) override;
  Form form() const override { return Form::Text; }

private:
  TextOut &out_;
};

// The document form: a tree whose root is the outermost object (or list).
class DocPrinter final : public Printer {
public:
  DocPrinter();
  void field(std::string_view key, const Scalar &v) override { data(key, v); }
  void data(std::string_view key, const Scalar &v) override;
  void text(std::string_view) override {}
  void item(const Scalar &v) override;
  void begin_object(std::string_view key) override;
  void begin_list(std::string_view key) override;
  void end() override;
  void inline_object() override { stack_.back().doc.inline_table = true; }
  Form form() const override { return Form::Json; }
  // The document printed (once every scope has ended).
  Doc take();

private:
  void open(std::string_view key, Doc scope);
  struct Open {
    std::string key;
    Doc doc;
  };
  std::vector<Open> stack_;
  bool root_used_ = false, root_open_ = false;
};

// The CSV form of a list of rows (RFC 4180): the header columns() gives, then one line per object of
// the list, its members' values in order as the text form writes them, quoted where needed.
class CsvPrinter final : public Printer {
public:
  explicit CsvPrinter(TextOut &out) : out_(out) {}
  void field(std::string_view key, const Scalar &v) override { data(key, v); }
  void data(std::string_view key, const Scalar &v) override;
  void text(std::string_view) override {}
  void item(const Scalar &) override;
  void begin_object(std::string_view key) override;
  void begin_list(std::string_view) override { lists_.push_back(true); }
  void end() override;
  void columns(const std::vector<std::string> &names) override;
  Form form() const override { return Form::Csv; }

private:
  TextOut &out_;
  std::string row_;
  std::vector<bool> lists_; // the open scopes: a list, or an object (a row when inside a list)
  bool in_row_ = false, first_cell_ = true;
};

// A list of strings under `key`, each a line of the text form after `lead`.
void print_list(Printer &p, std::string_view key, const std::vector<std::string> &items,
                std::string_view lead);

using PrintFn = std::function<void(Printer &)>;

// What `print` prints, as a document tree, or as text.
Doc printed_doc(const PrintFn &print);
std::string printed_text(const PrintFn &print);

} // namespace anec
