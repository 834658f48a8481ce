// The LIEF adapter: the only file that includes LIEF. It copies what LIEF reports into the plain
// records of backend.hpp; the checks before LIEF and the rules after it are in decode/src/binary.cpp.
#include "backends.hpp"

#include <LIEF/ELF.hpp>
#include <LIEF/MachO.hpp>

namespace anec::decode::backend {

std::optional<MachOImage> parse_macho(std::span<const uint8_t> thin, const std::string &name) {
  namespace lm = LIEF::MachO;
  // LIEF 0.9's deep dyld-info parse can spin on a damaged rebase stream: the bind opcodes, the
  // only part used, are decoded by binary.cpp with bounds.
  auto fat = lm::Parser::parse(std::vector<uint8_t>(thin.begin(), thin.end()), name,
                               lm::ParserConfig().parse_dyldinfo_deeply(false));
  if (!fat || fat->size() == 0)
    return std::nullopt;
  const lm::Binary &m = fat->at(0);
  MachOImage out;
  out.cpu_type = uint32_t(m.header().cpu_type());
  for (const lm::SegmentCommand &s : m.segments()) {
    MachOImage::Segment seg;
    seg.name = s.name();
    seg.vaddr = s.virtual_address();
    seg.vsize = s.virtual_size();
    seg.file_size = s.file_size();
    seg.init_protection = s.init_protection();
    seg.content = s.content();
    for (const lm::Section &sec : s.sections())
      seg.sections.push_back({"", sec.name(), sec.address(), sec.size()});
    out.segments.push_back(std::move(seg));
  }
  if (m.has_uuid()) {
    auto u = m.uuid().uuid();
    out.uuid = std::vector<uint8_t>(u.begin(), u.end());
  }
  if (m.has_function_starts())
    out.function_starts = m.function_starts().functions();
  for (const lm::Symbol &s : m.symbols())
    out.symbols.push_back({s.name(), s.type(), s.value()});
  return out;
}

namespace {

ElfImage::Symbol symbol(const LIEF::ELF::Symbol &s) {
  return {s.name(), s.shndx(), uint32_t(s.type()), uint32_t(s.binding()), s.value(), s.size()};
}

} // namespace

std::optional<ElfImage> parse_elf(std::span<const uint8_t> image, const std::string &name) {
  namespace le = LIEF::ELF;
  auto e = le::Parser::parse(std::vector<uint8_t>(image.begin(), image.end()), name);
  if (!e)
    return std::nullopt;
  ElfImage out;
  out.machine = uint32_t(e->header().machine_type());
  for (const le::Segment &s : e->segments())
    out.segments.push_back({uint32_t(s.type()), uint32_t(s.flags()), s.virtual_address(), s.virtual_size(),
                            s.physical_size(), s.content()});
  for (const le::Section &s : e->sections())
    out.sections.push_back({s.name(), s.virtual_address(), s.size()});
  for (const le::Symbol &s : e->symbols())
    out.symbols.push_back(symbol(s));
  auto add = [&](const le::Relocation &r) {
    ElfImage::Relocation rel{r.type(), r.address(), r.addend(), std::nullopt};
    if (r.has_symbol())
      rel.symbol = symbol(r.symbol());
    out.relocations.push_back(std::move(rel));
  };
  for (const le::Relocation &r : e->dynamic_relocations())
    add(r);
  for (const le::Relocation &r : e->pltgot_relocations())
    add(r);
  return out;
}

} // namespace anec::decode::backend
