// The execution-loop model (guide ch.29): a deterministic virtual-time replay of a script of
// commands and faults through the control state machine (INIT, RUN, EXEC, EXEC-SECURE, PAUSE), the
// eight priority queues with the firmware's queue weights {1, 2, 3, 4, 5, 6, 30, 31} (per-priority
// credit, no preemption), the ~2 s software deadline that aborts a stuck queue, recovery serialized
// behind one command gate (a fault dumps, cancels outstanding work and re-boots; faults faster than
// the recovery cycle keep the channel not-ready), drop-and-count for commands aimed at torn-down
// processes or wrong-state cache handles, and compile pacing after failures (~15 s, seed ch.19).
#pragma once
#include "anec/support/doc.hpp"
#include "anec/support/printer.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace anec::fw {

struct SimConfig {
  uint64_t deadline_us = 2'000'000;        // ch.29: about 2 seconds
  uint64_t recovery_us = 3'000'000;        // dump + cancel + re-boot: not published; the project's default
  uint64_t pause_us = 1'000;               // the quiesce window of a secure switch
  uint64_t compile_pacing_us = 15'000'000; // seed ch.19: about 15 seconds after a failed compile
  std::array<uint32_t, 8> weights = {1, 2, 3, 4, 5, 6, 30, 31}; // ch.29
};

struct SimEvent {
  uint64_t at_us = 0;
  std::string kind; // boot, load, unload, create, terminate, call, trigger, install, invalidate, stall,
                    // fault, enter_secure, exit_secure, compile, compile_failure
  int64_t program = -1, process = -1;
  uint32_t priority = 2;
  uint64_t duration_us = 1000, handle = 0;
  std::string fault; // for `fault`: exception, assert, cache_error; for `stall`: soft or hard
};

struct SimLine {
  uint64_t at_us = 0;
  std::string state, what;
};

struct SimResult {
  std::vector<SimLine> log;
  std::map<std::string, uint64_t> counters; // submitted, completed, rejected, dropped, aborted, cancelled,
                                            // faults, restarts, compiles, compiles_deferred
  std::string final_state;
};

// ANEC-SIM-001 for a script that does not fit: unknown kind or key, events out of time order.
std::pair<SimConfig, std::vector<SimEvent>> script_from_doc(const Doc &doc, const std::string &source);
SimResult simulate(const SimConfig &config, const std::vector<SimEvent> &events);
// The text form: a line per event (time in ms, state, event), the final state and the counters.
void print(Printer &p, const SimResult &r);

} // namespace anec::fw
