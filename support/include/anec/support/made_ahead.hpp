// Batches made on a thread of their own, up to two ahead of the one the caller uses: a reader parses
// the next run of a file while its caller works on the last. The batches' storage is reused, so what
// is live is three batches. The order, and so every result, is the same as when the batches are
// made one at a time on the caller's thread, which is what happens when no thread is asked for.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace anec {

template <class Batch> class MadeAhead {
public:
  // `make` fills a batch (reusing its storage) and returns false when there is none left. With
  // `on_thread`, the thread starts at the first next().
  MadeAhead(std::function<bool(Batch &)> make, bool on_thread)
      : make_(std::move(make)), on_thread_(on_thread) {}
  ~MadeAhead() {
    if (!worker_.joinable())
      return;
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
  MadeAhead(const MadeAhead &) = delete;
  MadeAhead &operator=(const MadeAhead &) = delete;

  // The next batch, valid until the next call; nullptr after the last. What `make` threw is thrown
  // here, in its turn, and again at every later call.
  Batch *next() {
    if (!ended_) {
      if (on_thread_ && !worker_.joinable())
        worker_ = std::thread([this] { work(); });
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
  // The worker's next batch, once it is made; the batch taken before is handed back to it.
  Slot &take() {
    std::unique_lock lock(mutex_);
    released_ = taken_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return made_ > taken_; });
    return slots_[taken_++ % kSlots];
  }
  void work() {
    for (size_t k = 0;; ++k) {
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || k < released_ + kSlots; });
        if (stop_)
          return;
      }
      Slot &s = slots_[k % kSlots];
      make_into(s);
      {
        std::lock_guard lock(mutex_);
        made_ = k + 1;
      }
      changed_.notify_all();
      if (!s.made)
        return;
    }
  }

  std::function<bool(Batch &)> make_;
  bool on_thread_;
  Slot slots_[kSlots];
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t made_ = 0;     // batches the worker has made (under mutex_)
  size_t released_ = 0; // batches the caller is done with (under mutex_)
  bool stop_ = false;   // the caller's end: the worker stops (under mutex_)
  size_t taken_ = 0;    // the caller's own: batches taken
  bool ended_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

} // namespace anec
