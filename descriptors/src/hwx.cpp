#include "anec/descriptors/hwx.hpp"

#include "anec/descriptors/dump.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <charconv>
#include <map>
#include <regex>

namespace anec::desc {

namespace {
struct Reader {
  std::span<const uint8_t> b;
  void need(uint64_t off, uint64_t n, const std::string &what) const {
    if (off > b.size() || n > b.size() - off)
      throw Error("ANEC-HWX-002", what + " at " + hex(off) + "+" + hex(n) + " runs past the file end " + hex(b.size()));
  }
  uint32_t u32(uint64_t off) const {
    need(off, 4, "a field");
    return le32(b, off);
  }
  uint64_t u64(uint64_t off) const { return uint64_t(u32(off)) | uint64_t(u32(off + 4)) << 32; }
  std::string fixed(uint64_t off, size_t n) const {
    need(off, n, "a name");
    std::string s(reinterpret_cast<const char *>(&b[off]), n);
    return s.substr(0, s.find('\0'));
  }
  std::string cstr(uint64_t off, uint64_t limit) const {
    std::string s;
    for (uint64_t i = off; i < limit && i < b.size() && b[i]; ++i) s += char(b[i]);
    return s;
  }
};
} // namespace

Hwx read_hwx(std::span<const uint8_t> bytes, const TdSchema &schema) {
  Reader r{bytes};
  if (bytes.size() < 32 || r.u32(0) != 0xbeefface)
    throw Error("ANEC-HWX-001", "not an hwx container (magic " + (bytes.size() >= 4 ? hex(r.u32(0)) : std::string("missing")) + ", expected 0xbeefface)");
  Hwx h;
  h.cputype = r.u32(4);
  h.cpusubtype = r.u32(8);
  h.filetype = r.u32(12);
  uint32_t ncmds = r.u32(16), sizeofcmds = r.u32(20);
  h.flags = r.u32(24);
  r.need(32, sizeofcmds, "the load commands");
  if (ncmds > sizeofcmds / 8) throw Error("ANEC-HWX-002", std::to_string(ncmds) + " load commands cannot fit " + hex(sizeofcmds) + " bytes");
  uint64_t off = 32, cmds_end = 32ull + sizeofcmds;
  bool have_text = false;
  uint32_t symoff = 0, nsyms = 0, stroff = 0, strsize = 0;
  for (uint32_t i = 0; i < ncmds; ++i) {
    if (off + 8 > cmds_end) throw Error("ANEC-HWX-002", "load command " + std::to_string(i) + " at " + hex(off) + " runs past sizeofcmds");
    HwxCommand c{r.u32(off), r.u32(off + 4), off};
    if (c.size < 8 || off + c.size > cmds_end)
      throw Error("ANEC-HWX-002", "load command " + std::to_string(i) + " (" + hex(c.cmd) + ") at " + hex(off) + " has size " + hex(c.size));
    auto need = [&](uint32_t n) {
      if (c.size < n) throw Error("ANEC-HWX-002", "load command " + hex(c.cmd) + " at " + hex(off) + " is " + hex(c.size) + " bytes, needs " + hex(n));
    };
    if (c.cmd == 0x19) { // LC_SEGMENT_64
      need(72);
      HwxSegment s;
      s.name = r.fixed(off + 8, 16);
      s.vmaddr = r.u64(off + 24);
      s.vmsize = r.u64(off + 32);
      s.fileoff = r.u64(off + 40);
      s.filesize = r.u64(off + 48);
      s.maxprot = r.u32(off + 56);
      s.initprot = r.u32(off + 60);
      uint32_t nsects = r.u32(off + 64);
      s.flags = r.u32(off + 68);
      if (72ull + 80ull * nsects > c.size) throw Error("ANEC-HWX-002", "segment " + s.name + " lists " + std::to_string(nsects) + " sections in " + hex(c.size) + " bytes");
      r.need(s.fileoff, s.filesize, "segment " + s.name);
      for (uint32_t k = 0; k < nsects; ++k) {
        uint64_t so = off + 72 + 80ull * k;
        HwxSection x;
        x.name = r.fixed(so, 16);
        x.segment = r.fixed(so + 16, 16);
        x.addr = r.u64(so + 32);
        x.size = r.u64(so + 40);
        x.offset = r.u32(so + 48);
        x.align = r.u32(so + 52);
        x.reloff = r.u32(so + 56);
        x.nreloc = r.u32(so + 60);
        x.flags = r.u32(so + 64);
        if (x.offset) r.need(x.offset, x.size, "section " + x.segment + "." + x.name);
        if (x.segment == "__TEXT" && x.name == "__text") {
          h.text = x;
          have_text = true;
        }
        s.sections.push_back(x);
      }
      h.segments.push_back(std::move(s));
    } else if (c.cmd == 0x6) { // tensor name, LC_IDFVMLIB-shaped: name offset, minor version, address
      need(20);
      uint32_t name_off = r.u32(off + 8);
      if (name_off < 20 || name_off >= c.size) throw Error("ANEC-HWX-002", "tensor-name command at " + hex(off) + " puts its name at " + hex(name_off));
      h.tensors.push_back({0x6, r.u32(off + 16), 0, r.cstr(off + name_off, off + c.size)});
    } else if (c.cmd == 0x40) { // tensor name: u32 name offset, u32 0, u64 address
      need(24);
      uint32_t name_off = r.u32(off + 8);
      if (name_off < 24 || name_off >= c.size)
        throw Error("ANEC-HWX-002",
                    "tensor-name command at " + hex(off) + " puts its name at " + hex(name_off));
      h.tensors.push_back({0x40, r.u64(off + 16), 0, r.cstr(off + name_off, off + c.size)});
    } else if (c.cmd == 0x4 && c.size >= 16 + 0x830 && r.u32(off + 8) == 1 && 16ull + 4ull * r.u32(off + 12) <= c.size &&
               r.u32(off + 12) * 4ull >= 0x830) { // program state
      HwxProgramState p;
      uint64_t w = off + 16, n = 4ull * r.u32(off + 12);
      p.offset = off;
      for (size_t k = 0; k < HwxProgramState::kBars; ++k) p.bars[k] = r.u64(w + 8 * k);
      p.td_base = r.u64(w + 0x800);
      p.td_words_minus_one = r.u32(w + 0x808);
      p.td_count = r.u32(w + 0x80c);
      uint32_t name_off = r.u32(w + 0x82c);
      if (name_off >= 16 + n && name_off < c.size) p.name = r.cstr(off + name_off, off + c.size);
      for (uint64_t k = 8 * HwxProgramState::kBars; k < n; k += 4)
        if (k != 0x800 && k != 0x804 && k != 0x808 && k != 0x80c && k != 0x82c && r.u32(w + k)) p.other.push_back({uint32_t(k), r.u32(w + k)});
      if (h.program) h.chain.findings.push_back({"ANEC-HWX-102", off, "a second program state; the first is kept"});
      else h.program = std::move(p);
    } else if (c.cmd == 0x8) { // build banner
      h.banner = r.cstr(off + 8, off + c.size);
    } else if (c.cmd == 0x4 && c.size >= 16 + 30 * 4 && r.u32(off + 8) == 3 && r.u32(off + 12) >= 30 &&
               16 + 4ull * r.u32(off + 12) <= c.size) { // per-tensor thread state
      HwxTensorState t;
      // The short name (word 27) is the one the stabs layouts carry; the long one (word 4) may add
      // a role ("matmul_0@output").
      uint64_t w = off + 16, name_off = r.u32(w + 4 * 27) ? r.u32(w + 4 * 27) : r.u32(w + 4 * 4);
      t.offset = off;
      t.direction = r.u32(w + 4 * 1);
      t.dtype_index = r.u32(w + 4 * 5);
      for (int k = 0; k < 4; ++k) {
        t.extents[k] = r.u32(w + 4 * (6 + k));
        t.strides[k] = r.u64(w + 4 * (16 + 2 * k));
      }
      if (name_off >= 16 + 4ull * r.u32(off + 12) && name_off < c.size)
        t.name = r.cstr(off + name_off, off + c.size);
      h.states.push_back(std::move(t));
    } else if (c.cmd == 0x2) { // LC_SYMTAB
      need(24);
      symoff = r.u32(off + 8);
      nsyms = r.u32(off + 12);
      stroff = r.u32(off + 16);
      strsize = r.u32(off + 20);
      r.need(symoff, uint64_t(nsyms) * 16, "the symbol table");
      r.need(stroff, strsize, "the string table");
    }
    h.commands.push_back(c);
    off += c.size;
  }
  for (uint32_t k = 0; k < nsyms; ++k) {
    uint64_t so = symoff + 16ull * k;
    HwxSymbol s;
    uint32_t strx = r.u32(so);
    s.type = bytes[so + 4];
    s.sect = bytes[so + 5];
    s.desc = uint16_t(bytes[so + 6] | bytes[so + 7] << 8);
    s.value = r.u64(so + 8);
    if (strx >= strsize) throw Error("ANEC-HWX-002", "symbol " + std::to_string(k) + " names string " + hex(strx) + " past the string table");
    s.name = r.cstr(stroff + strx, uint64_t(stroff) + strsize);
    h.symbols.push_back(std::move(s));
  }
  // Tensor layouts from the stabs shape strings, element types from the catalogue.
  std::map<std::string, std::string> types; // "5" -> "float16"
  for (const HwxSymbol &sym : h.symbols) {
    size_t colon = sym.name.find(":t");
    if (sym.type != 0x80 || colon == std::string::npos) continue;
    size_t eq = sym.name.find('=', colon);
    types[sym.name.substr(colon + 2, eq == std::string::npos ? std::string::npos : eq - colon - 2)] = sym.name.substr(0, colon);
  }
  static const std::regex axis(R"(ar1;0;(\d+);\d+=s(\d+)([a-z]):)");
  for (const HwxSymbol &sym : h.symbols) {
    if (sym.type != 0x20) continue;
    size_t colon = sym.name.find(':');
    size_t last = sym.name.rfind(':');
    if (colon == std::string::npos || last == colon) {
      h.chain.findings.push_back({"ANEC-HWX-101", 0, "shape string of '" + sym.name + "' is not understood"});
      continue;
    }
    HwxTensor t;
    t.name = sym.name.substr(0, colon);
    std::string body = sym.name.substr(colon);
    bool fits = true;
    auto number = [&](const std::ssub_match &m) {
      uint64_t v = 0;
      const char *begin = &*m.first;
      fits &= std::from_chars(begin, begin + m.length(), v).ec == std::errc();
      return v;
    };
    for (auto it = std::sregex_iterator(body.begin(), body.end(), axis); it != std::sregex_iterator(); ++it) {
      t.extents.push_back({(*it)[3].str()[0], number((*it)[1])});
      t.strides.push_back(number((*it)[2]));
    }
    if (!fits) {
      h.chain.findings.push_back({"ANEC-HWX-101", 0, "shape string of '" + t.name + "' has a number past 64 bits"});
      continue;
    }
    std::string type_index = sym.name.substr(last + 1);
    t.dtype = types.count(type_index) ? types[type_index] : "t" + type_index;
    for (const HwxTensorName &n : h.tensors)
      if (n.name == t.name) t.vmaddr = n.vmaddr;
    if (t.extents.empty()) h.chain.findings.push_back({"ANEC-HWX-101", 0, "shape string of '" + t.name + "' has no axis"});
    h.layouts.push_back(std::move(t));
  }
  for (HwxTensorName &t : h.tensors)
    for (const HwxSegment &g : h.segments)
      for (const HwxSection &x : g.sections)
        if (x.addr == t.vmaddr && g.name == "__FVMLIB") t.bytes = x.size;
  if (!have_text) throw Error("ANEC-HWX-003", "the container has no __TEXT.__text section");
  r.need(h.text.reloff, uint64_t(h.text.nreloc) * 8, "the __text relocations");
  std::vector<Finding> layout_findings = std::move(h.chain.findings);
  if (schema.walkable())
    h.chain = decode_raw_chain(bytes, schema, {}, h.text.offset, uint64_t(h.text.offset) + h.text.size);
  else {
    h.chain_not_decoded = "no register database walks the descriptors of generation " +
                          std::to_string(schema.generation);
    auto text = bytes.subspan(h.text.offset, h.text.size); // bounds checked with the section
    h.chain_raw.assign(text.begin(), text.end());
  }
  h.chain.findings.insert(h.chain.findings.end(), layout_findings.begin(), layout_findings.end());
  for (uint32_t k = 0; k < h.text.nreloc; ++k) {
    uint64_t ro = h.text.reloff + 8ull * k;
    uint32_t info = r.u32(ro + 4);
    HwxReloc x;
    x.address = r.u32(ro);
    x.symbolnum = info & 0xffffff;
    x.pcrel = (info >> 24) & 1;
    x.length = uint8_t((info >> 25) & 3);
    x.external = (info >> 27) & 1;
    x.type = uint8_t(info >> 28);
    if (x.external) {
      if (x.symbolnum >= h.symbols.size())
        throw Error("ANEC-HWX-002", "relocation " + std::to_string(k) + " names symbol " + std::to_string(x.symbolnum) + " of " + std::to_string(h.symbols.size()));
      x.symbol = h.symbols[x.symbolnum].name;
    } else { // sections are numbered from 1 in load-command order
      uint32_t n = 0;
      for (const HwxSegment &g : h.segments)
        for (const HwxSection &sec : g.sections)
          if (++n == x.symbolnum) x.symbol = sec.segment + "." + sec.name;
      if (x.symbol.empty()) throw Error("ANEC-HWX-002", "relocation " + std::to_string(k) + " names section " + std::to_string(x.symbolnum));
    }
    if (const Word *w = find_word(h.chain, uint64_t(h.text.offset) + x.address))
      x.target = w->fields.empty() ? w->block + "." + hex(w->address) : w->fields.front().field->block + "." + w->fields.front().field->reg;
    h.relocations.push_back(std::move(x));
  }
  return h;
}

std::string hwx_what_is(const Hwx &h, uint64_t a) {
  for (const HwxTensorName &t : h.tensors)
    if (t.vmaddr == a) return t.name;
  for (const HwxSegment &g : h.segments)
    for (const HwxSection &x : g.sections)
      if (x.addr == a) return x.segment + "." + x.name;
  return "";
}

namespace {
bool known_command(const Hwx &h, const HwxCommand &c) {
  if (c.cmd == 0x19 || c.cmd == 0x6 || c.cmd == 0x40 || c.cmd == 0x8 || c.cmd == 0x2) return true;
  if (h.program && h.program->offset == c.offset) return true;
  for (const HwxTensorState &t : h.states)
    if (t.offset == c.offset) return true;
  return false;
}
} // namespace

std::string hwx_text(const Hwx &h, const TdSchema &s, std::optional<size_t> only) {
  std::string out = "hwx container: cputype " + hex(h.cputype) + ", cpusubtype " + hex(h.cpusubtype) + ", filetype " + hex(h.filetype) +
                    ", " + std::to_string(h.commands.size()) + " load commands\n";
  if (!h.banner.empty()) out += "banner: " + h.banner.substr(0, h.banner.find('\n', h.banner.find('\n') + 1)) + "\n";
  for (const HwxSegment &g : h.segments) {
    out += "segment " + g.name + " vm " + hex(g.vmaddr) + "+" + hex(g.vmsize) + " file " + hex(g.fileoff) + "+" + hex(g.filesize) + "\n";
    for (const HwxSection &x : g.sections)
      out += "  section " + x.segment + "." + x.name + " " + hex(x.addr) + "+" + hex(x.size) + " at " + hex(x.offset) + ", " +
             std::to_string(x.nreloc) + " relocations\n";
  }
  for (const HwxCommand &c : h.commands)
    if (!known_command(h, c)) out += "load command " + hex(c.cmd) + " at " + hex(c.offset) + ", " + hex(c.size) + " bytes, kept raw\n";
  for (const HwxTensorName &t : h.tensors)
    out += "tensor " + t.name + " at " + hex(t.vmaddr) +
           (t.cmd == 0x40 ? ", " + std::to_string(t.bytes) + " bytes (command 0x40)" : std::string()) + "\n";
  if (const auto &p = h.program) {
    out += "program " + (p->name.empty() ? std::string("(unnamed)") : p->name) + ": chain at " + hex(p->td_base) + ", " + std::to_string(p->td_count) +
           " descriptor(s) of " + hex((p->td_words_minus_one + 1ull) * 4) + " bytes\n";
    for (size_t k = 0; k < HwxProgramState::kBars; ++k)
      if (p->bars[k]) {
        std::string what = hwx_what_is(h, p->bars[k]);
        out += "  bar " + std::to_string(k) + " " + hex(p->bars[k]) + (what.empty() ? "" : " " + what) + "\n";
      }
    for (auto [at, v] : p->other) out += "  state word +" + hex(at) + " = " + hex(v) + "\n";
  }
  for (const HwxTensor &t : h.layouts) {
    out += "layout " + t.name + " " + t.dtype + " [";
    for (size_t i = 0; i < t.extents.size(); ++i) out += (i ? " " : "") + std::string(1, t.extents[i].first) + "=" + std::to_string(t.extents[i].second);
    out += "] strides [";
    for (size_t i = 0; i < t.strides.size(); ++i) out += (i ? " " : "") + std::to_string(t.strides[i]);
    out += "]" + (t.vmaddr ? " at " + hex(t.vmaddr) : std::string()) + "\n";
  }
  for (const HwxTensorState &t : h.states)
    out += "state " + t.name + " " + (t.direction == 1 ? "input" : t.direction == 2 ? "output" : "direction " + std::to_string(t.direction)) +
           " type t" + std::to_string(t.dtype_index) + " [" + std::to_string(t.extents[0]) + " " + std::to_string(t.extents[1]) + " " +
           std::to_string(t.extents[2]) + " " + std::to_string(t.extents[3]) + "] strides [" + std::to_string(t.strides[0]) + " " +
           std::to_string(t.strides[1]) + " " + std::to_string(t.strides[2]) + " " + std::to_string(t.strides[3]) + "]\n";
  out += std::to_string(h.symbols.size()) + " symbols\n";
  for (const HwxSymbol &sym : h.symbols)
    out += "  " + hex(sym.value) + " type " + hex(sym.type) + " sect " + std::to_string(sym.sect) + " desc " + hex(sym.desc) + "  " + sym.name + "\n";
  for (const HwxReloc &x : h.relocations)
    out += "relocation __text+" + hex(x.address) + " -> " + x.symbol + " (" +
           (x.target.empty() ? "no decoded word" : x.target) + ")\n";
  if (!h.chain_not_decoded.empty())
    return out + "\ndescriptor chain (__text at " + hex(h.text.offset) + ", " + std::to_string(h.text.size) +
           " bytes): not decoded, " + h.chain_not_decoded + "\n" + hex_rows(h.chain_raw, h.text.offset);
  return out + "\n" + dump_text(h.chain, s, only);
}

Doc hwx_doc(const Hwx &h, const TdSchema &s, std::span<const uint8_t> file, std::optional<size_t> only) {
  Doc d = dump_doc(h.chain, s, file, only);
  d.set("container", Doc::string("hwx"));
  if (!h.chain_not_decoded.empty()) d.set("chain_not_decoded", Doc::string(h.chain_not_decoded));
  d.set("cpusubtype", Doc::integer(h.cpusubtype));
  Doc tensors = Doc::array();
  for (const HwxTensorName &t : h.tensors) {
    Doc x = Doc::table();
    x.set("name", Doc::string(t.name));
    x.set("command", Doc::integer(t.cmd));
    x.set("vmaddr", Doc::integer(int64_t(t.vmaddr)));
    if (t.cmd == 0x40) x.set("bytes", Doc::integer(int64_t(t.bytes)));
    tensors.push(std::move(x));
  }
  d.set("tensors", std::move(tensors));
  if (const auto &p = h.program) {
    Doc x = Doc::table();
    x.set("name", Doc::string(p->name));
    x.set("td_base", Doc::integer(int64_t(p->td_base)));
    x.set("td_bytes", Doc::integer(int64_t((p->td_words_minus_one + 1ull) * 4)));
    x.set("td_count", Doc::integer(p->td_count));
    Doc bars = Doc::array();
    for (size_t k = 0; k < HwxProgramState::kBars; ++k)
      if (p->bars[k]) {
        Doc b = Doc::table();
        b.set("slot", Doc::integer(int64_t(k)));
        b.set("vmaddr", Doc::integer(int64_t(p->bars[k])));
        b.set("holds", Doc::string(hwx_what_is(h, p->bars[k])));
        bars.push(std::move(b));
      }
    x.set("bars", std::move(bars));
    Doc other = Doc::array();
    for (auto [at, v] : p->other) {
      Doc o = Doc::table();
      o.set("state_offset", Doc::integer(at));
      o.set("value", Doc::integer(v));
      other.push(std::move(o));
    }
    x.set("other_words", std::move(other));
    d.set("program", std::move(x));
  }
  Doc layouts = Doc::array();
  for (const HwxTensor &t : h.layouts) {
    Doc x = Doc::table();
    x.set("name", Doc::string(t.name));
    x.set("dtype", Doc::string(t.dtype));
    Doc shape = Doc::table(), strides = Doc::table();
    for (size_t i = 0; i < t.extents.size(); ++i) {
      std::string a(1, t.extents[i].first);
      shape.set(a, Doc::integer(int64_t(t.extents[i].second)));
      strides.set(a, Doc::integer(int64_t(t.strides[i])));
    }
    x.set("shape", std::move(shape));
    x.set("stride_bytes", std::move(strides));
    x.set("vmaddr", Doc::integer(int64_t(t.vmaddr)));
    layouts.push(std::move(x));
  }
  d.set("layouts", std::move(layouts));
  Doc states = Doc::array();
  for (const HwxTensorState &t : h.states) {
    Doc x = Doc::table();
    x.set("name", Doc::string(t.name));
    x.set("direction", Doc::string(t.direction == 1 ? "input" : t.direction == 2 ? "output" : std::to_string(t.direction)));
    x.set("dtype_index", Doc::integer(t.dtype_index));
    Doc ext = Doc::array(), str = Doc::array();
    for (int k = 0; k < 4; ++k) {
      ext.push(Doc::integer(int64_t(t.extents[k])));
      str.push(Doc::integer(int64_t(t.strides[k])));
    }
    x.set("extents_nchw", std::move(ext));
    x.set("stride_bytes_nchw", std::move(str));
    states.push(std::move(x));
  }
  d.set("tensor_states", std::move(states));
  Doc relocs = Doc::array();
  for (const HwxReloc &x : h.relocations) {
    Doc r = Doc::table();
    r.set("address", Doc::integer(x.address));
    r.set("symbol", Doc::string(x.symbol));
    r.set("target", Doc::string(x.target));
    relocs.push(std::move(r));
  }
  d.set("relocations", std::move(relocs));
  Doc syms = Doc::array();
  for (const HwxSymbol &sym : h.symbols) syms.push(Doc::string(sym.name));
  d.set("symbols", std::move(syms));
  return d;
}

} // namespace anec::desc
