#include "anec/firmware/simulate.hpp"

#include "anec/support/error.hpp"
#include "anec/support/format.hpp"
#include "anec/support/strict.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>
#include <queue>
#include <set>

namespace anec::fw {

namespace {
constexpr const char *kKinds[] = {"boot",  "load",         "unload",      "create",     "terminate",
                                  "call",  "trigger",      "install",     "invalidate", "stall",
                                  "fault", "enter_secure", "exit_secure", "compile",    "compile_failure"};

std::string ms(uint64_t us) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", double(us) / 1000.0);
  return b;
}

struct Job {
  uint64_t id = 0, duration_us = 0;
  int64_t program = -1, process = -1;
  uint32_t level = 2;
  std::string what;
};

struct Timer {
  uint64_t at_us, seq;
  std::string kind; // done, deadline, recovered, pause_end
  uint64_t job = 0;
  bool operator>(const Timer &o) const { return at_us != o.at_us ? at_us > o.at_us : seq > o.seq; }
};

class Machine {
public:
  Machine(const SimConfig &c) : c_(c) {
    for (const char *k : {"submitted", "completed", "rejected", "dropped", "aborted", "cancelled", "faults",
                          "restarts", "compiles", "compiles_deferred", "compiles_failed"})
      r_.counters[k] = 0;
  }

  void run(const std::vector<SimEvent> &events) {
    for (const SimEvent &e : events) {
      fire_timers(e.at_us);
      now_ = e.at_us;
      handle(e);
    }
    fire_timers(UINT64_MAX);
    r_.final_state = state_;
  }
  SimResult result() { return std::move(r_); }

private:
  const SimConfig &c_;
  SimResult r_;
  uint64_t now_ = 0, seq_ = 0, next_job_ = 1;
  std::string state_ = "INIT";
  bool booted_ = false, secure_ = false, recovering_ = false;
  std::optional<bool> pending_secure_; // a switch waiting for the engine to go idle
  uint64_t recovery_until_ = 0;
  std::optional<uint64_t> last_compile_failure_;
  std::set<int64_t> programs_;
  std::set<std::pair<int64_t, int64_t>> processes_;
  std::map<uint64_t, std::string> handles_; // cache request -> available / in-use
  std::array<std::deque<Job>, 8> queues_;
  std::array<int64_t, 8> credit_{};
  std::optional<Job> in_flight_;
  std::optional<std::string> stall_next_; // soft or hard, for the next job to run
  std::optional<std::string> hung_;       // the in-flight job's stall
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;

  void log(const std::string &what) { r_.log.push_back({now_, state_, what}); }
  void count(const char *k) { ++r_.counters[k]; }
  void timer(uint64_t at, const std::string &kind, uint64_t job = 0) {
    timers_.push({at, seq_++, kind, job});
  }

  void fire_timers(uint64_t until) {
    while (!timers_.empty() && timers_.top().at_us <= until) {
      Timer t = timers_.top();
      timers_.pop();
      now_ = t.at_us;
      if (t.kind == "done" && in_flight_ && in_flight_->id == t.job && !hung_) {
        count("completed");
        finish(in_flight_->what + ": done");
      } else if (t.kind == "deadline" && in_flight_ && in_flight_->id == t.job && hung_) {
        if (*hung_ == "hard") {
          log(in_flight_->what + ": the abort did not clear within the deadline: panic");
          fault("deadline escalation");
        } else {
          count("aborted");
          finish(in_flight_->what + ": queue did not quiesce within " + ms(c_.deadline_us) + " ms: aborted");
        }
      } else if (t.kind == "recovered") { // one recovery cycle per fault, serialized behind the gate
        count("restarts");
        if (now_ < recovery_until_) {
          log("re-boot complete; the next fault's recovery holds the gate until " + ms(recovery_until_) +
              " ms");
        } else {
          recovering_ = false;
          state_ = booted_ ? "RUN" : "INIT";
          secure_ = false;
          log("recovery complete: firmware re-booted to the ready handshake, gate free");
        }
      } else if (t.kind == "pause_end" && state_ == "PAUSE") {
        secure_ = *pending_secure_;
        pending_secure_.reset();
        state_ = "RUN";
        log(secure_ ? "secure phase entered" : "secure phase left");
        dispatch();
      }
    }
  }

  // The running job ends (done or aborted): back to RUN, then a pending secure switch or the next job.
  void finish(const std::string &what) {
    in_flight_.reset();
    hung_.reset();
    state_ = "RUN";
    log(what);
    if (pending_secure_) {
      state_ = "PAUSE";
      log("engine idle: quiesced for the secure switch");
      timer(now_ + c_.pause_us, "pause_end");
      return;
    }
    dispatch();
  }

