// Paths a model names for its weights (ONNX external data, MIL BLOBFILEs, a Core ML bundle's files),
// resolved inside the model's folder: a model never makes the tool open, stat or answer about a file
// outside it.
#pragma once
#include <filesystem>
#include <optional>

namespace anec {

// Whether `relative`, as written, names something in the folder it is relative to: not empty, not
// absolute, not the folder itself, and no ".." anywhere (decided on the text; nothing is looked at).
bool names_inside(const std::filesystem::path &relative);

// `relative` resolved under `folder` with every symbolic link followed, a link that leads nowhere
// included (std::filesystem::weakly_canonical stops at one): the path it names, or nullopt when
// `relative` is empty, absolute or climbs out with "..", or when what it resolves to is not strictly
// inside the folder (the folder itself is not inside it). Only the folder and the path's own parts are
// looked at, so nothing outside the folder is touched unless a link inside leads there.
std::optional<std::filesystem::path> resolve_inside(const std::filesystem::path &folder,
                                                    const std::filesystem::path &relative);

} // namespace anec
