#include "anec/support/list_spool.hpp"

#include "anec/support/error.hpp"
#include "anec/support/json_printer.hpp"

#include <cerrno>
#include <cstring>

#include <sys/sendfile.h>
#include <sys/stat.h>

namespace anec {

namespace {
constexpr size_t kSpoolChunk = 256 << 10; // the spool's writes (support/text_out.hpp)

[[noreturn]] void spool_failed(const char *what) {
  throw Error("ANEC-IO-003",
              std::string("cannot ") + what + " the temporary file of a list: " + std::strerror(errno));
}

std::unique_ptr<Printer> items_printer(Form form, TextOut &out, size_t depth) {
  if (form == Form::Text)
    return std::make_unique<TextPrinter>(out);
  if (form == Form::Json)
    return std::make_unique<JsonPrinter>(out, depth);
  throw Error("ANEC-INTERNAL", "a list is spooled in the text or JSON form only");
}

std::FILE *temporary_file() {
  std::FILE *f = std::tmpfile();
  if (!f)
    spool_failed("create");
  std::setvbuf(f, nullptr, _IONBF, 0); // the spool's own buffer is written as it is, in one piece
  return f;
}
} // namespace

ListSpool::ListSpool(Form form, size_t depth, PrintBehind *behind)
    : file_(temporary_file()), out_(file_.get(), kSpoolChunk), printer_(items_printer(form, out_, depth)),
      behind_(behind), items_(behind ? &behind->recorder(*printer_) : printer_.get()), depth_(depth) {}

ListSpool::~ListSpool() {
  if (!behind_)
    return;
  behind_->stop(); // its thread may not print into this spool once it is gone
  // The file closed on that thread, beside this one's work: the kernel takes milliseconds to drop
  // a long list's pages (35 ms for the spools of a 1 M-op report).
  printer_.reset();
  out_.flush();
  behind_->post([file = file_.release()] { std::fclose(file); });
}

void ListSpool::splice_into(Printer &p) {
  if (behind_)
    behind_->drain();
  out_.flush();
  if (std::fflush(file_.get()) != 0 || std::ferror(file_.get()))
    spool_failed("write");
  std::rewind(file_.get());
  p.splice(file_.get(), depth_);
}

namespace {
// What remains of the regular file `from` sent to `to` by the kernel (sendfile), its bytes never
// copied through this process; false, and nothing sent, where the two files do not allow it (an
// output opened to append, a string). ANEC-IO-005 when the output fails part way.
bool send_rest(std::FILE *from, std::FILE *to) {
  struct stat in;
  long at = std::ftell(from);
  if (!to || at < 0 || fstat(fileno(from), &in) != 0 || !S_ISREG(in.st_mode) || std::fflush(to) != 0)
    return false;
  off_t offset = at;
  while (offset < in.st_size) {
    ssize_t sent = sendfile(fileno(to), fileno(from), &offset, size_t(in.st_size - offset));
    if (sent > 0 || (sent < 0 && errno == EINTR))
      continue;
    if (offset == at && sent < 0 && (errno == EINVAL || errno == ENOSYS))
      return false;
    throw Error("ANEC-IO-005", std::string("cannot write the output: ") +
                                   (sent < 0 ? std::strerror(errno) : "the list's file ended early"));
  }
  if (std::fseek(from, 0, SEEK_END) != 0)
    spool_failed("read back");
  return true;
}
} // namespace

void copy_into(std::FILE *from, TextOut &out) {
  out.flush();
  if (send_rest(from, out.file()))
    return;
  char chunk[64 << 10];
  while (size_t n = std::fread(chunk, 1, sizeof chunk, from))
    out << std::string_view(chunk, n);
  if (std::ferror(from))
    spool_failed("read back");
}

} // namespace anec
