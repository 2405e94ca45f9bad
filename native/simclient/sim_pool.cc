#include "sim_pool.h"

#include <mutex>
#include <utility>
#include <vector>

namespace hcnsim {
namespace {

// More than the calls a process runs at once in practice (the addon's worker threads); beyond it, close.
constexpr size_t kMaxKept = 16;

struct Kept {
  std::mutex mutex;
  std::string address;
  std::vector<std::unique_ptr<Connection>> idle;
};

// Never destroyed: a worker thread may still finish a call while the process exits.
Kept& State() {
  static Kept* const kept = new Kept();
  return *kept;
}

}  // namespace

std::unique_ptr<Connection> TakeKept(const std::string& address) {
  Kept& kept = State();
  for (;;) {
    std::unique_ptr<Connection> connection;
    {
      std::lock_guard<std::mutex> lock(kept.mutex);
      if (kept.address != address || kept.idle.empty()) return nullptr;
      connection = std::move(kept.idle.back());
      kept.idle.pop_back();
    }
    if (connection->Quiet()) return connection;
    // Readable while idle: the simulator closed it (an end of stream is pending). Closed here, outside the lock.
  }
}

void Keep(const std::string& address, std::unique_ptr<Connection> connection) {
  std::vector<std::unique_ptr<Connection>> closing;  // destroyed (closed) after the lock is released
  std::lock_guard<std::mutex> lock(State().mutex);
  Kept& kept = State();
  if (kept.address != address) {
    closing.swap(kept.idle);
    kept.address = address;
  }
  if (kept.idle.size() < kMaxKept) kept.idle.push_back(std::move(connection));
  else closing.push_back(std::move(connection));
}

}  // namespace hcnsim
