#include "anec/descriptors/dump.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"

namespace anec::desc {

namespace {
void check_selected(size_t tds, std::optional<size_t> only) {
  if (only && *only >= tds)
    throw Error("ANEC-TD-005",
                "descriptor " + std::to_string(*only) + " requested; the chain has " + std::to_string(tds));
}
} // namespace

std::vector<size_t> selected_tds(const Chain &c, std::optional<size_t> only) {
  check_selected(c.tds.size(), only);
  std::vector<size_t> out;
  for (size_t i = 0; i < c.tds.size(); ++i)
    if (!only || *only == i) out.push_back(i);
  return out;
}

namespace {
// The columns a word's text lines begin with: its file offset, its register address (blank for a
// header word) and the raw word. Written into `prefix`, which the caller keeps from word to word.
void write_prefix(std::string &prefix, const Word &w, bool header) {
  prefix.clear();
  TextOut out(prefix);
  out << "    ";
  out.hex(w.offset, 4) << "  ";
  if (header)
    out << "       ";
  else
    out.hex(w.address, 5);
  out << "  ";
  out.hex(w.raw, 8) << "  ";
}

// A word: in text a line per field ("Common.ConvCfg.Kw = 5") or, where no field names it,
// BLOCK.0xADDRESS = 0xRAW, and a line for reserved bits that are set.
// The strings a word's lines are made in, kept from word to word so that they are not allocated for
// each: the line's prefix (write_prefix) and a field's key.
struct WordLines {
  std::string prefix, key;
};

void print_word(Printer &p, const Word &w, bool header, WordLines &lines) {
  std::string &prefix = lines.prefix;
  Object word(p);
  p.data("offset", w.offset);
  p.data("address", w.address);
  p.data("block", w.block);
  p.data("raw", w.raw);
  if (p.text_form())
    write_prefix(prefix, w, header);
  if (w.fields.empty() && p.text_form())
    p.text(prefix + (w.block.empty() ? "?" : w.block) + "." + hex(w.address) + " = " + hex(w.raw) + "\n");
  {
    Object fields(p, "fields");
    for (const FieldValue &f : w.fields) {
      // The field's path() without its block.
      std::string &key = lines.key.assign(f.field->reg).append(".").append(f.field->name);
      p.text(prefix);
      if (f.field->block != "Header") {
        p.text(f.field->block);
        p.text(".");
      }
      p.text(key);
      p.text(" = ");
      p.field(key, f.value);
      p.text("\n");
    }
  }
  if (!w.reserved)
    return;
  if (w.fields.empty()) { // the text's BLOCK.0xADDRESS line shows the whole word
    p.data("reserved", w.reserved);
    return;
  }
  p.text(prefix);
  p.text("reserved bits ");
  p.field("reserved", Hex{w.reserved});
  p.text(" set\n");
}

void print_stream(Printer &p, const Stream &st, WordLines &lines) {
  Object stream(p);
  p.text("  stream ");
  p.text(st.words.empty() || st.words[0].block.empty() ? std::string_view("?") : st.words[0].block);
  p.text(" at ");
  p.field("offset", Hex{st.offset});
  p.text(": header ");
  p.field("header", Hex{st.header, 8});
  p.text(", " + std::to_string(st.count) + " words from ");
  p.field("address", Hex{st.address});
  p.data("words", st.count);
  p.text("\n");
  List registers(p, "registers");
  for (const Word &w : st.words)
    print_word(p, w, false, lines);
}

void print_td(Printer &p, const Td &td, size_t index, WordLines &lines) {
  Object o(p);
  p.text("\nTD ");
  p.field("index", index);
  p.text(" at ");
  p.field("offset", Hex{td.offset});
  p.text(": ");
  p.field("bytes", Hex{td.size});
  p.text(" bytes, " + std::to_string(td.streams.size()) + " streams" + (td.eon ? ", EON" : "") +
         "\n  header\n");
  p.data("eon", td.eon);
  {
    List header(p, "header");
    for (const Word &w : td.header)
      print_word(p, w, true, lines);
  }
  List streams(p, "streams");
  for (const Stream &st : td.streams)
    print_stream(p, st, lines);
}

// Which bytes of the file the descriptor words hold (4 from each word's offset).
void hold_word(std::vector<bool> &held, uint64_t offset) {
  for (uint64_t i = offset; i < offset + 4 && i < held.size(); ++i)
    held[i] = true;
}
std::vector<bool> held_by(const Chain &c, size_t file_bytes) {
  std::vector<bool> held(file_bytes, false);
  for (const Td &td : c.tds) {
    for (const Word &w : td.header)
      hold_word(held, w.offset);
    for (const Stream &st : td.streams) {
      hold_word(held, st.offset);
      for (const Word &w : st.words)
        hold_word(held, w.offset);
    }
  }
  return held;
}
void hold_flat(std::vector<bool> &held, const FlatChain &f, const FlatTd &td, const TdSchema &s) {
  for (size_t k = 0; k < f.header(td, s).size(); ++k)
    hold_word(held, f.header_offset(td, k));
  for (const FlatStream &st : f.streams_of(td)) {
    hold_word(held, st.offset);
    for (size_t i = 0; i < st.count; ++i)
      hold_word(held, f.stream_offset(st, i));
  }
}

// Every byte of the file outside the descriptor words (`held`), as runs of hex: what encode_dump
// needs besides the words to rebuild the file (a document's member; the text leaves it out).
void print_regions(Printer &p, const std::vector<bool> &held, std::span<const uint8_t> file) {
  List regions(p, "regions");
  for (size_t i = 0; i < held.size();) {
    if (held[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < held.size() && !held[j]) ++j;
    Object r(p);
    p.data("offset", i);
    p.data("hex", hex_bytes(file.subspan(i, j - i)));
    i = j;
  }
}

// What a chain's dump says before its descriptors.
struct ChainHead {
  size_t tds = 0;
  uint64_t kernel_offset = 0, kernel_size = 0;
  const std::vector<Finding> &findings;
};

void print_head(Printer &p, const ChainHead &c, const TdSchema &s, std::span<const uint8_t> file,
                std::optional<size_t> only) {
  p.data("file_bytes", file.size());
  p.data("complete", !only);
  p.text("raw task-descriptor chain, generation ");
  p.field("generation", s.generation);
  p.data("database_complete", s.complete);
  if (s.raw()) {
    p.text(" (no register map: walked raw with the stream layout of generation ");
    p.field("raw_layout", s.raw_like);
    p.text(")");
  }
  p.text(std::string(s.complete || s.raw() ? "" : " (register database incomplete)") + ": " +
         std::to_string(c.tds) + " descriptor(s)");
  {
    Object kernel(p, "kernel_data");
    p.text(", kernel data at ");
    p.field("offset", Hex{c.kernel_offset});
    p.text(" (");
    p.field("bytes", c.kernel_size);
    p.text(" bytes)\n");
  }
  List findings(p, "findings");
  for (const Finding &f : c.findings) {
    Object finding(p);
    p.text("finding ");
    print(p, f, {.in_file = true});
    p.text("\n");
  }
}
} // namespace

void print_chain(Printer &p, const Chain &c, const TdSchema &s, std::span<const uint8_t> file,
                 std::optional<size_t> only) {
  std::vector<size_t> tds = selected_tds(c, only); // ANEC-TD-005 before anything is printed
  print_head(p, {c.tds.size(), c.kernel_offset, c.kernel_size, c.findings}, s, file, only);
  {
    List list(p, "tds");
    WordLines lines;
    for (size_t i : tds)
      print_td(p, c.tds[i], i, lines);
  }
  if (!p.text_form())
    print_regions(p, held_by(c, file.size()), file);
}

void print(Printer &p, const Chain &c, const TdSchema &s, std::span<const uint8_t> file,
           std::optional<size_t> only) {
  p.data("container", "raw-td-chain");
  print_chain(p, c, s, file, only);
}

void print_raw_chain(Printer &p, const TdSchema &s, std::span<const uint8_t> file,
                     std::optional<size_t> only) {
  bool document = !p.text_form();
  std::vector<bool> held(document ? file.size() : 0, false);
  FlatChain walked;
  size_t count = 0;
  decode_flat_each(file, s, walked, [&](const FlatChain &f, const FlatTd &td) {
    ++count;
    if (document)
      hold_flat(held, f, td, s);
  });
  check_selected(count, only); // ANEC-TD-005 before anything is printed
  p.data("container", "raw-td-chain");
  print_head(p, {count, walked.kernel_offset, walked.kernel_size, walked.findings}, s, file, only);
  {
    List list(p, "tds");
    WordLines lines;
    size_t index = 0;
    FlatChain scratch;
    decode_flat_each(file, s, scratch, [&](const FlatChain &f, const FlatTd &td) {
      if (!only || *only == index)
        print_td(p, tree_td(f, s, td), index, lines);
      ++index;
    });
  }
  if (document)
    print_regions(p, held, file);
}

} // namespace anec::desc
