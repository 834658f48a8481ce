#include "anec/descriptors/hwx.hpp"

#include "anec/descriptors/dump.hpp"
#include "anec/layout/layout.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

#include <charconv>
#include <map>
#include <regex>

namespace anec::desc {

namespace {
constexpr const char *kBad = "ANEC-HWX-002"; // truncated or inconsistent structure

const layout::Database &db() {
  return layout::Database::builtin();
} // tables/schema/layout/hwx.toml

// NUL-terminated text from `off`, not past `limit`.
std::string cstr(std::span<const uint8_t> b, uint64_t off, uint64_t limit) {
  std::string s;
  for (uint64_t i = off; i < limit && i < b.size() && b[i]; ++i)
    s += char(b[i]);
  return s;
}

void need(std::span<const uint8_t> b, uint64_t off, uint64_t n, const std::string &what) {
  if (off > b.size() || n > b.size() - off)
    throw Error(kBad, what + " at " + hex(off) + "+" + hex(n) + " runs past the file end " + hex(b.size()));
}

// The string a command names by its offset from the command's start, when that offset lies in the
// command past `after` (its fixed part).
std::string name_in(const layout::View &c, uint64_t name_off, uint64_t after) {
  uint64_t size = c.get("cmdsize");
  if (name_off < after || name_off >= size)
    return "";
  return cstr(c.bytes(), c.at() + name_off, c.at() + size);
}

// Where a thread state's words end, from the command's start: its head, then `count` words.
uint64_t state_end(const layout::View &c) {
  return db().get("hwx.thread").bytes + 4 * c.get("count");
}

// Nonzero state words that no field of the layout names, by offset from the state's first word.
std::vector<std::pair<uint32_t, uint32_t>> unnamed_words(const layout::View &c, uint64_t first,
                                                         uint64_t words) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  const layout::Struct &s = c.layout();
  for (uint64_t k = 0; k < 4 * words; k += 4) {
    uint64_t at = first + k;
    if (at < s.bytes && !s.field_at(at).empty())
      continue;
    if (uint32_t v = le32(c.bytes(), c.at() + at))
      out.push_back({uint32_t(k), v});
  }
  return out;
}

HwxSegment read_segment(const layout::View &c, std::span<const uint8_t> file, Hwx &h, bool &have_text) {
  HwxSegment s;
  s.name = c.chars("segname");
  s.vmaddr = c.get("vmaddr");
  s.vmsize = c.get("vmsize");
  s.fileoff = c.get("fileoff");
  s.filesize = c.get("filesize");
  s.maxprot = uint32_t(c.get("maxprot"));
  s.initprot = uint32_t(c.get("initprot"));
  s.flags = uint32_t(c.get("flags"));
  uint64_t nsects = c.get("nsects");
  const layout::Struct &sect = db().get("macho.section_64");
  if (c.layout().bytes + sect.bytes * nsects > c.get("cmdsize"))
    throw Error(kBad, "segment " + s.name + " lists " + std::to_string(nsects) + " sections in " +
                          hex(c.get("cmdsize")) + " bytes");
  need(file, s.fileoff, s.filesize, "segment " + s.name);
  for (uint64_t k = 0; k < nsects; ++k) {
    layout::View v(sect, c.bytes(), c.end() + sect.bytes * k, kBad);
    HwxSection x;
    x.name = v.chars("sectname");
    x.segment = v.chars("segname");
    x.addr = v.get("addr");
    x.size = v.get("size");
    x.offset = uint32_t(v.get("offset"));
    x.align = uint32_t(v.get("align"));
    x.reloff = uint32_t(v.get("reloff"));
    x.nreloc = uint32_t(v.get("nreloc"));
    x.flags = uint32_t(v.get("flags"));
    if (x.offset)
      need(file, x.offset, x.size, "section " + x.segment + "." + x.name);
    if (x.segment == "__TEXT" && x.name == "__text") {
      h.text = x;
      have_text = true;
    }
    s.sections.push_back(x);
  }
  return s;
}

HwxProgramState read_program(const layout::View &c) {
  HwxProgramState p;
  const std::string &kind = c.layout().name;
  bool segment = kind == "hwx.segment_state";
  p.flavor = uint32_t(c.get("flavor"));
  p.offset = c.at();
  for (uint32_t k = 0; k < HwxProgramState::kBars; ++k)
    p.bars[k] = segment ? c.get("bases", {k, 0}) : c.get("bases", {k});
  p.td_base = c.get(segment ? "segment_base" : "td_base");
  p.td_count = uint32_t(c.get("td_count"));
  p.ene = uint32_t(c.get("ene"));
  if (segment) {
    p.prefix_words = uint32_t(c.get("prefix_words"));
    p.segment_words = uint32_t(c.get("segment_words"));
  } else {
    p.td_bytes = 4 * c.get("td_words");
  }
  p.name = name_in(c, c.get("name_offset"), state_end(c));
  p.other = unnamed_words(c, db().get("hwx.thread").bytes, c.get("count"));
  return p;
}

HwxTensorState read_tensor_state(const layout::View &c) {
  HwxTensorState t;
  t.offset = c.at();
  t.direction = uint32_t(c.get("direction"));
  t.dtype_index = uint32_t(c.get("dtype_index"));
  for (uint32_t k = 0; k < 4; ++k) {
    t.extents[k] = c.get("extents", {k});
    t.strides[k] = c.get("strides", {k});
  }
  t.bytes = c.get("bytes");
  // The short name is the one the stabs layouts carry; the long one may add a role
  // ("matmul_0@output").
  uint64_t end_of_state = state_end(c);
  t.name = name_in(c, c.get("short_name_offset"), end_of_state);
  if (t.name.empty())
    t.name = name_in(c, c.get("long_name_offset"), end_of_state);
  return t;
}

struct SymbolTable {
  uint64_t symoff = 0, nsyms = 0, stroff = 0, strsize = 0;
};

// One load command into `h`; unknown ones are only listed (kept raw).
// A thread state's words must lie inside its command.
void check_state_words(const layout::View &c) {
  if (state_end(c) > c.get("cmdsize"))
    throw Error(kBad, "thread state at " + hex(c.at()) + " counts " + std::to_string(c.get("count")) +
                          " words in " + hex(c.get("cmdsize")) + " bytes");
}

// Returns the name of the layout the command was read with, "" when it is kept raw.
std::string read_command(const layout::View &head, std::span<const uint8_t> file, Hwx &h, bool &have_text,
                         SymbolTable &symtab) {
  std::span<const uint8_t> cmd =
      head.bytes().first(head.at() + head.get("cmdsize")); // a command's fields stay inside it
  const layout::Struct *s = db().variant("macho.load_command", cmd, head.at());
  if (!s && !db().enumeration("macho_load_command")->name_of(head.get("cmd")).starts_with("unknown"))
    throw Error(kBad, "load command " + hex(head.get("cmd")) + " at " + hex(head.at()) + " is " +
                          hex(head.get("cmdsize")) + " bytes, too short for its kind");
  if (s && s->name == "hwx.thread") { // an unknown flavor, or a state too short for its flavor, stays raw
    const layout::Struct *state = db().variant("hwx.thread", cmd, head.at());
    if (!state)
      return s->name;
    s = state;
  }
  if (!s)
    return "";
  layout::View c(*s, cmd, head.at(), kBad);
  if (s->name == "macho.segment_64") {
    h.segments.push_back(read_segment(c, file, h, have_text));
  } else if (s->name == "hwx.tensor_name_fvmlib" || s->name == "hwx.tensor_name") {
    uint64_t name_off = c.get("name_offset");
    if (name_off < s->bytes || name_off >= c.get("cmdsize"))
      throw Error(kBad, "tensor-name command at " + hex(c.at()) + " puts its name at " + hex(name_off));
    h.tensors.push_back({uint32_t(c.get("cmd")), c.get("address"), 0, name_in(c, name_off, s->bytes)});
  } else if (s->name == "hwx.ident") {
    h.banner = cstr(cmd, c.end(), cmd.size());
  } else if (s->name == "macho.symtab") {
    symtab = {c.get("symoff"), c.get("nsyms"), c.get("stroff"), c.get("strsize")};
    need(file, symtab.symoff, symtab.nsyms * db().get("macho.nlist_64").bytes, "the symbol table");
    need(file, symtab.stroff, symtab.strsize, "the string table");
  } else if (s->name == "hwx.program_state" || s->name == "hwx.segment_state") {
    check_state_words(c);
    if (h.program)
      h.chain.findings.push_back(
          finding_at("ANEC-HWX-102", c.at(), "a second program state; the first is kept"));
    else
      h.program = read_program(c);
  } else if (s->name == "hwx.tensor_state") {
    check_state_words(c);
    h.states.push_back(read_tensor_state(c));
  }
  return s->name;
}

void read_symbols(std::span<const uint8_t> bytes, const SymbolTable &t, Hwx &h) {
  const layout::Struct &nlist = db().get("macho.nlist_64");
  for (uint64_t k = 0; k < t.nsyms; ++k) {
    layout::View v(nlist, bytes, t.symoff + nlist.bytes * k, kBad);
    HwxSymbol s;
    uint64_t strx = v.get("strx");
    s.type = uint8_t(v.get("type"));
    s.sect = uint8_t(v.get("sect"));
    s.desc = uint16_t(v.get("desc"));
    s.value = v.get("value");
    if (strx >= t.strsize)
      throw Error(kBad,
                  "symbol " + std::to_string(k) + " names string " + hex(strx) + " past the string table");
    s.name = cstr(bytes, t.stroff + strx, t.stroff + t.strsize);
    h.symbols.push_back(std::move(s));
  }
}
} // namespace

