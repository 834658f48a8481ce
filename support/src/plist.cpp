#include "anec/support/plist.hpp"

#include "anec/support/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <plist/plist.h>
#include <string>
#include <vector>

namespace anec::plist {

namespace {

[[noreturn]] void malformed(const std::string &source, const std::string &why) {
  throw Error("ANEC-PLIST-001", source + ": not a property list (" + why + ")");
}
[[noreturn]] void too_deep(const std::string &source, const std::string &where) {
  throw Error("ANEC-PLIST-002", source + ": property list nested deeper than " + std::to_string(max_depth) +
                                    " levels (found at " + where + ")");
}

// ---- XML: nesting depth -------------------------------------------------------------------------
// libplist's XML reader builds the tree without recursion, but plist_free (and convert below) recurse
// once per level, so 200,000 nested <array> overflow the stack. This scan finds the depth first. It
// tokenises the way libplist 2.2's xplist.c does (tag names end at blank, '<' or '>'; a double-quoted
// attribute value may hold '<' and '>'; a tag is empty when '/' precedes its '>'; comments, CDATA,
// <?...?> and <!DOCTYPE ...[...]> are skipped), so the depth it counts is the depth libplist builds
// for any input libplist accepts. Where libplist would stop with an error the scan stops too.
class XmlDepthScan {
public:
  explicit XmlDepthScan(std::string_view text) : t_(text) {}

  // The offset of the first <array> or <dict> nested deeper than max_depth, or npos.
  size_t too_deep_at() {
    for (size_t i = t_.find('<'); i != npos && deep_ == npos;) {
      i = step(i);
      if (i != npos)
        i = t_.find('<', i);
    }
    return deep_;
  }

private:
  static constexpr size_t npos = std::string_view::npos;

  // Skips the markup at t_[at] == '<'; npos when libplist would reject it (unterminated or unknown) or
  // when it is nested too deep.
  size_t step(size_t at) {
    std::string_view rest = t_.substr(at);
    if (rest.starts_with("<!--"))
      return after(t_.find("-->", at + 4), 3);
    if (rest.starts_with("<![CDATA["))
      return after(t_.find("]]>", at + 9), 3);
    if (rest.starts_with("<!DOCTYPE"))
      return doctype_end(at + 9);
    if (rest.starts_with("<!"))
      return npos;
    if (rest.starts_with("<?"))
      return after(find_unquoted(at + 1, "?>"), 2);
    return element(at);
  }

  // An element tag: opening <array>/<dict> nest unless empty (<array/>); </array>, </dict> close.
  size_t element(size_t at) {
    size_t name_end = t_.find_first_of(" \r\n\t<>", at + 1);
    if (name_end == npos)
      return npos;
    size_t close = t_[name_end] == '>' ? name_end : find_any_unquoted(name_end, "<>");
    if (close == npos || t_[close] != '>')
      return npos;
    std::string_view name = t_.substr(at + 1, name_end - at - 1);
    bool empty = t_[close - 1] == '/';
    if (empty && close == name_end)
      name.remove_suffix(1); // "<array/>": the name ran into the '/'
    if ((name == "array" || name == "dict") && !empty && ++depth_ > max_depth) {
      deep_ = at;
      return npos;
    }
    if ((name == "/array" || name == "/dict") && depth_ > 0)
      --depth_;
    return close + 1;
  }

  size_t doctype_end(size_t from) {
    size_t p = find_any_unquoted(from, "[>");
    if (p == npos || t_[p] == '>')
      return after(p, 1);
    return after(find_unquoted(p, "]>"), 2); // an internal subset ends at "]>"
  }

  static size_t after(size_t found, size_t length) { return found == npos ? npos : found + length; }

  // libplist skips double-quoted runs when it looks for the end of a tag, <?...?> or DOCTYPE.
  size_t find_unquoted(size_t from, std::string_view needle) const {
    for (size_t i = from; i < t_.size(); ++i) {
      if (t_.substr(i).starts_with(needle))
        return i;
      if (t_[i] == '"' && (i = t_.find('"', i + 1)) == npos)
        return npos;
    }
    return npos;
  }
  size_t find_any_unquoted(size_t from, std::string_view chars) const {
    for (size_t i = from; i < t_.size(); ++i) {
      if (t_[i] == '"' && (i = t_.find('"', i + 1)) == npos)
        return npos;
      if (chars.find(t_[i]) != npos)
        return i;
    }
    return npos;
  }