  void dispatch() {
    if (state_ != "RUN" || in_flight_ || recovering_) return;
    int64_t total = 0;
    for (uint32_t l = 0; l < 8; ++l)
      if (!queues_[l].empty()) total += c_.weights[l];
    if (!total) return;
    int best = -1;
    for (uint32_t l = 0; l < 8; ++l) {
      if (queues_[l].empty()) continue;
      credit_[l] += c_.weights[l];
      if (best < 0 || credit_[l] > credit_[best]) best = int(l);
    }
    credit_[best] -= total;
    in_flight_ = queues_[best].front();
    queues_[best].pop_front();
    state_ = secure_ ? "EXEC-SECURE" : "EXEC";
    hung_ = stall_next_;
    stall_next_.reset();
    log(in_flight_->what + ": dispatched from level " + std::to_string(best) + (hung_ ? " (stalls)" : ""));
    timer(now_ + in_flight_->duration_us, "done", in_flight_->id);
    timer(now_ + c_.deadline_us, "deadline", in_flight_->id);
  }

  void fault(const std::string &why) {
    count("faults");
    size_t cancelled = in_flight_ ? 1 : 0;
    for (auto &q : queues_) {
      cancelled += q.size();
      q.clear();
    }
    r_.counters["cancelled"] += cancelled;
    in_flight_.reset();
    hung_.reset();
    pending_secure_.reset();
    uint64_t start = recovering_ ? recovery_until_ : now_; // serialized behind the one command gate
    recovering_ = true;
    recovery_until_ = start + c_.recovery_us;
    state_ = "INIT";
    log("fault (" + why + "): register dump, " + std::to_string(cancelled) +
        " command(s) cancelled; channel not ready until " + ms(recovery_until_) + " ms");
    timer(recovery_until_, "recovered");
  }

  bool admit(const SimEvent &e, const std::string &what) {
    if (state_ == "PAUSE") {
      log(what + ": event during PAUSE violates a firmware invariant");
      fault("assert in PAUSE");
      return false;
    }
    if (recovering_ || !booted_) {
      count("rejected");
      log(what + ": rejected, channel not ready (kIOReturnNotReady 0xe00002d0)");
      return false;
    }
    if (e.priority > 7) {
      count("rejected");
      log(what + ": rejected, priority " + std::to_string(e.priority) +
          " outside 0..7 (kIOReturnBadArgument 0xe00002c2)");
      return false;
    }
    return true;
  }

  void enqueue(const SimEvent &e, const std::string &what) {
    Job j{next_job_++, e.duration_us, e.program, e.process, e.priority, what};
    queues_[e.priority].push_back(j);
    count("submitted");
    log(what + ": queued at level " + std::to_string(e.priority));
    dispatch();
  }

  void handle(const SimEvent &e) {
    const std::string &k = e.kind;
    std::string pp = "prog " + std::to_string(e.program) + " proc " + std::to_string(e.process);
    if (k == "boot") {
      booted_ = true;
      if (!recovering_ && state_ == "INIT") state_ = "RUN";
      log("boot: ready handshake");
    } else if (k == "load") {
      programs_.insert(e.program);
      log("load program " + std::to_string(e.program));
    } else if (k == "unload") {
      programs_.erase(e.program);
      for (auto it = processes_.begin(); it != processes_.end();)
        it = it->first == e.program ? processes_.erase(it) : std::next(it);
      log("unload program " + std::to_string(e.program) + " and its processes");
    } else if (k == "create") {
      if (!programs_.count(e.program)) {
        count("dropped");
        log("create " + pp + ": program not loaded: dropped");
      } else {
        processes_.insert({e.program, e.process});
        log("create " + pp);
      }
    } else if (k == "terminate") {
      processes_.erase({e.program, e.process});
      log("terminate " + pp);
    } else if (k == "install") {
      handles_[e.handle] = "in-use";
      log("cache request " + hex(e.handle) + " installed");
    } else if (k == "invalidate") {
      handles_.erase(e.handle);
      log("cache request " + hex(e.handle) + " invalidated");
    } else if (k == "call") {
      std::string what = "call " + pp + " pri " + std::to_string(e.priority);
      if (!admit(e, what)) return;
      if (!processes_.count({e.program, e.process})) {
        count("dropped");
        log(what + ": " + pp + " not running: dropped and counted");
        return;
      }
      enqueue(e, what);
    } else if (k == "trigger") {
      std::string what = "trigger " + hex(e.handle);
      if (!admit(e, what)) return;
      auto it = handles_.find(e.handle);
      if (it == handles_.end() || it->second != "in-use") {
        count("dropped");
        log(what + ": cache request in the wrong state: trigger dropped");
        return;
      }
      enqueue(e, what);
    } else if (k == "stall") {
      if (in_flight_) hung_ = e.fault;
      else stall_next_ = e.fault;
      log(std::string("stall (") + e.fault + ") " + (in_flight_ ? "of the running job" : "of the next job"));
    } else if (k == "fault") {
      fault(e.fault);
    } else if (k == "enter_secure" || k == "exit_secure") {
      bool to = k == "enter_secure";
      if (state_ == "PAUSE") {
        log(k + ": event during PAUSE violates a firmware invariant");
        fault("assert in PAUSE");
        return;
      }
      if (secure_ == to) {
        log(k + ": already " + (to ? "secure" : "non-secure"));
        return;
      }
      pending_secure_ = to;
      if (in_flight_) {
        log(k + ": waiting for the engine to go idle");
        return;
      }
      state_ = "PAUSE";
      log(k + ": quiesced");
      timer(now_ + c_.pause_us, "pause_end");
    } else if (k == "compile") {
      if (last_compile_failure_ && now_ < *last_compile_failure_ + c_.compile_pacing_us) {
        count("compiles_deferred");
        log("compile: deferred to " + ms(*last_compile_failure_ + c_.compile_pacing_us) +
            " ms (pacing after a failed compile)");
      } else {
        count("compiles");
        log("compile");
      }
    } else if (k == "compile_failure") {
      count("compiles_failed");
      last_compile_failure_ = now_;
      log("compile failed: the next compile waits " + ms(c_.compile_pacing_us) + " ms");
    }
  }
};
} // namespace

