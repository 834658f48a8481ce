// Several inputs in one run (`anec-desc audit` with several files or a directory): the files a list
// of paths names, and work spread over the cores. Each file is worked on by one thread.
#pragma once
#include "anec/support/doc.hpp"
#include "anec/support/table.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace anec {

// A folder that is one input, not a corpus: its name ends in one of `bundles` (a Core ML
// .mlpackage or .mlmodelc).
inline bool is_bundle_dir(const std::filesystem::path &p, const std::set<std::string> &bundles) {
  std::filesystem::path name = p.filename().empty() ? p.parent_path() : p;
  std::error_code ec;
  return bundles.count(name.extension().string()) && std::filesystem::is_directory(p, ec);
}

// Files as given; for a directory, its entries whose extension is one of `extensions` and its
// folders whose extension is one of `bundles` (not recursive), sorted. A bundle given is one input.
// An entry is listed whatever it is (a link that loops or dangles, a FIFO, a folder named like a
// model): reading it gives its row and its reason, so no entry is skipped unsaid and none ends the
// run. A directory that cannot be listed is listed as itself, for the same reason.
inline std::vector<std::filesystem::path> input_files(const std::vector<std::string> &paths,
                                                      const std::set<std::string> &extensions,
                                                      const std::set<std::string> &bundles = {}) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  for (const std::string &p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec) || is_bundle_dir(p, bundles)) {
      out.push_back(p);
      continue;
    }
    std::vector<fs::path> in;
    fs::directory_iterator it(p, ec), end;
    if (ec)
      in.push_back(p);
    for (; !ec && it != end; it.increment(ec))
      if (extensions.count(it->path().extension().string()) || is_bundle_dir(it->path(), bundles))
        in.push_back(it->path());
    std::sort(in.begin(), in.end());
    out.insert(out.end(), in.begin(), in.end());
  }
  return out;
}

// work(i) for every i below n, on up to hardware_concurrency threads (this one included), each
// taking the next index as it finishes one.
template <typename Work> void spread_over_cores(size_t n, Work &&work) {
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (size_t i = next++; i < n; i = next++)
      work(i);
  };
  unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), unsigned(n)));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k)
    pool.emplace_back(loop);
  loop();
  for (std::thread &t : pool)
    t.join();
}

// A run over many files: a row per file, how many failed (a reject, a finding) and how many could
// not be read.
struct Corpus {
  Table rows; // a row per file (or several: one per target)
  size_t files = 0, failed = 0, unreadable = 0;
  const char *failed_key;  // the document's name for the failed count ("rejected", "failed")
  const char *passed_text; // the text summary's words for the others ("without a reject")
  const char *failed_text; // and for the failed ("with one")
};

// The text form: the rows, then "N file(s): P without a reject, F with one, U unreadable". The
// document form: files, the failed count, unreadable and the rows. The CSV form: the rows.
inline void print(Printer &p, const Corpus &c) {
  size_t files = c.files;
  p.data("files", files);
  p.data(c.failed_key, c.failed);
  p.data("unreadable", c.unreadable);
  print(p, c.rows, "rows");
  p.text(std::to_string(files) + " file(s): " + std::to_string(files - c.failed - c.unreadable) + " " +
         c.passed_text + ", " + std::to_string(c.failed) + " " + c.failed_text + ", " +
         std::to_string(c.unreadable) + " unreadable\n");
}

} // namespace anec
