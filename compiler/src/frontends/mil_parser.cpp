// MIL text as a program: a lexer and a recursive-descent parser with a nesting limit. The grammar,
// as coremltools prints a program (facts from its MIL printer's output in the test files):
//   program   := "program" "(" VERSION ")" [ "[" named { "," named } "]" ] "{" { function } "}"
//   function  := "func" NAME [ "<" OPSET ">" ] "(" [ var { "," var } ] ")" [ "[" named... "]" ]
//                "{" { op } "}" "->" "(" [ NAME { "," NAME } ] ")" ";"
//   op        := var { "," var } "=" NAME "(" [ named { "," named } ] ")" [ "[" named... "]" ] ";"
//   var       := type NAME
//   named     := NAME "=" value
//   value     := type "(" [ value ] ")" | "BLOBFILE" "(" named "," named ")" | NAME | NUMBER | STRING
//              | "(" values ")" | "[" values "]" | "{" values "}"
//   type      := NAME [ "<" targ { "," targ } ">" ],  targ := type | "[" dims "]" | NUMBER | "*" | "?"
#include "anec/compiler/frontends/mil.hpp"

#include "anec/support/error.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace anec::compiler {

namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxItems = size_t(1) << 24;
constexpr size_t kMaxOps = size_t(1) << 22;
constexpr size_t kMaxFunctions = 4096;

enum class Tok { End, Name, Number, String, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string_view text; // as written (a string: without its quotes, escapes not yet undone)
  MilPos pos;
  size_t offset = 0;
};

bool name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9') || c == '.';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}

class Parser {
public:
  Parser(std::string_view text, const std::string &source) : s_(text), source_(source) { next(); }

