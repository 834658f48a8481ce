#include "anec/compiler/check/wire.hpp"

#include "anec/support/checked.hpp"

namespace anec::compiler {

namespace {
// The target's integer field and its confidence; `fallback` and "absent" without it.
std::pair<int64_t, std::string> field_of(const hal::Target &t, std::string_view field, int64_t fallback) {
  const hal::Entry *e = t.find(field);
  const uint64_t *v = e ? std::get_if<uint64_t>(&e->value) : nullptr;
  if (!v || *v == 0 || *v > 4096)
    return {fallback, "absent"};
  return {int64_t(*v), confidence_name(e->provenance.confidence)};
}

int64_t round_up(int64_t v, int64_t to) {
  return to > 1 ? (v + to - 1) / to * to : v;
}

// The feature kinds a front-end records in Tensor::format that are no tensor (Core ML's).
bool host_value(const std::string &format) {
  return format == "string" || format == "dictionary" || format == "sequence";
}

WirePort port_of(const Tensor &x, bool input, const Wire &w) {
  WirePort p{x.name, input, x.dtype, host_value(x.format) ? x.format : "", x.shape};
  if (x.shape.symbolic() || !p.host_value.empty())
    return p;
  auto mul = [&](int64_t a, int64_t b) {
    return mul_or_throw(a, b, "ANEC-GRAPH-003", "bytes of '" + x.name + "' on the engine");
  };
  const auto &d = x.shape.d;
  p.channels = d[kC];
  p.padded_channels = round_up(d[kC], x.interleave > 0 ? x.interleave : w.interleave);
  p.row_bytes = mul(d[kW], 2);
  p.padded_row_bytes = round_up(p.row_bytes, w.granule);
  p.bytes = mul(mul(mul(mul(d[kN], d[kD]), p.padded_channels), d[kH]), p.padded_row_bytes);
  return p;
}
} // namespace

Wire wire_of(const Graph &g, const hal::Target &t) {
  Wire w;
  std::tie(w.interleave, w.interleave_provenance) = field_of(t, "channel_interleave", 1);
  std::tie(w.granule, w.granule_provenance) = field_of(t, "dram_alignment", 16);
  for (const auto &[names, input] : {std::pair{&g.inputs, true}, {&g.outputs, false}})
    for (const std::string &n : *names)
      if (const Tensor *x = g.tensor(n))
        w.ports.push_back(port_of(*x, input, w));
  return w;
}

} // namespace anec::compiler
