#include "call_threads.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace hcn {
namespace {

// How long an idle thread waits for another job before it ends. Long enough that a pod's verb (tens of calls, one
// after another) and the next verb reuse threads; short enough that a burst's threads do not stay for good.
constexpr std::chrono::seconds kIdleLifetime{30};

class CallThreads {
 public:
  void Run(ThreadJob job) {
    std::unique_lock<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
    // Every job beyond the threads waiting right now gets a thread of its own: a job is never left to wait for a
    // busy thread, which may be one HNS never answers.
    if (jobs_.size() <= waiting_) {
      wake_.notify_one();
      return;
    }
    try {
      std::thread(&CallThreads::Loop, this).detach();
    } catch (...) {
      jobs_.pop_back();
      throw;
    }
    threads_++;
    started_++;
  }

  CallThreadCounts Counts() {
    std::lock_guard<std::mutex> lock(mutex_);
    return CallThreadCounts{threads_, threads_ - waiting_, started_};
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (jobs_.empty()) {
        waiting_++;
        const bool got = wake_.wait_for(lock, kIdleLifetime, [this] { return !jobs_.empty(); });
        waiting_--;
        if (!got) break;
      }
      ThreadJob job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      job = nullptr;  // what the job captured is released on this thread, before it waits again
      lock.lock();
    }
    threads_--;
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<ThreadJob> jobs_;
  uint64_t waiting_ = 0;  // threads blocked in wait_for, ready for a job
  uint64_t threads_ = 0;
  uint64_t started_ = 0;
};

// Never destroyed: detached threads may still wait on its condition variable, or run a hung call, while the
// process exits, and a destroyed mutex under them would be undefined behaviour.
CallThreads& Instance() {
  static CallThreads* threads = new CallThreads();
  return *threads;
}

}  // namespace

void RunOnCallThread(ThreadJob job) { Instance().Run(std::move(job)); }

CallThreadCounts CountCallThreads() { return Instance().Counts(); }

}  // namespace hcn
