#include "anec/descriptors/program.hpp"

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

DescProgram read_program(Databases &databases, std::span<const uint8_t> bytes, int generation, RawChain raw,
                         const Warn &warn) {
  DescProgram p{bytes, nullptr, std::nullopt, std::nullopt, {}};
  try {
    if (generation < 0)
      generation = is_hwx(p.bytes) ? databases.generation_of(le32(p.bytes, 8)) : 7;
    p.schema = databases.get(generation);
  } catch (const Error &e) {
    if (!is_hwx(p.bytes) || !e.code().starts_with("ANEC-DESC-00"))
      throw;
    warn(std::string(e.what()) + "; the descriptors are shown raw");
    auto unwalkable = std::make_shared<TdSchema>();
    unwalkable->generation = std::max(generation, 0);
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
  return encode_dump(dump, any_database(tables, int(g->as_int())), source);
}

} // namespace anec::desc
