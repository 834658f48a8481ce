#include "anec/compiler/passes/tune_mil.hpp"

#include "anec/compiler/frontends/mil.hpp"
#include "anec/support/error.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace anec::compiler {

namespace {

constexpr const char *kCode = "ANEC-TUNE-002";

// Every value inside `v` (itself included), depth first.
void each_value(const MilValue &v, const std::function<void(const MilValue &)> &f) {
  f(v);
  for (const MilValue &x : v.items)
    each_value(x, f);
}

void each_value(const MilOp &o, const std::function<void(const MilValue &)> &f) {
  for (const MilNamed &n : o.inputs)
    each_value(n.value, f);
  for (const MilNamed &n : o.attributes)
    each_value(n.value, f);
}

struct Patch {
  size_t begin, end;
  std::string text;
};

class Writer {
public:
  Writer(std::string_view text, const std::string &source, const MilFunction &f)
      : text_(text), source_(source), f_(f) {
    for (const MilVar &v : f.inputs)
      types_[v.name] = v.type, taken_.insert(v.name);
    for (size_t i = 0; i < f.ops.size(); ++i) {
      const MilOp &o = f.ops[i];
      by_name_[o.name()] = i;
      taken_.insert(o.name());
      for (const MilVar &v : o.outputs)
        types_[v.name] = v.type, taken_.insert(v.name), writer_[v.name] = i;
      each_value(o, [&](const MilValue &v) {
        if (v.kind == MilValue::Kind::Name)
          ++reads_[v.text];
      });
    }
  }

  // ---- the rewrites, each at one site ----
  void drop_transpose(const std::string &rule, const std::string &site) {
    const MilOp &o = site_op(rule, site, "transpose");
    const MilValue *x = o.input("x");
    if (!x || x->kind != MilValue::Kind::Name || o.outputs.size() != 1)
      fail(rule, site, "its input is not a named tensor");
    renamed_[o.outputs[0].name] = x->text;
    replaced_[by_name_.at(site)] = "";
  }

  void linear_as_conv(const std::string &rule, const std::string &site) {
    const MilOp &o = site_op(rule, site, "linear");
    const MilValue *x = o.input("x"), *w = o.input("weight"), *b = o.input("bias");
    if (!x || x->kind != MilValue::Kind::Name || !types_.count(x->text) || o.outputs.size() != 1)
      fail(rule, site, "its input is not a named tensor");
    const MilType &xt = types_.at(x->text);
    if (!xt.tensor || xt.dims.size() != 2)
      fail(rule, site, "its input is of rank " + std::to_string(xt.dims.size()) + ", not 2");
    const MilOp *wc = w && w->kind == MilValue::Kind::Name && writer_.count(w->text)
                          ? &f_.ops[writer_.at(w->text)]
                          : nullptr;
    const MilValue *val = wc && wc->type == "const" ? wc->attribute("val") : nullptr;
    if (!val || val->kind != MilValue::Kind::Typed || val->items.size() != 1)
      fail(rule, site, "its weight is not a const (a compressed weight's bytes would need rewriting)");
    const MilVar &y = o.outputs[0];
    std::string xn = fresh(site + "_x"), wn = fresh(site + "_weight"), yn = fresh(site + "_conv"),
                sq = fresh(site + "_squeeze");
    const MilValue &item = val->items[0];
    std::string axes = "axes = tensor<int32, [1]>([-1])";
    std::vector<std::string> lines = {
        unit_last(xt) + " " + xn + " = expand_dims(x = " + current(x->text) + ", " + axes + ")" + named(xn),
        unit_last(wc->outputs[0].type) + " " + wn + " = const()[name = string(\"" + wn +
            "\"), val = " + unit_last(*val->type) + "(" + slice(item.pos.offset, item.end) + ")];",
        unit_last(y.type) + " " + yn + " = conv(x = " + xn + ", weight = " + wn +
            (b ? ", bias = " + renamed_text(*b) : "") +
            ", strides = tensor<int32, [1]>([1]), pad_type = string(\"valid\"), pad = tensor<int32, [2]>([0, "
            "0]), "
            "dilations = tensor<int32, [1]>([1]), groups = int32(1))" +
            named(site),
        y.type.str() + " " + y.name + " = squeeze(x = " + yn + ", " + axes + ")" + named(sq)};
    replaced_[by_name_.at(site)] = join_lines(lines, indent_of(o.pos.offset));
    if (reads_[w->text] == 1) // the old weight has no other reader
      replaced_[writer_.at(w->text)] = "";
  }

  // ---- the text ----
  std::string written() const {
    std::vector<Patch> patches;
    for (const auto &[i, text] : replaced_) {
      const MilOp &o = f_.ops[i];
      patches.push_back(text.empty() ? whole_lines(o.pos.offset, o.end) : Patch{o.pos.offset, o.end, text});
    }
    for (size_t i = 0; i < f_.ops.size(); ++i)
      if (!replaced_.count(i))
        each_value(f_.ops[i], [&](const MilValue &v) {
          if (v.kind == MilValue::Kind::Name && renamed_.count(v.text))
            patches.push_back(Patch{v.pos.offset, v.end, current(v.text)});
        });
    std::sort(patches.begin(), patches.end(),
              [](const Patch &a, const Patch &b) { return a.begin < b.begin; });
    std::string out;
    size_t at = 0;
    for (const Patch &p : patches) {
      out.append(text_.substr(at, p.begin - at));
      out += p.text;
      at = p.end;
    }
    out.append(text_.substr(at));
    return out;
  }

