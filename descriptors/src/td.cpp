#include "anec/descriptors/td.hpp"

namespace anec::desc {

namespace {
const std::string &block_name(const TdSchema &s, BlockId b) {
  static const std::string header = "Header", none;
  return b == kHeaderBlock ? header : b == kNoBlock ? none : s.blocks[b].name;
}

Word tree_word(const TdSchema &s, const FlatChain &c, uint32_t index, uint64_t offset) {
  const FlatWord &f = c.words[index];
  Word w{offset,
         block_name(s, FlatChain::block(f, s)),
         c.address(index, s),
         f.raw,
         {},
         FlatChain::reserved(f, s)};
  std::span<const FieldExtract> extracts = FlatChain::extracts(f, s);
  w.fields.reserve(extracts.size());
  for (const FieldExtract &x : extracts)
    w.fields.push_back({&s.fields[x.field], x.get(f.raw)});
  return w;
}

} // namespace

Td tree_td(const FlatChain &c, const TdSchema &s, const FlatTd &f) {
  Td td{f.offset, f.size, {}, {}, f.eon};
  std::span<const FlatWord> header = c.header(f, s);
  td.header.reserve(header.size());
  td.streams.reserve(f.streams);
  for (size_t k = 0; k < header.size(); ++k)
    td.header.push_back(tree_word(s, c, uint32_t(f.first_word + k), c.header_offset(f, k)));
  for (const FlatStream &fs : c.streams_of(f)) {
    Stream &st = td.streams.emplace_back(Stream{fs.offset, fs.header, fs.address, fs.count, {}});
    st.words.reserve(fs.count);
    for (uint32_t i = 0; i < fs.count; ++i)
      st.words.push_back(tree_word(s, c, fs.first_word + i, c.stream_offset(fs, i)));
  }
  return td;
}

std::optional<uint32_t> header_field(const Td &td, const std::string &name) {
  for (const Word &w : td.header)
    for (const FieldValue &f : w.fields)
      if (f.field->name == name)
        return f.value;
  return std::nullopt;
}

const Word *find_word(const Chain &c, uint64_t offset) {
  for (const Td &td : c.tds)
    for (const Stream &st : td.streams)
      for (const Word &w : st.words)
        if (w.offset == offset)
          return &w;
  return nullptr;
}

Td decode_td(std::span<const uint8_t> b, uint64_t offset, uint64_t end, const TdSchema &s,
             std::vector<Finding> &findings) {
  FlatChain flat;
  decode_flat_td(b, offset, end, s, flat);
  findings.insert(findings.end(), flat.findings.begin(), flat.findings.end());
  return tree_td(flat, s, flat.tds.front());
}

Chain decode_raw_chain(std::span<const uint8_t> all, const TdSchema &s, const ChainLayout &layout,
                       uint64_t begin, uint64_t end_limit) {
  Chain c;
  FlatChain scratch;
  decode_flat_each(
      all, s, scratch, [&](const FlatChain &f, const FlatTd &td) { c.tds.push_back(tree_td(f, s, td)); },
      layout, begin, end_limit);
  c.sized = scratch.sized;
  c.kernel_offset = scratch.kernel_offset;
  c.kernel_size = scratch.kernel_size;
  c.findings = std::move(scratch.findings);
  return c;
}

} // namespace anec::desc
