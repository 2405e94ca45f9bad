// The shim on Windows: a named pipe to the service, CreateProcessW for the standalone fallback. Only kernel32 and
// advapi32 (the server's token) are imported; with mingw's -static the executable needs nothing beyond the OS.
#include <windows.h>

#include <sddl.h>

#include <string>
#include <vector>

#include "shim_platform.h"

namespace hcnshim {

namespace {

std::wstring Widen(const std::string& s) {
  if (s.empty()) return std::wstring();
  const int n = MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
  std::wstring w(static_cast<size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), &w[0], n);
  return w;
}

std::string Narrow(const wchar_t* p, size_t n) {
  if (n == 0) return std::string();
  const int len = WideCharToMultiByte(CP_UTF8, 0, p, static_cast<int>(n), nullptr, 0, nullptr, nullptr);
  std::string s(static_cast<size_t>(len), '\0');
  WideCharToMultiByte(CP_UTF8, 0, p, static_cast<int>(n), &s[0], len, nullptr, nullptr);
  return s;
}

bool WriteHandle(HANDLE h, const char* p, size_t n) {
  while (n > 0) {
    DWORD w = 0;
    const DWORD chunk = n > 65536 ? 65536 : static_cast<DWORD>(n);
    if (!WriteFile(h, p, chunk, &w, nullptr) || w == 0) return false;
    p += w;
    n -= w;
  }
  return true;
}

std::wstring SelfDir() {
  std::wstring path(32768, L'\0');
  const DWORD n = GetModuleFileNameW(nullptr, &path[0], static_cast<DWORD>(path.size()));
  path.resize(n);
  const size_t slash = path.find_last_of(L"\\/");
  return slash == std::wstring::npos ? L"." : path.substr(0, slash);
}

}  // namespace

void ReadStdin(std::string* out, size_t limit) {
  HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
  if (in == nullptr || in == INVALID_HANDLE_VALUE) return;
  char buf[65536];
  while (out->size() <= limit) {
    DWORD n = 0;
    if (!ReadFile(in, buf, sizeof buf, &n, nullptr) || n == 0) break;  // a closed pipe is ERROR_BROKEN_PIPE: EOF
    out->append(buf, n);
  }
}

std::string EnvironmentBlock() {
  std::string block;
  wchar_t* env = GetEnvironmentStringsW();
  if (env == nullptr) return block;
  for (const wchar_t* e = env; *e; e += wcslen(e) + 1) {
    if (*e == L'=') continue;  // the hidden per-drive "=C:=C:\dir" entries are not environment variables
    block += Narrow(e, wcslen(e));
    block.push_back('\0');
  }
  FreeEnvironmentStringsW(env);
  return block;
}

std::string ServiceAddress() {
  wchar_t buf[1024];
  const DWORD n = GetEnvironmentVariableW(L"HCN_CNI_SERVICE", buf, 1024);
  if (n > 0 && n < 1024) return Narrow(buf, n);
  return "\\\\.\\pipe\\hcn-cni";
}

void WriteOut(int stream, const std::string& data) {
  WriteHandle(GetStdHandle(stream == 2 ? STD_ERROR_HANDLE : STD_OUTPUT_HANDLE), data.data(), data.size());
}

void Pause(int ms) { Sleep(static_cast<DWORD>(ms)); }

Connection::~Connection() {
  if (handle_ != nullptr) CloseHandle(static_cast<HANDLE>(handle_));
}

