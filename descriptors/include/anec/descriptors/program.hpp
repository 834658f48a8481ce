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
#include "anec/support/bytes.hpp"
#include "anec/support/document.hpp"
#include "anec/support/error.hpp"
#include "anec/support/format.hpp"

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

namespace anec::desc {

enum class RawChain { Tree, Undecoded };

// The decoded program; `bytes` are the caller's (a mapped file, a Python buffer). `chain` is the tree
// of the chain, a raw chain's left undecoded when the caller decodes it itself (the audit, in flat
// form) or has it printed a descriptor at a time (the dump).
struct DescProgram {
  std::span<const uint8_t> bytes;
  std::shared_ptr<const TdSchema> schema;
  std::optional<Hwx> hwx;
  std::optional<Anec> anec;
  Chain chain;
  RawChain raw = RawChain::Tree;
};

bool is_hwx(std::span<const uint8_t> b);

std::filesystem::path database_path(const std::filesystem::path &tables, int generation);

// The register database of `generation`, whether or not it can walk descriptors (as encoding reads
// it). ANEC-DESC-001 when there is none.
TdSchema any_database(const std::filesystem::path &tables, int generation);

// The register database of `generation`. ANEC-DESC-001 when there is none, ANEC-DESC-002 when it
// cannot walk descriptors.
TdSchema database(const std::filesystem::path &tables, int generation);

// The descriptor generation of an hwx's cpusubtype (the target tables know it: hal::generation_of_subtype).
using GenerationOf = std::function<int(uint32_t cpusubtype)>;

// The register databases, each loaded once (an audit of many files shares them).
class Databases {
public:
  Databases(std::filesystem::path tables, GenerationOf generation_of)
      : tables_(std::move(tables)), generation_of_(std::move(generation_of)) {}
  const std::filesystem::path &tables() const { return tables_; }
  int generation_of(uint32_t cpusubtype) const { return generation_of_(cpusubtype); }
  // The generations whose databases walk descriptors, nearest to `generation` first (ties: the
  // lower), for a raw walk of a generation no database maps.
  std::vector<int> walkable_near(int generation);
  std::shared_ptr<const TdSchema> get(int generation) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<const TdSchema> &schema = loaded_[generation];
    if (!schema)
      schema = std::make_shared<const TdSchema>(database(tables_, generation));
    return schema;
  }

private:
  std::filesystem::path tables_;
  GenerationOf generation_of_;
  std::mutex mutex_;
  std::map<int, std::shared_ptr<const TdSchema>> loaded_;
};

// Told what the reader could not decode (the text of a warning, without a prefix).
using Warn = std::function<void(const std::string &)>;

// An hwx container is read whatever its generation: when no database walks its descriptors, they
// are walked by the stream layout of the nearest generation under which the whole __text walks
// cleanly into the program state's descriptor count (TdSchema::raw_layout, warning ANEC-DESC-004),
// every word shown raw; when none does, the chain is shown as bytes, with a warning. A raw chain
// needs a database.
// `generation` < 0: for an hwx its cpusubtype's, else 7 (H13).
DescProgram read_program(Databases &databases, std::span<const uint8_t> bytes, int generation, RawChain raw,
                         const Warn &warn);

// What `anec-desc dump` prints, as text or as the document anec-desc.dump: every descriptor, or the
// one `only` selects (then the document is marked incomplete and does not encode). A raw chain read
// Undecoded is printed as it is decoded, one descriptor at a time (print_raw_chain).
void print(Printer &p, const DescProgram &program, std::optional<size_t> only = std::nullopt);

// The file a complete dump document describes (`anec-desc encode`), packed through the register
// database of the document's generation.
std::vector<uint8_t> encode_program(const std::filesystem::path &tables, Doc dump, const std::string &source);

} // namespace anec::desc
