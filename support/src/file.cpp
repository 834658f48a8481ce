#include "anec/support/file.hpp"

#include "anec/support/error.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace anec {
namespace fs = std::filesystem;

namespace {

std::string quoted(const fs::path &p) {
  return "'" + p.string() + "'";
}
std::string os_error(int err = errno) {
  return std::strerror(err);
}

// An open descriptor, closed when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

const char *kind_of(mode_t m) {
  if (S_ISREG(m))
    return "a regular file";
  if (S_ISDIR(m))
    return "a directory";
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISSOCK(m))
    return "a socket";
  return "neither a file nor a folder";
}

// ---- inputs

// Opens without blocking (a FIFO with no writer would block a plain open) and refuses anything
// but a regular file before a byte is read.
int open_regular(const fs::path &path, uint64_t max_bytes, uint64_t &size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw Error("ANEC-IO-001", "cannot open " + quoted(path) + ": " + os_error());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw Error("ANEC-IO-001", "cannot read " + quoted(path) + ": " + os_error(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("ANEC-IO-004", "cannot read " + quoted(path) + ": it is " + kind_of(st.st_mode) +
                                   "; only regular files are read");
  }
  size = uint64_t(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    throw Error("ANEC-IO-002", quoted(path) + " is " + std::to_string(size) + " bytes, larger than the " +
                                   std::to_string(max_bytes) + "-byte limit");
  }
  return fd;
}

// Reads what a descriptor holds, at most max_bytes (a file that grew after fstat is caught here).
std::vector<uint8_t> read_all(int fd, const fs::path &path, uint64_t max_bytes, uint64_t hint) {
  std::vector<uint8_t> out;
  out.reserve(size_t(hint));
  std::array<uint8_t, 65536> buf;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw Error("ANEC-IO-001", "cannot read " + quoted(path) + ": " + os_error());
    if (n == 0)
      return out;
    if (out.size() + size_t(n) > max_bytes)
      throw Error("ANEC-IO-002",
                  quoted(path) + " is larger than the " + std::to_string(max_bytes) + "-byte limit");
    out.insert(out.end(), buf.begin(), buf.begin() + n);
  }
}

std::vector<uint8_t> read_stdin(uint64_t max_bytes) {
  return read_all(0, "standard input", max_bytes, 0);
}

// ---- outputs

constexpr std::string_view kTempTag = ".anec-tmp-";

// Follows symbolic links (up to 40, as the kernel does) to the path they finally name, which
// may not exist yet.
fs::path resolve_links(fs::path p) {
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec)))
      return p;
    fs::path target = fs::read_symlink(p, ec);
    if (ec)
      throw Error("ANEC-IO-003", "cannot follow the link " + quoted(p) + ": " + ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  throw Error("ANEC-IO-003", "cannot write " + quoted(p) + ": too many levels of symbolic links");
}

fs::path dir_of(const fs::path &p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

bool process_alive(long pid) {
  return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno != ESRCH);
}

// The pid in a temporary's name ".<name>.anec-tmp-<pid>-<n>", or 0.
long owner_of(std::string_view name) {
  size_t at = name.find(kTempTag);
  if (name.empty() || name[0] != '.' || at == std::string_view::npos)
    return 0;
  return std::strtol(std::string(name.substr(at + kTempTag.size())).c_str(), nullptr, 10);
}

// The file an older version's temporary ".<target>.tmp.XXXXXX" was for, or "".
std::string legacy_target(std::string_view entry) {
  constexpr std::string_view tag = ".tmp.";
  if (entry.size() < 1 + 1 + tag.size() + 6 || entry[0] != '.')
    return "";
  std::string_view rest = entry.substr(1, entry.size() - 1 - 6);
  if (rest.substr(rest.size() - tag.size()) != tag)
    return "";
  return std::string(rest.substr(0, rest.size() - tag.size()));
}

// A temporary an earlier writer of `target` left behind: a run killed before its rename, of
// this version (its owner is gone) or of earlier ones.
bool is_stale_temp(std::string_view entry, std::string_view target) {
  if (long pid = owner_of(entry))
    return !process_alive(pid);
  return !target.empty() && legacy_target(entry) == target;
}

void remove_stale_temps(const fs::path &dir, std::string_view target) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (is_stale_temp(it->path().filename().string(), target))
      fs::remove_all(it->path(), ec);
}

// Creates a temporary beside `target` with `make` (which returns false when the name is taken:
// a stale temporary of an earlier process that had this pid) and returns its path.
template <typename Make> fs::path temp_beside(const fs::path &target, Make &&make) {
  std::string stem =
      "." + target.filename().string() + std::string(kTempTag) + std::to_string(::getpid()) + "-";
  for (unsigned n = 0; n < 1000; ++n) {
    fs::path temp = dir_of(target) / (stem + std::to_string(n));
    if (make(temp))
      return temp;
  }
  throw Error("ANEC-IO-003", "cannot create a temporary file beside " + quoted(target));
}

