#include "anec/support/inside.hpp"

#include <algorithm>

namespace anec {
namespace fs = std::filesystem;

namespace {

constexpr int kMaxLinks = 40; // as the kernel's MAXSYMLINKS: a loop of links is refused

// weakly_canonical, continued through a link that leads nowhere: the first part of the path that does
// not exist, when it is a link, is replaced by where it leads and the rest resolved again. Empty for a
// loop of links or an error.
fs::path resolve(const fs::path &p, int links) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  if (ec)
    return {};
  fs::path prefix;
  for (auto it = r.begin(); it != r.end(); ++it) {
    prefix /= *it;
    if (fs::exists(fs::status(prefix, ec)))
      continue;
    if (!fs::is_symlink(fs::symlink_status(prefix, ec)))
      return r;
    fs::path target = fs::read_symlink(prefix, ec);
    if (ec || links == 0)
      return {};
    fs::path rest = prefix.parent_path() / target; // an absolute target replaces the parent
    for (++it; it != r.end(); ++it)
      rest /= *it;
    return resolve(rest, links - 1);
  }
  return r;
}

} // namespace

bool names_inside(const fs::path &relative) {
  if (relative.empty() || relative.is_absolute() || relative.has_root_name() ||
      relative.has_root_directory() || relative.lexically_normal() == ".")
    return false;
  return std::none_of(relative.begin(), relative.end(), [](const fs::path &part) { return part == ".."; });
}

std::optional<fs::path> resolve_inside(const fs::path &folder, const fs::path &relative) {
  if (!names_inside(relative))
    return std::nullopt;
  std::error_code ec;
  fs::path base = fs::weakly_canonical(folder.empty() ? fs::path(".") : folder, ec);
  if (ec)
    return std::nullopt;
  fs::path full = resolve(base / relative, kMaxLinks);
  fs::path r = full.lexically_relative(base);
  if (full.empty() || r.empty() || r == "." || *r.begin() == "..")
    return std::nullopt;
  return full;
}

} // namespace anec
