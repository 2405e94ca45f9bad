#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "sim_connection.h"

namespace hcnsim {
namespace {

std::string Reason(const char* what, int error) { return std::string(what) + ": " + std::strerror(error); }

int ConnectUnix(const std::string& path, std::string* why) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    *why = "unix socket path is too long: " + path;
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = Reason("socket", errno);
    return -1;
  }
  int rc;
  do rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    *why = Reason(("connect unix:" + path).c_str(), errno);
    close(fd);
    return -1;
  }
  return fd;
}

int ConnectTcp(const std::string& host, const std::string& port, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int gai = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
  if (gai != 0) {
    *why = "getaddrinfo " + host + ": " + gai_strerror(gai);
    return -1;
  }
  int fd = -1;
  // localhost may resolve to ::1 first while the simulator listens on 127.0.0.1 only: try every address.
  for (addrinfo* ai = list; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int rc;
    do rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      *why = Reason(("connect tcp:" + host + ":" + port).c_str(), errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(list);
  return fd;
}

}  // namespace

Connection::~Connection() {
  if (socket_ >= 0) close(static_cast<int>(socket_));
}

bool Connection::Open(const Address& address, std::string* why) {
  socket_ = address.scheme == Address::Scheme::kUnix ? ConnectUnix(address.path, why)
                                                    : ConnectTcp(address.host, address.port, why);
  return socket_ >= 0;
}

bool Connection::SendAll(std::string_view data, std::string* why) {
  while (!data.empty()) {
    // MSG_NOSIGNAL: a simulator that hangs up must cost this call an error, not the host process a SIGPIPE.
    const ssize_t n = send(static_cast<int>(socket_), data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = Reason("send", errno);
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

ptrdiff_t Connection::Receive(char* buffer, size_t size, std::string* why) {
  for (;;) {
    const ssize_t n = recv(static_cast<int>(socket_), buffer, size, 0);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    *why = Reason("recv", errno);
    return -1;
  }
}

void Connection::Shutdown() {
  if (socket_ >= 0) shutdown(static_cast<int>(socket_), SHUT_RDWR);
}

bool Connection::Quiet() const {
  pollfd watch{static_cast<int>(socket_), POLLIN, 0};
  int rc;
  do rc = poll(&watch, 1, 0);
  while (rc < 0 && errno == EINTR);
  return rc == 0;
}

}  // namespace hcnsim