// A new file for writing, created 0666 so that the umask applies.
bool create_file(const fs::path &p, int &fd) {
  fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd >= 0 || errno == EEXIST)
    return fd >= 0;
  throw Error("ANEC-IO-003", "cannot create " + quoted(p) + ": " + os_error());
}

void write_all(int fd, std::span<const uint8_t> bytes, const fs::path &path) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      throw Error("ANEC-IO-003", "cannot write " + quoted(path) + ": " + os_error());
    done += size_t(w);
  }
}

// Streams to a FIFO or a character device: there is nothing to replace.
void stream_to(const fs::path &path, std::span<const uint8_t> bytes) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC));
  if (fd.fd < 0)
    throw Error("ANEC-IO-003", "cannot open " + quoted(path) + ": " + os_error());
  write_all(fd.fd, bytes, path);
}

// Writes the bytes into a newly created file (its mode from the umask unless `mode` keeps an
// existing file's) and flushes them to disk; the file is removed again when anything fails.
void fill(int raw_fd, const fs::path &temp, std::span<const uint8_t> bytes, std::optional<mode_t> mode) {
  Fd fd(raw_fd);
  try {
    write_all(fd.fd, bytes, temp);
    if (mode && ::fchmod(fd.fd, *mode) != 0)
      throw Error("ANEC-IO-003", "cannot set the mode of " + quoted(temp));
    if (::fsync(fd.fd) != 0)
      throw Error("ANEC-IO-003", "cannot flush " + quoted(temp) + ": " + os_error());
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
}

std::optional<struct stat> stat_of(const fs::path &p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0)
    return st;
  if (errno == ENOENT)
    return std::nullopt;
  throw Error("ANEC-IO-003", "cannot write " + quoted(p) + ": " + os_error());
}

void replace_regular(const fs::path &path, std::span<const uint8_t> bytes, std::optional<mode_t> mode) {
  remove_stale_temps(dir_of(path), path.filename().string());
  int fd = -1;
  fs::path temp = temp_beside(path, [&](const fs::path &p) { return create_file(p, fd); });
  fill(fd, temp, bytes, mode);
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    throw Error("ANEC-IO-003", "cannot write " + quoted(path) + ": " + os_error(err));
  }
}

// Puts `fresh` where `dir` is: exchanged in one step where the file system can, else in two.
void swap_in(const fs::path &fresh, const fs::path &dir, bool exists) {
  if (!exists) {
    if (std::rename(fresh.c_str(), dir.c_str()) == 0)
      return;
  } else if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0) {
    return;
  } else if (errno == EINVAL || errno == ENOSYS) {
    fs::path old = temp_beside(dir, [](const fs::path &p) { return !fs::exists(p); });
    if (std::rename(dir.c_str(), old.c_str()) == 0 && std::rename(fresh.c_str(), dir.c_str()) == 0) {
      std::error_code ec;
      fs::remove_all(old, ec);
      return;
    }
  }
  throw Error("ANEC-IO-003", "cannot put the new files in place at " + quoted(dir) + ": " + os_error());
}

// An existing output directory may hold only files like those of the set (same extension: an
// earlier set, which the new one replaces) and temporaries that earlier writers left behind.
void check_only_set(const fs::path &dir, const std::set<std::string> &names) {
  std::set<fs::path> extensions;
  for (const std::string &n : names)
    extensions.insert(fs::path(n).extension());
  for (const auto &e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    bool like = e.is_regular_file() && name[0] != '.' && extensions.count(e.path().extension());
    std::string legacy = legacy_target(name);
    bool stale =
        is_stale_temp(name, "") || (!legacy.empty() && extensions.count(fs::path(legacy).extension()));
    if (!like && !stale)
      throw Error("ANEC-IO-006", "output directory " + quoted(dir) + " holds '" + name +
                                     "', which is not like the files written; the files replace the "
                                     "directory as a whole, so give a new or a dedicated directory");
  }
}

} // namespace

// ---- InputFile

InputFile InputFile::open(const fs::path &path, uint64_t max_bytes) {
  InputFile f;
  if (path == "-") {
    f.owned_ = read_stdin(max_bytes);
  } else {
    uint64_t size = 0;
    Fd fd(open_regular(path, max_bytes, size));
    if (size == 0)
      return f;
    void *m = ::mmap(nullptr, size_t(size), PROT_READ, MAP_PRIVATE, fd.fd, 0);
    if (m == MAP_FAILED) {
      f.owned_ = read_all(fd.fd, path, max_bytes, size); // a file system that cannot map
    } else {
      f.map_ = m;
      f.data_ = static_cast<const uint8_t *>(m);
      f.size_ = size_t(size);
      return f;
    }
  }
  f.data_ = f.owned_.data();
  f.size_ = f.owned_.size();
  return f;
}

