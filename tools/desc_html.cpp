#include "desc_html.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "html.hpp"

#include <algorithm>
#include <string_view>

namespace anec::tools {

namespace {

using html::attr;
using html::element;
using html::escape;

// How a node's size is found beside its `offset`, in order (see ByteRange).
enum class SizeFrom { Member, Word, HexText, CommandSize };
struct SizeRule {
  std::string_view key;
  SizeFrom from;
};
constexpr SizeRule kSizeRules[] = {{"bytes", SizeFrom::Member},
                                   {"raw", SizeFrom::Word},
                                   {"hex", SizeFrom::HexText},
                                   {"fields", SizeFrom::CommandSize}};

std::optional<int64_t> size_by(const Doc &member, SizeFrom from) {
  switch (from) {
  case SizeFrom::Member:
    return member.is(Doc::Kind::Int) ? std::optional(member.as_int()) : std::nullopt;
  case SizeFrom::Word:
    return member.is(Doc::Kind::Int) ? std::optional<int64_t>(4) : std::nullopt;
  case SizeFrom::HexText:
    return member.is(Doc::Kind::String) ? std::optional(int64_t(member.as_string().size() / 2))
                                        : std::nullopt;
  case SizeFrom::CommandSize: {
    const Doc *c = member.is(Doc::Kind::Table) ? member.find("cmdsize") : nullptr;
    return c && c->is(Doc::Kind::Int) ? std::optional(c->as_int()) : std::nullopt;
  }
  }
  return std::nullopt;
}

// The members whose own members are shown as the node's (a register's decoded fields, a load
// command's layout fields), so that a register's fields sit under the register.
bool transparent(std::string_view key) {
  return key == "fields";
}

// Keys whose value names a node, in order of preference, for its one-line summary.
constexpr std::string_view kNameKeys[] = {"name", "layout", "holds", "symbol", "tensor", "container"};

ByteRange joined(const ByteRange &a, const ByteRange &b) {
  return {std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

std::string range_text(const ByteRange &r) {
  return hex(r.begin) + " +" + std::to_string(r.end - r.begin);
}

std::string scalar_text(const Doc &v) {
  switch (v.kind()) {
  case Doc::Kind::Null:
    return "null";
  case Doc::Kind::Bool:
    return v.as_bool() ? "true" : "false";
  case Doc::Kind::Int: {
    int64_t i = v.as_int();
    return i >= 10 ? std::to_string(i) + " (" + hex(uint64_t(i)) + ")" : std::to_string(i);
  }
  case Doc::Kind::Float:
    return html::number(v.as_float(), 6);
  case Doc::Kind::String: {
    const std::string &s = v.as_string();
    return s.size() <= 96 ? "\"" + s + "\""
                          : "\"" + s.substr(0, 96) + "…\" (" + std::to_string(s.size()) + " characters)";
  }
  default:
    return "";
  }
}

// A table node's one-line summary (a list's is its item count).
std::string summary_of(const Doc &d) {
  const Doc *raw = d.find("raw"), *block = d.find("block"), *address = d.find("address");
  if (raw && raw->is(Doc::Kind::Int)) // a register word
    return (block && block->is(Doc::Kind::String) && !block->as_string().empty() ? block->as_string() : "?") +
           (address ? "." + hex(uint64_t(address->as_int())) : "") + " = " + hex(uint64_t(raw->as_int()));
  for (std::string_view k : kNameKeys)
    if (const Doc *n = d.find(k); n && n->is(Doc::Kind::String))
      return n->as_string();
  return "";
}

constexpr const char *kRoot = "root";

bool scalar(const Doc &d) {
  return !d.is(Doc::Kind::Table) && !d.is(Doc::Kind::Array);
}

// The members that a node's range and summary and the page's header read, besides kSizeRules' and
// kNameKeys': a node keeps these of its scalar members; the others are drawn and dropped.
constexpr std::string_view kReadKeys[] = {"offset", "block", "address", "generation", "cmdsize"};

bool read_by_page(std::string_view key) {
  auto in = [key](const auto &keys) { return std::ranges::find(keys, key) != std::end(keys); };
  return std::ranges::any_of(kSizeRules, [key](const SizeRule &r) { return r.key == key; }) ||
         in(kNameKeys) || in(kReadKeys);
}

// The tree, drawn as the dump is printed (the dump's print function calls it as it calls the JSON
// printer), so that the document never exists as a tree. A node's HTML is written when its scope
// ends; its opening tag, which shows the range its children cover, goes into a piece kept for it
// when it began. The items of a list past kTreeNodes are counted, and nothing inside them is kept.
class TreePrinter final : public Printer {
public:
  size_t nodes = 1, ranged = 0, undrawn = 0; // the root is a node
  std::optional<size_t> descriptors;         // the items of the root's `tds`

  TreePrinter();
  void field(std::string_view key, const Scalar &v) override { data(key, v); }
  void data(std::string_view key, const Scalar &v) override;
  void text(std::string_view) override {}
  void item(const Scalar &v) override;
  void begin_object(std::string_view key) override { open(key, false); }
  void begin_list(std::string_view key) override { open(key, true); }
  void end() override;
  Form form() const override { return Form::Json; } // the members the JSON form holds
  // Ends the tree (ANEC-INTERNAL with a scope still open); the root's members that the header reads.
  const Doc &finish();
  void write(TextOut &out) const;

private:
  // A node, or a `fields` table drawn as its node's members (see transparent()).
  struct Scope {
    std::string id{}, base{}, label{}; // base: what the ids of its children begin with
    size_t owner = 0;                  // the node its members are drawn under (itself unless transparent)
    int depth = 0;
    bool list = false, transparent = false, drawn = false; // drawn: anything written under it
    size_t head = 0;                                       // the piece its opening tag goes into
    size_t items = 0, cut = 0;                             // a list's items; those not drawn
    Doc own = Doc::table();                                // its members read_by_page keeps
    std::optional<ByteRange> cover{};
  };
  void open(std::string_view key, bool list);
  void member(std::string_view key, const Doc &v);
  void replay(std::string_view key, const Doc &v);
  bool admit(Scope &list);
  void leaf(const std::string &text);
  std::optional<ByteRange> close(Scope &node);
  static std::string opening_tag(const Scope &node, std::optional<ByteRange> range);

  std::vector<Scope> scopes_;
  std::vector<std::string> pieces_;
  size_t skip_ = 0; // the depth inside a list item not drawn
  bool root_used_ = false, root_open_ = false;
};

TreePrinter::TreePrinter() : pieces_(2) {
  scopes_.push_back({.id = kRoot, .base = "", .label = "file"});
}

void TreePrinter::data(std::string_view key, const Scalar &v) {
  if (skip_)
    return;
  if (scopes_.back().list)
    throw Error("ANEC-INTERNAL", "printer: member '" + std::string(key) + "' given inside a list");
  root_used_ = true;
  Doc members = Doc::table(2);
  v.set_in(members, key); // a Named value is two members, as in the document
  for (const DocMember &m : members.members())
    member(m.key, m.value);
}

void TreePrinter::member(std::string_view key, const Doc &v) {
  if (!scalar(v))
    return replay(key, v);
  leaf(escape(key) + " = " + escape(scalar_text(v)));
  if (read_by_page(key))
    scopes_.back().own.set(std::string(key), v);
}

void TreePrinter::item(const Scalar &v) {
  if (skip_)
    return;
  Scope &list = scopes_.back();
  if (!list.list)
    throw Error("ANEC-INTERNAL", "printer: a list item given outside a list");
  Doc d = v.doc();
  if (!scalar(d))
    return replay({}, d);
  if (admit(list))
    leaf(escape("[" + std::to_string(list.items - 1) + "]") + " = " + escape(scalar_text(d)));
}

// A table or list given as one value: drawn as if printed member by member.
void TreePrinter::replay(std::string_view key, const Doc &v) {
  open(key, v.is(Doc::Kind::Array));
  for (const Doc &i : v.items())
    item(i);
  for (const DocMember &m : v.members())
    data(m.key, m.value);
  end();
}

// Counts a list's next item; whether it is drawn (the node budget left, and no item before it cut).
bool TreePrinter::admit(Scope &list) {
  ++list.items;
  if (list.cut == 0 && nodes < kTreeNodes)
    return true;
  ++list.cut;
  return false;
}

void TreePrinter::leaf(const std::string &text) {
  scopes_[scopes_.back().owner].drawn = true;
  pieces_.back() += element("div", attr("class", "leaf"), text);
}

void TreePrinter::open(std::string_view key, bool list) {
  if (skip_) {
    ++skip_;
    return;
  }
  if (scopes_.size() == 1 && key.empty() && !root_used_) { // the document itself, as DocPrinter has it
    scopes_[0].list = list;
    root_used_ = root_open_ = true;
    return;
  }
  root_used_ = true;
  Scope &parent = scopes_.back();
  if (parent.list && !admit(parent)) {
    skip_ = 1;
    return;
  }
  if (!parent.list && !parent.transparent && !list && transparent(key)) {
    Scope fields{.base = parent.base + std::string(key) + "/", .owner = parent.owner, .transparent = true};
    scopes_.push_back(std::move(fields));
    return;
  }
  // Ids are the document paths, the root's members without a prefix: `tds/0/header/3`.
  std::string name = parent.list ? std::to_string(parent.items - 1) : std::string(key);
  Scope node{.id = parent.base + name,
             .label = parent.list ? "[" + name + "]" : name,
             .owner = scopes_.size(),
             .depth = scopes_[parent.owner].depth + 1,
             .list = list,
             .head = pieces_.size()};
  node.base = node.id + "/";
  pieces_.back().shrink_to_fit();     // written whole: its growth's slack would be a third of the tree
  pieces_.resize(pieces_.size() + 2); // its opening tag, then what it holds
  ++nodes;
  scopes_.push_back(std::move(node));
}

void TreePrinter::end() {
  if (skip_) {
    --skip_;
    return;
  }
  if (scopes_.size() == 1) {
    if (!root_open_)
      throw Error("ANEC-INTERNAL", "printer: end() without an open scope");
    root_open_ = false;
    return;
  }
  Scope done = std::move(scopes_.back());
  scopes_.pop_back();
  Scope &owner = scopes_[scopes_.back().owner];
  if (done.transparent) {
    owner.own.set("fields", std::move(done.own));
    return;
  }
  std::optional<ByteRange> c = close(done);
  owner.drawn = true;
  if (c)
    owner.cover = owner.cover ? joined(*owner.cover, *c) : *c;
  if (scopes_.size() == 1 && !scopes_[0].list && done.label == "tds")
    descriptors = done.items;
}

// Writes what a node's HTML lacks once its members are written: its opening tag and its end.
std::optional<ByteRange> TreePrinter::close(Scope &n) {
  std::string &tail = pieces_.back();
  if (n.cut) {
    undrawn += n.cut;
    std::string more = "… " + std::to_string(n.cut) + " more item(s) not drawn";
    tail += element("div", attr("class", "leaf empty"), more);
    n.drawn = true;
  }
  std::optional<ByteRange> range = own_range(n.own, n.cover);
  ranged += range.has_value();
  std::string &tag = pieces_[n.head];
  tag = opening_tag(n, range);
  tag.shrink_to_fit(); // held until the page is written, like every piece
  if (!n.drawn)
    tail += element("div", attr("class", "leaf empty"), "(empty)");
  tail += html::close_tag("div") + html::close_tag("details");
  return range ? range : n.cover;
}

// <details ...><summary>label, summary, range</summary><div class="kids">: what precedes its members.
std::string TreePrinter::opening_tag(const Scope &n, std::optional<ByteRange> range) {
  std::string sum = n.list ? std::to_string(n.items) + " item(s)" : summary_of(n.own);
  std::string head = element("span", attr("class", "key"), escape(n.label)) +
                     (sum.empty() ? "" : " " + element("span", attr("class", "sum"), escape(sum))) +
                     (range ? " " + element("span", attr("class", "range"), escape(range_text(*range))) : "");
  std::string attrs = attr("class", "node") + attr("id", "n-" + n.id) + attr("data-id", n.id);
  if (range)
    attrs += attr("data-s", std::to_string(range->begin)) + attr("data-e", std::to_string(range->end));
  if (n.depth <= 1)
    attrs += " open";
  return html::open_tag("details", attrs) + element("summary", "", head) +
         html::open_tag("div", attr("class", "kids"));
}

const Doc &TreePrinter::finish() {
  if (scopes_.size() != 1 || root_open_)
    throw Error("ANEC-INTERNAL", "printer: the page was written with a scope still open");
  close(scopes_[0]);
  return scopes_[0].own;
}

void TreePrinter::write(TextOut &out) const {
  for (const std::string &p : pieces_)
    out << p;
}

std::string hex_text(std::span<const uint8_t> bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

// The hex view: `<div id="hex" data-hex="DIGITS"></div>`, its two million digits (a mebibyte) written
// a slice at a time, each escaped as attr() escapes a value (hex digits hold nothing to escape).
void write_hex_view(TextOut &out, std::span<const uint8_t> shown) {
  constexpr size_t kSlice = 32 << 10;
  out << "<div" << attr("id", "hex") << " data-hex=\"";
  for (size_t at = 0; at < shown.size(); at += kSlice)
    out << escape(hex_text(shown.subspan(at, std::min(kSlice, shown.size() - at))));
  out << "\">" << html::close_tag("div");
}

// `root`: the root's members the tree kept (read_by_page).
std::string header(const TreePrinter &tree, const Doc &root, std::span<const uint8_t> file,
                   const std::string &title) {
  const Doc *container = root.find("container"), *generation = root.find("generation");
  std::string facts =
      (container ? container->as_string() : std::string("program")) + ", " + std::to_string(file.size()) +
      " bytes" + (generation ? ", descriptor generation " + std::to_string(generation->as_int()) : "") +
      (tree.descriptors ? ", " + std::to_string(*tree.descriptors) + " descriptor(s)" : "") + "; " +
      std::to_string(tree.nodes) + " nodes, " + std::to_string(tree.ranged) + " with a byte range";
  if (tree.undrawn)
    facts += "; the tree stops at " + std::to_string(kTreeNodes) + " nodes, " +
             std::to_string(tree.undrawn) +
             " item(s) not drawn (--td N draws descriptor N, --format json writes them all)";
  if (file.size() > kHexViewBytes)
    facts += "; the hex view shows the first " + std::to_string(kHexViewBytes) + " bytes";
  std::string help = "Select a node to highlight its bytes; select a byte to find the nodes that cover it. "
                     "The address takes #sel=NODE-ID or #byte=OFFSET.";
  return element("header", "",
                 element("h1", "", "anec-desc: " + escape(title)) + element("p", "", escape(facts)) +
                     element("p", attr("class", "help"), escape(help)) +
                     element("div", attr("id", "status"), "nothing selected"));
}

const char *kCss =
    R"(body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;
background:#fafbfc}
header{padding:8px 16px;border-bottom:1px solid #d8dde6;background:#fff}
header h1{font-size:18px;margin:2px 0;word-break:break-all}header p{margin:2px 0}
.help{color:#5b6474;font-size:12px}
#status{font:12px ui-monospace,Menlo,Consolas,monospace;color:#1f5fbf;margin-top:2px}
main{display:grid;grid-template-columns:minmax(0,1fr) max-content;height:calc(100vh - 96px)}
#tree,#hex{overflow:auto;padding:6px 10px}
#tree{border-right:1px solid #d8dde6}
details.node{margin-left:12px}
details.node>summary{cursor:pointer;white-space:nowrap;border-radius:3px;padding:0 3px}
details.node>summary:hover{background:#eef1f6}
.kids{border-left:1px dotted #c5ccd8;margin-left:4px}
.key{font-weight:600}.sum{color:#2a6b3a;font-family:ui-monospace,Menlo,Consolas,monospace}
.range{color:#8a5a00;font:11px ui-monospace,Menlo,Consolas,monospace}
.leaf{margin-left:18px;font:12px ui-monospace,Menlo,Consolas,monospace;white-space:nowrap;color:#3b4352}
.leaf.empty{color:#8a93a3}
.node.covers>summary{background:#fff1c9}
.node.selected>summary{background:#ffd66b;outline:1px solid #c99700}
#hex{font:12px/1.45 ui-monospace,Menlo,Consolas,monospace;background:#fff}
#hex-space{position:relative;width:68ch}#hex-rows{position:absolute;left:0;right:0}
.row{display:grid;grid-template-columns:9ch repeat(16,2.6ch) 17ch;white-space:pre;height:18px;
  line-height:18px}
.addr{color:#8a93a3}.b{cursor:pointer;text-align:center;border-radius:2px}.b:hover{background:#dfe7f6}
.b.hl{background:#ffd66b}.b.cur{outline:2px solid #b3261e}
.ascii{color:#5b6474;padding-left:1ch}
)";

// Selection by click (a node's summary, a hex byte) and by the address (#sel=, #byte=) share
// select() and select_byte(), so a headless browser given the address checks what a click does.
const char *kJs = R"((function () {
  var hexBox = document.getElementById('hex');
  var hex = hexBox.getAttribute('data-hex');
  var shown = hex.length / 2, rowCount = Math.ceil(shown / 16), ROW = 18, MARGIN = 24;
  function ch(c) {
    if (c < 32 || c > 126) return '.';
    var s = String.fromCharCode(c);
    return s === '&' ? '&amp;' : s === '<' ? '&lt;' : s === '>' ? '&gt;' : s;
  }
  // Only the rows in view, and a margin, are in the document (a megabyte would be a million
  // cells): a spacer as tall as all the rows holds them, redrawn as the view scrolls. `mark` is
  // what is highlighted: the bytes [s, e) and the byte selected.
  var space = document.createElement('div'), rowsBox = document.createElement('div');
  space.id = 'hex-space';
  space.style.height = rowCount * ROW + 'px';
  rowsBox.id = 'hex-rows';
  space.appendChild(rowsBox);
  hexBox.appendChild(space);
  var mark = {s: 0, e: 0, cur: -1};
  function row(r) {
    var h = '', a = '';
    for (var i = r; i < r + 16; i++) {
      if (i >= shown) { h += '<span></span>'; continue; }
      var t = hex.substr(2 * i, 2), c = 'b';
      if (i >= mark.s && i < mark.e) c += ' hl';
      if (i === mark.cur) c += ' cur';
      h += '<span class="' + c + '" data-o="' + i + '">' + t + '</span>';
      a += ch(parseInt(t, 16));
    }
    return '<div class="row"><span class="addr">' + ('0000000' + r.toString(16)).slice(-8) + '</span>' +
           h + '<span class="ascii">' + a + '</span></div>';
  }
  function render() {
    var first = Math.max(0, Math.floor(hexBox.scrollTop / ROW) - MARGIN);
    var last = Math.min(rowCount, Math.ceil((hexBox.scrollTop + hexBox.clientHeight) / ROW) + MARGIN);
    var rows = [];
    for (var k = first; k < last; k++) rows.push(row(16 * k));
    rowsBox.style.top = first * ROW + 'px';
    rowsBox.innerHTML = rows.join('');
    hexBox.setAttribute('data-mark', mark.s + '-' + mark.e + (mark.cur >= 0 ? '@' + mark.cur : ''));
  }
  function showByte(o) {
    if (o < shown) hexBox.scrollTop = Math.floor(o / 16) * ROW - hexBox.clientHeight / 2;
  }
  var pending = false;
  hexBox.addEventListener('scroll', function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; render(); });
  });
  render();
  var ranged = [];
  document.querySelectorAll('.node[data-s]').forEach(function (n) {
    ranged.push({el: n, s: Number(n.getAttribute('data-s')), e: Number(n.getAttribute('data-e')),
                 depth: n.getAttribute('data-id').split('/').length});
  });
  var status = document.getElementById('status');
  function clear() {
    mark = {s: 0, e: 0, cur: -1};
    ['selected', 'covers'].forEach(function (c) {
      document.querySelectorAll('.node.' + c).forEach(function (e) { e.classList.remove(c); });
    });
  }
  function openAbove(el) {
    for (var p = el.parentElement; p; p = p.parentElement) if (p.tagName === 'DETAILS') p.open = true;
  }
  // A click on a summary opens or closes its node by itself; a selection from the address or a
  // byte opens the node too.
  // `byte`, when given, is the byte selected: outlined and kept in view.
  function select(id, covering, openSelf, byte) {
    var node = document.getElementById('n-' + id);
    if (!node) { status.textContent = 'no node ' + id; return false; }
    clear();
    if (byte !== undefined) mark.cur = byte;
    node.classList.add('selected');
    (covering || []).forEach(function (c) { c.el.classList.add('covers'); });
    openAbove(node);
    if (openSelf) node.open = true;
    var text = id;
    if (node.hasAttribute('data-s')) {
      var s = Number(node.getAttribute('data-s')), e = Number(node.getAttribute('data-e'));
      mark.s = s;
      mark.e = e;
      showByte(byte !== undefined ? byte : s);
      text += ': bytes 0x' + s.toString(16) + ' to 0x' + e.toString(16) + ' (' + (e - s) + ')';
    } else {
      text += ': no byte range of its own';
    }
    node.querySelector('summary').scrollIntoView({block: 'nearest'});
    render();
    status.textContent = text;
    return true;
  }
  function selectByte(o) {
    var covering = ranged.filter(function (n) { return n.s <= o && o < n.e; });
    if (!covering.length) {
      clear();
      mark.cur = o;
      showByte(o);
      render();
      status.textContent = 'byte 0x' + o.toString(16) + ': no node covers it';
      return;
    }
    var best = covering.reduce(function (a, b) {
      var wa = a.e - a.s, wb = b.e - b.s;
      return wb < wa || (wb === wa && b.depth > a.depth) ? b : a;
    });
    select(best.el.getAttribute('data-id'), covering, true, o);
    status.textContent = 'byte 0x' + o.toString(16) + ' in ' + status.textContent;
  }
  document.getElementById('tree').addEventListener('click', function (ev) {
    var s = ev.target.closest('summary');
    if (s) select(s.parentElement.getAttribute('data-id'));
  });
  hexBox.addEventListener('click', function (ev) {
    var b = ev.target.closest('.b');
    if (b) selectByte(Number(b.getAttribute('data-o')));
  });
  // #byte= takes a decimal or 0x-prefixed offset; anything else is named in the status line.
  function fromAddress() {
    var h = location.hash.slice(1);
    try { h = decodeURIComponent(h); } catch (e) { /* a stray '%': read as written */ }
    if (h.indexOf('sel=') === 0) select(h.slice(4), [], true);
    else if (h.indexOf('byte=') === 0) {
      var v = h.slice(5);
      if (/^(0x[0-9a-f]+|[0-9]+)$/i.test(v) && Number.isSafeInteger(Number(v))) selectByte(Number(v));
      else status.textContent = 'byte=' + v + ': not a byte offset';
    }
  }
  window.addEventListener('hashchange', fromAddress);
  fromAddress();
})();
)";

} // namespace

std::optional<ByteRange> own_range(const Doc &node, std::optional<ByteRange> children) {
  const Doc *off = node.is(Doc::Kind::Table) ? node.find("offset") : nullptr;
  if (!off || !off->is(Doc::Kind::Int) || off->as_int() < 0)
    return std::nullopt;
  uint64_t o = uint64_t(off->as_int());
  for (const SizeRule &rule : kSizeRules)
    if (const Doc *m = node.find(rule.key))
      if (std::optional<int64_t> n = size_by(*m, rule.from); n && *n >= 0)
        return ByteRange{o, o + uint64_t(*n)}; // both below 2^63: no overflow
  if (children)                                // a stream: its header word, then the registers it writes
    return ByteRange{std::min(o, children->begin), std::max(o + 4, children->end)};
  return std::nullopt;
}

void desc_html(const PrintFn &print, std::span<const uint8_t> file, const std::string &title, TextOut &out) {
  TreePrinter tree;
  print(tree);
  const Doc &root = tree.finish();
  html::page_begin(out, "anec-desc: " + title, kCss);
  out << header(tree, root, file, title) << html::open_tag("main", "")
      << html::open_tag("div", attr("id", "tree"));
  tree.write(out);
  out << html::close_tag("div");
  write_hex_view(out, file.first(std::min<size_t>(file.size(), kHexViewBytes)));
  out << html::close_tag("main");
  html::page_end(out, kJs);
}

} // namespace anec::tools