Hwx read_hwx(std::span<const uint8_t> bytes, const TdSchema &schema) {
  const layout::Struct &header = db().get("hwx.header"), &command = db().get("macho.load_command");
  uint64_t magic = bytes.size() >= 4 ? load_le(bytes, 0, 4) : 0;
  if (magic != *header.at("magic").value)
    throw Error("ANEC-HWX-001", "not an hwx container (magic " +
                                    (bytes.size() >= 4 ? hex(magic) : std::string("missing")) +
                                    ", expected " + hex(*header.at("magic").value) + ")");
  if (bytes.size() < header.bytes)
    throw Error("ANEC-HWX-001", "hwx header cut short: " + std::to_string(bytes.size()) +
                                    " bytes, the header is " + std::to_string(header.bytes));
  layout::View hv(header, bytes, 0, kBad);
  Hwx h;
  h.cputype = uint32_t(hv.get("cputype"));
  h.cpusubtype = uint32_t(hv.get("cpusubtype"));
  h.filetype = uint32_t(hv.get("filetype"));
  h.flags = uint32_t(hv.get("flags"));
  uint64_t ncmds = hv.get("ncmds"), sizeofcmds = hv.get("sizeofcmds");
  need(bytes, header.bytes, sizeofcmds, "the load commands");
  if (ncmds > sizeofcmds / command.bytes)
    throw Error(kBad, std::to_string(ncmds) + " load commands cannot fit " + hex(sizeofcmds) + " bytes");
  std::span<const uint8_t> cmds = bytes.first(header.bytes + sizeofcmds);
  uint64_t off = header.bytes;
  bool have_text = false;
  SymbolTable symtab;
  for (uint64_t i = 0; i < ncmds; ++i) {
    if (off + command.bytes > cmds.size())
      throw Error(kBad, "load command " + std::to_string(i) + " at " + hex(off) + " runs past sizeofcmds");
    layout::View head(command, cmds, off, kBad);
    HwxCommand c{uint32_t(head.get("cmd")), uint32_t(head.get("cmdsize")), off, ""};
    if (c.size < command.bytes || off + c.size > cmds.size())
      throw Error(kBad, "load command " + std::to_string(i) + " (" + hex(c.cmd) + ") at " + hex(off) +
                            " has size " + hex(c.size));
    c.layout = read_command(head, bytes, h, have_text, symtab);
    h.commands.push_back(c);
    off += c.size;
  }
  read_symbols(bytes, symtab, h);
  // Tensor layouts from the stabs shape strings, element types from the catalogue.
  std::map<std::string, std::string> types; // "5" -> "float16"
  for (const HwxSymbol &sym : h.symbols) {
    size_t colon = sym.name.find(":t");
    if (sym.type != 0x80 || colon == std::string::npos)
      continue;
    size_t eq = sym.name.find('=', colon);
    types[sym.name.substr(colon + 2, eq == std::string::npos ? std::string::npos : eq - colon - 2)] =
        sym.name.substr(0, colon);
  }
  static const std::regex axis(R"(ar1;0;(\d+);\d+=s(\d+)([a-z]):)");
  for (const HwxSymbol &sym : h.symbols) {
    if (sym.type != 0x20)
      continue;
    size_t colon = sym.name.find(':');
    size_t last = sym.name.rfind(':');
    if (colon == std::string::npos || last == colon) {
      h.chain.findings.push_back(
          finding_at("ANEC-HWX-101", 0, "shape string of '" + sym.name + "' is not understood"));
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
      h.chain.findings.push_back(
          finding_at("ANEC-HWX-101", 0, "shape string of '" + t.name + "' has a number past 64 bits"));
      continue;
    }
    std::string type_index = sym.name.substr(last + 1);
    t.dtype = types.count(type_index) ? types[type_index] : "t" + type_index;
    for (const HwxTensorName &n : h.tensors)
      if (n.name == t.name)
        t.vmaddr = n.vmaddr;
    if (t.extents.empty())
      h.chain.findings.push_back(
          finding_at("ANEC-HWX-101", 0, "shape string of '" + t.name + "' has no axis"));
    h.layouts.push_back(std::move(t));
  }
  for (HwxTensorName &t : h.tensors)
    for (const HwxSegment &g : h.segments)
      for (const HwxSection &x : g.sections)
        if (x.addr == t.vmaddr && g.name == "__FVMLIB")
          t.bytes = x.size;
  if (!have_text)
    throw Error("ANEC-HWX-003", "the container has no __TEXT.__text section");
  need(bytes, h.text.reloff, uint64_t(h.text.nreloc) * db().get("macho.relocation_info").bytes,
       "the __text relocations");
  std::vector<Finding> layout_findings = std::move(h.chain.findings);
  // A chain that does not walk under the database (damaged, or of another layout than the
  // database's) is shown raw with a finding, like one no database describes: the container is
  // still read whole.
  try {
    if (schema.walkable())
      h.chain = decode_raw_chain(bytes, schema, {}, h.text.offset, uint64_t(h.text.offset) + h.text.size);
    else
      h.chain_not_decoded =
          "no register database walks the descriptors of generation " + std::to_string(schema.generation);
  } catch (const Error &e) {
    if (!e.code().starts_with("ANEC-TD-"))
      throw;
    h.chain = Chain{};
    h.chain_not_decoded =
        "the generation-" + std::to_string(schema.generation) + " database does not walk it: " + e.what();
    h.chain.findings.push_back(finding_at("ANEC-HWX-103", h.text.offset, h.chain_not_decoded));
  }
  if (!h.chain_not_decoded.empty()) {
    auto text = bytes.subspan(h.text.offset, h.text.size); // bounds checked with the section
    h.chain_raw.assign(text.begin(), text.end());
  }
  h.chain.findings.insert(h.chain.findings.end(), layout_findings.begin(), layout_findings.end());
  const layout::Struct &reloc = db().get("macho.relocation_info");
  for (uint32_t k = 0; k < h.text.nreloc; ++k) {
    layout::View v(reloc, bytes, h.text.reloff + uint64_t(reloc.bytes) * k, kBad);
    HwxReloc x;
    x.address = uint32_t(v.get("address"));
    x.symbolnum = uint32_t(v.get("symbolnum"));
    x.pcrel = v.get("pcrel");
    x.length = uint8_t(v.get("length"));
    x.external = v.get("external");
    x.type = uint8_t(v.get("type"));
    if (x.external) {
      if (x.symbolnum >= h.symbols.size())
        throw Error("ANEC-HWX-002", "relocation " + std::to_string(k) + " names symbol " +
                                        std::to_string(x.symbolnum) + " of " +
                                        std::to_string(h.symbols.size()));
      x.symbol = h.symbols[x.symbolnum].name;
    } else { // sections are numbered from 1 in load-command order
      uint32_t n = 0;
      for (const HwxSegment &g : h.segments)
        for (const HwxSection &sec : g.sections)
          if (++n == x.symbolnum)
            x.symbol = sec.segment + "." + sec.name;
      if (x.symbol.empty())
        throw Error("ANEC-HWX-002",
                    "relocation " + std::to_string(k) + " names section " + std::to_string(x.symbolnum));
    }
    if (const Word *w = find_word(h.chain, uint64_t(h.text.offset) + x.address))
      x.target = w->fields.empty() ? w->block + "." + hex(w->address)
                                   : w->fields.front().field->block + "." + w->fields.front().field->reg;
    h.relocations.push_back(std::move(x));
  }
  return h;
}