InputFile::InputFile(InputFile &&o) noexcept {
  *this = std::move(o);
}

InputFile &InputFile::operator=(InputFile &&o) noexcept {
  if (this == &o)
    return *this;
  if (map_)
    ::munmap(map_, size_);
  bool owned = o.data_ == o.owned_.data();
  owned_ = std::move(o.owned_);
  map_ = o.map_;
  size_ = o.size_;
  data_ = owned ? owned_.data() : o.data_;
  o.map_ = nullptr;
  o.data_ = nullptr;
  o.size_ = 0;
  return *this;
}

InputFile::~InputFile() {
  if (map_)
    ::munmap(map_, size_);
}

std::vector<uint8_t> read_file(const fs::path &path, uint64_t max_bytes) {
  if (path == "-")
    return read_stdin(max_bytes);
  uint64_t size = 0;
  Fd fd(open_regular(path, max_bytes, size));
  return read_all(fd.fd, path, max_bytes, size);
}

std::string read_text_file(const fs::path &path, uint64_t max_bytes) {
  auto bytes = read_file(path, max_bytes);
  return std::string(bytes.begin(), bytes.end());
}

// ---- outputs

void write_output(const fs::path &path, std::span<const uint8_t> bytes) {
  fs::path target = resolve_links(path);
  std::optional<struct stat> st = stat_of(target);
  if (!st)
    return replace_regular(target, bytes, std::nullopt);
  if (S_ISREG(st->st_mode))
    return replace_regular(target, bytes, st->st_mode & 07777);
  if (S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode))
    return stream_to(target, bytes);
  throw Error("ANEC-IO-006", "will not write " + quoted(path) + ": it is " + kind_of(st->st_mode));
}

void write_output(const fs::path &path, std::string_view text) {
  write_output(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
}

void write_output_set(const fs::path &dir_arg,
                      const std::vector<std::pair<std::string, std::string>> &files) {
  fs::path dir = fs::absolute(dir_arg).lexically_normal();
  dir = resolve_links(dir.has_filename() ? dir : dir.parent_path()); // "out/" and "." name a folder
  std::optional<struct stat> st = stat_of(dir);
  if (st && !S_ISDIR(st->st_mode))
    throw Error("ANEC-IO-006", "will not write into " + quoted(dir) + ": it is " + kind_of(st->st_mode));
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  for (fs::path p = cwd; st && !ec && !p.empty(); p = p == p.parent_path() ? fs::path() : p.parent_path())
    if (fs::equivalent(p, dir, ec)) // swapping it would leave this process in a removed folder
      throw Error("ANEC-IO-006",
                  "will not replace " + quoted(dir_arg) + ": it is the current folder or holds it");
  std::set<std::string> names;
  for (const auto &[name, text] : files)
    names.insert(name);
  if (st)
    check_only_set(dir, names);
  remove_stale_temps(dir_of(dir), "");
  fs::path fresh = temp_beside(dir, [](const fs::path &p) {
    if (::mkdir(p.c_str(), 0777) == 0)
      return true;
    if (errno == EEXIST)
      return false;
    throw Error("ANEC-IO-003", "cannot create " + quoted(p) + ": " + os_error());
  });
  try {
    if (st)
      ::chmod(fresh.c_str(), st->st_mode & 07777);
    for (const auto &[name, text] : files) {
      std::optional<struct stat> old = st ? stat_of(dir / name) : std::nullopt;
      std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t *>(text.data()), text.size());
      int fd = -1;
      if (!create_file(fresh / name, fd))
        throw Error("ANEC-IO-003", "file '" + name + "' is listed twice");
      fill(fd, fresh / name, bytes, old ? std::optional<mode_t>(old->st_mode & 07777) : std::nullopt);
    }
    swap_in(fresh, dir, st.has_value());
  } catch (...) {
    fs::remove_all(fresh, ec);
    throw;
  }
  fs::remove_all(fresh, ec); // after an exchange, the old set
}

void flush_stdout() {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout))
    return;
  throw Error("ANEC-IO-005", "cannot write to standard output: " + os_error());
}

// ---- hex

std::optional<std::vector<uint8_t>> bytes_from_hex(std::string_view digits) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  if (digits.size() % 2)
    return std::nullopt;
  std::vector<uint8_t> out;
  out.reserve(digits.size() / 2);
  for (size_t i = 0; i < digits.size(); i += 2) {
    int hi = nibble(digits[i]), lo = nibble(digits[i + 1]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    out.push_back(uint8_t(hi << 4 | lo));
  }
  return out;
}

std::string hex_bytes(std::span<const uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

} // namespace anec
