// The shim on Linux (and other POSIX hosts): a unix socket to the service, fork+exec for the standalone fallback.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "shim_platform.h"

extern char** environ;

namespace hcnshim {

namespace {

bool WriteFd(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The directory of this executable (the standalone one lives beside it).
std::string SelfDir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

void ReadStdin(std::string* out, size_t limit) {
  char buf[65536];
  while (out->size() <= limit) {
    const ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
}

std::string EnvironmentBlock() {
  std::string block;
  for (char** e = environ; e && *e; ++e) {
    block += *e;
    block.push_back('\0');
  }
  return block;
}

std::string ServiceAddress() {
  const char* a = getenv("HCN_CNI_SERVICE");
  return a && *a ? a : "/run/hcn-cni/service.sock";
}

void WriteOut(int stream, const std::string& data) { WriteFd(stream, data.data(), data.size()); }

void Pause(int ms) {
  struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

Connection::~Connection() {
  if (fd_ >= 0) close(fd_);
}

bool Connection::Open(const std::string& address, std::string* why) {
  // A service that dies mid-request must not kill the shim with SIGPIPE: a failed write means "fall back".
  signal(SIGPIPE, SIG_IGN);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (address.size() >= sizeof sa.sun_path) {
    *why = "the address is longer than a unix socket path may be";
    return false;
  }
  memcpy(sa.sun_path, address.c_str(), address.size() + 1);
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    *why = std::string("socket: ") + strerror(errno);
    return false;
  }
  int rc;
  do rc = connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) *why = std::string("connect: ") + strerror(errno);
  return rc == 0;
}

// The server's uid as the kernel recorded it when the server called listen() (Linux: SO_PEERCRED, socket(7) and
// unix(7); elsewhere getpeereid(3)): not something the server can choose. Root's or our own user's socket is the
// service's (the service runs as root, or as the runtime's user in tests and by hand); any other uid is someone
// who could create a socket where the address points (a directory others can write, a socket left behind) — it must
// get neither the runtime's environment nor the configuration, nor choose the result.
//   https://man7.org/linux/man-pages/man7/unix.7.html (SO_PEERCRED)
bool Connection::ServerIsTrusted(std::string* why) {
  uid_t uid;
#if defined(__linux__)
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
    *why = std::string("getsockopt(SO_PEERCRED) failed: ") + strerror(errno);
    return false;
  }
  uid = cred.uid;
#else
  gid_t gid;
  if (getpeereid(fd_, &uid, &gid) != 0) {
    *why = std::string("getpeereid failed: ") + strerror(errno);
    return false;
  }
#endif
  const uid_t self = geteuid();
  if (uid == 0 || uid == self) return true;
  *why = "its server runs as uid " + std::to_string(uid) + ", neither root (0) nor this shim's user (" +
         std::to_string(self) + ")";
  return false;
}

bool Connection::WriteAll(const std::string& data) { return WriteFd(fd_, data.data(), data.size()); }

bool Connection::ReadExact(char* buf, size_t n) {
  while (n > 0) {
    const ssize_t r = read(fd_, buf, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    buf += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

int RunStandalone(const std::string& stdin_bytes) {
  signal(SIGPIPE, SIG_IGN);  // a child that stops reading stdin early is not our failure
  const std::string path = SelfDir() + "/hcn-cni-standalone";
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);  // the standalone executable starts as the runtime would have started it
    dup2(fds[0], 0);  // dup2 clears FD_CLOEXEC on the copy
    char* const argv[] = {const_cast<char*>(path.c_str()), nullptr};
    execve(path.c_str(), argv, environ);
    const std::string msg = "hcn-cni: cannot run " + path + ": " + strerror(errno) + "\n";
    WriteFd(2, msg.data(), msg.size());
    _exit(127);
  }
  close(fds[0]);
  WriteFd(fds[1], stdin_bytes.data(), stdin_bytes.size());  // the child may not read it all (EPIPE is ignored)
  close(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

bool IsCniInvocation() {
  const char* c = getenv("CNI_COMMAND");
  return c && *c;
}

int PassThrough(int argc, char** argv) {
  (void)argc;
  const std::string path = SelfDir() + "/hcn-cni-standalone";
  argv[0] = const_cast<char*>(path.c_str());
  execv(path.c_str(), argv);
  const std::string msg = "hcn-cni: cannot run " + path + ": " + strerror(errno) + "\n";
  WriteFd(2, msg.data(), msg.size());
  return 127;
}

}  // namespace hcnshim
