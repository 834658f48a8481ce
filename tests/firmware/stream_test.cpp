// The stream validator against the per-command one: validate_stream() walks a capture with the compiled
// checks, validate() checks one message and decodes its named fields. Over every command fixture,
// every host command the simulation scripts submit and corrupted variants of each (flipped magic, bad
// checksum, bad padding, an address past 4 GiB, an unknown id, a header field out of range, every
// single-bit flip, a truncated last command), both give the same findings — code, check,
// disposition, offset — message for message, on both channels. And `anec-fw validate` over several
// files or a directory.
#include "anec/firmware/commands.hpp"
#include "anec/firmware/simulate.hpp"
#include "anec/firmware/wire.hpp"
#include "anec/firmware/wire_rules.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/toml.hpp"

#include "../run_tool.hpp"
#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <tuple>
#include <unistd.h>

using namespace anec;
using namespace anec::fw;
namespace fs = std::filesystem;

namespace {
const CommandTable &table() {
  static const CommandTable t =
      CommandTable::load(fs::path(ANEC_TEST_TABLES_DIR) / "schema" / "firmware" / "commands.toml");
  return t;
}
const fs::path kFirmware = fs::path(ANEC_TEST_SOURCE_DIR) / "firmware";

std::vector<fs::path> files_in(const fs::path &dir) {
  std::vector<fs::path> out;
  for (auto &e : fs::directory_iterator(dir))
    out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}
Doc read_doc(const fs::path &p) {
  return p.extension() == ".json" ? json::parse(read_text_file(p), p.string()) : toml::parse_file(p);
}

std::vector<Command> fixture_commands() {
  std::vector<Command> out;
  for (const fs::path &p : files_in(kFirmware / "commands"))
    out.push_back(command_from_doc(read_doc(p), table(), p.string()));
  return out;
}

// The host command each kind of script event submits (docs/firmware-simulation.md); stalls, faults
// and compiles are no commands. A command with a body layout takes its body from the fixture of
// that command, the header from the event.
const std::map<std::string, std::string> kCommandOfEvent = {
    {"boot", "BOOT"},
    {"load", "LOAD_PROGRAM"},
    {"unload", "UNLOAD_PROGRAM"},
    {"create", "CREATE_PROCESS"},
    {"terminate", "TERMINATE_PROCESS"},
    {"call", "PROCEDURE_CALL"},
    {"install", "PROCEDURE_CALL_CACHE_REQUEST"},
    {"trigger", "PROCEDURE_CALL_TRIGGER_CACHE_REQUEST"},
    {"invalidate", "PROCEDURE_CALL_INVALIDATE_CACHE_REQUEST"},
    {"enter_secure", "SECURE_MODE_START"},
    {"exit_secure", "SECURE_MODE_STOP"},
};

std::vector<Command> script_commands() {
  const std::vector<Command> fixtures = fixture_commands();
  std::vector<Command> out;
  for (const fs::path &p : files_in(kFirmware / "scripts"))
    for (const SimEvent &e : script_from_doc(read_doc(p), p.string()).second) {
      auto name = kCommandOfEvent.find(e.kind);
      if (name == kCommandOfEvent.end())
        continue;
      const CommandSpec *spec = table().by_name(name->second);
      if (!spec) {
        ADD_FAILURE() << "no command " << name->second;
        continue;
      }
      uint32_t id = spec->id;
      auto fixture =
          std::find_if(fixtures.begin(), fixtures.end(), [&](const Command &c) { return c.id == id; });
      Command c = fixture == fixtures.end() ? Command{} : *fixture;
      c.id = id;
      c.priority = e.priority;
      c.program_id = int32_t(e.program);
      c.process_id = int32_t(e.process);
      for (auto &[field, value] : c.scalars)
        if (field == "cacheHandler")
          value = e.handle;
      out.push_back(c);
    }
  return out;
}

std::vector<std::vector<uint8_t>> clean_messages() {
  std::vector<std::vector<uint8_t>> out;
  for (const Command &c : fixture_commands())
    out.push_back(encode(c, table()));
  for (const Command &c : script_commands())
    out.push_back(encode(c, table()));
  return out;
}

// The checksum recomputed after an edit, so that only the edited rule fires.
void reseal(std::vector<uint8_t> &m) {
  uint64_t sum_at = kHeaderBytes + le32(m, command_header_layout().at("size").offset) +
                    envelope_layout().at("checksum").offset;
  store_le(m, sum_at, crc32(std::span<const uint8_t>(m).first(sum_at)), 4);
}
uint64_t envelope_at(const std::vector<uint8_t> &m) {
  return kHeaderBytes + le32(m, command_header_layout().at("size").offset);
}

struct Variant {
  std::string what, code; // the code the variant must raise (on the ring channel)
  std::vector<uint8_t> bytes;
};

// Corrupted variants of a clean message, each with the reason code it must raise.
std::vector<Variant> corrupted(const std::vector<uint8_t> &good) {
  std::vector<Variant> out;
  if (good.size() < kHeaderBytes || envelope_at(good) + envelope_layout().bytes > good.size()) {
    ADD_FAILURE() << "a message of " << good.size() << " bytes does not hold its envelope";
    return out;
  }
  auto edit = [&](const std::string &what, const std::string &code, auto &&change, bool resealed) {
    Variant v{what, code, good};
    change(v.bytes);
    if (resealed)
      reseal(v.bytes);
    out.push_back(std::move(v));
  };
  const uint64_t env = envelope_at(good), magic = env + envelope_layout().at("magic").offset,
                 sum = env + envelope_layout().at("checksum").offset;
  const layout::Struct &h = command_header_layout();
  edit(
      "flipped magic", "ANEC-FW-002", [&](auto &m) { m[magic] ^= 0x40; }, false);
  edit(
      "flipped magic, checksum resealed", "ANEC-FW-002", [&](auto &m) { m[magic] ^= 0x40; }, true);
  edit(
      "bad checksum", "ANEC-FW-003", [&](auto &m) { m[sum + 3] ^= 0x01; }, false);
  if (sum + 4 < good.size())
    edit(
        "bad padding", "ANEC-FW-004", [&](auto &m) { m.back() = 0x5a; }, false);
  edit(
      "unknown id", "ANEC-FW-005", [&](auto &m) { store_le(m, h.at("id").offset, 0x99, 4); }, true);
  edit(
      "priority 8", "ANEC-FW-007", [&](auto &m) { store_le(m, h.at("priority").offset, 8, 4); }, true);
  edit(
      "programId 144", "ANEC-FW-008", [&](auto &m) { store_le(m, h.at("programId").offset, 144, 4); }, true);
  edit(
      "procedureId 288", "ANEC-FW-008", [&](auto &m) { store_le(m, h.at("procedureId").offset, 288, 4); },
      true);
  return out;
}

// A chained buffer at 4 GiB (the 32-bit address check), from the cache-request fixture.
std::vector<uint8_t> address_past_4g() {
  for (Command c : fixture_commands())
    if (c.arrays.count("chainedBuffers")) {
      if (c.arrays["chainedBuffers"].empty() || c.arrays["chainedBuffers"][0].size() < 3) {
        ADD_FAILURE() << "chainedBuffers without a first record of 3 fields";
        return {};
      }
      c.arrays["chainedBuffers"][0][2] = 0x100000000ull;
      return encode(c, table());
    }
  return {};
}

using Finding =
    std::tuple<std::string, std::string, Disposition, uint64_t>; // code, check, disposition, offset
std::vector<Finding> findings(const std::vector<Violation> &vs) {
  std::vector<Finding> out;
  for (const Violation &v : vs)
    out.emplace_back(v.code, v.check, v.disposition, v.offset);
  return out;
}

// Each message validated alone, and all of them as one capture: the same findings message for
// message (the stream's at the message's offset), the same accepted and per-disposition counts.
// Every message must frame as itself: its header's size gives its length.
void expect_agreement(const std::vector<std::vector<uint8_t>> &messages, Channel channel) {
  std::vector<uint8_t> capture;
  std::map<uint64_t, std::vector<Finding>> alone; // by the message's offset in the capture
  uint64_t accepted = 0, by[4] = {0, 0, 0, 0};
  for (const auto &m : messages) {
    Validation v = validate(m, table(), channel);
    alone[capture.size()] = findings(v.violations);
    accepted += v.accepted();
    for (int d = 0; d < 4; ++d)
      by[d] += std::any_of(v.violations.begin(), v.violations.end(),
                           [&](const Violation &x) { return int(x.disposition) == d; });
    capture.insert(capture.end(), m.begin(), m.end());
  }
  StreamValidation s = validate_stream(capture, table(), channel, SIZE_MAX);
  EXPECT_EQ(s.messages, messages.size());
  EXPECT_EQ(s.unframed, 0u);
  EXPECT_EQ(s.accepted, accepted);
  for (int d = 0; d < 4; ++d)
    EXPECT_EQ(s.by_disposition[d], by[d]) << disposition_name(Disposition(d));
  std::map<uint64_t, std::vector<Finding>> streamed;
  for (auto &[at, found] : alone)
    streamed[at]; // every message, with or without a finding
  for (const StreamValidation::First &f : s.first)
    streamed[f.offset].push_back(findings({f.violation})[0]);
  EXPECT_EQ(streamed, alone);
}

// The bytes the header's size frames: header, body, envelope, padding to the granule.
uint64_t framed_length(const std::vector<uint8_t> &m) {
  return align_up(kHeaderBytes + le32(m, command_header_layout().at("size").offset) + envelope_layout().bytes,
                  kGranule);
}
} // namespace

