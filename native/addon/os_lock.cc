#include "os_lock.h"

#include <map>
#include <mutex>

namespace hcn {
namespace {

std::mutex table_mutex;
std::map<int32_t, intptr_t> table;
int32_t next_handle = 1;

}  // namespace

std::optional<int32_t> TryLockFile(const std::u16string& path) {
  intptr_t os_handle;
  if (OsTryLock(path, &os_handle) == LockStatus::kBusy) return std::nullopt;
  std::lock_guard<std::mutex> lock(table_mutex);
  const int32_t handle = next_handle++;
  table.emplace(handle, os_handle);
  return handle;
}

bool UnlockFile(int32_t handle) {
  intptr_t os_handle;
  {
    std::lock_guard<std::mutex> lock(table_mutex);
    auto it = table.find(handle);
    if (it == table.end()) return false;
    os_handle = it->second;
    table.erase(it);
  }
  OsUnlock(os_handle);
  return true;
}

}  // namespace hcn
