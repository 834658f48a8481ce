// Batches made on a thread beside the caller's, up to two ahead of the one the caller uses: a reader
// parses the next run of a file while its caller works on the last. The batches' storage is reused,
// so what is live is three batches. The order, and so every result, is the same as when the batches
// are made one at a time on the caller's thread, which is what happens when no thread is asked for.
// The thread is a JobThread (support/job_thread.hpp): its own, or one it shares.
#pragma once
#include "anec/support/job_thread.hpp"

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>

namespace anec {

template <class Batch> class MadeAhead {
public:
  // `make` fills a batch (reusing its storage) and returns false when there is none left. With
  // `on_thread`, the batches are made on a thread, from the first next().
  MadeAhead(std::function<bool(Batch &)> make, bool on_thread)
      : make_(std::move(make)), on_thread_(on_thread) {}
  ~MadeAhead() { // the batches asked for and not begun are dropped, the one being made finished
    std::unique_lock lock(mutex_);
    stop_ = true;
    changed_.wait(lock, [&] { return posted_ == done_; });
  }
  MadeAhead(const MadeAhead &) = delete;
  MadeAhead &operator=(const MadeAhead &) = delete;

  // The batches made on `jobs` (which must outlive this) instead of a thread of this one's own;
  // before the first next().
  void share(JobThread &jobs) { jobs_.share(jobs); }

  // The next batch, valid until the next call; nullptr after the last. What `make` threw is thrown
  // here, in its turn, and again at every later call.
  Batch *next() {
    if (!ended_) {
      Slot &s = on_thread_ ? take() : make_here();
      ended_ = !s.made;
      error_ = s.error;
      if (!ended_)
        return &s.batch;
    }
    if (error_)
      std::rethrow_exception(error_);
    return nullptr;
  }

private:
  static constexpr size_t kSlots = 3; // one in use, two made ahead
  struct Slot {
    Batch batch;
    bool made = false;
    std::exception_ptr error;
  };

  // s.made false at the end, or on an error (kept in s.error).
  void make_into(Slot &s) {
    s.error = nullptr;
    try {
      s.made = make_(s.batch);
    } catch (...) {
      s.made = false;
      s.error = std::current_exception();
    }
  }
  Slot &make_here() {
    make_into(slots_[0]);
    return slots_[0];
  }
  // The next batch, once it is made; the batch taken before is handed back for the one kSlots on.
  Slot &take() {
    std::unique_lock lock(mutex_);
    if (taken_ == 0)
      for (size_t k = 0; k < kSlots; ++k)
        ask(k);
    else
      ask(taken_ - 1 + kSlots);
    changed_.wait(lock, [&] { return made_ > taken_; });
    return slots_[taken_++ % kSlots];
  }
  // Batch k made on the thread (under mutex_).
  void ask(size_t k) {
    ++posted_;
    jobs_.get().post([this, k] { make_on_thread(k); });
  }
  void make_on_thread(size_t k) {
    bool skip;
    {
      std::lock_guard lock(mutex_);
      skip = stop_ || last_made_; // after the last batch nothing more is made
    }
    Slot &s = slots_[k % kSlots];
    if (!skip)
      make_into(s);
    std::lock_guard lock(mutex_);
    if (!skip) {
      made_ = k + 1;
      last_made_ = !s.made;
    }
    ++done_;
    changed_.notify_all(); // under the lock: once done_ is counted, the destructor may end this
  }

  std::function<bool(Batch &)> make_;
  bool on_thread_;
  Slot slots_[kSlots];
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t made_ = 0;        // batches made on the thread (under mutex_)
  size_t posted_ = 0;      // batches asked of the thread (under mutex_)
  size_t done_ = 0;        // of them, done or dropped (under mutex_)
  bool last_made_ = false; // the thread made the last batch, or met an error (under mutex_)
  bool stop_ = false;      // the caller's end: nothing more is made (under mutex_)
  size_t taken_ = 0;       // the caller's own: batches taken
  bool ended_ = false;
  std::exception_ptr error_;
  JobThreadUse jobs_; // last: its own thread goes before the slots it fills
};

} // namespace anec