TEST(StreamAgreement, FixturesAndScriptCommandsAreClean) {
  auto messages = clean_messages();
  EXPECT_EQ(messages.size(), 11u + 21u); // the fixtures and the 21 host commands of recovery.toml
  for (const auto &m : messages)
    EXPECT_TRUE(validate(m, table()).violations.empty());
  expect_agreement(messages, Channel::Ring);
  expect_agreement(messages, Channel::ExeLoop); // most ids fault there: the same faults
}

TEST(StreamAgreement, CorruptedVariantsRaiseTheirCodeInBothValidators) {
  std::vector<std::vector<uint8_t>> all;
  size_t variants = 0;
  for (const auto &good : clean_messages())
    for (const Variant &v : corrupted(good)) {
      SCOPED_TRACE(v.what);
      std::vector<uint8_t> one = v.bytes;
      auto codes = findings(validate(one, table()).violations);
      EXPECT_TRUE(std::any_of(codes.begin(), codes.end(),
                              [&](const Finding &f) { return std::get<0>(f) == v.code; }));
      StreamValidation s = validate_stream(one, table());
      ASSERT_FALSE(s.first.empty());
      ASSERT_FALSE(codes.empty());
      EXPECT_EQ(s.first[0].violation.code, std::get<0>(codes[0]));
      all.push_back(std::move(one));
      ++variants;
    }
  std::vector<uint8_t> past = address_past_4g();
  ASSERT_FALSE(past.empty());
  EXPECT_EQ(validate(past, table()).violations.at(0).code, "ANEC-FW-012");
  all.push_back(past);
  EXPECT_GT(variants, 200u);
  expect_agreement(all, Channel::Ring);
  expect_agreement(all, Channel::ExeLoop);
}

