// The binary loader: the checks LIEF 0.9 does not make on a damaged file, then what LIEF reports
// (through the decode module, backend.hpp) copied into the project's own model.
#include "anec/decode/binary.hpp"

#include "backend.hpp"

#include "anec/layout/layout.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <set>

namespace anec::decode {

const char *format_name(Format f) {
  return f == Format::MachO ? "Mach-O" : "ELF";
}
const char *arch_name(Arch a) {
  return a == Arch::Arm64 ? "arm64" : "x86-64";
}

std::string demangle(const std::string &name) {
  int status = 0;
  char *d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) {
    std::free(d);
    return name;
  }
  std::string out(d);
  std::free(d);
  return out;
}

namespace {

uint32_t be32(std::span<const uint8_t> b, size_t off) {
  return uint32_t(b[off]) << 24 | uint32_t(b[off + 1]) << 16 | uint32_t(b[off + 2]) << 8 |
         uint32_t(b[off + 3]);
}
[[noreturn]] void malformed(const std::string &name, const std::string &why) {
  throw Error("ANEC-BIN-001", "'" + name + "' is truncated or malformed: " + why);
}

// A segment larger than this is a damaged header, not a compiler binary.
constexpr uint64_t kMaxSegment = 4ull << 30;

// What the checks below learn from the load commands.
struct MachOLayout {
  struct Seg {
    uint64_t vmaddr, vmsize;
  };
  std::vector<Seg> segments;                               // in load-command order: bind opcodes index them
  std::vector<std::pair<uint32_t, uint32_t>> bind_streams; // (offset, size) of the bind and lazy-bind opcodes
};

void in_file(std::span<const uint8_t> b, const std::string &name, const char *what, uint64_t off,
             uint64_t size) {
  if (off > b.size() || size > b.size() - off)
    malformed(name, std::string(what) + " spans " + hex(off) + "+" + hex(size) + ", past the file end " +
                        hex(b.size()));
}

const layout::Database &layouts() {
  return layout::Database::builtin();
} // tables/schema/layout/{macho,elf}.toml

// A struct at `off` of the image, or ANEC-BIN-001 naming what runs past the end.
layout::View view(std::span<const uint8_t> b, const std::string &name, const char *layout_name,
                  uint64_t off) {
  const layout::Struct &s = layouts().get(layout_name);
  if (off > b.size() || b.size() - off < s.bytes)
    malformed(name, s.meaning + " at " + hex(off) + " needs " + std::to_string(s.bytes) +
                        " bytes, the file has " + hex(b.size()));
  return layout::View(s, b, off, "ANEC-BIN-001");
}

// One load command's checks; `cmd` is bounded by its cmdsize, so a field past it is malformed.
void check_command(std::span<const uint8_t> file, std::span<const uint8_t> cmd, uint64_t off,
                   const std::string &name, MachOLayout &layout) {
  std::string kind = layouts()
                         .enumeration("macho_load_command")
                         ->name_of(view(cmd, name, "macho.load_command", off).get("cmd"));
  if (kind == "segment_64") {
    layout::View v = view(cmd, name, "macho.segment_64", off);
    in_file(file, name, "a segment", v.get("fileoff"), v.get("filesize"));
    if (v.get("vmsize") > kMaxSegment)
      malformed(name, "segment memory size " + hex(v.get("vmsize")));
    layout.segments.push_back({v.get("vmaddr"), v.get("vmsize")});
    if (v.layout().bytes + v.get("nsects") * layouts().get("macho.section_64").bytes > v.get("cmdsize"))
      malformed(name, "segment lists " + std::to_string(v.get("nsects")) + " sections");
  } else if (kind == "symtab") {
    layout::View v = view(cmd, name, "macho.symtab", off);
    in_file(file, name, "the symbol table", v.get("symoff"),
            v.get("nsyms") * layouts().get("macho.nlist_64").bytes);
    in_file(file, name, "the string table", v.get("stroff"), v.get("strsize"));
  } else if (kind == "dysymtab") {
    layout::View v = view(cmd, name, "macho.dysymtab", off);
    in_file(file, name, "the indirect symbol table", v.get("indirectsymoff"), v.get("nindirectsyms") * 4);
  } else if (kind == "function_starts" || kind == "data_in_code" || kind == "code_signature") {
    layout::View v = view(cmd, name, "macho.linkedit_data", off);
    in_file(file, name, "linkedit data", v.get("dataoff"), v.get("datasize"));
  } else if (kind == "dyld_info" || kind == "dyld_info_only") {
    layout::View v = view(cmd, name, "macho.dyld_info", off);
    for (uint32_t k = 0; k < 5; ++k)
      in_file(file, name, "dyld info", v.get("streams", {k, 0}), v.get("streams", {k, 1}));
    for (uint32_t k : {1u, 3u}) // binds and lazy binds
      layout.bind_streams.push_back({uint32_t(v.get("streams", {k, 0})), uint32_t(v.get("streams", {k, 1}))});
  } else if (kind == "dyld_chained_fixups") {
    throw Error("ANEC-BIN-004", "'" + name + "' uses chained fixups, which this loader does not decode");
  }
}

// Checks a thin 64-bit Mach-O image's header and the load commands LIEF reads against the file
// size before LIEF sees it (LIEF 0.9 trusts them).
MachOLayout check_macho(std::span<const uint8_t> b, const std::string &name) {
  layout::View h = view(b, name, "macho.header", 0);
  uint64_t ncmds = h.get("ncmds"), end = h.end() + h.get("sizeofcmds");
  if (end > b.size())
    malformed(name, "load commands end at " + hex(end) + ", past the file end " + hex(b.size()));
  const layout::Struct &head = layouts().get("macho.load_command");
  MachOLayout layout;
  uint64_t off = h.end();
  for (uint64_t i = 0; i < ncmds; ++i) {
    if (off + head.bytes > end)
      malformed(name, "load command " + std::to_string(i) + " runs past sizeofcmds");
    layout::View c(head, b, off, "ANEC-BIN-001");
    uint64_t size = c.get("cmdsize");
    if (size < head.bytes || off + size > end)
      malformed(name, "load command " + std::to_string(i) + " at " + hex(off) + " has size " +
                          std::to_string(size));
    check_command(b, b.first(off + size), off, name, layout);
    off += size;
  }
  return layout;
}

// Checks a 64-bit little-endian ELF's program and section headers against the file size.
void check_elf(std::span<const uint8_t> b, const std::string &name) {
  layout::View h = view(b, name, "elf.header", 0);
  if (h.get("class") != 2)
    throw Error("ANEC-BIN-003", "'" + name + "': 32-bit ELF is not supported");
  if (h.get("data") != 1)
    throw Error("ANEC-BIN-003", "'" + name + "': big-endian ELF is not supported");
  const layout::Struct &ph = layouts().get("elf.program_header"), &sh = layouts().get("elf.section_header");
  uint64_t phentsize = h.get("phentsize"), phnum = h.get("phnum"), shentsize = h.get("shentsize"),
           shnum = h.get("shnum");
  // LIEF 0.9 steps through the headers by their own size, not the header's entry size: any other
  // entry size would have it read headers these checks did not see.
  if (phnum && phentsize != ph.bytes)
    malformed(name, "program header entry size " + std::to_string(phentsize));
  if (shnum && shentsize != sh.bytes)
    malformed(name, "section header entry size " + std::to_string(shentsize));
  in_file(b, name, "the program headers", h.get("phoff"), phnum * phentsize);
  in_file(b, name, "the section headers", h.get("shoff"), shnum * shentsize);
  for (uint64_t i = 0; i < phnum; ++i) {
    layout::View p(ph, b, h.get("phoff") + i * phentsize, "ANEC-BIN-001");
    in_file(b, name, "a segment", p.get("offset"), p.get("filesz"));
    if (p.get("type") == 1 && (p.get("memsz") > kMaxSegment || p.get("filesz") > p.get("memsz")))
      malformed(name, "loadable segment " + std::to_string(i) + " has file size " + hex(p.get("filesz")) +
                          ", memory size " + hex(p.get("memsz")));
  }
  for (uint64_t i = 0; i < shnum; ++i) {
    layout::View x(sh, b, h.get("shoff") + i * shentsize, "ANEC-BIN-001");
    if (x.get("type") != 8)
      in_file(b, name, "a section", x.get("offset"), x.get("size")); // SHT_NOBITS has no bytes
  }
}

// A universal binary's arm64 slice, else its x86-64 one.
std::span<const uint8_t> pick_slice(std::span<const uint8_t> b, const std::string &name) {
  layout::View fat = view(b, name, "fat.header", 0);
  const layout::Struct &arch = layouts().get("fat.arch");
  uint64_t n = fat.get("nfat_arch");
  if (n == 0 || n > 64 || fat.end() + n * arch.bytes > b.size())
    malformed(name, "fat header lists " + std::to_string(n) + " slices");
  std::optional<std::span<const uint8_t>> pick;
  for (uint64_t i = 0; i < n; ++i) {
    layout::View a(arch, b, fat.end() + i * arch.bytes, "ANEC-BIN-001");
    uint64_t cpu = a.get("cputype"), off = a.get("offset"), size = a.get("size");
    if (off + size > b.size())
      malformed(name, "fat slice " + std::to_string(i) + " past the file end");
    if (cpu == 0x0100000c || (cpu == 0x01000007 && !pick))
      pick = b.subspan(off, size);
  }
  if (!pick)
    throw Error("ANEC-BIN-003", "'" + name + "': universal binary has no arm64 or x86-64 slice");
  if (pick->size() < 4 || load_le(*pick, 0, 4) != *layouts().get("macho.header").at("magic").value)
    malformed(name, "fat slice is not a 64-bit Mach-O");
  return *pick;
}

// The bind and lazy-bind opcode streams (Mach-O dyld info): which pointer slot each imported
// symbol is bound to. Bounded: every slot must lie in its segment, and the number of binds is
// capped by the segment sizes.
std::vector<Import> macho_binds(std::span<const uint8_t> b, const std::string &name,
                                const MachOLayout &layout) {
  std::vector<Import> out;
  uint64_t cap = 0;
  for (auto &s : layout.segments)
    cap += s.vmsize / 8;
  cap = std::min<uint64_t>(cap, 1u << 22);
  for (auto [start, size] : layout.bind_streams) {
    size_t p = start, end = size_t(start) + size;
    auto fail = [&](const std::string &why) { malformed(name, "bind opcodes at " + hex(p) + ": " + why); };
    auto uleb = [&]() {
      uint64_t v = 0;
      for (int shift = 0;; shift += 7) {
        if (p >= end || shift > 63)
          fail("truncated or oversized ULEB128");
        uint8_t c = b[p++];
        v |= uint64_t(c & 0x7f) << shift;
        if (!(c & 0x80))
          return v;
      }
    };
    std::string symbol;
    uint64_t seg = 0, offset = 0;
    bool have_seg = false;
    auto bind = [&]() {
      if (!have_seg || seg >= layout.segments.size())
        fail("bind with no segment set");
      if (offset > layout.segments[seg].vmsize - 8 || layout.segments[seg].vmsize < 8)
        fail("slot at segment " + std::to_string(seg) + " + " + hex(offset) + " lies outside the segment");
      if (out.size() >= cap)
        fail("more binds than the segments hold pointers");
      std::string plain = symbol.size() > 1 && symbol[0] == '_' ? symbol.substr(1) : symbol;
      out.push_back({symbol, demangle(plain), layout.segments[seg].vmaddr + offset});
    };
    while (p < end) {
      uint8_t byte = b[p++], op = byte & 0xf0, imm = byte & 0x0f;
      switch (op) {
      case 0x00:
        break; // DONE (the lazy stream separates entries with it)
      case 0x10:
      case 0x30:
      case 0x50:
        break; // dylib ordinal / special / type: immediate
      case 0x20:
        uleb();
        break;     // dylib ordinal ULEB
      case 0x40: { // symbol name, NUL-terminated
        size_t z = p;
        while (z < end && b[z])
          ++z;
        if (z >= end)
          fail("unterminated symbol name");
        symbol.assign(reinterpret_cast<const char *>(&b[p]), z - p);
        p = z + 1;
        break;
      }
      case 0x60:
        uleb();
        break; // addend SLEB: same encoding length
      case 0x70:
        seg = imm;
        offset = uleb();
        have_seg = true;
        break;
      case 0x80:
        offset += uleb();
        break;
      case 0x90:
        bind();
        offset += 8;
        break;
      case 0xa0:
        bind();
        offset += uleb() + 8;
        break;
      case 0xb0:
        bind();
        offset += uint64_t(imm) * 8 + 8;
        break;
      case 0xc0: {
        uint64_t count = uleb(), skip = uleb();
        if (count > cap)
          fail("repeat count " + std::to_string(count));
        for (uint64_t k = 0; k < count; ++k) {
          bind();
          offset += skip + 8;
        }
        break;
      }
      default:
        fail("opcode " + hex(op) + " is not decoded (threaded binds?)");
      }
    }
  }
  return out;
}

} // namespace