  MilProgram program() {
    MilProgram p;
    expect_name("program");
    expect("(");
    if (t_.kind != Tok::Number)
      fail("ANEC-MIL-002", "expected the program's version, as in program(1.3)");
    p.version = std::string(t_.text);
    next();
    expect(")");
    if (is("["))
      p.attributes = named_list("[", "]", 0);
    expect("{");
    while (!is("}")) {
      if (p.functions.size() >= kMaxFunctions)
        fail("ANEC-MIL-004", "more than " + std::to_string(kMaxFunctions) + " functions");
      p.functions.push_back(function());
    }
    expect("}");
    if (t_.kind != Tok::End)
      fail("ANEC-MIL-002", "text after the program's closing '}'");
    return p;
  }

private:
  // ---- lexer ----
  void skip_space() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        line_start_ = ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n')
          ++i_;
      } else {
        break;
      }
    }
  }
  // The next character after the current token, spaces skipped (one line is enough: a typed value's
  // '<' or '(' follows its type name).
  char peek() const {
    size_t k = i_;
    while (k < s_.size() && (s_[k] == ' ' || s_[k] == '\t'))
      ++k;
    return k < s_.size() ? s_[k] : '\0';
  }
  MilPos here() const { return MilPos{uint32_t(line_), uint32_t(i_ - line_start_ + 1), uint32_t(i_)}; }

  void next() {
    previous_end_ = i_;
    skip_space();
    t_ = Token{};
    t_.pos = here();
    t_.offset = i_;
    if (i_ >= s_.size())
      return;
    size_t start = i_;
    char c = s_[i_];
    if (name_start(c)) {
      while (i_ < s_.size() && name_char(s_[i_]))
        ++i_;
      t_.kind = Tok::Name;
    } else if (digit(c) || ((c == '-' || c == '+' || c == '.') && i_ + 1 < s_.size() &&
                            (digit(s_[i_ + 1]) || s_[i_ + 1] == '.' || name_start(s_[i_ + 1])))) {
      // A number: sign, decimal or hex digits, point, exponent (e/E or p/P with a sign); also a signed
      // inf/nan. The characters are taken greedily and checked when the number is read.
      ++i_;
      while (i_ < s_.size()) {
        char d = s_[i_];
        bool exp_sign = (d == '-' || d == '+') &&
                        (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E' || s_[i_ - 1] == 'p' || s_[i_ - 1] == 'P');
        if (!(name_char(d) || exp_sign))
          break;
        ++i_;
      }
      t_.kind = Tok::Number;
    } else if (c == '"') {
      ++i_;
      while (i_ < s_.size() && s_[i_] != '"') {
        if (s_[i_] == '\n')
          fail_at(t_.pos, start, "ANEC-MIL-001", "a string runs past the end of its line");
        i_ += s_[i_] == '\\' && i_ + 1 < s_.size() ? 2 : 1;
      }
      if (i_ >= s_.size())
        fail_at(t_.pos, start, "ANEC-MIL-001", "a string is not closed");
      t_.kind = Tok::String;
      t_.text = s_.substr(start + 1, i_ - start - 1);
      ++i_;
      return;
    } else if (c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') {
      i_ += 2;
      t_.kind = Tok::Punct;
    } else if (std::string_view("()[]{}<>,=;*?:").find(c) != std::string_view::npos) {
      ++i_;
      t_.kind = Tok::Punct;
    } else {
      fail_at(t_.pos, start, "ANEC-MIL-001", "unexpected character");
    }
    t_.text = s_.substr(start, i_ - start);
  }

  // ---- errors ----
  // "FILE:LINE:COL: MESSAGE near '...'" with up to 40 characters of the line from the offending
  // token, control characters shown as '?'.
  [[noreturn]] void fail_at(MilPos pos, size_t offset, const char *code, const std::string &message) const {
    std::string excerpt;
    for (size_t k = offset; k < s_.size() && s_[k] != '\n' && excerpt.size() < 40; ++k) {
      unsigned char ch = static_cast<unsigned char>(s_[k]);
      excerpt += ch < 0x20 || ch == 0x7f ? '?' : char(ch);
    }
    throw Error(code, source_ + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column) + ": " +
                          message +
                          (excerpt.empty() ? " at the end of the text" : " near '" + excerpt + "'"));
  }
  [[noreturn]] void fail(const char *code, const std::string &message) const {
    fail_at(t_.pos, t_.offset, code, message);
  }

  bool is(std::string_view p) const { return t_.kind == Tok::Punct && t_.text == p; }
  void expect(std::string_view p) {
    if (!is(p))
      fail("ANEC-MIL-002", "expected '" + std::string(p) + "'");
    next();
  }
  void expect_name(std::string_view n) {
    if (t_.kind != Tok::Name || t_.text != n)
      fail("ANEC-MIL-002", "expected '" + std::string(n) + "'");
    next();
  }
  std::string name(const char *what) {
    if (t_.kind != Tok::Name)
      fail("ANEC-MIL-002", std::string("expected ") + what);
    std::string out(t_.text);
    next();
    return out;
  }
  void deeper(int depth) const {
    if (depth > kMaxDepth)
      fail("ANEC-MIL-004", "values or types nested deeper than " + std::to_string(kMaxDepth));
  }

  // ---- types ----
  MilType type(int depth) {
    deeper(depth);
    MilType ty;
    ty.dtype = name("a type");
    if (!is("<"))
      return ty;
    next();
    if (ty.dtype == "tensor") {
      ty.tensor = true;
      ty.dtype = name("the tensor's element type");
      expect(",");
      if (is("*")) {
        ty.unknown_rank = true;
        next();
      } else {
        dims(ty);
      }
      expect(">");
      return ty;
    }
    // dict<K, V>, list<T, N>, tuple<...>, state<T>: the arguments are read and not kept.
    ty.unknown_rank = true;
    for (size_t n = 0;; ++n) {
      if (n >= kMaxItems)
        fail("ANEC-MIL-004", "too many type arguments");
      if (is("[")) {
        MilType skip;
        dims(skip);
      } else if (t_.kind == Tok::Number || is("?") || is("*")) {
        next();
      } else {
        MilType inner = type(depth + 1);
        if (ty.dtype == "state" && inner.tensor) // state<tensor<...>>: the state's tensor type
          ty = inner;
      }
      if (!is(","))
        break;
      next();
    }
    expect(">");
    return ty;
  }
  void dims(MilType &ty) {
    expect("[");
    while (!is("]")) {
      if (ty.dims.size() >= 64)
        fail("ANEC-MIL-004", "a tensor of more than 64 dimensions");
      if (t_.kind == Tok::Number) {
        int64_t v = integer_of(t_);
        if (v < 0 || v > kMaxDimension)
          fail("ANEC-MIL-003", "a dimension outside 0.." + std::to_string(kMaxDimension));
        ty.dims.push_back(v);
        ty.symbols.emplace_back();
      } else if (t_.kind == Tok::Name || is("?")) {
        ty.dims.push_back(-1);
        ty.symbols.emplace_back(is("?") ? "" : std::string(t_.text));
      } else {
        fail("ANEC-MIL-002", "expected a dimension");
      }
      next();
      if (!is(","))
        break;
      next();
    }
    expect("]");
  }

  // ---- literals ----
  int64_t integer_of(const Token &t) const {
    std::string_view v = t.text;
    bool neg = !v.empty() && v[0] == '-';
    if (!v.empty() && (v[0] == '-' || v[0] == '+'))
      v.remove_prefix(1);
    uint64_t u = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), u);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty())
      fail_at(t.pos, t.offset, "ANEC-MIL-003", "not an integer");
    if (u > uint64_t(std::numeric_limits<int64_t>::max()) + (neg ? 1 : 0))
      fail_at(t.pos, t.offset, "ANEC-MIL-003", "an integer outside 64 bits");
    return neg ? int64_t(0 - u) : int64_t(u);
  }
  static bool integral(std::string_view v) {
    size_t k = !v.empty() && (v[0] == '-' || v[0] == '+') ? 1 : 0;
    if (k == v.size())
      return false;
    for (; k < v.size(); ++k)
      if (!digit(v[k]))
        return false;
    return true;
  }
  // A decimal or C99 hex float ("0x1p-3", "-0x1.8p+2"), inf or nan.
  double real_of(const Token &t) const {
    std::string_view v = t.text;
    bool neg = !v.empty() && v[0] == '-';
    if (!v.empty() && (v[0] == '-' || v[0] == '+'))
      v.remove_prefix(1);
    if (v == "inf" || v == "infinity")
      return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (v == "nan")
      return std::numeric_limits<double>::quiet_NaN();
    auto format = std::chars_format::general;
    if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
      v.remove_prefix(2);
      format = std::chars_format::hex;
    }
    double d = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d, format);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty())
      fail_at(t.pos, t.offset, "ANEC-MIL-003", "not a number");
    return neg ? -d : d;
  }
  std::string unescaped(const Token &t) const {
    std::string out;
    for (size_t k = 0; k < t.text.size(); ++k) {
      char c = t.text[k];
      if (c != '\\' || k + 1 == t.text.size()) {
        out += c;
        continue;
      }
      char e = t.text[++k];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
    }
    return out;
  }

  // ---- values ----
  static bool type_keyword(std::string_view n) {
    static constexpr std::string_view kinds[] = {
        "tensor", "dict",  "list",  "tuple", "state",  "string", "bool",   "fp16",      "fp32",
        "fp64",   "bf16",  "int4",  "int8",  "int16",  "int32",  "int64",  "uint1",     "uint2",
        "uint3",  "uint4", "uint6", "uint8", "uint16", "uint32", "uint64", "fp8e4m3fn", "fp8e5m2"};
    for (std::string_view k : kinds)
      if (n == k)
        return true;
    return false;
  }

  MilValue value(int depth) {
    MilValue v = value_as_written(depth);
    v.end = uint32_t(previous_end_);
    return v;
  }
  MilValue value_as_written(int depth) {
    deeper(depth);
    MilValue v;
    v.pos = t_.pos;
    if (t_.kind == Tok::String) {
      v.kind = MilValue::Kind::String;
      v.text = unescaped(t_);
      next();
      return v;
    }
    if (t_.kind == Tok::Number) {
      if (integral(t_.text)) {
        v.kind = MilValue::Kind::Int;
        v.i = integer_of(t_);
      } else {
        v.kind = MilValue::Kind::Float;
        v.f = real_of(t_);
      }
      next();
      return v;
    }
    if (is("(") || is("[") || is("{")) {
      std::string close = is("(") ? ")" : is("[") ? "]" : "}";
      next();
      v.kind = MilValue::Kind::List;
      while (!is(close)) {
        if (v.items.size() >= kMaxItems)
          fail("ANEC-MIL-004", "more than " + std::to_string(kMaxItems) + " items in one value");
        v.items.push_back(value(depth + 1));
        if (!is(","))
          break;
        next();
      }
      expect(close);
      return v;
    }
    if (t_.kind != Tok::Name)
      fail("ANEC-MIL-002", "expected a value");
    std::string_view n = t_.text;
    if (n == "true" || n == "false") {
      v.kind = MilValue::Kind::Bool;
      v.i = n == "true";
      next();
      return v;
    }
    if (n == "inf" || n == "nan" || n == "infinity") {
      v.kind = MilValue::Kind::Float;
      v.f = real_of(t_);
      next();
      return v;
    }
    if (n == "BLOBFILE") {
      next();
      v.kind = MilValue::Kind::Blob;
      std::vector<MilNamed> args = named_list("(", ")", depth + 1);
      bool path = false, offset = false;
      for (const MilNamed &a : args) {
        const MilValue &x = a.value.unwrapped();
        if (a.name == "path" && x.kind == MilValue::Kind::String) {
          v.text = x.text;
          path = true;
        } else if (a.name == "offset" && x.kind == MilValue::Kind::Int && x.i >= 0) {
          v.i = x.i;
          offset = true;
        }
      }
      if (!path || !offset)
        fail_at(v.pos, offset_of(v.pos), "ANEC-MIL-002",
                "BLOBFILE takes path = string(\"...\") and offset = uint64(N)");
      return v;
    }
    if (type_keyword(n) && (peek() == '<' || peek() == '(')) { // else a variable named like a type (`state`)
      v.kind = MilValue::Kind::Typed;
      v.type = type(depth + 1);
      expect("(");
      if (!is(")"))
        v.items.push_back(value(depth + 1));
      expect(")");
      return v;
    }
    v.kind = MilValue::Kind::Name;
    v.text = std::string(n);
    next();
    return v;
  }
  size_t offset_of(MilPos p) const {
    // the text offset of a position on an earlier line: walk back from the current line start
    size_t line = line_, start = line_start_;
    while (line > p.line && start > 0) {
      size_t k = start - 1;
      while (k > 0 && s_[k - 1] != '\n')
        --k;
      start = k;
      --line;
    }
    return std::min(s_.size(), start + (p.column ? p.column - 1 : 0));
  }

  std::vector<MilNamed> named_list(std::string_view open, std::string_view close, int depth) {
    deeper(depth);
    expect(open);
    std::vector<MilNamed> out;
    while (!is(close)) {
      if (out.size() >= kMaxItems)
        fail("ANEC-MIL-004", "too many named values");
      MilNamed n;
      n.name = name("a name");
      expect("=");
      n.value = value(depth + 1);
      out.push_back(std::move(n));
      if (!is(","))
        break;
      next();
    }
    expect(close);
    return out;
  }

  MilVar var() {
    MilVar v;
    v.type = type(0);
    v.name = name("a name after the type");
    return v;
  }

  MilFunction function() {
    MilFunction f;
    f.pos = t_.pos;
    expect_name("func");
    f.name = name("the function's name");
    if (is("<")) {
      next();
      f.opset = name("the function's opset, as in main<ios18>");
      expect(">");
    }
    expect("(");
    while (!is(")")) {
      f.inputs.push_back(var());
      if (f.inputs.size() > kMaxFunctions * 16)
        fail("ANEC-MIL-004", "too many inputs");
      if (!is(","))
        break;
      next();
    }
    expect(")");
    if (is("[")) // [FlexibleShapeInformation = tuple<...>(...)] for flexible or enumerated input shapes
      f.attributes = named_list("[", "]", 0);
    expect("{");
    while (!is("}")) {
      if (f.ops.size() >= kMaxOps)
        fail("ANEC-MIL-004", "more than " + std::to_string(kMaxOps) + " operations in one function");
      f.ops.push_back(op());
    }
    expect("}");
    expect("->");
    expect("(");
    while (!is(")")) {
      f.outputs.push_back(name("an output name"));
      if (!is(","))
        break;
      next();
    }
    expect(")");
    expect(";");
    return f;
  }

  MilOp op() {
    MilOp o;
    o.pos = t_.pos;
    for (;;) {
      if (o.outputs.size() >= 4096)
        fail("ANEC-MIL-004", "too many outputs");
      o.outputs.push_back(var());
      if (!is(","))
        break;
      next();
    }
    expect("=");
    o.type = name("an operation");
    o.inputs = named_list("(", ")", 0);
    if (is("["))
      o.attributes = named_list("[", "]", 0);
    expect(";");
    o.end = uint32_t(previous_end_);
    return o;
  }

  std::string_view s_;
  const std::string &source_;
  size_t i_ = 0, line_ = 1, line_start_ = 0;
  size_t previous_end_ = 0; // the offset just past the token before the current one
  Token t_;
};

} // namespace

