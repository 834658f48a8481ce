// The items of a list that a document prints after members known only at its end (a total before
// the per-op rows it sums): each item is printed as it comes, in the form of the printer it will
// join, into an unnamed temporary file, and the file is spliced into that printer's open list when
// the document is printed. A list of a million rows costs disk, not memory.
#pragma once
#include "anec/support/print_behind.hpp"
#include "anec/support/printer.hpp"
#include "anec/support/text_out.hpp"

#include <cstdio>
#include <memory>

namespace anec {

class ListSpool {
public:
  // `depth`: the scopes open around the items in the JSON form, the list's own included (the root
  // object and a list member of it: 2). Forms other than text and JSON are refused (ANEC-INTERNAL).
  // With `behind`, the items are printed on its thread (support/print_behind.hpp), which the spool
  // stops when it goes: `behind` must outlive it.
  ListSpool(Form form, size_t depth, PrintBehind *behind = nullptr);
  ~ListSpool();
  ListSpool(const ListSpool &) = delete;
  ListSpool &operator=(const ListSpool &) = delete;
  // The printer of the items: each item as the list's printer would print it.
  Printer &items() { return *items_; }
  // The items printed so far, into `p`'s open list (the text form: where p is). ANEC-IO-003 when the
  // temporary file cannot be created, written or read back.
  void splice_into(Printer &p);

private:
  struct FileCloser {
    void operator()(std::FILE *f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, FileCloser> file_;
  TextOut out_;
  std::unique_ptr<Printer> printer_;
  PrintBehind *behind_;
  Printer *items_; // printer_, or its recorder behind
  size_t depth_;
};

// What remains of `from`, appended to `out`: by the kernel, file to file, where it can (sendfile);
// ANEC-IO-003 on a read error, ANEC-IO-005 when the output fails while the kernel sends.
void copy_into(std::FILE *from, TextOut &out);

} // namespace anec