struct BinaryBuilder {
  static void macho(Binary &out, backend::MachOImage &m) {
    if (m.cpu_type == 0x0100000c) // CPU_TYPE_ARM64
      out.arch_ = Arch::Arm64;
    else if (m.cpu_type == 0x01000007) // CPU_TYPE_X86_64
      out.arch_ = Arch::X86_64;
    else
      throw Error("ANEC-BIN-003",
                  "'" + out.name_ + "': unsupported Mach-O cpu type " + std::to_string(int(m.cpu_type)));
    out.format_ = Format::MachO;
    uint64_t text_base = 0;
    for (backend::MachOImage::Segment &s : m.segments) {
      if (s.name == "__TEXT")
        text_base = s.vaddr;
      if (s.vsize == 0 || (s.init_protection == 0 && s.file_size == 0))
        continue; // __PAGEZERO
      Segment seg;
      seg.name = s.name;
      seg.vaddr = s.vaddr;
      seg.vsize = s.vsize;
      seg.executable = s.init_protection & 4;
      seg.data = std::move(s.content);
      if (seg.data.size() > seg.vsize)
        seg.data.resize(seg.vsize);
      out.segments_.push_back(std::move(seg));
      for (const Section &sec : s.sections)
        out.sections_.push_back({s.name, sec.name, sec.addr, sec.size});
    }
    if (m.uuid)
      out.uuid_ = hex_bytes(*m.uuid);
    for (const backend::MachOImage::Symbol &s : m.symbols) {
      if (s.type & 0xe0)
        continue; // N_STAB debugging entries
      if ((s.type & 0x0e) != 0x0e)
        continue; // defined in a section (N_SECT) only
      std::string plain = s.name.size() > 1 && s.name[0] == '_' ? s.name.substr(1) : s.name;
      out.symbols_.push_back({s.name, demangle(plain), s.value, 0, !(s.type & 0x01)});
    }
    if (m.function_starts)
      for (uint64_t f : *m.function_starts)
        out.function_starts_.push_back(text_base + f);
  }

