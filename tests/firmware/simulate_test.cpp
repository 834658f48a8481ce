// The execution-loop model: the reviewed replay of a full script, determinism, the queue weights,
// serialized recovery, the software deadline, the PAUSE invariant, compile pacing, script errors.
#include "anec/firmware/simulate.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/toml.hpp"

#include "../errors.hpp"
#include <filesystem>
#include <gtest/gtest.h>

using namespace anec;
using namespace anec::fw;
using anec::test::code_of;
namespace fs = std::filesystem;

namespace {
SimEvent ev(double at_ms, const char *kind, int64_t program = -1, int64_t process = -1, uint32_t priority = 2, double duration_ms = 1) {
  SimEvent e;
  e.at_us = uint64_t(at_ms * 1000);
  e.kind = kind;
  e.program = program;
  e.process = process;
  e.priority = priority;
  e.duration_us = uint64_t(duration_ms * 1000);
  if (e.kind == "fault") e.fault = "exception";
  if (e.kind == "stall") e.fault = "soft";
  return e;
}
std::vector<SimEvent> ready() { return {ev(0, "boot"), ev(0, "load", 1), ev(0, "create", 1, 0)}; }
const SimLine *line(const SimResult &r, const std::string &contains, size_t nth = 0) {
  for (const SimLine &l : r.log)
    if (l.what.find(contains) != std::string::npos && nth-- == 0) return &l;
  return nullptr;
}
} // namespace

TEST(Simulate, ScriptReplayMatchesGoldenAndIsDeterministic) {
  fs::path script = fs::path(ANEC_TEST_SOURCE_DIR) / "firmware" / "scripts" / "recovery.toml";
  auto [config, events] = script_from_doc(toml::parse_file(script), script.string());
  SimResult a = simulate(config, events), b = simulate(config, events);
  auto text = [](const SimResult &r) { return printed_text([&](Printer &p) { print(p, r); }); };
  EXPECT_EQ(text(a), text(b));
  EXPECT_EQ(text(a), read_text_file(fs::path(ANEC_TEST_GOLDEN_DIR) / "fw" / "sim-recovery.txt"));
  EXPECT_EQ(a.counters.at("faults"), 3u);
  EXPECT_EQ(a.counters.at("restarts"), 3u);
  EXPECT_EQ(a.counters.at("dropped"), 3u); // a process of an unloaded program, a wrong-state trigger, a terminated process
  EXPECT_EQ(a.counters.at("aborted"), 1u);
  EXPECT_EQ(a.final_state, "RUN");
}

// Per-priority credit with the weights {1, 2, 3, 4, 5, 6, 30, 31}: levels 2 and 7 kept full share
// the engine 3 : 31, with level 7 never starving level 2.
TEST(Simulate, QueueWeightsShareTheEngine) {
  auto events = ready();
  events.push_back(ev(0, "call", 1, 0, 0, 10)); // occupies the engine while the queues fill
  for (int i = 0; i < 40; ++i) {
    events.push_back(ev(1, "call", 1, 0, 2, 1));
    events.push_back(ev(1, "call", 1, 0, 7, 1));
  }
  SimResult r = simulate(SimConfig{}, events);
  size_t level2 = 0, level7 = 0, picks = 0;
  for (const SimLine &l : r.log) {
    if (l.what.find("dispatched") == std::string::npos || l.at_us < 10000) continue;
    if (picks++ == 34) break;
    level2 += l.what.find("from level 2") != std::string::npos;
    level7 += l.what.find("from level 7") != std::string::npos;
  }
  EXPECT_EQ(level7, 31u);
  EXPECT_EQ(level2, 3u);
}

