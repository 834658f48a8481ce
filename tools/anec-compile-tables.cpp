// Build step: writes the compiled form (compiled_doc.hpp) of every *.toml under a tables directory
// into one output directory, each named by its text's hash. Not installed; the build runs it.
#include "anec/support/compiled_doc.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"
#include "guarded.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using namespace anec;

int main(int argc, char **argv) {
  return tools::guarded("anec-compile-tables", [&] {
    if (argc != 3)
      throw Error("ANEC-CLI-001", "usage: anec-compile-tables TABLES_DIR OUT_DIR");
    std::vector<fs::path> tables;
    for (auto &e : fs::recursive_directory_iterator(argv[1]))
      if (e.is_regular_file() && e.path().extension() == ".toml")
        tables.push_back(e.path());
    std::sort(tables.begin(), tables.end());
    std::vector<std::pair<std::string, std::string>> files;
    std::set<std::string> names; // identical texts share one compiled form
    for (auto &path : tables) {
      std::string text = read_text_file(path);
      if (names.insert(compiled::file_name(text)).second)
        files.emplace_back(compiled::file_name(text),
                           compiled::encode(toml::parse(text, path.string()), text));
    }
    write_output_set(argv[2], files);
    return 0;
  });
}
