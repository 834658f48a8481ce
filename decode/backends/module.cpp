// The decode module's entry function (anec/support/plugin.hpp), named by backend::kEntry: the only
// symbol the module exports.
#include "backends.hpp"

namespace anec::decode::backend {
namespace {

constexpr Api kApi = {
    .header = {kVersion, sizeof(Api)},
    .parse_macho = parse_macho,
    .parse_elf = parse_elf,
    .disasm_open = disasm_open,
    .disasm_close = disasm_close,
    .disassemble = disassemble,
    .cpu_open = cpu_open,
    .cpu_close = cpu_close,
    .cpu_map = cpu_map,
    .cpu_read = cpu_read,
    .cpu_write = cpu_write,
    .cpu_get = cpu_get,
    .cpu_set = cpu_set,
    .cpu_hook_code = cpu_hook_code,
    .cpu_hook_fault = cpu_hook_fault,
    .cpu_run = cpu_run,
    .cpu_stop = cpu_stop,
};

} // namespace
} // namespace anec::decode::backend

extern "C" __attribute__((visibility("default"))) const anec::plugin::Header *anec_decode_backends_entry() {
  return &anec::decode::backend::kApi.header;
}