// Faults arriving faster than the recovery cycle keep the channel not ready until the last cycle ends.
TEST(Simulate, RecoveryIsSerializedBehindOneGate) {
  SimConfig c;
  c.recovery_us = 3'000'000;
  auto events = ready();
  for (double t : {100.0, 1100.0, 2100.0}) events.push_back(ev(t, "fault"));
  for (double t : {2500.0, 5000.0, 9099.0, 9101.0}) events.push_back(ev(t, "call", 1, 0));
  SimResult r = simulate(c, events);
  EXPECT_EQ(r.counters.at("rejected"), 3u);
  EXPECT_EQ(r.counters.at("completed"), 1u);
  EXPECT_EQ(r.counters.at("restarts"), 3u);
  ASSERT_TRUE(line(r, "gate free"));
  EXPECT_EQ(line(r, "gate free")->at_us, 9'100'000u);
  EXPECT_TRUE(line(r, "not ready (kIOReturnNotReady"));
}

TEST(Simulate, DeadlineAbortsAStuckQueueAndAHardStallPanics) {
  auto events = ready();
  events.push_back(ev(5, "stall"));
  events.push_back(ev(10, "call", 1, 0, 3, 1));
  events.push_back(ev(10, "call", 1, 0, 3, 1)); // waits behind the stuck one, then runs
  SimResult r = simulate(SimConfig{}, events);
  ASSERT_TRUE(line(r, "aborted"));
  EXPECT_EQ(line(r, "aborted")->at_us, 2'010'000u);
  EXPECT_EQ(r.counters.at("completed"), 1u);
  auto hard = ready();
  SimEvent s = ev(5, "stall");
  s.fault = "hard";
  hard.push_back(s);
  hard.push_back(ev(10, "call", 1, 0));
  SimResult p = simulate(SimConfig{}, hard);
  EXPECT_EQ(p.counters.at("faults"), 1u);
  EXPECT_TRUE(line(p, "panic"));
}

TEST(Simulate, PauseInvariantAndSecurePhase) {
  SimConfig c;
  c.pause_us = 5000;
  auto events = ready();
  events.push_back(ev(10, "enter_secure"));
  events.push_back(ev(12, "call", 1, 0)); // inside the 5 ms PAUSE: an invariant violation
  SimResult r = simulate(c, events);
  EXPECT_EQ(r.counters.at("faults"), 1u);
  EXPECT_TRUE(line(r, "during PAUSE"));
  auto secure = ready();
  secure.push_back(ev(10, "enter_secure"));
  secure.push_back(ev(20, "call", 1, 0));
  SimResult s = simulate(c, secure);
  ASSERT_TRUE(line(s, "dispatched"));
  EXPECT_EQ(line(s, "dispatched")->state, "EXEC-SECURE");
}

TEST(Simulate, CompilePacingAfterAFailure) {
  std::vector<SimEvent> events = {ev(0, "compile_failure"), ev(14999, "compile"), ev(15000, "compile")};
  SimResult r = simulate(SimConfig{}, events);
  EXPECT_EQ(r.counters.at("compiles_deferred"), 1u);
  EXPECT_EQ(r.counters.at("compiles"), 1u);
}

TEST(Simulate, ScriptErrors) {
  auto parse = [](const std::string &text) { return script_from_doc(toml::parse(text, "s.toml"), "s.toml"); };
  EXPECT_EQ(code_of([&] { parse("[[event]]\nat_ms = 1\nkind = \"explode\"\n"); }), "ANEC-SIM-001");
  EXPECT_EQ(code_of([&] { parse("[[event]]\nat_ms = 5\nkind = \"boot\"\n[[event]]\nat_ms = 1\nkind = \"boot\"\n"); }), "ANEC-SIM-001");
  EXPECT_EQ(code_of([&] { parse("[[event]]\nat_ms = 1\nkind = \"boot\"\ncolour = 1\n"); }), "ANEC-SIM-001");
  EXPECT_EQ(code_of([&] { parse("[[event]]\nat_ms = 1\nkind = \"stall\"\nfault = \"medium\"\n"); }), "ANEC-SIM-001");
  EXPECT_EQ(code_of([&] { parse("[config]\nrecovery_ms = -1\n[[event]]\nat_ms = 1\nkind = \"boot\"\n"); }), "ANEC-SIM-001");
}