  static void elf(Binary &out, backend::ElfImage &e) {
    // ELF numbers: EM_X86_64 62, EM_AARCH64 183; PT_LOAD 1, PF_X 1; STT_OBJECT 1, STT_FUNC 2;
    // STB_LOCAL 0; relocation types per machine.
    uint32_t relative, abs64, glob_dat, jump_slot;
    if (e.machine == 62) {
      out.arch_ = Arch::X86_64;
      abs64 = 1, glob_dat = 6, jump_slot = 7, relative = 8;
    } else if (e.machine == 183) {
      out.arch_ = Arch::Arm64;
      abs64 = 257, glob_dat = 1025, jump_slot = 1026, relative = 1027;
    } else {
      throw Error("ANEC-BIN-003",
                  "'" + out.name_ + "': unsupported ELF machine " + std::to_string(int(e.machine)));
    }
    out.format_ = Format::Elf;
    int n = 0;
    for (backend::ElfImage::Segment &s : e.segments) {
      if (s.type != 1)
        continue;
      Segment seg;
      seg.name = "LOAD" + std::to_string(n++);
      seg.vaddr = s.vaddr;
      seg.vsize = std::max(s.memsz, s.filesz);
      seg.executable = (s.flags & 1) != 0;
      seg.data = std::move(s.content);
      if (seg.data.size() > seg.vsize)
        seg.data.resize(seg.vsize);
      out.segments_.push_back(std::move(seg));
    }
    for (const backend::ElfImage::Section &s : e.sections)
      if (s.addr)
        out.sections_.push_back({"", s.name, s.addr, s.size});
    std::set<std::pair<std::string, uint64_t>> seen; // .symtab and .dynsym repeat exported symbols
    for (const backend::ElfImage::Symbol &s : e.symbols) {
      if (s.shndx == 0 || s.value == 0)
        continue; // undefined
      if (s.type != 2 && s.type != 1)
        continue;
      if (!seen.insert({s.name, s.value}).second)
        continue;
      out.symbols_.push_back({s.name, demangle(s.name), s.value, s.size, s.binding == 0});
      if (s.type == 2)
        out.function_starts_.push_back(s.value);
    }
    for (const backend::ElfImage::Relocation &r : e.relocations) {
      uint64_t value;
      if (r.type == relative) {
        value = uint64_t(r.addend);
      } else if (r.type == abs64 || r.type == glob_dat || r.type == jump_slot) {
        if (!r.symbol)
          continue;
        if (r.symbol->shndx == 0) {
          out.imports_.push_back({r.symbol->name, demangle(r.symbol->name), r.address});
          continue;
        }
        value = r.symbol->value + uint64_t(r.type == abs64 ? r.addend : 0);
      } else {
        continue;
      }
      for (auto &seg : out.segments_) {
        // Overflow-safe: an address near 2^64 must not wrap past the segment's end.
        if (r.address < seg.vaddr || seg.vsize < 8 || r.address - seg.vaddr > seg.vsize - 8)
          continue;
        uint64_t off = r.address - seg.vaddr;
        if (seg.data.size() < off + 8)
          seg.data.resize(off + 8, 0);
        for (int k = 0; k < 8; ++k)
          seg.data[off + k] = uint8_t(value >> (8 * k));
      }
    }
  }
};