std::pair<SimConfig, std::vector<SimEvent>> script_from_doc(const Doc &doc, const std::string &source) {
  using anec::detail::Strict;
  Strict top(doc, source, "ANEC-SIM-001", "script");
  SimConfig c;
  if (const Doc *cd = top.opt("config", Doc::Kind::Table)) {
    Strict r(*cd, source, "ANEC-SIM-001", "config");
    auto dur = [&](const char *key, uint64_t &field) {
      if (const Doc *d = r.opt(key, Doc::Kind::Float)) {
        double v = d->is(Doc::Kind::Int) ? double(d->as_int()) : d->as_float();
        if (v < 0 || v > 1e9) r.fail(*d, std::string(key) + " must be between 0 and 1e9 ms");
        field = uint64_t(v * 1000.0);
      }
    };
    dur("deadline_ms", c.deadline_us);
    dur("recovery_ms", c.recovery_us);
    dur("pause_ms", c.pause_us);
    dur("compile_pacing_ms", c.compile_pacing_us);
    r.finish();
  }
  std::vector<SimEvent> events;
  uint64_t last = 0;
  for (const Doc &ed : top.req("event", Doc::Kind::Array).items()) {
    Strict r(ed, source, "ANEC-SIM-001", "event");
    SimEvent e;
    const Doc &at = r.req("at_ms", Doc::Kind::Float);
    double t = at.is(Doc::Kind::Int) ? double(at.as_int()) : at.as_float();
    if (t < 0 || t > 1e9) r.fail(at, "at_ms must be between 0 and 1e9");
    e.at_us = uint64_t(t * 1000.0);
    if (e.at_us < last) r.fail(at, "events must be in time order");
    last = e.at_us;
    e.kind = r.req("kind", Doc::Kind::String).as_string();
    if (std::none_of(std::begin(kKinds), std::end(kKinds), [&](const char *k) { return e.kind == k; }))
      r.fail(ed, "unknown event kind '" + e.kind + "'");
    auto num = [&](const char *key, int64_t lo, int64_t hi) -> std::optional<int64_t> {
      const Doc *d = r.opt(key, Doc::Kind::Int);
      if (!d) return std::nullopt;
      if (d->as_int() < lo || d->as_int() > hi) r.fail(*d, std::string(key) + " out of range");
      return d->as_int();
    };
    if (auto v = num("program", -1, 0xffffffffll)) e.program = *v;
    if (auto v = num("process", -1, 0xffffffffll)) e.process = *v;
    if (auto v = num("priority", 0, 1000)) e.priority = uint32_t(*v);
    if (auto v = num("handle", 0, INT64_MAX)) e.handle = uint64_t(*v);
    if (const Doc *d = r.opt("duration_ms", Doc::Kind::Float)) {
      double v = d->is(Doc::Kind::Int) ? double(d->as_int()) : d->as_float();
      if (v < 0 || v > 1e9) r.fail(*d, "duration_ms must be between 0 and 1e9");
      e.duration_us = uint64_t(v * 1000.0);
    }
    if (const Doc *d = r.opt("fault", Doc::Kind::String)) e.fault = d->as_string();
    if (e.kind == "fault" && e.fault.empty()) e.fault = "exception";
    if (e.kind == "stall" && e.fault.empty()) e.fault = "soft";
    if (e.kind == "stall" && e.fault != "soft" && e.fault != "hard") r.fail(ed, "a stall is soft or hard");
    r.finish();
    events.push_back(std::move(e));
  }
  top.finish();
  return {c, events};
}

SimResult simulate(const SimConfig &config, const std::vector<SimEvent> &events) {
  Machine m(config);
  m.run(events);
  return m.result();
}

void print(Printer &p, const SimResult &r) {
  {
    List log(p, "log");
    for (const SimLine &l : r.log) {
      Object e(p);
      std::string t = ms(l.at_us);
      p.data("at_us", l.at_us);
      p.text(std::string(t.size() < 12 ? 12 - t.size() : 0, ' ') + t + " ms  ");
      p.field("state", l.state, 12);
      p.field("event", l.what);
      p.text("\n");
    }
  }
  p.text("final state ");
  p.field("final_state", r.final_state);
  p.text("\n");
  Object counters(p, "counters");
  for (auto &[k, v] : r.counters) {
    p.text(k + " ");
    p.field(k, v);
    p.text("\n");
  }
}

} // namespace anec::fw
