// A buffered text writer for printers that write as they walk (freedreno cffdump, llvm-readobj):
// to a FILE through a buffer (64 KiB unless told), written whenever it fills and at the end, or
// appended to a std::string. Numbers are formatted here, digit by digit, not through snprintf.
#pragma once
#include "anec/support/format.hpp"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace anec {

// n bytes from src to dst (apart): a short piece (16 bytes or fewer, nearly every piece a printer
// writes) as two overlapping word moves rather than a call.
[[gnu::always_inline]] inline void copy_bytes(char *dst, const char *src, size_t n) {
  auto move = [&](auto word) {
    decltype(word) head, tail;
    std::memcpy(&head, src, sizeof word);
    std::memcpy(&tail, src + n - sizeof word, sizeof word);
    std::memcpy(dst, &head, sizeof word);
    std::memcpy(dst + n - sizeof word, &tail, sizeof word);
  };
  if (n > 16)
    std::memcpy(dst, src, n);
  else if (n >= 8)
    move(uint64_t());
  else if (n >= 4)
    move(uint32_t());
  else if (n > 0)
    dst[0] = src[0], dst[n / 2] = src[n / 2], dst[n - 1] = src[n - 1];
}

class TextOut {
public:
  static constexpr size_t kChunk = 64 << 10;
  // `chunk`: the buffer's size, at least kChunk. A file written only to be read back whole (a spool)
  // takes a larger one: the kernel keeps large writes at page boundaries in large pages of its cache,
  // at less cost a byte (400 MB into a file on ext4: 0.35 s of system time in writes of 4 KiB, 0.10 s
  // in writes of 64 KiB, 0.08 s in writes of 256 KiB).
  explicit TextOut(std::FILE *file, size_t chunk = kChunk)
      : file_(file), chunk_(std::max(chunk, kChunk)), buffer_(new char[chunk_]) {}
  explicit TextOut(std::string &text) : text_(&text) {}
  TextOut(const TextOut &) = delete;
  TextOut &operator=(const TextOut &) = delete;
  ~TextOut() { flush(); }

  TextOut &operator<<(std::string_view s) {
    put(s.data(), s.size());
    return *this;
  }
  // `s` between double quotes, as is (the caller has escaped it), in one piece.
  TextOut &quoted(std::string_view s) {
    if (text_ || s.size() + 2 > chunk_ - used_)
      return *this << "\"" << s << "\"";
    char *at = buffer_.get() + used_;
    at[0] = '"';
    copy_bytes(at + 1, s.data(), s.size());
    at[s.size() + 1] = '"';
    used_ += s.size() + 2;
    return *this;
  }
  // `n` bytes (at most 4 KiB) at the end of the output for the caller to fill, all of them, before
  // anything else is written: a printer's several small pieces in one write.
  char *room(size_t n) {
    if (text_ || n > chunk_ - used_)
      return room_past_buffer(n);
    used_ += n;
    return buffer_.get() + used_ - n;
  }
  // A text from an input, its control characters escaped (anec::terminal_safe).
  TextOut &safe(std::string_view s) {
    if (text_) {
      append_terminal_safe(*text_, s);
      return *this;
    }
    if (std::none_of(s.begin(), s.end(), terminal_control)) // the common text: as it is
      return *this << s;
    std::string escaped;
    append_terminal_safe(escaped, s);
    return *this << escaped;
  }
  // As anec::hex: "0x", then at least `width` digits.
  TextOut &hex(uint64_t v, int width = 0) {
    char digits[16];
    int n = 16;
    do
      digits[--n] = "0123456789abcdef"[v & 15];
    while (v >>= 4);
    static constexpr std::string_view kLead = "0x0000000000000000";
    size_t zeros = size_t(std::max(0, width - (16 - n)));
    put(kLead.data(), 2);
    for (; zeros > 0; zeros -= std::min<size_t>(zeros, 16))
      put(kLead.data() + 2, std::min<size_t>(zeros, 16));
    put(digits + n, size_t(16 - n));
    return *this;
  }
  TextOut &dec(uint64_t v) {
    char digits[20];
    int n = 20;
    do
      digits[--n] = char('0' + v % 10);
    while (v /= 10);
    put(digits + n, size_t(20 - n));
    return *this;
  }
  // The file written to; nullptr when appending to a string.
  std::FILE *file() const { return file_; }
  // Writes what is buffered to the file (errors surface at flush_stdout, support/file.hpp).
  void flush() {
    if (file_ && used_)
      std::fwrite(buffer_.get(), 1, used_, file_);
    used_ = 0;
  }

private:
  static constexpr size_t kRoom = 4 << 10;
  void put(const char *p, size_t n) {
    if (text_) {
      text_->append(p, n);
    } else if (n <= chunk_ - used_) { // the common case: a few bytes into the buffer
      copy_bytes(buffer_.get() + used_, p, n);
      used_ += n;
    } else {
      spill(p, n);
    }
  }
  // room() where the buffer has no room left, or for a string: out of line, so that room() is inlined.
  [[gnu::noinline]] char *room_past_buffer(size_t n) {
    if (n > kRoom)
      throw std::length_error("TextOut::room: more than 4 KiB");
    if (text_) {
      text_->resize(text_->size() + n);
      return text_->data() + text_->size() - n;
    }
    flush_pages();
    used_ += n;
    return buffer_.get() + used_ - n;
  }
  // Past the buffer's end: its whole pages go to the file, then the text (written at once, after
  // the rest, when it is longer than the buffer).
  void spill(const char *p, size_t n) {
    flush_pages();
    if (n > chunk_ - used_) {
      flush();
      std::fwrite(p, 1, n, file_);
      return;
    }
    std::memcpy(buffer_.get() + used_, p, n);
    used_ += n;
  }
  // The buffer's whole 4 KiB pages written, the rest moved to its front: a file written from its
  // start only this way is written at page boundaries, which the kernel's cache takes in whole (and
  // larger) pages.
  void flush_pages() {
    size_t whole = used_ / kRoom * kRoom;
    std::fwrite(buffer_.get(), 1, whole, file_);
    std::memmove(buffer_.get(), buffer_.get() + whole, used_ - whole);
    used_ -= whole;
  }
  std::FILE *file_ = nullptr;
  size_t chunk_ = 0; // the buffer's size (before it, which is made that size)
  std::unique_ptr<char[]> buffer_;
  size_t used_ = 0;
  std::string *text_ = nullptr; // appended to instead of a file
};

} // namespace anec
