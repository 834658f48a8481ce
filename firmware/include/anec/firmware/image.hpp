// Firmware images: the Image4 IM4P wrapper (DER: SEQUENCE { IA5String "IM4P", IA5String type,
// IA5String description, OCTET STRING payload, ... }; the engine firmware's type is `anef`, guide
// ch.31) and the tables `anec-fw tables` recovers from the Mach-O inside: the logger-order
// command-name string table (ch.30), the {char* name; u64 id} wire-enum array (ch.30) and the
// register-init blocks (32-byte {name, MMIO base, records, count} descriptors of 12-byte
// {offset, mask, value} records, appendix C.4).
#pragma once
#include "anec/support/doc.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace anec::fw {

struct Im4p {
  std::string type, description;
  std::vector<uint8_t> payload;
};

bool looks_like_im4p(std::span<const uint8_t> bytes);
// ANEC-IM4P-001 not an IM4P, 002 a length past the end or a malformed element.
Im4p read_im4p(std::span<const uint8_t> bytes);
std::vector<uint8_t> write_im4p(const Im4p &im4p);

struct RegRecord {
  uint32_t offset = 0, mask = 0, value = 0;
};
struct RegBlock {
  std::string name;
  uint64_t base = 0, descriptor = 0; // MMIO base; the descriptor's address in the image
  std::vector<RegRecord> records;
};

struct FirmwareTables {
  std::string image_sha256, im4p_type; // im4p_type empty for a bare Mach-O
  uint64_t logger_table = 0;           // address of the first name
  std::vector<std::string> logger_names;
  uint64_t id_array = 0;
  std::vector<std::pair<std::string, uint64_t>> wire_ids;
  std::vector<RegBlock> blocks;
};

// From a firmware image (a Mach-O, or an IM4P of type `anef` holding one). ANEC-IM4P-003 for an
// IM4P of another type; ANEC-FWX-001 when none of the three tables is found; binary errors as
// ANEC-BIN-*.
FirmwareTables extract_tables(std::span<const uint8_t> image, const std::string &name);
// As TOML-shaped document: [extraction], logger_names, [[wire_id]], [[block]] with records.
Doc tables_doc(const FirmwareTables &t);

} // namespace anec::fw