// Every single-bit flip of every clean message. A flip that keeps the framing is checked in a
// capture against validate(). One in the size field frames the capture differently: a shorter
// message is checked against validate() of those bytes; one past the capture leaves the stream
// truncated (within the slot) or with unframed granules where validate() reports the length
// (ANEC-FW-001).
TEST(StreamAgreement, EverySingleBitFlip) {
  std::vector<std::vector<uint8_t>> framed;
  size_t shorter = 0, longer = 0;
  for (const auto &good : clean_messages())
    for (size_t bit = 0; bit < good.size() * 8; ++bit) {
      auto bad = good;
      bad[bit / 8] ^= uint8_t(1u << (bit % 8));
      uint64_t length = framed_length(bad);
      if (length == bad.size()) {
        framed.push_back(std::move(bad));
        continue;
      }
      StreamValidation s = validate_stream(bad, table(), Channel::Ring, SIZE_MAX);
      std::vector<Finding> at_start;
      for (const StreamValidation::First &f : s.first)
        if (f.offset == 0)
          at_start.push_back(findings({f.violation})[0]);
      if (length < bad.size()) {
        ++shorter;
        EXPECT_EQ(at_start, findings(validate(std::span(bad).first(length), table()).violations));
        continue;
      }
      ++longer; // past the capture: cut short within the slot (nothing read after it), else unframed
      EXPECT_TRUE(at_start.empty());
      if (length <= table().rules().max_command_bytes()) {
        EXPECT_EQ(s.truncated, 1u);
        EXPECT_EQ(s.truncated_offset, 0u);
        EXPECT_EQ(s.messages, 0u);
      } else {
        EXPECT_GE(s.unframed, 1u);
      }
      Validation v = validate(bad, table());
      ASSERT_FALSE(v.violations.empty());
      EXPECT_EQ(v.violations[0].code, "ANEC-FW-001");
    }
  EXPECT_GT(framed.size(), 15000u);
  EXPECT_GT(shorter, 10u);
  EXPECT_GT(longer, 100u);
  expect_agreement(framed, Channel::Ring);
}

