#include <objbase.h>
#include <windows.h>

#include <cstring>

#include "sim_platform.h"
#include "utf.h"

namespace hcnsim {
namespace {

// Under wine the Windows process is a Unix process too, and Z: maps to the Unix root, so its /proc entry names
// the pid that a simulator on the same machine can signal. Real Windows has no Z:\proc and gets the fallback.
uint32_t ReadWineUnixPid() {
  HANDLE file = CreateFileW(L"Z:\\proc\\self\\stat", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                            OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) return 0;
  char buffer[32] = {};
  DWORD read = 0;
  const BOOL ok = ReadFile(file, buffer, sizeof(buffer) - 1, &read, nullptr);
  CloseHandle(file);
  if (!ok) return 0;
  uint32_t pid = 0;
  for (DWORD i = 0; i < read && buffer[i] >= '0' && buffer[i] <= '9'; ++i) pid = pid * 10 + (buffer[i] - '0');
  return pid;
}

}  // namespace

uint32_t UnixPid() {
  static const uint32_t pid = [] {
    const uint32_t unix_pid = ReadWineUnixPid();
    return unix_pid != 0 ? unix_pid : static_cast<uint32_t>(GetCurrentProcessId());
  }();
  return pid;
}

uint32_t WindowsPid() { return static_cast<uint32_t>(GetCurrentProcessId()); }

std::optional<std::string> AddressFromEnvironment() {
  wchar_t buffer[1024];
  const DWORD length = GetEnvironmentVariableW(L"HCN_SIM", buffer, 1024);
  if (length == 0) return std::nullopt;
  if (length >= 1024) return std::string();  // too long to be one of ours: reported as malformed, not as unset
  return hcn::Utf16ToUtf8(hcn::View(buffer));
}

hcn_wchar* AllocWide(std::u16string_view text) {
  auto* out = static_cast<hcn_wchar*>(CoTaskMemAlloc((text.size() + 1) * sizeof(hcn_wchar)));
  if (out == nullptr) return nullptr;
  std::memcpy(out, text.data(), text.size() * sizeof(hcn_wchar));
  out[text.size()] = 0;
  return out;
}

void FreeWide(hcn_wchar* text) { CoTaskMemFree(text); }

}  // namespace hcnsim
