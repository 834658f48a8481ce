#include "anec/descriptors/program.hpp"

#include <charconv>
#include <cstdlib>

namespace anec::desc {

bool is_hwx(std::span<const uint8_t> b) {
  return b.size() >= 12 && b[0] == 0xce && b[1] == 0xfa && b[2] == 0xef && b[3] == 0xbe;
}

std::filesystem::path database_path(const std::filesystem::path &tables, int generation) {
  return tables / "schema" / "td" / ("gen" + std::to_string(generation) + ".toml");
}

TdSchema any_database(const std::filesystem::path &tables, int generation) {
  auto schema_path = database_path(tables, generation);
  if (!std::filesystem::exists(schema_path))
    throw Error("ANEC-DESC-001", "no register database for descriptor generation " +
                                     std::to_string(generation) + " (" + schema_path.string() + ")");
  return TdSchema::load(schema_path);
}

TdSchema database(const std::filesystem::path &tables, int generation) {
  TdSchema schema = any_database(tables, generation);
  if (!schema.walkable())
    throw Error("ANEC-DESC-002", "the generation-" + std::to_string(generation) + " database (" +
                                     database_path(tables, generation).string() +
                                     ") has no stream layout to walk descriptors with");
  return schema;
}

std::vector<int> Databases::walkable_near(int generation) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(tables_ / "schema" / "td", ec)) {
    std::string name = e.path().filename().string();
    int g = 0;
    if (!name.starts_with("gen") || !name.ends_with(".toml") ||
        std::from_chars(name.data() + 3, name.data() + name.size() - 5, g).ptr !=
            name.data() + name.size() - 5)
      continue;
    try {
      get(g);
      out.push_back(g);
    } catch (const Error &) { // a database that cannot walk (ANEC-DESC-002) lends no layout
    }
  }
  std::sort(out.begin(), out.end(), [&](int a, int b) {
    return std::pair(std::abs(a - generation), a) < std::pair(std::abs(b - generation), b);
  });
  return out;
}

namespace {
// A raw walk that holds: the whole __text walked, no finding of the walk, as many descriptors as
// the program state counts, and every stream starting on a register word (a layout that reads
// register words as stream headers lands on odd addresses).
bool walks_cleanly(const Hwx &h) {
  if (!h.chain_not_decoded.empty() || (h.program && h.program->td_count != h.chain.tds.size()))
    return false;
  for (const Td &td : h.chain.tds)
    for (const Stream &st : td.streams)
      if (st.address % 4)
        return false;
  return std::none_of(h.chain.findings.begin(), h.chain.findings.end(),
                      [](const Finding &f) { return f.code.starts_with("ANEC-TD-"); });
}

// The layout of the nearest generation that walks an hwx of `generation` cleanly, with its reading.
std::optional<std::pair<std::shared_ptr<const TdSchema>, Hwx>>
raw_walk(Databases &databases, std::span<const uint8_t> bytes, int generation) {
  for (int like : databases.walkable_near(generation)) {
    auto raw = std::make_shared<const TdSchema>(TdSchema::raw_layout(*databases.get(like), generation));
    Hwx h = read_hwx(bytes, *raw);
    if (walks_cleanly(h))
      return std::pair(std::move(raw), std::move(h));
  }
  return std::nullopt;
}
} // namespace

DescProgram read_program(Databases &databases, std::span<const uint8_t> bytes, int generation, RawChain raw,
                         const Warn &warn) {
  DescProgram p{bytes, nullptr, std::nullopt, std::nullopt, {}, raw};
  try {
    if (generation < 0)
      generation = is_hwx(p.bytes) ? databases.generation_of(le32(p.bytes, 8)) : 7;
    p.schema = databases.get(generation);
  } catch (const Error &e) {
    if (!is_hwx(p.bytes) || !e.code().starts_with("ANEC-DESC-00"))
      throw;
    generation = std::max(generation, 0);
    if (auto walked = raw_walk(databases, p.bytes, generation)) {
      p.schema = std::move(walked->first);
      p.hwx = std::move(walked->second);
      p.chain = p.hwx->chain;
      warn(std::string(e.what()) +
           "; ANEC-DESC-004: the descriptors are walked raw with the stream layout of "
           "generation " +
           std::to_string(p.schema->raw_like) + ", no register named");
      return p;
    }
    warn(std::string(e.what()) + "; the descriptors are shown raw");
    auto unwalkable = std::make_shared<TdSchema>();
    unwalkable->generation = generation;
    p.schema = std::move(unwalkable);
  }
  if (is_hwx(p.bytes)) {
    p.hwx = read_hwx(p.bytes, *p.schema);
    p.chain = p.hwx->chain;
    if (p.schema->walkable() && !p.hwx->chain_not_decoded.empty())
      warn("ANEC-HWX-103: " + p.hwx->chain_not_decoded + "; the descriptors are shown raw");
  } else if (looks_like_anec(p.bytes)) {
    p.anec = read_anec(p.bytes, *p.schema);
    p.chain = p.anec->chain;
  } else if (raw == RawChain::Tree) {
    p.chain = decode_raw_chain(p.bytes, *p.schema);
  }
  return p;
}

void print(Printer &p, const DescProgram &program, std::optional<size_t> only) {
  if (program.hwx)
    print(p, *program.hwx, *program.schema, program.bytes, only);
  else if (program.anec)
    print(p, *program.anec, *program.schema, program.bytes, only);
  else if (program.raw == RawChain::Undecoded)
    print_raw_chain(p, *program.schema, program.bytes, only);
  else
    print(p, program.chain, *program.schema, program.bytes, only);
}

std::vector<uint8_t> encode_program(const std::filesystem::path &tables, Doc dump,
                                    const std::string &source) {
  dump = document_body(std::move(dump), "anec-desc.dump", source);
  const Doc *g = dump.find("generation");
  if (!g || !g->is(Doc::Kind::Int))
    throw Error("ANEC-ENC-001", source + ": the dump names no descriptor generation");
  if (g->as_int() < 0 || g->as_int() > 255)
    throw Error("ANEC-ENC-003",
                source + ": 'generation' = " + std::to_string(g->as_int()) + " is out of range");
  const Doc *like = dump.find("raw_layout");
  if (!like)
    return encode_dump(dump, any_database(tables, int(g->as_int())), source);
  if (!like->is(Doc::Kind::Int) || like->as_int() < 0 || like->as_int() > 255)
    throw Error("ANEC-ENC-003", source + ": 'raw_layout' is not a generation");
  return encode_dump(dump, TdSchema::raw_layout(database(tables, int(like->as_int())), int(g->as_int())),
                     source);
}

} // namespace anec::desc