// A capture cut inside its last command: the others are accepted as before, the cut one is reported
// truncated where it starts and the walk stops (its body was read as phantom messages before);
// alone, validate() reports its length.
TEST(StreamAgreement, TruncatedLastCommand) {
  auto messages = clean_messages();
  std::vector<uint8_t> capture;
  for (const auto &m : messages)
    capture.insert(capture.end(), m.begin(), m.end());
  ASSERT_FALSE(messages.empty());
  const auto &last = messages.back();
  for (size_t cut : {size_t(1), size_t(8), last.size() / 2, last.size() - 1}) {
    SCOPED_TRACE(cut);
    StreamValidation s = validate_stream(std::span(capture).first(capture.size() - cut), table());
    EXPECT_EQ(s.messages, messages.size() - 1);
    EXPECT_EQ(s.accepted, messages.size() - 1);
    // Cut before its size field, it cannot be framed: one granule unframed, the end of the capture.
    bool sized = table().rules().framed_length(std::span(last).first(last.size() - cut)).has_value();
    EXPECT_EQ(s.unframed, sized ? 0u : 1u);
    EXPECT_EQ(s.truncated, sized ? 1u : 0u);
    if (sized) {
      EXPECT_EQ(s.truncated_offset, capture.size() - last.size());
      EXPECT_EQ(s.truncated_length, last.size());
    }
    EXPECT_TRUE(s.first.empty()); // no finding in the others, no phantom message in the cut one
    Validation v = validate(std::span(last).first(last.size() - cut), table());
    ASSERT_FALSE(v.violations.empty());
    EXPECT_EQ(v.violations[0].code, "ANEC-FW-001");
  }
}

// `anec-fw validate` with several files or a directory: one row per file, one summary, exit 1 for
// a finding and 2 for a file that cannot be read.
TEST(StreamAgreement, ValidateManyFiles) {
  fs::path dir = fs::temp_directory_path() / ("anec-fw-many-" + std::to_string(::getpid()));
  fs::create_directories(dir / "good");
  auto messages = clean_messages();
  std::vector<uint8_t> capture;
  for (const auto &m : messages)
    capture.insert(capture.end(), m.begin(), m.end());
  ASSERT_GE(messages.size(), 3u);
  write_output(dir / "good" / "a.bin", messages[0]);
  write_output(dir / "good" / "b.bin", messages[1]);
  auto bad = messages[2];
  ASSERT_LT(envelope_at(bad) + envelope_layout().at("checksum").offset, bad.size());
  bad[envelope_at(bad) + envelope_layout().at("checksum").offset] ^= 1;
  write_output(dir / "bad.bin", bad);
  write_output(dir / "capture.bin", capture);
  auto fw = [](const std::string &args) {
    return anec::test::run_tool(ANEC_TEST_FW_TOOL, ANEC_TEST_TABLES_DIR, args);
  };
  anec::test::ToolRun r = fw("validate " + (dir / "good").string());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 file(s): 2 without a finding, 0 with one, 0 unreadable"), std::string::npos)
      << r.out;
  r = fw("validate " + (dir / "good").string() + " " + (dir / "bad.bin").string());
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ANEC-FW-003 checksum"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 file(s): 2 without a finding, 1 with one, 0 unreadable"), std::string::npos)
      << r.out;
  r = fw("validate --stream " + (dir / "capture.bin").string() + " " + (dir / "missing.bin").string() +
         " --format json");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  Doc d = json::parse(r.out, "out.json");
  for (const char *key : {"files", "unreadable", "rows"})
    ASSERT_NE(d.find(key), nullptr) << key << " in " << r.out;
  EXPECT_EQ(d.find("files")->as_int(), 2);
  EXPECT_EQ(d.find("unreadable")->as_int(), 1);
  ASSERT_GE(d.find("rows")->items().size(), 2u) << r.out;
  const Doc &row = d.find("rows")->items()[0];
  ASSERT_TRUE(row.find("messages") && row.find("accepted")) << r.out;
  ASSERT_NE(d.find("rows")->items()[1].find("first finding"), nullptr) << r.out;
  EXPECT_EQ(row.find("messages")->as_string(), std::to_string(messages.size()));
  EXPECT_EQ(row.find("accepted")->as_string(), std::to_string(messages.size()));
  EXPECT_NE(d.find("rows")->items()[1].find("first finding")->as_string().find("ANEC-IO-"),
            std::string::npos);
  fs::remove_all(dir);
}
