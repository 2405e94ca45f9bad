// The shim on Windows: a named pipe to the service, CreateProcessW for the standalone fallback. Only kernel32 is
// imported; with mingw's -static the executable needs nothing beyond the OS.
#include <windows.h>

#include <string>

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

Connection::~Connection() {
  if (handle_ != nullptr) CloseHandle(static_cast<HANDLE>(handle_));
}

bool Connection::Open(const std::string& address) {
  const std::wstring name = Widen(address);
  for (int attempt = 0; attempt < 50; ++attempt) {
    // SECURITY_IDENTIFICATION: the service may identify the caller (its peer check) but never act as it.
    HANDLE h = CreateFileW(name.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                           SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
    if (h != INVALID_HANDLE_VALUE) {
      handle_ = h;
      return true;
    }
    // Every instance busy: the service is there and will make another; wait for it briefly (bounded).
    if (GetLastError() != ERROR_PIPE_BUSY || !WaitNamedPipeW(name.c_str(), 100)) return false;
  }
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
