#include "anec/support/json_stream.hpp"

#include "anec/support/error.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

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
  // A locator that starts at the array's own level (its key read, the array open at an offset not
  // known here, no string open), for the later part of a document split in two.
  static Locator in_array(std::string_view key) {
    Locator l(key);
    l.depth_ = 2;
    l.seen_ = true;
    l.open_ = 1;
    return l;
  }

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

  // Whether this locator is where in_array() starts one.
  bool at_array_level() const {
    return depth_ == 2 && open_ && !close_ && seen_ && !in_string_ && !escaped_ && !expect_key_ &&
           !reading_key_ && !armed_ && !bad_;
  }
  // The state `later`, started by in_array() where this one is (at_array_level()), reached: its
  // commas after these.
  void continue_with(Locator &&later) {
    commas_.insert(commas_.end(), later.commas_.begin(), later.commas_.end());
    later.commas_ = std::move(commas_);
    later.open_ = open_;
    *this = std::move(later);
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

// Up to `n` bytes of `fd` from `at` into `into`: fewer only at the file's end; nullopt on an error.
std::optional<size_t> read_at(int fd, uint64_t at, char *into, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, into + got, n - got, off_t(at + got));
    if (r == 0)
      break;
    if (r < 0 && errno != EINTR)
      return std::nullopt;
    got += r > 0 ? size_t(r) : 0;
  }
  return got;
}

// The bytes [from, to) of `fd` into `out`, whose storage is reused (a string as long as the last
// one is not filled first). ANEC-IO-001 when they cannot all be read.
void read_range(int fd, uint64_t from, uint64_t to, const std::string &path, std::string &out) {
  out.resize(to - from);
  if (read_at(fd, from, out.data(), out.size()) != out.size())
    throw Error("ANEC-IO-001", path + ": read failed");
}

// The bytes of `fd` from `from` up to `to` (or the file's end) fed to `l`: where they ended, or
// nullopt on a read error.
std::optional<uint64_t> feed_range(int fd, uint64_t from, uint64_t to, Locator &l) {
  std::string chunk(kChunk, '\0');
  while (from < to) {
    auto n = read_at(fd, from, chunk.data(), size_t(std::min<uint64_t>(kChunk, to - from)));
    if (!n)
      return std::nullopt;
    if (*n == 0)
      break;
    l.feed(chunk.data(), *n, from);
    from += *n;
  }
  return from;
}

// Where, in the first MiB from `at`, a comma stands between two objects ('}', the comma, '{', with
// only spaces between): there, very likely, the array's elements meet. Nothing is known of what
// comes before `at`; whoever reaches the comma from the document's start says whether they do.
std::optional<uint64_t> likely_element_boundary(int fd, uint64_t at) {
  std::string chunk(kChunk, '\0');
  auto n = read_at(fd, at, chunk.data(), chunk.size());
  if (!n)
    return std::nullopt;
  std::string_view text(chunk.data(), *n), spaces = " \n\r\t";
  for (size_t comma = text.find(',', 1); comma != std::string_view::npos; comma = text.find(',', comma + 1)) {
    size_t before = text.find_last_not_of(spaces, comma - 1),
           after = text.find_first_not_of(spaces, comma + 1);
    if (before != std::string_view::npos && after != std::string_view::npos && text[before] == '}' &&
        text[after] == '{')
      return at + comma;
  }
  return std::nullopt;
}

struct Located {
  std::pair<uint64_t, uint64_t> span; // the array's '[' and ']'
  std::vector<uint64_t> commas;       // its own
  uint64_t size = 0;                  // of the file, as read
};

// A file this large is scanned in two halves at once (see LaterHalf).
constexpr uint64_t kSplitScanAt = uint64_t(8) << 20;

// The later half of a file, scanned on a thread of its own while the first half is: from the first
// likely boundary of elements past the middle, in the array's state. It is taken when the scan of
// the first half reaches that boundary in the same state; otherwise that scan goes on from there.
struct LaterHalf {
  Locator locator;
  std::optional<uint64_t> from = {}, end = {}; // the boundary it starts at, where its scan ended

  void scan(int fd, uint64_t middle, uint64_t bytes) noexcept {
    try {
      if ((from = likely_element_boundary(fd, middle))) {
        locator.reserve(size_t((bytes - *from) / 8));
        end = feed_range(fd, *from, UINT64_MAX, locator);
      }
    } catch (...) { // no memory for its commas: the first half's scan goes on alone
      end.reset();
    }
  }
  // `first`, at the middle, carried to this half's start and joined to this half when it is there
  // in this half's state: where `first` then is (the file's end, when joined), nullopt on an error.
  std::optional<uint64_t> join(int fd, uint64_t middle, Locator &first) {
    if (!end)
      return middle;
    std::optional<uint64_t> at = feed_range(fd, middle, *from, first);
    if (!at || !first.at_array_level())
      return at;
    first.continue_with(std::move(locator));
    return end;
  }
};

// The first pass over the file, for the array under `key`.
std::optional<Located> locate(int fd, std::string_view key) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return std::nullopt;
  uint64_t bytes = uint64_t(st.st_size), middle = bytes >= kSplitScanAt ? bytes / 2 : UINT64_MAX;
  Locator first(key);
  // An element of eight bytes or more, as any op is: a comma at most every eight bytes.
  first.reserve(size_t(bytes / 8));
  LaterHalf later{Locator::in_array(key)};
  std::jthread thread; // joined before `later` is read, or at an exception
  if (middle != UINT64_MAX)
    thread = std::jthread([&] { later.scan(fd, middle, bytes); });
  std::optional<uint64_t> end = feed_range(fd, 0, middle, first);
  if (thread.joinable())
    thread.join();
  if (end && *end == middle)
    end = later.join(fd, middle, first);
  if (end) // on to the file's end (where the halves were joined, nothing is left)
    end = feed_range(fd, *end, UINT64_MAX, first);
  auto span = first.result();
  if (!end || !span)
    return std::nullopt;
  return Located{*span, first.take_commas(), *end};
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
  int fd = fileno(s.file_.get());
  std::optional<Located> located = locate(fd, key);
  if (!located)
    return std::nullopt;
  auto [open, close] = located->span;
  std::string tail;
  read_range(fd, 0, open + 1, s.path_, s.rest_);
  read_range(fd, close, located->size, s.path_, tail);
  s.rest_ += tail;
  s.ends_ = std::move(located->commas);
  s.ends_.push_back(close);
  s.next_offset_ = open + 1;
  return s;
}

std::string_view ArrayStream::bytes(uint64_t from, uint64_t to) {
  if (from < chunk_offset_ || to > chunk_offset_ + chunk_.size()) { // the next stretch of the array
    chunk_offset_ = from;
    read_range(fileno(file_.get()), from, std::max(to, std::min(from + kChunk, ends_.back())), path_, chunk_);
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
