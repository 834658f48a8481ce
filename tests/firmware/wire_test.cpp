// Host-to-firmware commands: the table, golden encodings, round trips, one negative test per rule
// with its reason code and disposition, and every single-bit flip of valid commands detected.
#include "anec/firmware/commands.hpp"
#include "anec/firmware/wire.hpp"
#include "anec/support/bytes.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/json.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"
#include "../run_tool.hpp"
#include <filesystem>
#include <gtest/gtest.h>
#include <set>
#include <unistd.h>

using namespace anec;
using namespace anec::fw;
using anec::test::code_of;
namespace fs = std::filesystem;

namespace {
const CommandTable &table() {
  static const CommandTable t = CommandTable::load(fs::path(ANEC_TEST_TABLES_DIR) / "schema" / "firmware" / "commands.toml");
  return t;
}
const fs::path kCommands = fs::path(ANEC_TEST_SOURCE_DIR) / "firmware" / "commands";

Command described(const std::string &file) {
  fs::path p = kCommands / file;
  Doc d = p.extension() == ".json" ? json::parse(read_text_file(p), p.string()) : toml::parse_file(p);
  return command_from_doc(d, table(), p.string());
}
std::vector<std::string> described_files() {
  std::vector<std::string> out;
  for (auto &e : fs::directory_iterator(kCommands)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The one violation `bytes` should produce: its code, check and disposition.
void expect_only(const std::vector<uint8_t> &bytes, const std::string &code, Disposition d, Channel ch = Channel::Ring) {
  Validation v = validate(bytes, table(), ch);
  ASSERT_FALSE(v.violations.empty()) << code;
  std::set<std::string> codes;
  for (const Violation &x : v.violations) {
    codes.insert(x.code);
    if (x.code == code) {
      EXPECT_EQ(x.disposition, d) << code << ": " << x.message;
      if (d == Disposition::Reject) {
        EXPECT_NE(x.status, 0u);
      }
    }
  }
  EXPECT_EQ(codes, std::set<std::string>{code}) << v.violations.front().message;
  EXPECT_FALSE(v.accepted());
}

Command base(const std::string &name) {
  Command c;
  const CommandSpec *spec = table().by_name(name);
  if (!spec) {
    ADD_FAILURE() << "no command " << name;
    return c;
  }
  c.id = spec->id;
  c.priority = 2;
  c.program_id = 1;
  c.process_id = 0;
  return c;
}
void set(Command &c, const std::string &field, uint64_t v) {
  for (auto &[n, x] : c.scalars)
    if (n == field) x = v;
}
} // namespace

TEST(CommandTable, The93CommandsAndTheirDirections) {
  const auto &cs = table().commands();
  ASSERT_EQ(cs.size(), 93u);
  for (uint32_t i = 0; i < cs.size(); ++i) EXPECT_EQ(cs[i].id, i);
  ASSERT_TRUE(table().by_id(0x41) && table().by_id(0x5a));
  EXPECT_EQ(table().by_id(0x41)->name, "PROCEDURE_CALL");
  EXPECT_EQ(table().by_id(0x5a)->name, "INFERENCE_CALL");
  size_t notifications = 0, both = 0;
  for (const CommandSpec &c : cs) {
    notifications += c.direction == "firmware-to-host";
    both += c.direction == "both";
  }
  EXPECT_EQ(notifications, 14u); // guide ch.30: fourteen firmware-to-host notifications
  EXPECT_EQ(both, 1u);           // and BACK_CHANNEL_RPC both ways
  EXPECT_TRUE(table().exeloop_accepts(0x204));
  EXPECT_FALSE(table().exeloop_accepts(0x41));
  EXPECT_EQ(table().families().size(), 5u);
  Doc bad = toml::parse("schema = \"anec-fw-commands\"\nversion = \"1\"\ncommand = []\nfamily = []\nexeloop = []\nbody = []\n"
                        "[limits]\npriority_max = 7\nprogram_id_max = 1\nprocedure_id_max = 1\nmax_command_bytes = 64\nextra = 1\n",
                        "bad.toml");
  EXPECT_EQ(code_of([&] { CommandTable::from_doc(bad, "bad.toml"); }), "ANEC-FWT-001");
}

// The described commands encode to the reviewed bytes (tests/update-golden.sh writes them), validate
// clean, and decode back to the same description.
TEST(Wire, GoldenEncodingsAndRoundTrips) {
  auto files = described_files();
  ASSERT_EQ(files.size(), 11u);
  for (const std::string &f : files) {
    SCOPED_TRACE(f);
    Command c = described(f);
    auto bytes = encode(c, table());
    EXPECT_EQ(bytes.size() % kGranule, 0u);
    EXPECT_EQ(hex_bytes(bytes) + "\n", read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "fw" / (fs::path(f).stem().string() + ".hex")));
    Validation v = validate(bytes, table());
    EXPECT_TRUE(v.accepted()) << (v.violations.empty() ? "" : v.violations.front().message);
    ASSERT_TRUE(v.decoded);
    Doc again = json::parse(json::write(printed_doc([&](Printer &p) { print(p, v.command, table()); })),
                            "round.json");
    EXPECT_EQ(encode(command_from_doc(again, table(), "round.json"), table()), bytes);
  }
}

TEST(Wire, EnvelopeChecks) {
  auto good = encode(described("procedure_call.toml"), table());
  ASSERT_GE(good.size(), kHeaderBytes);
  expect_only(std::vector<uint8_t>(good.begin(), good.begin() + 20), "ANEC-FW-001", Disposition::Reject); // truncated header
  auto big = good;
  big[4] = 0xff; // size past the buffer
  expect_only(big, "ANEC-FW-001", Disposition::Reject);
  auto odd = good;
  odd.push_back(0); // not a multiple of the granule
  expect_only(odd, "ANEC-FW-001", Disposition::Reject);
  // Semantic violations are built through the encoder so that their envelope is valid.
  uint32_t size = le32(good, 4);
  ASSERT_LE(kHeaderBytes + size + 8, good.size());
  auto magic = good;
  magic[kHeaderBytes + size] ^= 1;
  magic[kHeaderBytes + size + 4] = 0; // the checksum covers the magic: fix it up to isolate the check
  {
    uint32_t sum = crc32(std::span<const uint8_t>(magic).first(kHeaderBytes + size + 4));
    store_le(magic, kHeaderBytes + size + 4, sum, 4);
  }
  expect_only(magic, "ANEC-FW-002", Disposition::Reject);
  auto sum = good;
  sum[kHeaderBytes + size + 5] ^= 0x10;
  expect_only(sum, "ANEC-FW-003", Disposition::Reject);
  auto pad = good;
  ASSERT_FALSE(pad.empty()); // also tells GCC 12's -O3 -Warray-bounds that back() exists
  pad.back() = 1;
  expect_only(pad, "ANEC-FW-004", Disposition::Reject);
}

// `anec-fw decode` of bytes that are no command (the first 20 bytes of one, shorter than a header):
// exit 2 with ANEC-FW-020 quoting the first violation; `validate` lists it and exits 1.
TEST(Wire, DecodeOfBytesThatAreNoCommandFails) {
  auto good = encode(described("procedure_call.toml"), table());
  ASSERT_GE(good.size(), kHeaderBytes);
  fs::path dir = fs::temp_directory_path() / ("anec-fw-decode-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_output(dir / "good.bin", good);
  write_output(dir / "short.bin", std::vector<uint8_t>(good.begin(), good.begin() + 20));
  auto fw = [](const std::string &args) {
    return anec::test::run_tool(ANEC_TEST_FW_TOOL, ANEC_TEST_TABLES_DIR, args);
  };
  EXPECT_EQ(fw("decode " + (dir / "good.bin").string()).status, 0);
  anec::test::ToolRun r = fw("decode " + (dir / "short.bin").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ANEC-FW-020: " + (dir / "short.bin").string() +
                       ": cannot be decoded (ANEC-FW-001: message of 20 bytes is shorter than the header"),
            std::string::npos)
      << r.err;
  r = fw("validate " + (dir / "short.bin").string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("ANEC-FW-001 error at 0x0: message of 20 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(check length: reject, status 0xe00002c2)"), std::string::npos) << r.out;
  // --stream: a capture of two good messages passes; the short one is a message cut short.
  std::vector<uint8_t> two = good;
  two.insert(two.end(), good.begin(), good.end());
  write_output(dir / "two.bin", two);
  r = fw("validate --stream " + (dir / "two.bin").string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2 message(s) in " + std::to_string(two.size()) + " bytes, 2 accepted"),
            std::string::npos)
      << r.out;
  r = fw("validate --stream " + (dir / "short.bin").string() + " --format json");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("\"unframed\": 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"truncated\": 1"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST(Wire, HeaderChecks) {
  Command unknown;
  unknown.id = 0x99;
  // the encoder knows no layout for 0x99; a raw envelope still encodes, and the validator rejects it
  expect_only(encode(unknown, table()), "ANEC-FW-005", Disposition::Reject);
  expect_only(encode(base("PROGRAM_EVENT"), table()), "ANEC-FW-006", Disposition::Reject);
  Command pri = base("PING");
  pri.priority = 8;
  expect_only(encode(pri, table()), "ANEC-FW-007", Disposition::Reject);
  pri.priority = 7; // the top of the normal band is fine
  EXPECT_TRUE(validate(encode(pri, table()), table()).accepted());
  Command prog = base("PING");
  prog.program_id = 144;
  expect_only(encode(prog, table()), "ANEC-FW-008", Disposition::Reject);
  prog.program_id = 143;
  EXPECT_TRUE(validate(encode(prog, table()), table()).accepted());
  prog.program_id = -2;
  expect_only(encode(prog, table()), "ANEC-FW-008", Disposition::Reject);
  Command proc = base("PING");
  proc.process_id = -5;
  expect_only(encode(proc, table()), "ANEC-FW-008", Disposition::Reject);
  proc.process_id = -1;
  proc.procedure_id = 288;
  expect_only(encode(proc, table()), "ANEC-FW-008", Disposition::Reject);
  // on the ExeLoop channel only the fast-path wire ids are dispatched; anything else asserts
  Command fast;
  fast.id = 0x204;
  EXPECT_TRUE(validate(encode(fast, table()), table(), Channel::ExeLoop).accepted());
  expect_only(encode(base("PING"), table()), "ANEC-FW-013", Disposition::Fault, Channel::ExeLoop);
}

TEST(Wire, BodyChecks) {
  Command pc = described("procedure_call.toml");
  auto with = [&](const char *field, uint64_t v) {
    Command c = pc;
    set(c, field, v);
    return c;
  };
  // body_size: a count that disagrees with the bytes (built by hand: the encoder refuses it)
  auto bytes = encode(pc, table());
  ASSERT_GT(bytes.size(), kHeaderBytes + 8);
  bytes[kHeaderBytes + 8] = 2; // nbrOfSignalEvents 1 -> 2 without a second record
  uint32_t size = le32(bytes, 4);
  ASSERT_LE(kHeaderBytes + size + 8, bytes.size());
  uint32_t sum = crc32(std::span<const uint8_t>(bytes).first(kHeaderBytes + size + 4));
  store_le(bytes, kHeaderBytes + size + 4, sum, 4);
  expect_only(bytes, "ANEC-FW-009", Disposition::Reject);
  EXPECT_EQ(code_of([&] { encode(with("nbrOfSignalEvents", 2), table()); }), "ANEC-FWC-002");
  // exactly one output buffer set
  expect_only(encode(with("nbrOfOutputBufferSets", 2), table()), "ANEC-FW-010", Disposition::Reject);
  // 1..16 signal events, at most 32 custom bars, wait + signal > 0
  Command many = pc;
  many.arrays["signalEvents"].assign(17, {1, 1, 1, 1});
  set(many, "nbrOfSignalEvents", 17);
  expect_only(encode(many, table()), "ANEC-FW-010", Disposition::Reject);
  many.arrays["signalEvents"].resize(16);
  set(many, "nbrOfSignalEvents", 16);
  EXPECT_TRUE(validate(encode(many, table()), table()).accepted());
  Command bars = pc;
  bars.arrays["customBars"].assign(33, {0, 0, 0x1000});
  set(bars, "nbrOfCustomBars", 33);
  expect_only(encode(bars, table()), "ANEC-FW-010", Disposition::Reject);
  bars.arrays["customBars"].resize(32);
  set(bars, "nbrOfCustomBars", 32);
  EXPECT_TRUE(validate(encode(bars, table()), table()).accepted());
  Command none = pc;
  none.arrays["signalEvents"].clear();
  set(none, "nbrOfSignalEvents", 0);
  expect_only(encode(none, table()), "ANEC-FW-011", Disposition::Reject);
  Command sig = described("signal_events.toml");
  sig.arrays["signalEvents"].clear();
  set(sig, "nbrOfSignalEvents", 0);
  sig.arrays["waitEvents"] = {{1, 1, 1, 1}};
  set(sig, "nbrOfWaitEvents", 1);
  expect_only(encode(sig, table()), "ANEC-FW-010", Disposition::Reject); // the signal-events variant needs 1..16
  // execute order: 1..128 entries
  Command order = described("custom_bars.toml");
  order.arrays["customExecuteOrder"].assign(129, {0});
  set(order, "nbrOfCustomExecuteOrder", 129);
  expect_only(encode(order, table()), "ANEC-FW-010", Disposition::Reject);
  order.arrays["customExecuteOrder"].clear();
  set(order, "nbrOfCustomExecuteOrder", 0);
  expect_only(encode(order, table()), "ANEC-FW-010", Disposition::Reject);
  // at most 16 trigger inputs
  Command trig = described("trigger.toml");
  trig.arrays["inputBuffers"].assign(17, {0, 0, 0x1000});
  set(trig, "nbrOfInputBuffers", 17);
  expect_only(encode(trig, table()), "ANEC-FW-010", Disposition::Reject);
  // chained buffers below 4 GiB and naming an existing output buffer set
  Command chain = described("cache_request.toml");
  ASSERT_FALSE(chain.arrays["chainedBuffers"].empty());
  ASSERT_GE(chain.arrays["chainedBuffers"][0].size(), 3u);
  chain.arrays["chainedBuffers"][0][2] = 0x100000000ull;
  expect_only(encode(chain, table()), "ANEC-FW-012", Disposition::Reject);
  chain = described("cache_request.toml");
  chain.arrays["chainedBuffers"][0][1] = 1;
  expect_only(encode(chain, table()), "ANEC-FW-012", Disposition::Reject);
  // premap: nonzero address and size; property write: nonzero value
  Command premap = described("premap.toml");
  set(premap, "address", 0);
  expect_only(encode(premap, table()), "ANEC-FW-010", Disposition::Reject);
  premap = described("premap.toml");
  set(premap, "size", 0);
  expect_only(encode(premap, table()), "ANEC-FW-010", Disposition::Reject);
  // program-interface version: a minor mismatch warns and continues, a major one rejects
  Command version = base("PROGRAM_INTERFACE_VERSION_CHECK");
  version.scalars = {{"major", 1}, {"minor", 0}};
  EXPECT_TRUE(validate(encode(version, table()), table()).violations.empty());
  version.scalars = {{"major", 1}, {"minor", 3}};
  Validation warned = validate(encode(version, table()), table());
  ASSERT_EQ(warned.violations.size(), 1u);
  EXPECT_EQ(warned.violations[0].code, "ANEC-FW-014");
  EXPECT_EQ(warned.violations[0].disposition, Disposition::Warn);
  EXPECT_TRUE(warned.accepted());
  version.scalars = {{"major", 2}, {"minor", 0}};
  expect_only(encode(version, table()), "ANEC-FW-014", Disposition::Reject);
  Command poke = described("property_write.toml");
  set(poke, "regValue", 0);
  expect_only(encode(poke, table()), "ANEC-FW-010", Disposition::Reject);
}

// Every single-bit flip of every described command, and of every body-less host command, is
// detected: the CRC-32 covers header, body and magic; the padding must stay zero.
TEST(Wire, EverySingleBitFlipIsDetected) {
  std::vector<std::vector<uint8_t>> messages;
  for (const std::string &f : described_files()) messages.push_back(encode(described(f), table()));
  for (const CommandSpec &c : table().commands())
    if (c.direction != "firmware-to-host" && !table().body(c.name)) messages.push_back(encode(base(c.name), table()));
  size_t flips = 0;
  for (const auto &m : messages)
    for (size_t bit = 0; bit < m.size() * 8; ++bit) {
      auto bad = m;
      bad[bit / 8] ^= uint8_t(1u << (bit % 8));
      Validation v = validate(bad, table());
      EXPECT_FALSE(v.accepted()) << "bit " << bit << " of a " << m.size() << "-byte " << hex_bytes(std::span(m).first(4)) << " command";
      ++flips;
    }
  EXPECT_EQ(messages.size(), 80u); // 11 described commands and the 69 host commands without a body layout
  EXPECT_GT(flips, 20000u);
}

// A capture of commands back to back: each framed by its size, a granule that frames nothing
// skipped and counted, a damaged message reported at its offset, the rest accepted.
TEST(Wire, StreamOfCommands) {
  std::vector<uint8_t> capture;
  std::vector<uint64_t> starts;
  for (const std::string &f : described_files()) {
    std::vector<uint8_t> m = encode(described(f), table());
    if (starts.size() == 1) // before the second message: a granule whose size field frames nothing
      capture.insert(capture.end(), 16, 0xff);
    starts.push_back(capture.size());
    capture.insert(capture.end(), m.begin(), m.end());
  }
  ASSERT_GE(starts.size(), 2u);
  ASSERT_LT(starts[1] + 0x18, capture.size());
  capture[starts[1] + 0x18] ^= 0x01; // the second message's first body byte: its checksum no longer holds
  StreamValidation s = validate_stream(capture, table());
  EXPECT_EQ(s.messages, starts.size());
  EXPECT_EQ(s.unframed, 1u);
  EXPECT_EQ(s.accepted, starts.size() - 1);
  EXPECT_EQ(s.by_disposition[int(Disposition::Reject)], 1u);
  ASSERT_FALSE(s.first.empty());
  EXPECT_EQ(s.first[0].offset, starts[1]);
  EXPECT_EQ(s.first[0].violation.code, "ANEC-FW-003");
  // A capture that ends inside a message: that message is truncated, nothing is read past the end.
  StreamValidation cut = validate_stream(std::span(capture).first(capture.size() - 8), table());
  EXPECT_EQ(cut.messages, starts.size() - 1);
  EXPECT_EQ(cut.unframed, 1u);
  EXPECT_EQ(cut.truncated, 1u);
  EXPECT_EQ(cut.truncated_offset, starts.back());
  EXPECT_EQ(validate_stream({}, table()).messages, 0u);
}

TEST(Wire, DescriptionErrors) {
  auto parse = [](const std::string &text) { return command_from_doc(toml::parse(text, "c.toml"), table(), "c.toml"); };
  EXPECT_EQ(code_of([&] { parse("priority = 1\n"); }), "ANEC-FWC-001");
  EXPECT_EQ(code_of([&] { parse("command = \"NOPE\"\n"); }), "ANEC-FWC-001");
  EXPECT_EQ(code_of([&] { parse("command = \"PING\"\ncolour = 1\n"); }), "ANEC-FWC-001");
  EXPECT_EQ(code_of([&] { parse("command = \"PROCEDURE_CALL\"\n[body]\nnope = 1\n"); }), "ANEC-FWC-001");
  EXPECT_EQ(code_of([&] { parse("command = \"PING\"\n[body]\nx = 1\n"); }), "ANEC-FWC-001");
  EXPECT_EQ(code_of([&] { encode(parse("command = \"PREMAP_BUFFER\"\n[body]\nnbrOfOps = 0x100000000\n"), table()); }), "ANEC-FWC-002");
}

// The header and envelope layouts (fw.command_header, fw.command_envelope in
// tables/schema/layout/firmware.toml) drive both directions: every command the encoder makes reads
// back field by field through layout::View, the same bytes come out of layout::Writer, and the
// validator's offsets land on the fields they name.
TEST(Wire, LayoutDrivesBothDirections) {
  const layout::Struct &hl = command_header_layout(), &el = envelope_layout();
  EXPECT_EQ(hl.bytes, 24u); // guide ch.30 table c30-cmd-header
  EXPECT_EQ(hl.field_at(0xc), "programId");
  EXPECT_EQ(hl.field_at(0x17), "procedureId");
  EXPECT_EQ(el.field_at(0x0), "magic");
  EXPECT_EQ(el.field_at(0x4), "checksum");
  std::vector<Command> commands;
  for (const std::string &f : described_files())
    commands.push_back(described(f));
  for (const CommandSpec &c : table().commands())
    if (!table().body(c.name))
      commands.push_back(base(c.name));
  ASSERT_FALSE(commands.empty());
  commands.back().program_id = -1; // the unbound marker, sign and all
  for (const Command &c : commands) {
    auto bytes = encode(c, table());
    layout::View h(hl, bytes, 0, "T");
    EXPECT_EQ(h.get("id"), c.id);
    EXPECT_EQ(h.get("priority"), c.priority);
    EXPECT_EQ(int32_t(h.get("programId")), c.program_id);
    EXPECT_EQ(int32_t(h.get("processId")), c.process_id);
    EXPECT_EQ(h.get("procedureId"), c.procedure_id);
    uint64_t size = h.get("size");
    layout::View e(el, bytes, h.end() + size, "T");
    EXPECT_EQ(e.get("magic"), kEnvelopeMagic);
    EXPECT_EQ(e.get("checksum"), crc32(std::span<const uint8_t>(bytes).first(e.offset_of("checksum"))));
    EXPECT_EQ(bytes.size(), (e.end() + kGranule - 1) / kGranule * kGranule);
    // The same message from the writers alone.
    std::vector<uint8_t> again(bytes.size(), 0);
    layout::Writer w(hl);
    w.set("id", c.id).set("size", size).set("priority", c.priority).set("procedureId", c.procedure_id);
    w.set("programId", uint64_t(int64_t(c.program_id))).set("processId", uint64_t(int64_t(c.process_id)));
    w.write_to(again, 0);
    std::copy_n(bytes.begin() + h.end(), size, again.begin() + long(h.end()));
    layout::Writer(el).set("checksum", e.get("checksum")).write_to(again, e.at());
    EXPECT_EQ(again, bytes);
  }
  // A rejected header field is reported at that field.
  Command pri = base("PING");
  pri.priority = 8;
  pri.procedure_id = 288;
  Validation v = validate(encode(pri, table()), table());
  ASSERT_EQ(v.violations.size(), 2u);
  EXPECT_EQ(hl.field_at(v.violations[0].offset), "priority");
  EXPECT_EQ(hl.field_at(v.violations[1].offset), "procedureId");
}