Binary Binary::load(const std::filesystem::path &path) {
  InputFile file = InputFile::open(path, 1ull << 31); // mapped: a wrong magic costs one page
  return parse(file.bytes(), path.string());
}

Binary Binary::parse(std::span<const uint8_t> b, const std::string &name) {
  Binary out;
  out.name_ = name;
  if (b.size() < 4)
    malformed(name, "file is " + std::to_string(b.size()) + " bytes");
  const uint64_t kMachO = *layouts().get("macho.header").at("magic").value,
                 kFat = *layouts().get("fat.header").at("magic").value;
  uint32_t magic = le32(b, 0);
  try {
    if (magic == kMachO || be32(b, 0) == kFat) {
      std::span<const uint8_t> thin = magic == kMachO ? b : pick_slice(b, name);
      MachOLayout layout = check_macho(thin, name);
      auto image = backend::api().parse_macho(thin, name);
      if (!image)
        malformed(name, "LIEF found no Mach-O image");
      BinaryBuilder::macho(out, *image);
      out.imports_ = macho_binds(thin, name, layout);
    } else if (magic == 0xfeedface) {
      throw Error("ANEC-BIN-003", "'" + name + "': 32-bit Mach-O is not supported");
    } else if (magic == *layouts().get("hwx.header").at("magic").value) {
      throw Error("ANEC-BIN-002",
                  "'" + name + "' is an hwx program container (magic 0xbeefface), not a compiler binary");
    } else if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') {
      check_elf(b, name);
      auto image = backend::api().parse_elf(b, name);
      if (!image)
        malformed(name, "LIEF could not parse the ELF image");
      BinaryBuilder::elf(out, *image);
    } else {
      throw Error("ANEC-BIN-002", "'" + name + "' is neither Mach-O nor ELF (magic " + hex(magic) + ")");
    }
  } catch (const Error &) {
    throw;
  } catch (const std::exception &e) {
    malformed(name, e.what());
  }
  if (out.segments_.empty())
    malformed(name, "no loadable segment");
  out.sha256_ = sha256_hex(b); // only once the file is known to be a binary
  std::sort(out.function_starts_.begin(), out.function_starts_.end());
  out.function_starts_.erase(std::unique(out.function_starts_.begin(), out.function_starts_.end()),
                             out.function_starts_.end());
  return out;
}

