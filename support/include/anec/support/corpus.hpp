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

// Files as given; for a directory, its regular files whose extension is one of `extensions`
// (not recursive), sorted.
inline std::vector<std::filesystem::path> input_files(const std::vector<std::string> &paths,
                                                      const std::set<std::string> &extensions) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  for (const std::string &p : paths) {
    if (!fs::is_directory(p)) {
      out.push_back(p);
      continue;
    }
    std::vector<fs::path> in;
    for (const auto &e : fs::directory_iterator(p))
      if (e.is_regular_file() && extensions.count(e.path().extension().string()))
        in.push_back(e.path());
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

// The JSON summary of a run over many files: how many, how many failed (under `failed_key`: a
// reject, a finding), how many could not be read, and the per-file rows.
inline Doc corpus_doc(size_t files, const char *failed_key, size_t failed, size_t unreadable,
                      const Table &rows) {
  Doc d = Doc::table();
  d.set("files", Doc::integer(int64_t(files)));
  d.set(failed_key, Doc::integer(int64_t(failed)));
  d.set("unreadable", Doc::integer(int64_t(unreadable)));
  d.set("rows", table_doc(rows));
  return d;
}

} // namespace anec
