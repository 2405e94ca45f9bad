#include <windows.h>

#include "os_lock.h"
#include "utf.h"

namespace hcn {

LockStatus OsTryLock(const std::u16string& path, intptr_t* os_handle) {
  // Sharing everything: exclusion comes from the byte-range lock, not from the open, so a waiting process can
  // still open the file and ask. The handle is not inheritable (no SECURITY_ATTRIBUTES).
  HANDLE file = CreateFileW(reinterpret_cast<const wchar_t*>(path.c_str()), GENERIC_READ | GENERIC_WRITE,
                            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_ALWAYS,
                            FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) {
    const DWORD error = GetLastError();
    throw LockError{"CreateFileW " + Utf16ToUtf8(path) + ": Win32 error " + std::to_string(error), error};
  }
  OVERLAPPED at{};
  if (LockFileEx(file, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD, MAXDWORD, &at)) {
    *os_handle = reinterpret_cast<intptr_t>(file);
    return LockStatus::kLocked;
  }
  const DWORD error = GetLastError();
  CloseHandle(file);
  if (error == ERROR_LOCK_VIOLATION || error == ERROR_IO_PENDING) return LockStatus::kBusy;
  throw LockError{"LockFileEx " + Utf16ToUtf8(path) + ": Win32 error " + std::to_string(error), error};
}

void OsUnlock(intptr_t os_handle) {
  HANDLE file = reinterpret_cast<HANDLE>(os_handle);
  OVERLAPPED at{};
  UnlockFileEx(file, 0, MAXDWORD, MAXDWORD, &at);
  CloseHandle(file);
}

}  // namespace hcn