bool Binary::read(uint64_t addr, std::span<uint8_t> dst) const {
  for (const Segment &s : segments_) {
    if (addr < s.vaddr || addr - s.vaddr > s.vsize || dst.size() > s.vsize - (addr - s.vaddr))
      continue;
    uint64_t off = addr - s.vaddr;
    for (size_t i = 0; i < dst.size(); ++i)
      dst[i] = off + i < s.data.size() ? s.data[off + i] : 0;
    return true;
  }
  return false;
}

bool Binary::is_executable(uint64_t addr) const {
  for (const Segment &s : segments_)
    if (addr >= s.vaddr && addr - s.vaddr < s.vsize)
      return s.executable;
  return false;
}

uint64_t Binary::function_end(uint64_t addr) const {
  for (const Symbol &s : symbols_)
    if (s.addr == addr && s.size)
      return addr + s.size;
  auto it = std::upper_bound(function_starts_.begin(), function_starts_.end(), addr);
  uint64_t seg_end = addr;
  for (const Segment &s : segments_)
    if (addr >= s.vaddr && addr - s.vaddr < s.vsize)
      seg_end = s.vaddr + s.vsize;
  for (const Section &s : sections_) // stop at the end of the section holding the code
    if (addr >= s.addr && addr - s.addr < s.size)
      seg_end = std::min(seg_end, s.addr + s.size);
  return it == function_starts_.end() ? seg_end : std::min(*it, seg_end);
}

} // namespace anec::decode
