// Jobs run one after another, in the order given, on a thread of their own (started at the first).
// The parts of a pipeline that each want a thread beside the caller's (a reader parsing ahead,
// MadeAhead; a printer writing behind, PrintBehind) can share one: on two cores the pipeline is
// then two threads, one a core. With three, the kernel was seen waking the parser on the core of
// the thread that woke it, the two taking turns there while the other core idled (bench/README.md,
// "Outputs that stream", the tenth round).
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace anec {

class JobThread {
public:
  JobThread() = default;
  ~JobThread() { // the jobs queued are run first: their owners, gone before this, left them nothing to do
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }
  JobThread(const JobThread &) = delete;
  JobThread &operator=(const JobThread &) = delete;

  // `job` run after those posted before it. A job must not throw, nor wait for its poster.
  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
      if (!thread_.joinable())
        thread_ = std::thread([this] { work(); });
    }
    changed_.notify_all();
  }

private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty())
        return;
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_; // (under mutex_)
  bool stop_ = false;                      // (under mutex_)
  std::thread thread_;
};

// The JobThread a part posts its jobs to: one it was given to share, else its own, started with
// the first job. Its own thread is joined when this goes (a part declares this last).
class JobThreadUse {
public:
  void share(JobThread &jobs) { shared_ = &jobs; }
  JobThread &get() { return shared_ ? *shared_ : own_ ? *own_ : own_.emplace(); }

private:
  JobThread *shared_ = nullptr;
  std::optional<JobThread> own_;
};

} // namespace anec
