// What the shim needs from the OS, implemented once per platform (shim_posix.cc, shim_win.cc).
#ifndef HCN_CNI_SHIM_PLATFORM_H_
#define HCN_CNI_SHIM_PLATFORM_H_

#include <cstddef>
#include <string>

namespace hcnshim {

// Reads stdin until EOF or until more than `limit` bytes are in `out` (the plugin refuses oversized input itself).
void ReadStdin(std::string* out, size_t limit);
// The whole environment as "KEY=VALUE\0" entries (UTF-8), as the standalone executable would see it.
std::string EnvironmentBlock();
// The service address: HCN_CNI_SERVICE, else the platform default (/run/hcn-cni/service.sock, \\.\pipe\hcn-cni).
std::string ServiceAddress();
// Writes all of `data` to stdout (1) or stderr (2); errors are ignored (nobody is left to tell).
void WriteOut(int stream, const std::string& data);
// Sleeps `ms` milliseconds.
void Pause(int ms);

// One connection to the service. Every method returns false on any failure (absent, refused, closed).
class Connection {
 public:
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();
  // Connects to the service's address; false with `why` (one line for stderr: the system's error) when nothing could
  // be reached there.
  bool Open(const std::string& address, std::string* why);
  // Whether the process serving the connected address is the real service: one that only root/SYSTEM or an
  // administrator (or, on POSIX, the shim's own user) could have started. Called before a byte is sent; false means
  // the shim must not talk to it, and `why` is one line for stderr naming who the server is.
  bool ServerIsTrusted(std::string* why);
  bool WriteAll(const std::string& data);
  bool ReadExact(char* buf, size_t n);

 private:
#ifdef _WIN32
  void* handle_ = nullptr;
#else
  int fd_ = -1;
#endif
};

// Runs the standalone executable beside this one with the same environment, `stdin_bytes` on its stdin and this
// process's stdout and stderr; returns its exit code, or -1 when it could not be started (the reason is on stderr).
int RunStandalone(const std::string& stdin_bytes);

// True when CNI_COMMAND is set and not empty: the runtime is calling. Otherwise an operator is (`hcn-cni networks`).
bool IsCniInvocation();
// Runs the standalone executable with this process's arguments (after argv[0]) and stdin, stdout and stderr, and
// returns its exit code (POSIX: replaces this process). The operator's tool is the standalone executable's.
int PassThrough(int argc, char** argv);

}  // namespace hcnshim

#endif  // HCN_CNI_SHIM_PLATFORM_H_