bool Connection::Open(const std::string& address, std::string* why) {
  const std::wstring name = Widen(address);
  for (int attempt = 0; attempt < 50; ++attempt) {
    // SECURITY_IDENTIFICATION: the service may identify the caller (its peer check) but never act as it.
    HANDLE h = CreateFileW(name.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                           SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
    if (h != INVALID_HANDLE_VALUE) {
      handle_ = h;
      return true;
    }
    const DWORD error = GetLastError();
    *why = "CreateFileW failed: error " + std::to_string(error);
    // Every instance busy: the service is there and will make another; wait for it briefly (bounded).
    if (error != ERROR_PIPE_BUSY || !WaitNamedPipeW(name.c_str(), 100)) return false;
  }
  *why = "every instance of the pipe stayed busy";
  return false;
}

namespace {

std::string SidString(PSID sid) {
  wchar_t* text = nullptr;
  if (!ConvertSidToStringSidW(sid, &text)) return "an unreadable SID";
  std::string out = Narrow(text, wcslen(text));
  LocalFree(text);
  return out;
}

// GetTokenInformation into a buffer of the size it asks for.
bool TokenInfo(HANDLE token, TOKEN_INFORMATION_CLASS cls, std::vector<unsigned char>* buf) {
  DWORD len = 0;
  GetTokenInformation(token, cls, nullptr, 0, &len);
  if (len == 0) return false;
  buf->assign(len, 0);
  return GetTokenInformation(token, cls, buf->data(), len, &len) != 0;
}

std::string Win32Failure(const char* what) { return std::string(what) + " failed: error " + std::to_string(GetLastError()); }

// Test hook, honoured in every build because it can only narrow: HCN_CNI_TEST_SHIM_SERVER_SIDS, a comma-separated
// list of SID strings, adds the condition that the server's token holds one of them (as its user or as an enabled
// group) on top of the rule below. Wine runs every process as one administrator, so this is how the wine suite
// (test/windows/service.test.ts) makes the shim refuse a server; no value of it trusts a server the rule refuses.
bool InTestSids(PSID user, const TOKEN_GROUPS* groups, bool* set) {
  wchar_t buf[4096];
  const DWORD n = GetEnvironmentVariableW(L"HCN_CNI_TEST_SHIM_SERVER_SIDS", buf, 4096);
  *set = n > 0;
  if (n == 0) return true;
  if (n >= 4096) return false;
  std::wstring list(buf, n);
  for (size_t at = 0; at <= list.size();) {
    size_t end = list.find(L',', at);
    if (end == std::wstring::npos) end = list.size();
    const std::wstring item = list.substr(at, end - at);
    at = end + 1;
    PSID sid = nullptr;
    if (item.empty() || !ConvertStringSidToSidW(item.c_str(), &sid)) continue;
    bool held = EqualSid(sid, user) != 0;
    for (DWORD i = 0; !held && i < groups->GroupCount; ++i) {
      const DWORD a = groups->Groups[i].Attributes;
      held = (a & SE_GROUP_ENABLED) && !(a & SE_GROUP_USE_FOR_DENY_ONLY) && EqualSid(sid, groups->Groups[i].Sid);
    }
    LocalFree(sid);
    if (held) return true;
  }
  return false;
}

}  // namespace

// Whoever created the pipe name first is its server: while the service is stopped, restarting or being upgraded,
// any local user may create \\.\pipe\hcn-cni (the service's DACL exists only on the service's own instances). So the
// shim looks at the process serving its connection before it writes a byte: GetNamedPipeServerProcessId →
// OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION) → OpenProcessToken(TOKEN_QUERY) → the token's user and groups.
// Trusted: the user is LocalSystem (S-1-5-18, what the DaemonSet's HostProcess container runs as), or
// BUILTIN\Administrators (S-1-5-32-544) is an enabled group, not deny-only — an elevated administrator; UAC's
// filtered token of a non-elevated administrator has it deny-only, and deny-only SIDs grant nothing, so such a server
// is refused as the service refuses such a client (native/addon/pipe_server_win.cc). The groups are read with
// GetTokenInformation rather than CheckTokenMembership, which needs an impersonation token (DuplicateToken wants
// TOKEN_DUPLICATE, which a SYSTEM process's token grants SYSTEM only, not an administrator running the shim).
// Not the pipe's owner SID: an elevated administrator's objects are owned by Administrators or by the user, per the
// "Default owner for objects created by members of the Administrators group" policy, so the owner cannot tell an
// administrator's user SID from anyone's. Limit: the pid is the pipe's creator's; a creator that exits while another
// process keeps the pipe, and whose pid is then reused by a privileged process, would pass — a race the squatter
// does not control the other half of.
//   https://learn.microsoft.com/en-us/windows/win32/api/winbase/nf-winbase-getnamedpipeserverprocessid
//   https://learn.microsoft.com/en-us/windows/win32/api/processthreadsapi/nf-processthreadsapi-openprocess
//   https://learn.microsoft.com/en-us/windows/win32/procthread/process-security-and-access-rights
//   https://learn.microsoft.com/en-us/windows/win32/api/processthreadsapi/nf-processthreadsapi-openprocesstoken
//   https://learn.microsoft.com/en-us/windows/win32/api/securitybaseapi/nf-securitybaseapi-gettokeninformation
//   https://learn.microsoft.com/en-us/windows/win32/api/winnt/ns-winnt-sid_and_attributes (SE_GROUP_USE_FOR_DENY_ONLY)
//   https://learn.microsoft.com/en-us/windows/win32/api/securitybaseapi/nf-securitybaseapi-checktokenmembership
//   https://learn.microsoft.com/en-us/windows/win32/secauthz/well-known-sids
bool Connection::ServerIsTrusted(std::string* why) {
  ULONG pid = 0;
  if (!GetNamedPipeServerProcessId(static_cast<HANDLE>(handle_), &pid)) {
    *why = Win32Failure("GetNamedPipeServerProcessId");
    return false;
  }
  const std::string who = "its server (pid " + std::to_string(pid) + ")";
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
  if (process == nullptr) {
    *why = who + ": " + Win32Failure("OpenProcess");
    return false;
  }
  HANDLE token = nullptr;
  const BOOL opened = OpenProcessToken(process, TOKEN_QUERY, &token);
  const DWORD open_error = GetLastError();
  CloseHandle(process);
  if (!opened) {
    *why = who + ": OpenProcessToken failed: error " + std::to_string(open_error);
    return false;
  }
  std::vector<unsigned char> user_buf, groups_buf;
  const bool read = TokenInfo(token, TokenUser, &user_buf) && TokenInfo(token, TokenGroups, &groups_buf);
  if (!read) *why = who + ": " + Win32Failure("GetTokenInformation");
  CloseHandle(token);
  if (!read) return false;
  PSID user = reinterpret_cast<const TOKEN_USER*>(user_buf.data())->User.Sid;
  const auto* groups = reinterpret_cast<const TOKEN_GROUPS*>(groups_buf.data());
  bool trusted = IsWellKnownSid(user, WinLocalSystemSid) != 0;
  for (DWORD i = 0; !trusted && i < groups->GroupCount; ++i) {
    const DWORD a = groups->Groups[i].Attributes;
    trusted = (a & SE_GROUP_ENABLED) && !(a & SE_GROUP_USE_FOR_DENY_ONLY) &&
              IsWellKnownSid(groups->Groups[i].Sid, WinBuiltinAdministratorsSid);
  }
  bool test_set = false;
  if (trusted && InTestSids(user, groups, &test_set)) return true;
  *why = who + " runs as " + SidString(user) + ", " +
         (trusted ? std::string("which holds none of HCN_CNI_TEST_SHIM_SERVER_SIDS")
                  : std::string("neither SYSTEM (S-1-5-18) nor an elevated member of Administrators (S-1-5-32-544)"));
  return false;
}

bool Connection::WriteAll(const std::string& data) {
  return WriteHandle(static_cast<HANDLE>(handle_), data.data(), data.size());
}

bool Connection::ReadExact(char* buf, size_t n) {
  while (n > 0) {
    DWORD r = 0;
    const DWORD chunk = n > 65536 ? 65536 : static_cast<DWORD>(n);
    if (!ReadFile(static_cast<HANDLE>(handle_), buf, chunk, &r, nullptr) || r == 0) return false;
    buf += r;
    n -= r;
  }
  return true;
}

int RunStandalone(const std::string& stdin_bytes) {
  const std::wstring path = SelfDir() + L"\\hcn-cni-standalone.exe";
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  HANDLE read_end = nullptr, write_end = nullptr;
  if (!CreatePipe(&read_end, &write_end, &sa, 0)) return -1;
  SetHandleInformation(write_end, HANDLE_FLAG_INHERIT, 0);
  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = read_end;
  si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
  si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION pi{};
  std::wstring cmd = L"\"" + path + L"\"";
  const BOOL ok = CreateProcessW(path.c_str(), &cmd[0], nullptr, nullptr, TRUE, 0, nullptr, nullptr, &si, &pi);
  CloseHandle(read_end);
  if (!ok) {
    CloseHandle(write_end);
    WriteOut(2, "hcn-cni: cannot run " + Narrow(path.c_str(), path.size()) + ": error " +
                    std::to_string(GetLastError()) + "\n");
    return -1;
  }
  CloseHandle(pi.hThread);
  WriteHandle(write_end, stdin_bytes.data(), stdin_bytes.size());
  CloseHandle(write_end);
  WaitForSingleObject(pi.hProcess, INFINITE);
  DWORD code = 1;
  GetExitCodeProcess(pi.hProcess, &code);
  CloseHandle(pi.hProcess);
  return static_cast<int>(code);
}

bool IsCniInvocation() {
  wchar_t buf[16];
  const DWORD n = GetEnvironmentVariableW(L"CNI_COMMAND", buf, 16);
  return n > 0;
}

// The command line after argv[0], as Windows gave it (quoting intact), appended to the standalone's own name.
int PassThrough(int, char**) {
  const std::wstring path = SelfDir() + L"\\hcn-cni-standalone.exe";
  const wchar_t* line = GetCommandLineW();
  bool quoted = false;
  for (; *line && (quoted || (*line != L' ' && *line != L'\t')); ++line) {
    if (*line == L'"') quoted = !quoted;
  }
  std::wstring cmd = L"\"" + path + L"\"" + line;
  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
  si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION pi{};
  if (!CreateProcessW(path.c_str(), &cmd[0], nullptr, nullptr, TRUE, 0, nullptr, nullptr, &si, &pi)) {
    WriteOut(2, "hcn-cni: cannot run " + Narrow(path.c_str(), path.size()) + ": error " + std::to_string(GetLastError()) + "\n");
    return 127;
  }
  CloseHandle(pi.hThread);
  WaitForSingleObject(pi.hProcess, INFINITE);
  DWORD code = 1;
  GetExitCodeProcess(pi.hProcess, &code);
  CloseHandle(pi.hProcess);
  return static_cast<int>(code);
}

}  // namespace hcnshim
