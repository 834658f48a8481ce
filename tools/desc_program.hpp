// A task-descriptor program read from its bytes, as `anec-desc` reads it and the Python module's
// load_program does: the container told by its bytes (hwx by its magic, anec by its header, else a
// raw chain), the register database chosen by generation (for an hwx by its cpusubtype through the
// target index), the dump document `anec-desc dump --format json` prints, and the encoder that
// rebuilds the file from that document (`anec-desc encode`).
#pragma once
#include "anec/descriptors/anec_container.hpp"
#include "anec/descriptors/dump.hpp"
#include "anec/descriptors/encode.hpp"
#include "anec/descriptors/hwx.hpp"
#include "anec/descriptors/td.hpp"
#include "anec/hal/registry.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "document.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace anec::tools {

// The decoded program; `bytes` are the caller's (a mapped file, a Python buffer). `chain` is the tree
// of the chain, a raw chain's left undecoded when the caller decodes it itself (the audit, in flat
// form).
struct DescProgram {
  std::span<const uint8_t> bytes;
  std::shared_ptr<const desc::TdSchema> schema;
  std::optional<desc::Hwx> hwx;
  std::optional<desc::Anec> anec;
  desc::Chain chain;
};

inline bool is_hwx(std::span<const uint8_t> b) {
  return b.size() >= 12 && b[0] == 0xce && b[1] == 0xfa && b[2] == 0xef && b[3] == 0xbe;
}

// The descriptor generation of the targets whose hwx cpusubtype is `subtype`, from the tables.
// The index generate writes (targets/index.tsv) is enough: the 28 tables are not loaded.
inline int generation_of_subtype(const std::filesystem::path &tables, uint32_t subtype) {
  std::set<uint64_t> generations;
  std::string names;
  for (const hal::IndexEntry &t : hal::load_index(tables / "targets")) {
    if (t.cpusubtype != subtype)
      continue;
    generations.insert(t.td_generation);
    names += (names.empty() ? "" : ", ") + t.name;
  }
  if (generations.size() != 1)
    throw Error("ANEC-DESC-003",
                "cpusubtype " + hex(subtype) +
                    (names.empty() ? " is no target's"
                                   : " is shared by targets of several generations (" + names + ")") +
                    "; pass --generation N");
  return int(*generations.begin());
}

inline std::filesystem::path database_path(const std::filesystem::path &tables, int generation) {
  return tables / "schema" / "td" / ("gen" + std::to_string(generation) + ".toml");
}

// The register database of `generation`, whether or not it can walk descriptors (as encoding reads
// it). ANEC-DESC-001 when there is none.
inline desc::TdSchema any_database(const std::filesystem::path &tables, int generation) {
  auto schema_path = database_path(tables, generation);
  if (!std::filesystem::exists(schema_path))
    throw Error("ANEC-DESC-001", "no register database for descriptor generation " +
                                     std::to_string(generation) + " (" + schema_path.string() + ")");
  return desc::TdSchema::load(schema_path);
}

// The register database of `generation`. ANEC-DESC-001 when there is none, ANEC-DESC-002 when it
// cannot walk descriptors.
inline desc::TdSchema database(const std::filesystem::path &tables, int generation) {
  desc::TdSchema schema = any_database(tables, generation);
  if (!schema.walkable())
    throw Error("ANEC-DESC-002", "the generation-" + std::to_string(generation) + " database (" +
                                     database_path(tables, generation).string() +
                                     ") has no stream layout to walk descriptors with");
  return schema;
}

// The register databases, each loaded once (an audit of many files shares them).
class Databases {
public:
  explicit Databases(std::filesystem::path tables) : tables_(std::move(tables)) {}
  const std::filesystem::path &tables() const { return tables_; }
  std::shared_ptr<const desc::TdSchema> get(int generation) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<const desc::TdSchema> &schema = loaded_[generation];
    if (!schema)
      schema = std::make_shared<const desc::TdSchema>(database(tables_, generation));
    return schema;
  }

private:
  std::filesystem::path tables_;
  std::mutex mutex_;
  std::map<int, std::shared_ptr<const desc::TdSchema>> loaded_;
};

enum class RawChain { Tree, Undecoded };

// Told what the reader could not decode (the text of a warning, without a prefix).
using Warn = std::function<void(const std::string &)>;

// An hwx container is read whatever its generation: when no database walks its descriptors, the
// container is decoded and the chain shown raw, with a warning. A raw chain needs a database.
// `generation` < 0: for an hwx its cpusubtype's, else 7 (H13).
inline DescProgram read_program(Databases &databases, std::span<const uint8_t> bytes, int generation,
                                RawChain raw, const Warn &warn) {
  DescProgram p{bytes, nullptr, std::nullopt, std::nullopt, {}};
  try {
    if (generation < 0)
      generation = is_hwx(p.bytes) ? generation_of_subtype(databases.tables(), le32(p.bytes, 8)) : 7;
    p.schema = databases.get(generation);
  } catch (const Error &e) {
    if (!is_hwx(p.bytes) || !e.code().starts_with("ANEC-DESC-00"))
      throw;
    warn(std::string(e.what()) + "; the descriptors are shown raw");
    auto unwalkable = std::make_shared<desc::TdSchema>();
    unwalkable->generation = std::max(generation, 0);
    p.schema = std::move(unwalkable);
  }
  if (is_hwx(p.bytes)) {
    p.hwx = desc::read_hwx(p.bytes, *p.schema);
    p.chain = p.hwx->chain;
    if (p.schema->walkable() && !p.hwx->chain_not_decoded.empty())
      warn("ANEC-HWX-103: " + p.hwx->chain_not_decoded + "; the descriptors are shown raw");
  } else if (desc::looks_like_anec(p.bytes)) {
    p.anec = desc::read_anec(p.bytes, *p.schema);
    p.chain = p.anec->chain;
  } else if (raw == RawChain::Tree) {
    p.chain = desc::decode_raw_chain(p.bytes, *p.schema);
  }
  return p;
}

// What `anec-desc dump --format json` prints: every descriptor, or the one `only` selects (then
// the document is marked incomplete and does not encode).
inline Doc program_doc(const DescProgram &p, std::optional<size_t> only = std::nullopt) {
  if (p.hwx)
    return desc::hwx_doc(*p.hwx, *p.schema, p.bytes, only);
  if (p.anec)
    return desc::anec_doc(*p.anec, *p.schema, p.bytes, only);
  return desc::dump_doc(p.chain, *p.schema, p.bytes, only);
}

// The file a complete dump document describes (`anec-desc encode`), packed through the register
// database of the document's generation.
inline std::vector<uint8_t> encode_program(const std::filesystem::path &tables, Doc dump,
                                           const std::string &source) {
  dump = document_body(std::move(dump), "anec-desc.dump", source);
  const Doc *g = dump.find("generation");
  if (!g || !g->is(Doc::Kind::Int))
    throw Error("ANEC-ENC-001", source + ": the dump names no descriptor generation");
  if (g->as_int() < 0 || g->as_int() > 255)
    throw Error("ANEC-ENC-003",
                source + ": 'generation' = " + std::to_string(g->as_int()) + " is out of range");
  return desc::encode_dump(dump, any_database(tables, int(g->as_int())), source);
}

} // namespace anec::tools
