// A tuned graph written back as MIL text: the program the tuner read, with each rewrite it kept
// written in as MIL operations and the rest of the text as it was, so the written program differs
// from its source only where the tuner changed it (and reads again with the MIL reader).
#pragma once
#include "anec/compiler/passes/tune.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace anec::compiler {

struct TunedMil {
  std::string text;
  std::vector<std::string> blobs; // the BLOBFILE paths it names, as written ("@model_path/w.bin"), once each
};

// `text` is the MIL program `source` the tuner's graph was read from (its function `function`),
// `r` the tuner's result with the rewrites `rules` it tried. The kept rewrites written in:
// - a linear layer retyped to a 1x1 convolution (linear_as_conv): expand_dims, conv, squeeze, with
//   the weight constant retyped to [O, I, 1] over the same bytes;
// - a permutation of size-1 axes dropped (drop_transpose): its readers read its input.
// ANEC-TUNE-002, naming the rewrite and the site, where a kept rewrite has no MIL form here: fused
// attention, a retype other than linear to conv, a linear whose input is not of rank 2 or whose
// weight is not a const (a compressed one, or a matmul's operand, would need its bytes rewritten).
TunedMil tuned_mil(std::string_view text, const std::string &source, const std::string &function,
                   const TuneResult &r, const std::vector<Rewrite> &rules);

} // namespace anec::compiler
