// Printing done on a thread beside the caller's, behind the code that decides what to print: the
// printers it hands out record each call (its keys and values copied) into a buffer, and the
// buffers are replayed, in the order recorded, into the real printers on the thread. A report that
// decides a million rows spends its time deciding, while the rows are formatted and written beside
// it. The bytes written are those of the calls made on the real printers directly; what is live is
// a few buffers. Until a buffer fills nothing is handed over and no thread is started: a short
// document is replayed on the caller's thread, at drain(). The thread is a JobThread
// (support/job_thread.hpp): its own, or one it shares.
#pragma once
#include "anec/support/job_thread.hpp"
#include "anec/support/printer.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace anec {

class PrintBehind {
public:
  PrintBehind();
  ~PrintBehind(); // stops; what is not drained is not printed
  PrintBehind(const PrintBehind &) = delete;
  PrintBehind &operator=(const PrintBehind &) = delete;

  // The chunks replayed on `jobs` (which must outlive this) instead of a thread of this one's own;
  // before the first chunk is handed over.
  void share(JobThread &jobs) { jobs_.share(jobs); }
  // A printer of `target`'s form whose calls are replayed into `target`; it lives as long as this.
  Printer &recorder(Printer &target);
  // Every call recorded so far replayed, then what a replay threw is thrown here.
  void drain();
  // Nothing more replayed (a chunk being replayed is finished), what is not replayed dropped:
  // before the printers given to recorder() go.
  void stop();
  // `job` run on the thread after what was handed over to it, when something was; else here, now.
  // A job must not throw.
  void post(std::function<void()> job);

  // A run of recorded calls for one printer.
  struct Chunk {
    Printer *target = nullptr;
    std::unique_ptr<char[]> calls; // each call's code, then its key and value
    size_t size = 0, capacity = 0;
    std::vector<Doc> docs; // the values given as documents, which the calls hold by position
    // `n` bytes at the end of the calls, for the caller to fill.
    char *room(size_t n) {
      if (size + n > capacity)
        grow(size + n);
      size += n;
      return calls.get() + size - n;
    }
    void grow(size_t at_least);
    void clear() {
      size = 0;
      docs.clear();
    }
  };

private:
  class Recorder;
  void hand_over(Chunk &chunk); // a full chunk, to the thread
  bool handed_over();           // whether a chunk went to the thread: whether it runs
  // A call's code, its key (nullptr: none) and its value, written in one piece.
  static void record(Chunk &chunk, char call, const std::string_view *key, const Scalar &v);
  void replay_next();

  std::vector<std::unique_ptr<Recorder>> recorders_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Chunk> queue_;  // handed over, not yet replayed (under mutex_)
  size_t posted_ = 0;        // chunks handed to the thread (under mutex_)
  size_t done_ = 0;          // of them, replayed or dropped (under mutex_)
  bool stop_ = false;        // (under mutex_)
  std::exception_ptr error_; // the first a replay threw (under mutex_)
  JobThreadUse jobs_;        // last: its own thread goes before what it replays
};

} // namespace anec
