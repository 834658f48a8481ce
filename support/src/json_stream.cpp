#include "anec/support/json_stream.hpp"

#include "anec/support/error.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace anec::json {
namespace {

constexpr size_t kChunk = size_t(1) << 20;

bool space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

using Stops = std::array<bool, 256>;
constexpr Stops stops_of(std::string_view bytes) {
  Stops s{};
  for (char c : bytes)
    s[uint8_t(c)] = true;
  return s;
}
// What ends a run of bytes the splitter passes over: in a string, its quote or an escape; outside,
// a quote, a bracket or a comma.
constexpr Stops kInString = stops_of("\"\\"), kStructure = stops_of("\"{}[],");

size_t skip(const char *p, size_t i, size_t n, const Stops &stops) {
  while (i < n && !stops[uint8_t(p[i])])
    ++i;
  return i;
}

// Which of 64 bytes are a quote, a backslash, an opening or closing bracket, a comma: a bit each.
struct Marks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0, comma = 0;
};
#ifdef __SSE2__
Marks marks_of(const char *p) {
  Marks m;
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * k));
    auto bits = [&](char c) {
      return uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))))) << (16 * k);
    };
    m.quote |= bits('"');
    m.backslash |= bits('\\');
    m.open |= bits('{') | bits('[');
    m.close |= bits('}') | bits(']');
    m.comma |= bits(',');
  }
  return m;
}
#else
Marks marks_of(const char *p) {
  Marks m;
  for (int k = 0; k < 64; ++k) {
    uint64_t bit = uint64_t(1) << k;
    char c = p[k];
    m.quote |= c == '"' ? bit : 0;
    m.backslash |= c == '\\' ? bit : 0;
    m.open |= c == '{' || c == '[' ? bit : 0;
    m.close |= c == '}' || c == ']' ? bit : 0;
    m.comma |= c == ',' ? bit : 0;
  }
  return m;
}
#endif

// Each bit the XOR of itself and every bit below it: set from an opening quote up to the byte
// before its closing one.
uint64_t prefix_xor(uint64_t x) {
  for (int shift = 1; shift < 64; shift *= 2)
    x ^= x << shift;
  return x;
}

// The first pass: where the array under a top-level key opens and closes. It follows strings (with
// their escapes) and nesting, and reads the top-level keys: a string at depth 1 right after '{' or
// ',' is a key. Inside a top-level value (depth 2 and deeper), where no key is read, it takes 64
// bytes at a time: bit masks of the quotes, escapes and brackets, the strings masked out, then one
// step for each bracket and comma.
class Locator {
public:
  explicit Locator(std::string_view key) : key_(key) {}

  void feed(const char *p, size_t n, uint64_t base) {
    for (size_t i = 0; i < n; ++i) {
      if (depth_ >= 2 && (i = inside(p, i, n, base)) == n)
        break;
      if (in_string_) {
        if (escaped_) {
          escaped_ = false;
          continue;
        }
        size_t end = skip(p, i, n, kInString);
        if (reading_key_)
          name_.append(p + i, end - i);
        if ((i = end) == n)
          break;
        if (p[i] == '\\')
          escaped_ = true;
        else
          end_string();
        continue;
      }
      if (!armed_ && (i = skip(p, i, n, kStructure)) == n) // after a key, every byte up to its value
        break;
      char c = p[i];
      if (space(c))
        continue;
      if (armed_ && c != ':') { // the value of the key: it must be an array
        armed_ = false;
        if (c != '[' || open_)
          bad_ = true;
        else
          open_ = base + i + 1;
      }
      switch (c) {
      case '"':
        in_string_ = true;
        reading_key_ = depth_ == 1 && expect_key_;
        name_.clear();
        break;
      case '{':
      case '[':
        expect_key_ = ++depth_ == 1 && c == '{';
        break;
      case '}':
      case ']':
        if (--depth_ == 1 && open_ && !close_)
          close_ = base + i + 1;
        bad_ |= depth_ < 0;
        break;
      case ',':
        expect_key_ = depth_ == 1;
        if (depth_ == 2 && open_ && !close_)
          commas_.push_back(base + i);
        break;
      }
    }
  }