  std::string_view t_;
  unsigned depth_ = 0;
  size_t deep_ = npos;
};

// ---- Binary: expanded size of the object graph --------------------------------------------------
// A bplist00 object refers to others by index, so one object may be referenced from many places;
// libplist copies a shared object once per reference, so N levels of arrays holding the next level
// twice expand to 2^N nodes from a file of a few hundred bytes. This walk visits each object once
// (memoised: its expanded node count, payload bytes and container height) and rejects a graph whose
// expansion exceeds the budgets, or that has a cycle, before libplist allocates anything. Recursion
// is bounded by max_depth: a container is entered only when its depth is within the budget.
// Format: CoreFoundation CFBinaryPList.c; the checks mirror libplist 2.2 bplist.c plist_from_bin and
// parse_bin_node, so an object we accept is one libplist reads the same way.
class BinaryScan {
public:
  BinaryScan(std::string_view bytes, const std::string &source) : b_(bytes), source_(source) {}

  void run() {
    read_trailer();
    memo_.resize(objects_);
    visit(top_, 0);
  }

private:
  enum : uint8_t { kNew, kOpen, kDone };
  // Budgets fit in 32 bits, so a memo entry is 12 bytes however large the object table.
  struct Memo {
    uint32_t nodes = 0, bytes = 0;
    uint8_t height = 0, state = kNew;
  };
  static_assert(max_nodes < (1ull << 32) && max_bytes < (1ull << 32));
  // An object's marker decoded: its type nibble, element or byte count and where its body starts.
  struct Object {
    unsigned type = 0;
    uint64_t count = 0, body = 0;
  };
  static constexpr size_t kTrailer = 32, kHeader = 8;

  // libplist reads an integer wider than 8 bytes by its low 8 bytes (bplist.c UINT_TO_HOST).
  uint64_t load_be(uint64_t at, unsigned width) const {
    if (width > 8) {
      at += width - 8;
      width = 8;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i)
      v = v << 8 | uint8_t(b_[at + i]);
    return v;
  }

  // Trailer: 6 unused bytes, offset size, reference size, then object count, top object index and
  // offset-table offset as big-endian u64. The same checks as plist_from_bin, plus sizes of at most 8
  // bytes (CFBinaryPList writes 1, 2, 4 or 8) and the object-count budget.
  void read_trailer() {
    if (b_.size() < kHeader + kTrailer)
      malformed(source_, "binary plist shorter than its header and trailer");
    size_t t = b_.size() - kTrailer;
    offset_size_ = uint8_t(b_[t + 6]);
    ref_size_ = uint8_t(b_[t + 7]);
    objects_ = load_be(t + 8, 8);
    top_ = load_be(t + 16, 8);
    table_ = load_be(t + 24, 8);
    if (offset_size_ < 1 || offset_size_ > 8 || ref_size_ < 1 || ref_size_ > 8)
      malformed(source_, "binary plist trailer: offset size " + std::to_string(offset_size_) +
                             ", reference size " + std::to_string(ref_size_) + " (expected 1 to 8)");
    if (table_ < kHeader || table_ >= t)
      malformed(source_, "binary plist offset table at " + std::to_string(table_) + " outside 8.." +
                             std::to_string(t));
    if (objects_ == 0 || top_ >= objects_ || objects_ > (t - table_) / offset_size_)
      malformed(source_, "binary plist trailer: " + std::to_string(objects_) + " objects, top object " +
                             std::to_string(top_) + ", offset table of " + std::to_string(t - table_) +
                             " bytes");
    if (objects_ > max_nodes)
      throw Error("ANEC-PLIST-002", source_ + ": binary property list declares " + std::to_string(objects_) +
                                        " objects, more than the budget of " + std::to_string(max_nodes) +
                                        " nodes");
  }