std::string MilType::str() const {
  if (!tensor)
    return dtype;
  std::string out = "tensor<" + dtype + ", ";
  if (unknown_rank)
    return out + "*>";
  out += "[";
  for (size_t k = 0; k < dims.size(); ++k)
    out +=
        (k ? ", " : "") + (dims[k] < 0 ? (symbols[k].empty() ? "?" : symbols[k]) : std::to_string(dims[k]));
  return out + "]>";
}

int64_t MilType::elements() const {
  if (!tensor)
    return unknown_rank ? 0 : 1;
  if (unknown_rank)
    return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return 0;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return 0;
    n *= d;
  }
  return n;
}

const MilValue &MilValue::unwrapped() const {
  return kind == Kind::Typed && items.size() == 1 ? items[0] : *this;
}

bool MilValue::numbers(std::vector<double> &out) const {
  const MilValue &v = unwrapped();
  switch (v.kind) {
  case Kind::Int:
  case Kind::Bool:
    out.push_back(double(v.i));
    return true;
  case Kind::Float:
    out.push_back(v.f);
    return true;
  case Kind::List:
    for (const MilValue &x : v.items)
      if (!x.numbers(out))
        return false;
    return true;
  default:
    return false;
  }
}

std::string MilOp::name() const {
  if (const MilValue *n = attribute("name"); n && n->unwrapped().kind == MilValue::Kind::String)
    return n->unwrapped().text;
  return outputs.empty() ? type : outputs[0].name;
}

const MilValue *MilOp::input(std::string_view n) const {
  for (const MilNamed &x : inputs)
    if (x.name == n)
      return &x.value;
  return nullptr;
}

const MilValue *MilOp::attribute(std::string_view n) const {
  for (const MilNamed &x : attributes)
    if (x.name == n)
      return &x.value;
  return nullptr;
}

MilProgram parse_mil(std::string_view text, const std::string &source) {
  if (text.size() > kMilMaxBytes)
    throw Error("ANEC-MIL-004",
                source + ": the text is larger than " + std::to_string(kMilMaxBytes) + " bytes");
  return Parser(text, source).program();
}

} // namespace anec::compiler