  // Room for `n` commas, so that the list is not copied as it grows: address space, paged in only as
  // commas are found.
  void reserve(size_t n) { commas_.reserve(n); }
  // The offsets of the array's own commas, in order, handed over.
  std::vector<uint64_t> take_commas() { return std::move(commas_); }
  // The array's '[' and ']' (as offsets one past them), when the document was split cleanly.
  std::optional<std::pair<uint64_t, uint64_t>> result() const {
    if (bad_ || depth_ != 0 || in_string_ || !open_ || !close_)
      return std::nullopt;
    return std::pair{open_ - 1, close_ - 1};
  }

private:
  // From p[i], at depth 2 or more: to the byte after the bracket that closes depth 2, or to n.
  size_t inside(const char *p, size_t i, size_t n, uint64_t base) {
    for (; i < n; i += 64) {
      size_t len = std::min<size_t>(64, n - i);
      char padded[64];
      const char *b = p + i;
      if (len < 64) { // the chunk's last bytes, padded with spaces, which mark nothing
        std::memcpy(padded, b, len);
        std::memset(padded + len, ' ', 64 - len);
        b = padded;
      }
      Marks m = marks_of(b);
      uint64_t escaped = m.backslash || escaped_ ? escapes(b, len) : 0;
      uint64_t strings = prefix_xor(m.quote & ~escaped) ^ (in_string_ ? ~uint64_t(0) : 0);
      for (uint64_t marks = (m.open | m.close | m.comma) & ~strings; marks; marks &= marks - 1) {
        size_t k = size_t(__builtin_ctzll(marks));
        if (b[k] == ',') {
          if (depth_ == 2 && open_ && !close_)
            commas_.push_back(base + i + k);
        } else if (b[k] == '{' || b[k] == '[') {
          ++depth_;
        } else if (--depth_ == 1) {
          if (open_ && !close_)
            close_ = base + i + k + 1;
          in_string_ = escaped_ = false;
          return i + k + 1;
        }
      }
      in_string_ = strings >> 63; // padding holds no quote: the state after the last byte
    }
    return n;
  }
  // The bytes of b[0, len) a backslash escapes (the one after a backslash that is not escaped).
  uint64_t escapes(const char *b, size_t len) {
    uint64_t escaped = 0;
    for (size_t k = 0; k < len; ++k)
      if (escaped_) {
        escaped |= uint64_t(1) << k;
        escaped_ = false;
      } else {
        escaped_ = b[k] == '\\';
      }
    return escaped;
  }

  void end_string() {
    in_string_ = false;
    if (reading_key_ && name_ == key_) {
      bad_ |= seen_; // the key twice: the whole-document reader says so
      seen_ = armed_ = true;
    }
    reading_key_ = expect_key_ = false;
  }

  std::string_view key_;
  std::string name_;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false, expect_key_ = false, reading_key_ = false;
  bool armed_ = false, seen_ = false, bad_ = false;
  uint64_t open_ = 0, close_ = 0;
  std::vector<uint64_t> commas_; // in the array, at its own level
};

// The bytes [from, to) of `f` into `out`, whose storage is reused (a string as long as the last
// one is not filled first).
void read_range(std::FILE *f, uint64_t from, uint64_t to, const std::string &path, std::string &out) {
  out.resize(to - from);
  if (std::fseek(f, long(from), SEEK_SET) != 0 || std::fread(out.data(), 1, out.size(), f) != out.size())
    throw Error("ANEC-IO-001", path + ": read failed");
}

} // namespace

std::optional<ArrayStream> ArrayStream::open(const std::filesystem::path &path, std::string_view key) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return std::nullopt;
  ArrayStream s;
  s.path_ = path.string();
  s.file_.reset(std::fopen(s.path_.c_str(), "rb"));
  if (!s.file_)
    return std::nullopt;
  Locator locate(key);
  // An element of eight bytes or more, as any op is: a comma at most every eight bytes.
  uintmax_t bytes = std::filesystem::file_size(path, ec);
  locate.reserve(ec ? 0 : size_t(bytes / 8));
  std::string chunk(kChunk, '\0');
  uint64_t base = 0;
  while (size_t n = std::fread(chunk.data(), 1, chunk.size(), s.file_.get())) {
    locate.feed(chunk.data(), n, base);
    base += n;
  }
  auto span = locate.result();
  if (std::ferror(s.file_.get()) || !span)
    return std::nullopt;
  auto [open, close] = *span;
  std::string tail;
  read_range(s.file_.get(), 0, open + 1, s.path_, s.rest_);
  read_range(s.file_.get(), close, base, s.path_, tail);
  s.rest_ += tail;
  s.ends_ = locate.take_commas();
  s.ends_.push_back(close);
  s.next_offset_ = open + 1;
  return s;
}

std::string_view ArrayStream::bytes(uint64_t from, uint64_t to) {
  if (from < chunk_offset_ || to > chunk_offset_ + chunk_.size()) { // the next stretch of the array
    chunk_offset_ = from;
    read_range(file_.get(), from, std::max(to, std::min(from + kChunk, ends_.back())), path_, chunk_);
  }
  return std::string_view(chunk_).substr(size_t(from - chunk_offset_), size_t(to - from));
}

std::optional<std::string_view> ArrayStream::next() {
  if (next_ == ends_.size())
    return std::nullopt;
  uint64_t end = ends_[next_++];
  std::string_view text = bytes(next_offset_, end);
  next_offset_ = end + 1; // past the comma
  while (!text.empty() && space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && space(text.back()))
    text.remove_suffix(1);
  if (!text.empty())
    return text;
  if (ends_.size() == 1) // "[]": no element
    return std::nullopt;
  throw Error("ANEC-JSON-001", path_ + (next_ == ends_.size() ? ": the array ends with a comma"
                                                              : ": an array element is missing"));
}

} // namespace anec::json
