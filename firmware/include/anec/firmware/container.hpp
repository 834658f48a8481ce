// The firmware program container (guide glossary "AFPP", appendix C.3, ch.2 table exec-forms): a
// package `ANEH` holding programs `ANEP`, each with section records `ANES` and their payloads. Every
// record is read and written through its layout in tables/schema/layout/firmware.toml
// (fw.package_header, fw.program_header, fw.section; docs/firmware-container.md): the guide gives
// the magic words and the section kinds but no field offsets, so the offsets are the project's.
#pragma once
#include "anec/support/diagnostic.hpp"
#include "anec/descriptors/td.hpp"
#include "anec/descriptors/td_schema.hpp"
#include "anec/layout/layout.hpp"
#include "anec/support/doc.hpp"

#include <filesystem>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace anec::fw {

// The records' layouts (compiled in from tables/schema/layout/firmware.toml).
const layout::Struct &package_header_layout(); // fw.package_header
const layout::Struct &program_header_layout(); // fw.program_header
const layout::Struct &section_layout();        // fw.section

// Sizes and magics as named values, each taken from its layout (`bytes`, the magic field's `value`).
inline const uint32_t kPackageHeaderBytes = package_header_layout().bytes;
inline const uint32_t kProgramHeaderBytes = program_header_layout().bytes;
inline const uint32_t kSectionBytes = section_layout().bytes;
inline const uint32_t kPackageMagic = uint32_t(*package_header_layout().at("magic").value); // ANEH
inline const uint32_t kProgramMagic = uint32_t(*program_header_layout().at("magic").value); // ANEP
inline const uint32_t kSectionMagic = uint32_t(*section_layout().at("magic").value);        // ANES

// The managed device-virtual window (ch.21 table c21-translation).
inline constexpr uint64_t kDeviceWindowEnd = 0xE0000000;
inline constexpr uint32_t kBars = 32, kNoBar = 0xffffffff;

// The values of the layout's enum fw_section_kind.
enum class SectionKind : uint32_t { Generic = 0, Kernel = 1, Text = 2, Operation = 3, Procedure = 4 };
// The kind's name in fw_section_kind ("generic", ...), or "unknown".
const char *section_kind_name(uint32_t kind);

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

// An audit finding: code, message and offset in the package (support/diagnostic.hpp).
using PackageFinding = Diagnostic;

// The load-time audit (seed ch.19 table 19.3 "section bounds and overlap audit at load", the
// firmware refusing to load): ANEC-PKG-101 section magic, 102 section bounds (inside its program,
// program inside the package), 103 overlapping payloads or device ranges, 104 alignment (power of
// two; offset and device address aligned), 105 section end past the 0xE0000000 window, 106 buffer
// count (1..32), 107 operation count (exactly 1 on the single dispatch path), 108 BAR index < 32,
// 109 a text section whose task-descriptor chain fails its invariants (decoded with `schema`), 110
// an unknown section kind.
std::vector<PackageFinding> audit_package(std::span<const uint8_t> bytes, const desc::TdSchema &schema);

} // namespace anec::fw