std::string hwx_what_is(const Hwx &h, uint64_t a) {
  for (const HwxTensorName &t : h.tensors)
    if (t.vmaddr == a)
      return t.name;
  for (const HwxSegment &g : h.segments)
    for (const HwxSection &x : g.sections)
      if (x.addr == a)
        return x.segment + "." + x.name;
  return "";
}

namespace {
bool known_command(const Hwx &h, const HwxCommand &c) {
  if (c.cmd == 0x19 || c.cmd == 0x6 || c.cmd == 0x40 || c.cmd == 0x8 || c.cmd == 0x2)
    return true;
  if (h.program && h.program->offset == c.offset)
    return true;
  for (const HwxTensorState &t : h.states)
    if (t.offset == c.offset)
      return true;
  return false;
}
} // namespace

namespace {
// A tensor state's direction by the layout table's enum (tables/schema/layout/hwx.toml).
std::string direction_name(uint64_t direction) {
  return db().enumeration("hwx_tensor_direction")->name_of(direction);
}
} // namespace

namespace {
// What the text says of the container's Mach-O structure: its header, banner, segments and
// sections, and the load commands it keeps raw (the document holds every load command:
// print_load_commands).
void print_structure(Printer &p, const Hwx &h) {
  p.text("hwx container: cputype " + hex(h.cputype) + ", cpusubtype ");
  p.field("cpusubtype", Hex{h.cpusubtype});
  p.text(", filetype " + hex(h.filetype) + ", " + std::to_string(h.commands.size()) + " load commands\n");
  if (!p.text_form())
    return;
  if (!h.banner.empty())
    p.text("banner: " + h.banner.substr(0, h.banner.find('\n', h.banner.find('\n') + 1)) + "\n");
  for (const HwxSegment &g : h.segments) {
    p.text("segment " + g.name + " vm " + hex(g.vmaddr) + "+" + hex(g.vmsize) + " file " + hex(g.fileoff) +
           "+" + hex(g.filesize) + "\n");
    for (const HwxSection &x : g.sections)
      p.text("  section " + x.segment + "." + x.name + " " + hex(x.addr) + "+" + hex(x.size) + " at " +
             hex(x.offset) + ", " + std::to_string(x.nreloc) + " relocations\n");
  }
  for (const HwxCommand &c : h.commands)
    if (!known_command(h, c))
      p.text("load command " + hex(c.cmd) + " at " + hex(c.offset) + ", " + hex(c.size) +
             " bytes, kept raw\n");
}

void print_tensors(Printer &p, const Hwx &h) {
  List tensors(p, "tensors");
  for (const HwxTensorName &t : h.tensors) {
    Object tensor(p);
    p.text("tensor ");
    p.field("name", t.name);
    p.data("command", t.cmd);
    p.text(" at ");
    p.field("vmaddr", Hex{t.vmaddr});
    if (t.cmd == 0x40) {
      p.text(", ");
      p.field("bytes", t.bytes);
      p.text(" bytes (command 0x40)");
    }
    p.text("\n");
  }
}

// Every load command through its layout: each field it names, with its value (the generic printer
// of tables/schema/layout; a field added there appears here with no code). Only a document holds
// them.
void print_load_commands(Printer &p, const Hwx &h, std::span<const uint8_t> file) {
  List commands(p, "load_commands");
  for (const HwxCommand &c : h.commands) {
    Object command(p);
    p.data("offset", Hex{c.offset});
    p.data("layout", c.layout.empty() ? std::string_view("raw") : c.layout);
    if (c.layout.empty())
      continue;
    Object fields(p, "fields");
    layout::print(p, layout::View(db().get(c.layout), file, c.offset, kBad), db());
  }
}

void print_program(Printer &p, const Hwx &h, const HwxProgramState &s) {
  Object program(p, "program");
  p.text("program ");
  p.data("name", s.name);
  p.text(s.name.empty() ? std::string_view("(unnamed)") : s.name);
  p.text(": chain at ");
  p.field("td_base", Hex{s.td_base});
  p.data("flavor", s.flavor);
  if (s.td_bytes)
    p.data("td_bytes", s.td_bytes);
  if (s.flavor == 4) {
    p.data("segment_words", s.segment_words);
    p.data("prefix_words", s.prefix_words);
  }
  p.text(", ");
  p.field("td_count", s.td_count);
  p.text(s.td_bytes ? " descriptor(s) of " + hex(s.td_bytes) + " bytes"
                    : " descriptor(s) in a segment of " + std::to_string(s.segment_words) +
                          " words (a frame of " + std::to_string(s.prefix_words) + " first)");
  p.text(", engine mask ");
  p.field("engine_mask", Hex{s.ene});
  p.text("\n");
  {
    List bars(p, "bars");
    for (size_t k = 0; k < HwxProgramState::kBars; ++k)
      if (s.bars[k]) {
        Object bar(p);
        std::string what = hwx_what_is(h, s.bars[k]);
        p.text("  bar ");
        p.field("slot", k);
        p.text(" ");
        p.field("vmaddr", Hex{s.bars[k]});
        p.text(what.empty() ? "" : " ");
        p.field("holds", what);
        p.text("\n");
      }
  }
  List other(p, "other_words");
  for (auto [at, v] : s.other) {
    Object word(p);
    p.text("  state word +");
    p.field("state_offset", Hex{at});
    p.text(" = ");
    p.field("value", Hex{v});
    p.text("\n");
  }
}

void print_layouts(Printer &p, const Hwx &h) {
  List layouts(p, "layouts");
  for (const HwxTensor &t : h.layouts) {
    Object layout(p);
    p.text("layout ");
    p.field("name", t.name);
    p.text(" ");
    p.field("dtype", t.dtype);
    p.text(" [");
    {
      Object shape(p, "shape");
      for (size_t i = 0; i < t.extents.size(); ++i) {
        p.text(std::string(i ? " " : "") + t.extents[i].first + "=");
        p.field(std::string(1, t.extents[i].first), t.extents[i].second);
      }
    }
    p.text("] strides [");
    {
      Object strides(p, "stride_bytes");
      for (size_t i = 0; i < t.extents.size(); ++i) {
        p.text(i ? " " : "");
        p.field(std::string(1, t.extents[i].first), t.strides[i]);
      }
    }
    p.text("]");
    p.data("vmaddr", t.vmaddr);
    p.text(t.vmaddr ? " at " + hex(t.vmaddr) + "\n" : "\n");
  }
}

// Four numbers in n, c, h, w order, between brackets in text.
void print_nchw(Printer &p, std::string_view key, const uint64_t (&v)[4]) {
  List list(p, key);
  p.text("[");
  for (int k = 0; k < 4; ++k) {
    p.text(k ? " " : "");
    p.item(v[k]);
  }
  p.text("]");
}

void print_states(Printer &p, const Hwx &h) {
  List states(p, "tensor_states");
  for (const HwxTensorState &t : h.states) {
    Object state(p);
    std::string direction = direction_name(t.direction);
    p.text("state ");
    p.field("name", t.name);
    p.text(" ");
    p.field("direction", Named{direction, t.direction});
    p.text(" type t");
    p.field("dtype_index", t.dtype_index);
    p.text(" ");
    print_nchw(p, "extents_nchw", t.extents);
    p.text(" strides ");
    print_nchw(p, "stride_bytes_nchw", t.strides);
    p.text(", ");
    p.field("bytes", t.bytes);
    p.text(" bytes\n");
  }
}

void print_symbols(Printer &p, const Hwx &h) {
  p.text(std::to_string(h.symbols.size()) + " symbols\n");
  List symbols(p, "symbols");
  for (const HwxSymbol &sym : h.symbols) {
    Object symbol(p);
    p.data("name", sym.name); // the text's last column
    p.text("  ");
    p.field("value", Hex{sym.value});
    p.text(" type ");
    p.field("type", Hex{sym.type});
    p.text(" sect ");
    p.field("sect", sym.sect);
    p.text(" desc ");
    p.field("desc", Hex{sym.desc});
    p.text("  " + sym.name + "\n");
  }
}

void print_relocations(Printer &p, const Hwx &h) {
  List relocations(p, "relocations");
  for (const HwxReloc &x : h.relocations) {
    Object relocation(p);
    p.text("relocation __text+");
    p.field("address", Hex{x.address});
    p.text(" -> ");
    p.field("symbol", x.symbol);
    p.data("target", x.target);
    p.text(" (" + (x.target.empty() ? "no decoded word" : x.target) + ")\n");
  }
}

// The descriptor chain in __text; when no database decoded it, the text shows its bytes.
void print_text_section(Printer &p, const Hwx &h, const TdSchema &s, std::span<const uint8_t> file,
                        std::optional<size_t> only) {
  bool decoded = h.chain_not_decoded.empty();
  if (decoded || !p.text_form()) {
    p.text("\n");
    print_chain(p, h.chain, s, file, only);
  }
  if (decoded)
    return;
  p.text("\ndescriptor chain (__text at " + hex(h.text.offset) + ", " + std::to_string(h.text.size) +
         " bytes): not decoded, ");
  p.field("chain_not_decoded", h.chain_not_decoded);
  p.text("\n");
  if (p.text_form())
    p.text(hex_rows(h.chain_raw, h.text.offset));
}
} // namespace

void print(Printer &p, const Hwx &h, const TdSchema &s, std::span<const uint8_t> file,
           std::optional<size_t> only) {
  if (h.chain_not_decoded.empty())
    selected_tds(h.chain, only); // ANEC-TD-005 before anything is printed
  // The document (anec-desc.dump) holds the chain first and the relocations before the symbols;
  // the text reads the container first and lists the symbols before the relocations.
  bool text = p.text_form();
  p.data("container", "hwx");
  if (!text)
    print_text_section(p, h, s, file, only);
  print_structure(p, h);
  print_tensors(p, h);
  if (!text)
    print_load_commands(p, h, file);
  if (h.program)
    print_program(p, h, *h.program);
  print_layouts(p, h);
  print_states(p, h);
  if (text)
    print_symbols(p, h);
  print_relocations(p, h);
  if (!text)
    print_symbols(p, h);
  if (text)
    print_text_section(p, h, s, file, only);
}

} // namespace anec::desc
