// The firmware program container (guide glossary "AFPP", appendix C.3, ch.2 table exec-forms): a
// package `ANEH` holding programs `ANEP`, each with section descriptors `ANES` and their payloads;
// the FourCC values are big-endian character codes stored as little-endian 32-bit words (a byte
// scan finds "HENA"). The guide gives the magic words and the section kinds (generic, kernel,
// text, operation, procedure) but no field offsets; the layout is the project's
// (docs/firmware-container.md).
#pragma once
#include "anec/descriptors/td.hpp"
#include "anec/descriptors/td_schema.hpp"
#include "anec/support/doc.hpp"

#include <filesystem>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace anec::fw {

inline constexpr uint32_t kPackageMagic = 0x414e4548, kProgramMagic = 0x414e4550, kSectionMagic = 0x414e4553; // ANEH ANEP ANES
inline constexpr uint32_t kPackageHeaderBytes = 32, kProgramHeaderBytes = 48, kSectionBytes = 48;
inline constexpr uint64_t kDeviceWindowEnd = 0xE0000000; // the managed device-virtual window (ch.21 table c21-translation)
inline constexpr uint32_t kBars = 32, kNoBar = 0xffffffff;

enum class SectionKind : uint32_t { Generic = 0, Kernel = 1, Text = 2, Operation = 3, Procedure = 4 };
const char *section_kind_name(uint32_t kind); // "generic", ..., or "unknown"

struct Section {
  uint32_t kind = 0, alignment = 64, bar = kNoBar;
  uint64_t offset = 0, size = 0, device_address = 0; // offset from the program's start
  std::vector<uint8_t> payload;
};

struct Program {
  uint32_t id = 0, buffers = 0, operations = 1, procedures = 1;
  uint64_t bytes = 0; // as the header says; the writer computes it
  std::vector<Section> sections;
  uint64_t offset = 0; // in the package (read side)
};

struct Package {
  uint32_t version = 1;
  uint64_t bytes = 0;
  std::vector<Program> programs;
};

// Lays the package out: section payloads after the descriptor table, each at its alignment, in
// order; section offsets and program and package sizes are computed. ANEC-PKG-001 for a section
// whose alignment is not a power of two.
std::vector<uint8_t> write_package(Package p);
// ANEC-PKG-002 for bytes that are not a package (magic, a header past the end); section
// payloads past the program are left empty for the audit to report.
Package read_package(std::span<const uint8_t> bytes);

// A package described in TOML or JSON: [[program]] (id, buffers, operations, procedures) with
// [[program.section]] (kind, alignment, bar, device_address, and the payload as `file` relative to
// `base` or `hex`). ANEC-PKG-003 for a description that does not fit.
Package package_from_doc(const Doc &doc, const std::filesystem::path &base, const std::string &source);
// One program from an hwx container: __TEXT.__text as the text section, the other __TEXT sections
// as kernel sections, at their device addresses, each with the buffer slot the program state gives.
Package package_from_hwx(std::span<const uint8_t> file, const desc::TdSchema &schema);

struct PackageFinding {
  std::string code, message;
  uint64_t offset = 0;
};

// The load-time audit (seed ch.19 table 19.3 "section bounds and overlap audit at load", the
// firmware refusing to load): ANEC-PKG-101 section magic, 102 section bounds (inside its program,
// program inside the package), 103 overlapping payloads or device ranges, 104 alignment (power of
// two; offset and device address aligned), 105 section end past the 0xE0000000 window, 106 buffer
// count (1..32), 107 operation count (exactly 1 on the single dispatch path), 108 BAR index < 32,
// 109 a text section whose task-descriptor chain fails its invariants (decoded with `schema`), 110
// an unknown section kind.
std::vector<PackageFinding> audit_package(std::span<const uint8_t> bytes, const desc::TdSchema &schema);

} // namespace anec::fw