  // The marker of object `index`; a count of 15 means the count follows as an int object.
  Object object_at(uint64_t index) const {
    uint64_t at = load_be(table_ + index * offset_size_, offset_size_);
    if (at < kHeader || at >= table_)
      malformed(source_, "binary plist object " + std::to_string(index) + " at offset " + std::to_string(at) +
                             " outside the object area");
    unsigned marker = uint8_t(b_[at]);
    Object o{marker >> 4, marker & 0xf, at + 1};
    uint64_t unit = unit_size(o.type);
    if (unit == 0)
      return o; // no count: libplist checks the few fixed-size bytes itself
    if (o.count == 15) {
      if (o.body >= table_ || uint8_t(b_[o.body]) >> 4 != 0x1)
        bad_object(index, "count is not an int object");
      unsigned width = 1u << (uint8_t(b_[o.body]) & 0xfu);
      if (width > table_ - o.body - 1)
        bad_object(index, "count runs past the offset table");
      o.count = load_be(o.body + 1, width);
      o.body += 1 + width;
    }
    if (o.count > (table_ - o.body) / unit)
      bad_object(index, "runs past the offset table");
    return o;
  }

  // Bytes per counted element: refs for containers (a dict holds keys then values), 2 per UTF-16
  // unit, 1 per byte of data or ASCII; 0 for the types whose low nibble is a size, not a count.
  uint64_t unit_size(unsigned type) const {
    switch (type) {
    case 0x4:
    case 0x5:
      return 1;
    case 0x6:
      return 2;
    case 0xa:
    case 0xc:
      return ref_size_;
    case 0xd:
      return 2ull * ref_size_;
    default:
      return 0;
    }
  }
  static bool is_container(unsigned type) { return type == 0xa || type == 0xc || type == 0xd; }

  // The payload libplist copies per reference: ASCII and data as is, UTF-16 converted to UTF-8 (at
  // most 3 bytes per unit).
  static uint64_t payload(const Object &o) {
    if (o.type == 0x4 || o.type == 0x5)
      return o.count;
    return o.type == 0x6 ? 3 * o.count : 0;
  }

  // `level` containers enclose object `index`.
  void visit(uint64_t index, unsigned level) {
    Memo &m = memo_[index];
    if (m.state == kOpen)
      malformed(source_,
                "binary plist object " + std::to_string(index) + " contains itself (a reference cycle)");
    if (m.state == kDone) {
      if (level + m.height > max_depth)
        too_deep(source_, "object " + std::to_string(index));
      return;
    }
    Object o = object_at(index);
    if (!is_container(o.type)) {
      m = Memo{1, uint32_t(std::min(payload(o), max_bytes + 1)), 0, kDone};
      if (m.bytes > max_bytes)
        too_many_bytes(index);
      return;
    }
    if (level + 1 > max_depth)
      too_deep(source_, "object " + std::to_string(index));
    m.state = kOpen;
    visit_children(index, o, level + 1, m);
  }

  // Sums the children's memo into `m` (the budgets hold every partial sum well inside 64 bits).
  void visit_children(uint64_t index, const Object &o, unsigned level, Memo &m) {
    uint64_t nodes = 1, bytes = 0, refs = o.type == 0xd ? 2 * o.count : o.count;
    unsigned height = 0;
    for (uint64_t k = 0; k < refs; ++k) {
      uint64_t child = load_be(o.body + k * ref_size_, ref_size_);
      if (child >= objects_)
        bad_object(index, "refers to object " + std::to_string(child) + " of " + std::to_string(objects_));
      if (o.type == 0xd && k < o.count)
        check_key(child);
      visit(child, level);
      const Memo &c = memo_[child];
      nodes += c.nodes;
      bytes += c.bytes;
      height = std::max<unsigned>(height, c.height);
      if (nodes > max_nodes)
        throw Error("ANEC-PLIST-002",
                    source_ + ": binary property list expands to more than " + std::to_string(max_nodes) +
                        " nodes through shared references (found at object " + std::to_string(index) + ")");
      if (bytes > max_bytes)
        too_many_bytes(index);
    }
    m = Memo{uint32_t(nodes), uint32_t(bytes), uint8_t(height + 1), kDone};
  }

