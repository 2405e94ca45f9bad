// Advisory whole-file locks that the kernel drops when the holding process dies, so a crashed CNI invocation
// can never wedge the next one. JavaScript sees small integer handles; the OS handles stay in here.
#ifndef HCN_CNI_ADDON_OS_LOCK_H_
#define HCN_CNI_ADDON_OS_LOCK_H_

#include <cstdint>
#include <optional>
#include <string>

namespace hcn {

struct LockError {
  std::string message;
  int64_t code;  // errno or GetLastError()
};

// A handle, or nullopt when someone else holds the lock. Throws LockError on anything else.
std::optional<int32_t> TryLockFile(const std::u16string& path);
// False when `handle` is not a held lock.
bool UnlockFile(int32_t handle);

// The platform halves (os_lock_posix.cc / os_lock_win.cc). Unlike fcntl's classic process-wide locks, these are
// owned by the open file, so two handles in one process exclude each other just like two processes do.
enum class LockStatus { kLocked, kBusy };
LockStatus OsTryLock(const std::u16string& path, intptr_t* os_handle);  // throws LockError
void OsUnlock(intptr_t os_handle);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_OS_LOCK_H_
