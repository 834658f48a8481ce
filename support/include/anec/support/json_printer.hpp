// The JSON form written as it is printed (llvm-readobj's JSONScopedPrinter): each member, item and
// scope goes to the output when the print function gives it, so a document of any size costs the
// open scopes, never a tree. The bytes are those DocPrinter's tree gives through json::write (two
// spaces of indent, nlohmann's scalars), so the two forms are interchangeable.
#pragma once
#include "anec/support/printer.hpp"
#include "anec/support/text_out.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace anec {

class JsonPrinter final : public Printer {
public:
  // `schema` (empty: none) and its version lead the root object, as document() puts them.
  JsonPrinter(TextOut &out, std::string_view schema);
  // The items of a list `depth` scopes deep, as a printer with that list open writes them (ListSpool).
  JsonPrinter(TextOut &out, size_t depth);
  void field(std::string_view key, const Scalar &v) override { data(key, v); }
  void data(std::string_view key, const Scalar &v) override;
  void text(std::string_view) override {}
  void item(const Scalar &v) override;
  void begin_object(std::string_view key) override;
  void begin_list(std::string_view key) override;
  void end() override;
  void splice(std::FILE *items, size_t depth) override;
  Form form() const override { return Form::Json; }
  // Closes the root and ends the document with a newline; ANEC-INTERNAL with a scope still open.
  void finish();

private:
  struct Scope {
    bool list = false, empty = true;
    size_t keys_from = 0; // where its keys start in keys_
    uint64_t seen = 0;    // bit (hash % 64) of each of its keys: a key whose bit is clear is new
  };
  void open(std::string_view key, bool list);
  void key(std::string_view k);  // the separator, the indent and "key": of a new member
  void next_item();              // the separator and the indent of a new list item
  Scope pop();                   // the innermost scope, its keys dropped
  void close(const Scope &done); // the indent and the bracket that ends `done`
  void value(const Doc &d);      // a whole value, nested members indented as the scopes are
  void value(const Scalar &v);
  void new_line(bool after, size_t depth);
  void deep_line(bool after, size_t spaces);
  void started() { // inline: every member and item asks
    if (!started_)
      start();
  }
  void start();

  TextOut &out_;
  std::string schema_;
  std::vector<Scope> scopes_;
  // The open objects' keys, hashed, to refuse one given twice (a tree replaces it).
  std::vector<uint64_t> keys_;
  bool root_explicit_ = false, started_ = false, finished_ = false;
};

} // namespace anec
