#include "anec/firmware/image.hpp"

#include "anec/decode/binary.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace anec::fw {

namespace {
// One DER element at `at`: its tag, and its content's offset and length; bounded by `end`.
struct Element {
  uint8_t tag = 0;
  uint64_t content = 0, length = 0;
};
Element element(std::span<const uint8_t> b, uint64_t at, uint64_t end) {
  auto bad = [&](const std::string &m) {
    return Error("ANEC-IM4P-002", "DER element at " + hex(at) + ": " + m);
  };
  if (at + 2 > end) throw bad("truncated");
  Element e;
  e.tag = b[at];
  uint8_t first = b[at + 1];
  uint64_t p = at + 2;
  if (first < 0x80) {
    e.length = first;
  } else {
    size_t n = first & 0x7f;
    if (n == 0 || n > 4 || p + n > end) throw bad("length of " + std::to_string(n) + " bytes");
    for (size_t k = 0; k < n; ++k) e.length = e.length << 8 | b[p + k];
    p += n;
  }
  if (e.length > end - p) throw bad("length " + hex(e.length) + " runs past " + hex(end));
  e.content = p;
  return e;
}
void der(std::vector<uint8_t> &out, uint8_t tag, std::span<const uint8_t> content) {
  out.push_back(tag);
  size_t n = content.size();
  if (n < 0x80) out.push_back(uint8_t(n));
  else {
    std::vector<uint8_t> len;
    for (size_t v = n; v; v >>= 8) len.insert(len.begin(), uint8_t(v));
    out.push_back(uint8_t(0x80 | len.size()));
    out.insert(out.end(), len.begin(), len.end());
  }
  out.insert(out.end(), content.begin(), content.end());
}
std::span<const uint8_t> text_bytes(const std::string &s) {
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

// A NUL-terminated string at `addr` (at most 256 bytes), or "" when unreadable or unterminated.
std::string c_string(const decode::Binary &b, uint64_t addr) {
  std::string s;
  for (uint64_t a = addr; s.size() < 256; ++a) {
    uint8_t c = 0;
    if (!b.read(a, std::span<uint8_t>(&c, 1))) return "";
    if (!c) return s;
    s += char(c);
  }
  return "";
}
bool identifier(const std::string &s) {
  return s.size() >= 2 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}
} // namespace

bool looks_like_im4p(std::span<const uint8_t> b) {
  try {
    Im4p x = read_im4p(b);
    return true;
  } catch (const Error &) {
    return false;
  }
}

Im4p read_im4p(std::span<const uint8_t> b) {
  if (b.size() < 2 || b[0] != 0x30) throw Error("ANEC-IM4P-001", "not an IM4P: no DER SEQUENCE at the start");
  Element seq = element(b, 0, b.size());
  uint64_t p = seq.content, end = seq.content + seq.length;
  auto next = [&](uint8_t tag, const char *what) {
    Element e = element(b, p, end);
    if (e.tag != tag)
      throw Error("ANEC-IM4P-002",
                  std::string(what) + " at " + hex(p) + " has tag " + hex(e.tag) + ", expected " + hex(tag));
    p = e.content + e.length;
    return e;
  };
  Element magic = next(0x16, "the magic");
  if (std::string(b.begin() + long(magic.content), b.begin() + long(magic.content + magic.length)) != "IM4P")
    throw Error("ANEC-IM4P-001", "not an IM4P: the first string is not \"IM4P\"");
  Im4p x;
  Element type = next(0x16, "the type");
  x.type.assign(b.begin() + long(type.content), b.begin() + long(type.content + type.length));
  Element desc = next(0x16, "the description");
  x.description.assign(b.begin() + long(desc.content), b.begin() + long(desc.content + desc.length));
  Element payload = next(0x04, "the payload");
  x.payload.assign(b.begin() + long(payload.content), b.begin() + long(payload.content + payload.length));
  return x;
}

std::vector<uint8_t> write_im4p(const Im4p &x) {
  std::vector<uint8_t> content;
  der(content, 0x16, text_bytes("IM4P"));
  der(content, 0x16, text_bytes(x.type));
  der(content, 0x16, text_bytes(x.description));
  der(content, 0x04, x.payload);
  std::vector<uint8_t> out;
  der(out, 0x30, content);
  return out;
}

FirmwareTables extract_tables(std::span<const uint8_t> image, const std::string &name) {
  FirmwareTables t;
  const std::span<const uint8_t> whole = image;
  std::vector<uint8_t> inner;
  if (!image.empty() && image[0] == 0x30) {
    Im4p x = read_im4p(image);
    if (x.type != "anef")
      throw Error("ANEC-IM4P-003",
                  name + ": IM4P of type '" + x.type + "', not the engine firmware's 'anef'");
    t.im4p_type = x.type;
    inner = std::move(x.payload);
    image = inner;
  }
  decode::Binary b = decode::Binary::parse(image, name);
  t.image_sha256 = sha256_hex(whole); // hashed once the image is known to be one
  for (const decode::Segment &seg : b.segments()) { // strings sit in __TEXT, the arrays in data
    const auto &d = seg.data;
    // The logger table: the longest run of consecutive NUL-terminated CSNE_CMD_ names.
    for (size_t i = 0; i < d.size(); ++i) {
      if ((i && d[i - 1]) || d.size() - i < 9 || std::memcmp(&d[i], "CSNE_CMD_", 9)) continue;
      std::vector<std::string> run;
      size_t p = i;
      while (p + 9 <= d.size() && !std::memcmp(&d[p], "CSNE_CMD_", 9)) {
        size_t e = p;
        while (e < d.size() && d[e]) ++e;
        if (e == d.size()) break;
        run.push_back(std::string(d.begin() + long(p) + 9, d.begin() + long(e)));
        p = e + 1;
      }
      if (run.size() > t.logger_names.size()) {
        t.logger_names = std::move(run);
        t.logger_table = seg.vaddr + i;
      }
      i = p;
    }
    // The id array: {char* name; u64 id} entries naming CSNE_CMD_ strings, ended by a null name.
    for (size_t i = 0; i + 16 <= d.size(); i += 8) {
      std::vector<std::pair<std::string, uint64_t>> run;
      size_t p = i;
      for (; p + 16 <= d.size(); p += 16) {
        std::string s = c_string(b, le64(d, p));
        if (s.rfind("CSNE_CMD_", 0) != 0) break;
        run.push_back({s, le64(d, p + 8)});
      }
      if (run.size() >= 4 && p + 16 <= d.size() && le64(d, p) == 0 && run.size() > t.wire_ids.size()) {
        t.wire_ids = std::move(run);
        t.id_array = seg.vaddr + i;
      }
      if (!run.empty()) i = p;
    }
    // Register-init blocks: runs of 32-byte {name, base, records, count} descriptors.
    for (size_t i = 0; i + 32 <= d.size(); i += 8) {
      std::vector<RegBlock> run;
      size_t p = i;
      for (; p + 32 <= d.size(); p += 32) {
        RegBlock blk;
        blk.name = c_string(b, le64(d, p));
        blk.base = le64(d, p + 8);
        uint64_t records = le64(d, p + 16), count = le64(d, p + 24);
        if (!identifier(blk.name) || !blk.base || count == 0 || count > 100000) break;
        std::vector<uint8_t> raw(count * 12);
        if (!b.read(records, raw)) break;
        for (uint64_t r = 0; r < count; ++r)
          blk.records.push_back({le32(raw, 12 * r), le32(raw, 12 * r + 4), le32(raw, 12 * r + 8)});
        blk.descriptor = seg.vaddr + p;
        run.push_back(std::move(blk));
      }
      if (run.size() >= 2 && run.size() > t.blocks.size()) t.blocks = std::move(run);
      if (!run.empty()) i = p - 8;
    }
  }
  if (t.logger_names.empty() && t.wire_ids.empty() && t.blocks.empty())
    throw Error("ANEC-FWX-001", name + ": no command-name table, id array or register-init blocks found");
  return t;
}

Doc tables_doc(const FirmwareTables &t) {
  Doc d = Doc::table();
  Doc x = Doc::table();
  x.set("sha256", Doc::string(t.image_sha256));
  x.set("im4p_type", Doc::string(t.im4p_type));
  x.set("logger_table", Doc::integer(int64_t(t.logger_table), true));
  x.set("id_array", Doc::integer(int64_t(t.id_array), true));
  d.set("extraction", std::move(x));
  Doc names = Doc::array();
  for (const std::string &n : t.logger_names) names.push(Doc::string(n));
  d.set("logger_names", std::move(names));
  Doc ids = Doc::array();
  for (auto &[n, id] : t.wire_ids) {
    Doc e = Doc::table();
    e.set("name", Doc::string(n));
    e.set("id", Doc::integer(int64_t(id), true));
    ids.push(std::move(e));
  }
  d.set("wire_id", std::move(ids));
  Doc blocks = Doc::array();
  for (const RegBlock &blk : t.blocks) {
    Doc e = Doc::table();
    e.set("name", Doc::string(blk.name));
    e.set("base", Doc::integer(int64_t(blk.base), true));
    Doc recs = Doc::array();
    for (const RegRecord &r : blk.records) {
      Doc rec = Doc::array();
      rec.push(Doc::integer(r.offset, true));
      rec.push(Doc::integer(r.mask, true));
      rec.push(Doc::integer(r.value, true));
      recs.push(std::move(rec));
    }
    e.set("records", std::move(recs));
    blocks.push(std::move(e));
  }
  d.set("block", std::move(blocks));
  return d;
}

} // namespace anec::fw