  [[noreturn]] void fail(const std::string &rule, const std::string &site, const std::string &why) const {
    throw Error(kCode, source_ + ": the kept rewrite '" + rule + "' at '" + site +
                           "' has no MIL form here: " + why +
                           "; write the anec-graph form (BEST.json) instead");
  }

private:
  const MilOp &site_op(const std::string &rule, const std::string &site, const std::string &type) const {
    auto it = by_name_.find(site);
    if (it == by_name_.end())
      fail(rule, site, "no operation of the program has that name");
    const MilOp &o = f_.ops[it->second];
    if (o.type != type)
      fail(rule, site, "it is a MIL '" + o.type + "', not a '" + type + "'");
    return o;
  }
  // A name not yet used in the function.
  std::string fresh(const std::string &base) {
    std::string n = base;
    for (int k = 2; taken_.count(n); ++k)
      n = base + "_" + std::to_string(k);
    taken_.insert(n);
    return n;
  }
  // What a name reads once the dropped permutations are gone.
  std::string current(std::string n) const {
    for (auto it = renamed_.find(n); it != renamed_.end(); it = renamed_.find(n))
      n = it->second;
    return n;
  }
  std::string renamed_text(const MilValue &v) const {
    return v.kind == MilValue::Kind::Name ? current(v.text) : slice(v.pos.offset, v.end);
  }
  static std::string named(const std::string &name) { return "[name = string(\"" + name + "\")];"; }
  // A tensor type with a trailing axis of 1.
  static std::string unit_last(MilType t) {
    t.dims.push_back(1);
    t.symbols.emplace_back();
    return t.str();
  }
  std::string slice(size_t begin, size_t end) const { return std::string(text_.substr(begin, end - begin)); }
  std::string indent_of(size_t at) const {
    size_t start = text_.rfind('\n', at == 0 ? 0 : at - 1);
    start = start == std::string_view::npos ? 0 : start + 1;
    return slice(start, at);
  }
  static std::string join_lines(const std::vector<std::string> &lines, const std::string &indent) {
    std::string out;
    for (const std::string &l : lines)
      out += (out.empty() ? "" : "\n" + indent) + l;
    return out;
  }
  // [begin, end) with its line's indentation and line end, when nothing else is on the line.
  Patch whole_lines(size_t begin, size_t end) const {
    size_t b = begin - indent_of(begin).size();
    bool alone = indent_of(begin).find_first_not_of(" \t") == std::string::npos;
    size_t e = text_.find_first_not_of(" \t\r", end);
    if (alone && (e == std::string_view::npos || text_[e] == '\n'))
      return Patch{b, e == std::string_view::npos ? text_.size() : e + 1, ""};
    return Patch{begin, end, ""};
  }

  std::string_view text_;
  const std::string &source_;
  const MilFunction &f_;
  std::map<std::string, MilType> types_;
  std::map<std::string, size_t> by_name_, writer_; // op name -> op; var -> the op that writes it
  std::map<std::string, size_t> reads_;            // var -> how many values name it
  std::set<std::string> taken_;
  std::map<std::string, std::string> renamed_; // a dropped permutation's output -> its input
  std::map<size_t, std::string> replaced_;     // op -> its new text ("" removes it)
};

const Rewrite &rule_named(const std::vector<Rewrite> &rules, const std::string &name) {
  for (const Rewrite &r : rules)
    if (r.name == name)
      return r;
  throw Error("ANEC-INTERNAL", "tune step '" + name + "' names no rewrite");
}

} // namespace

TunedMil tuned_mil(std::string_view text, const std::string &source, const std::string &function,
                   const TuneResult &r, const std::vector<Rewrite> &rules) {
  MilProgram p = parse_mil(text, source);
  auto f = std::find_if(p.functions.begin(), p.functions.end(),
                        [&](const MilFunction &x) { return x.name == function; });
  if (f == p.functions.end())
    throw Error("ANEC-MIL-005", source + ": no function '" + function + "'");
  Writer w(text, source, *f);
  // The permutations go first: a rewritten op reads what they read.
  for (bool drops : {true, false})
    for (const TuneStep &s : r.steps) {
      const Rewrite &rule = rule_named(rules, s.rewrite);
      if (!s.kept || (rule.replacement == "drop_transpose") != drops)
        continue;
      for (const std::string &site : s.sites) {
        if (drops)
          w.drop_transpose(rule.name, site);
        else if (rule.replacement == "retype" && rule.pattern == "linear" && rule.to == "conv")
          w.linear_as_conv(rule.name, site);
        else
          w.fail(rule.name, site,
                 "anec writes no MIL for the '" + rule.replacement + "' replacement" +
                     (rule.to.empty() ? "" : " to '" + rule.to + "'"));
      }
    }
  TunedMil out{w.written(), {}};
  std::set<std::string> seen;
  for (const MilFunction &fn : p.functions)
    for (const MilOp &o : fn.ops)
      each_value(o, [&](const MilValue &v) {
        if (v.kind == MilValue::Kind::Blob && seen.insert(v.text).second)
          out.blobs.push_back(v.text);
      });
  return out;
}

} // namespace anec::compiler
