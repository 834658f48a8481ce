// The module loader: the only file that includes <dlfcn.h>.
#include "anec/support/plugin.hpp"

#include "anec/support/error.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <system_error>

namespace anec::plugin {
namespace fs = std::filesystem;

std::string file_name(const std::string &name) {
  return name + ".so";
}

std::vector<fs::path> search_path() {
  std::vector<fs::path> out;
  if (const char *env = std::getenv("ANEC_PLUGIN_DIR"); env && *env)
    out.push_back(env);
  std::error_code ec;
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec && !exe.empty()) {
    fs::path beside = (exe.parent_path() / ANEC_BIN_TO_PLUGIN_DIR).lexically_normal();
    if (fs::is_directory(beside, ec) && beside != fs::path(ANEC_PLUGIN_INSTALL_DIR).lexically_normal())
      out.push_back(beside);
  }
  out.push_back(ANEC_PLUGIN_BUILD_DIR);
  out.push_back(ANEC_PLUGIN_INSTALL_DIR);
  return out;
}

const Header &load(const std::string &name, const char *entry, uint32_t version, uint32_t size) {
  fs::path file;
  std::string tried;
  for (const fs::path &dir : search_path()) {
    std::error_code ec;
    fs::path candidate = dir / file_name(name);
    if (fs::is_regular_file(candidate, ec)) {
      file = candidate;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + candidate.string();
  }
  if (file.empty())
    throw Error("ANEC-PLUGIN-001", "module " + name + " is not installed; tried " + tried +
                                       " (set ANEC_PLUGIN_DIR to the folder that holds " + file_name(name) +
                                       ")");
  // Never closed: the caller keeps the table, and the module's libraries keep static state.
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    throw Error("ANEC-PLUGIN-003", "module " + file.string() + " cannot be loaded: " +
                                       (why ? why : "the dynamic loader gives no reason"));
  }
  using Entry = const Header *(*)();
  auto fn = reinterpret_cast<Entry>(dlsym(handle, entry));
  if (!fn)
    throw Error("ANEC-PLUGIN-002", "module " + file.string() + " has no entry function " + entry +
                                       ": it is not the module this program was built with");
  const Header *table = fn();
  if (!table || table->version != version || table->size != size)
    throw Error("ANEC-PLUGIN-002", "module " + file.string() + " has interface version " +
                                       (table ? std::to_string(table->version) : "(none)") + " and a " +
                                       (table ? std::to_string(table->size) : "0") +
                                       "-byte table; this program needs version " + std::to_string(version) +
                                       " with a " + std::to_string(size) +
                                       "-byte table (install the module built with it)");
  return *table;
}

} // namespace anec::plugin
