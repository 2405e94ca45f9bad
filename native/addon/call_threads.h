// The threads HCN calls run on: the addon's own, outside libuv's thread pool. A call HNS never answers keeps its
// thread for as long as it hangs; on libuv's pool (UV_THREADPOOL_SIZE threads, shared with Node's own fs and dns
// work) a few such calls took every thread, and every later call of every pod queued behind them although HNS
// answered those at once. Here a job that finds no idle thread gets a new one, so a hung call holds nothing that a
// later call waits for. Idle threads are kept for a while (a thread start costs more than most HCN calls) and end
// on their own. How many calls may hang is the caller's bound (src/service: the service's abandoned-call limit).
#ifndef HCN_CNI_ADDON_CALL_THREADS_H_
#define HCN_CNI_ADDON_CALL_THREADS_H_

#include <cstdint>
#include <functional>

namespace hcn {

using ThreadJob = std::function<void()>;

// Runs `job` on an idle call thread, or on a new one when none is idle. Throws std::system_error when no thread
// can be started (the job is then not run). Any thread may call it.
void RunOnCallThread(ThreadJob job);

struct CallThreadCounts {
  uint64_t threads = 0;  // call threads alive (busy or idle)
  uint64_t busy = 0;     // of those, running a job (an HCN call, perhaps one HNS never answers)
  uint64_t started = 0;  // threads started since the process began
};
CallThreadCounts CountCallThreads();

}  // namespace hcn

#endif  // HCN_CNI_ADDON_CALL_THREADS_H_
