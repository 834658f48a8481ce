#include "anec/descriptors/dump.hpp"

#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"

namespace anec::desc {

namespace {
std::vector<size_t> selected(const Chain &c, std::optional<size_t> only) {
  if (only && *only >= c.tds.size())
    throw Error("ANEC-TD-005", "descriptor " + std::to_string(*only) + " requested; the chain has " +
                                   std::to_string(c.tds.size()));
  std::vector<size_t> out;
  for (size_t i = 0; i < c.tds.size(); ++i)
    if (!only || *only == i) out.push_back(i);
  return out;
}

void word_prefix(TextOut &out, const Word &w, bool header) {
  out << "    ";
  out.hex(w.offset, 4) << "  ";
  if (header)
    out << "       ";
  else
    out.hex(w.address, 5);
  out << "  ";
  out.hex(w.raw, 8) << "  ";
}

void word_text(TextOut &out, const Word &w, bool header) {
  if (w.fields.empty()) {
    word_prefix(out, w, header);
    out << (w.block.empty() ? "?" : w.block) << ".";
    out.hex(w.address) << " = ";
    out.hex(w.raw) << "\n";
    return;
  }
  for (const FieldValue &f : w.fields) {
    word_prefix(out, w, header);
    out << f.field->path() << " = ";
    out.dec(f.value) << "\n";
  }
  if (w.reserved) {
    word_prefix(out, w, header);
    out << "reserved bits ";
    out.hex(w.reserved) << " set\n";
  }
}

Doc word_doc(const Word &w) {
  Doc d = Doc::table();
  d.set("offset", Doc::integer(int64_t(w.offset)));
  d.set("address", Doc::integer(w.address));
  d.set("block", Doc::string(w.block));
  d.set("raw", Doc::integer(w.raw));
  Doc f = Doc::table();
  for (const FieldValue &v : w.fields) f.set(v.field->reg + "." + v.field->name, Doc::integer(v.value));
  d.set("fields", std::move(f));
  if (w.reserved) d.set("reserved", Doc::integer(w.reserved));
  return d;
}
} // namespace

void dump_text(TextOut &out, const Chain &c, const TdSchema &s, std::optional<size_t> only) {
  std::vector<size_t> tds = selected(c, only); // ANEC-TD-005 before anything is written
  out << "raw task-descriptor chain, generation ";
  out.dec(uint64_t(s.generation)) << (s.complete ? "" : " (register database incomplete)") << ": ";
  out.dec(c.tds.size()) << " descriptor(s), kernel data at ";
  out.hex(c.kernel_offset) << " (";
  out.dec(c.kernel_size) << " bytes)\n";
  for (const Finding &f : c.findings)
    out << "finding " << diagnostic_text(f, {.in_file = true}) << "\n";
  for (size_t i : tds) {
    const Td &td = c.tds[i];
    out << "\nTD ";
    out.dec(i) << " at ";
    out.hex(td.offset) << ": ";
    out.hex(td.size) << " bytes, ";
    out.dec(td.streams.size()) << " streams" << (td.eon ? ", EON" : "") << "\n  header\n";
    for (const Word &w : td.header)
      word_text(out, w, true);
    for (const Stream &st : td.streams) {
      out << "  stream " << (st.words.empty() || st.words[0].block.empty() ? "?" : st.words[0].block)
          << " at ";
      out.hex(st.offset) << ": header ";
      out.hex(st.header, 8) << ", ";
      out.dec(st.count) << " words from ";
      out.hex(st.address) << "\n";
      for (const Word &w : st.words)
        word_text(out, w, false);
    }
  }
}

std::string dump_text(const Chain &c, const TdSchema &s, std::optional<size_t> only) {
  std::string text;
  TextOut out(text);
  dump_text(out, c, s, only);
  return text;
}

Doc dump_doc(const Chain &c, const TdSchema &s, std::span<const uint8_t> file, std::optional<size_t> only) {
  Doc d = Doc::table();
  d.set("container", Doc::string("raw-td-chain"));
  d.set("file_bytes", Doc::integer(int64_t(file.size())));
  d.set("complete", Doc::boolean(!only));
  d.set("generation", Doc::integer(s.generation));
  d.set("database_complete", Doc::boolean(s.complete));
  Doc kernel = Doc::table();
  kernel.set("offset", Doc::integer(int64_t(c.kernel_offset)));
  kernel.set("bytes", Doc::integer(int64_t(c.kernel_size)));
  d.set("kernel_data", std::move(kernel));
  Doc findings = Doc::array();
  for (const Finding &f : c.findings)
    findings.push(printed_doc([&](Printer &p) { print(p, f, {.in_file = true}); }));
  d.set("findings", std::move(findings));
  Doc tds = Doc::array();
  for (size_t i : selected(c, only)) {
    const Td &td = c.tds[i];
    Doc t = Doc::table();
    t.set("index", Doc::integer(int64_t(i)));
    t.set("offset", Doc::integer(int64_t(td.offset)));
    t.set("bytes", Doc::integer(td.size));
    t.set("eon", Doc::boolean(td.eon));
    Doc header = Doc::array();
    for (const Word &w : td.header) header.push(word_doc(w));
    t.set("header", std::move(header));
    Doc streams = Doc::array();
    for (const Stream &st : td.streams) {
      Doc x = Doc::table();
      x.set("offset", Doc::integer(int64_t(st.offset)));
      x.set("header", Doc::integer(st.header));
      x.set("address", Doc::integer(st.address));
      x.set("words", Doc::integer(st.count));
      Doc ws = Doc::array();
      for (const Word &w : st.words) ws.push(word_doc(w));
      x.set("registers", std::move(ws));
      streams.push(std::move(x));
    }
    t.set("streams", std::move(streams));
    tds.push(std::move(t));
  }
  d.set("tds", std::move(tds));
  // Every byte outside the descriptor words, as runs of hex.
  std::vector<bool> held(file.size(), false);
  auto hold = [&](uint64_t off) {
    for (uint64_t i = off; i < off + 4 && i < held.size(); ++i) held[i] = true;
  };
  for (const Td &td : c.tds) {
    for (const Word &w : td.header) hold(w.offset);
    for (const Stream &st : td.streams) {
      hold(st.offset);
      for (const Word &w : st.words) hold(w.offset);
    }
  }
  Doc regions = Doc::array();
  for (size_t i = 0; i < held.size();) {
    if (held[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < held.size() && !held[j]) ++j;
    Doc r = Doc::table();
    r.set("offset", Doc::integer(int64_t(i)));
    r.set("hex", Doc::string(hex_bytes(file.subspan(i, j - i))));
    regions.push(std::move(r));
    i = j;
  }
  d.set("regions", std::move(regions));
  return d;
}

} // namespace anec::desc