  // libplist's dictionary iterator asserts that a key is as long as its C string (found by the
  // fuzzer): a key holding a NUL character would abort the process.
  void check_key(uint64_t index) const {
    Object k = object_at(index);
    uint64_t unit = k.type == 0x5 ? 1 : k.type == 0x6 ? 2 : 0;
    for (uint64_t i = 0; unit && i < k.count; ++i)
      if (load_be(k.body + i * unit, unsigned(unit)) == 0)
        bad_object(index, "is a dictionary key holding a NUL character");
  }

  [[noreturn]] void too_many_bytes(uint64_t index) const {
    throw Error("ANEC-PLIST-002",
                source_ + ": binary property list expands to more than " + std::to_string(max_bytes) +
                    " bytes of strings and data through shared references (found at object " +
                    std::to_string(index) + ")");
  }
  [[noreturn]] void bad_object(uint64_t index, const std::string &why) const {
    malformed(source_, "binary plist object " + std::to_string(index) + ": " + why);
  }

  std::string_view b_;
  const std::string &source_;
  unsigned offset_size_ = 0, ref_size_ = 0;
  uint64_t objects_ = 0, top_ = 0, table_ = 0;
  std::vector<Memo> memo_;
};

// ---- libplist tree -> Doc -----------------------------------------------------------------------
// The scans above keep `depth` within max_depth; the check stays as a last guard on our own recursion.
Doc convert(plist_t node, unsigned depth, const std::string &source);

Doc convert_dict(plist_t node, unsigned depth, const std::string &source) {
  Doc d = Doc::table();
  plist_dict_iter it = nullptr;
  plist_dict_new_iter(node, &it);
  for (;;) {
    char *key = nullptr;
    plist_t value = nullptr;
    plist_dict_next_item(node, it, &key, &value);
    if (!value) {
      std::free(key);
      break;
    }
    std::string k = key ? key : "";
    std::free(key);
    d.set(k, convert(value, depth + 1, source));
  }
  std::free(it);
  return d;
}

Doc convert(plist_t node, unsigned depth, const std::string &source) {
  if (depth > max_depth)
    too_deep(source, "depth " + std::to_string(depth));
  switch (plist_get_node_type(node)) {
  case PLIST_DICT:
    return convert_dict(node, depth, source);
  case PLIST_ARRAY: {
    Doc a = Doc::array();
    for (uint32_t i = 0; i < plist_array_get_size(node); ++i)
      a.push(convert(plist_array_get_item(node, i), depth + 1, source));
    return a;
  }
  case PLIST_BOOLEAN: {
    uint8_t b = 0;
    plist_get_bool_val(node, &b);
    return Doc::boolean(b != 0);
  }
  case PLIST_UINT: {
    uint64_t v = 0;
    plist_get_uint_val(node, &v);
    return Doc::integer(int64_t(v));
  }
  case PLIST_REAL: {
    double v = 0;
    plist_get_real_val(node, &v);
    return Doc::number(v);
  }
  case PLIST_STRING: { // by pointer and length: plist_get_string_val asserts on an embedded NUL
    uint64_t n = 0;
    const char *s = plist_get_string_ptr(node, &n);
    return Doc::string(s ? std::string(s, size_t(n)) : std::string());
  }
  case PLIST_DATA: {
    uint64_t n = 0;
    const char *d = plist_get_data_ptr(node, &n);
    return Doc::string(d ? std::string(d, size_t(n)) : std::string());
  }
  default:
    return Doc::string("");
  }
}
} // namespace

Doc parse(std::string_view bytes, const std::string &source) {
  if (bytes.size() > 0xffffffffu)
    throw Error("ANEC-PLIST-001", source + ": too large for a property list");
  // Limits before work: libplist chooses binary or XML by the same test (plist_from_memory).
  if (plist_is_binary(bytes.data(), uint32_t(bytes.size()))) {
    BinaryScan(bytes, source).run();
  } else if (size_t at = XmlDepthScan(bytes).too_deep_at(); at != std::string_view::npos) {
    too_deep(source, "byte offset " + std::to_string(at));
  }
  plist_t root = nullptr;
  plist_from_memory(bytes.data(), uint32_t(bytes.size()), &root);
  if (!root)
    throw Error("ANEC-PLIST-001", source + ": not a property list (neither XML nor binary plist)");
  std::unique_ptr<void, void (*)(plist_t)> guard(root, plist_free);
  return convert(root, 0, source);
}

} // namespace anec::plist
