// A buffered text writer for printers that write as they walk (freedreno cffdump, llvm-readobj):
// to a FILE, flushed every 64 KiB and at the end, or appended to a std::string. Numbers are
// formatted here, digit by digit, not through snprintf.
#pragma once
#include "anec/support/format.hpp"
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace anec {

class TextOut {
public:
  explicit TextOut(std::FILE *file) : file_(file), text_(&buffer_) {}
  explicit TextOut(std::string &text) : text_(&text) {}
  TextOut(const TextOut &) = delete;
  TextOut &operator=(const TextOut &) = delete;
  ~TextOut() { flush(); }

  TextOut &operator<<(std::string_view s) {
    text_->append(s);
    return written();
  }
  // A text from an input, its control characters escaped (anec::terminal_safe).
  TextOut &safe(std::string_view s) {
    append_terminal_safe(*text_, s);
    return written();
  }
  // As anec::hex: "0x", then at least `width` digits.
  TextOut &hex(uint64_t v, int width = 0) {
    char digits[16];
    int n = 16;
    do
      digits[--n] = "0123456789abcdef"[v & 15];
    while (v >>= 4);
    text_->append("0x");
    if (width > 16 - n)
      text_->append(size_t(width - (16 - n)), '0');
    text_->append(digits + n, size_t(16 - n));
    return written();
  }
  TextOut &dec(uint64_t v) {
    char digits[20];
    int n = 0;
    do
      digits[n++] = char('0' + v % 10);
    while (v /= 10);
    while (n)
      text_->push_back(digits[--n]);
    return written();
  }
  // Writes what is buffered to the file (errors surface at flush_stdout, support/file.hpp).
  void flush() {
    if (file_ && !buffer_.empty())
      std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
    buffer_.clear();
  }

private:
  static constexpr size_t kChunk = 64 << 10;
  TextOut &written() {
    if (file_ && buffer_.size() >= kChunk)
      flush();
    return *this;
  }
  std::FILE *file_ = nullptr;
  std::string buffer_;
  std::string *text_;
};

} // namespace anec
