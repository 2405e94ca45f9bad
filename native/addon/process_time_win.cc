#include <windows.h>

#include "process_time.h"

namespace hcn {

std::optional<std::string> ProcessStartTime(int64_t pid) {
  if (pid <= 0 || pid > 0xFFFFFFFFll) return std::nullopt;
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, static_cast<DWORD>(pid));
  if (process == nullptr) {
    const DWORD error = GetLastError();
    if (error == ERROR_INVALID_PARAMETER) return std::nullopt;  // no such process
    throw std::runtime_error("OpenProcess(" + std::to_string(pid) + "): Win32 error " + std::to_string(error));
  }
  FILETIME created, exited, kernel, user;
  // A handle keeps an exited process's object alive; only a process that has not signalled is running.
  const bool running = WaitForSingleObject(process, 0) == WAIT_TIMEOUT;
  const BOOL ok = GetProcessTimes(process, &created, &exited, &kernel, &user);
  const DWORD error = GetLastError();
  CloseHandle(process);
  if (!running) return std::nullopt;
  if (!ok) throw std::runtime_error("GetProcessTimes(" + std::to_string(pid) + "): Win32 error " + std::to_string(error));
  const uint64_t ticks = (static_cast<uint64_t>(created.dwHighDateTime) << 32) | created.dwLowDateTime;
  return std::to_string(ticks);
}

}  // namespace hcn
