#include <winsock2.h>
#include <ws2tcpip.h>

#include "sim_connection.h"

namespace hcnsim {
namespace {

std::string Reason(const char* what, int error) { return std::string(what) + ": WSA error " + std::to_string(error); }

// Winsock is reference-counted per process; one startup that lives as long as the DLL is enough.
bool EnsureWinsock(std::string* why) {
  static const int status = [] {
    WSADATA data;
    return WSAStartup(MAKEWORD(2, 2), &data);
  }();
  if (status != 0) *why = Reason("WSAStartup", status);
  return status == 0;
}

}  // namespace

Connection::~Connection() {
  if (socket_ >= 0) closesocket(static_cast<SOCKET>(socket_));
}

bool Connection::Open(const Address& address, std::string* why) {
  if (address.scheme == Address::Scheme::kUnix) {
    *why = "unix: addresses are not supported by the Windows client; use tcp:127.0.0.1:PORT";
    return false;
  }
  if (!EnsureWinsock(why)) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int gai = getaddrinfo(address.host.c_str(), address.port.c_str(), &hints, &list);
  if (gai != 0) {
    *why = Reason(("getaddrinfo " + address.host).c_str(), gai);
    return false;
  }
  for (addrinfo* ai = list; ai != nullptr && socket_ < 0; ai = ai->ai_next) {
    const SOCKET s = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (s == INVALID_SOCKET) continue;
    if (connect(s, ai->ai_addr, static_cast<int>(ai->ai_addrlen)) != 0) {
      *why = Reason(("connect tcp:" + address.host + ":" + address.port).c_str(), WSAGetLastError());
      closesocket(s);
      continue;
    }
    socket_ = static_cast<intptr_t>(s);
  }
  freeaddrinfo(list);
  return socket_ >= 0;
}

bool Connection::SendAll(std::string_view data, std::string* why) {
  while (!data.empty()) {
    const int chunk = data.size() > 1 << 30 ? 1 << 30 : static_cast<int>(data.size());
    const int n = send(static_cast<SOCKET>(socket_), data.data(), chunk, 0);
    if (n <= 0) {
      *why = Reason("send", WSAGetLastError());
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

ptrdiff_t Connection::Receive(char* buffer, size_t size, std::string* why) {
  const int n = recv(static_cast<SOCKET>(socket_), buffer, size > 1 << 30 ? 1 << 30 : static_cast<int>(size), 0);
  if (n >= 0) return n;
  *why = Reason("recv", WSAGetLastError());
  return -1;
}

void Connection::Shutdown() {
  if (socket_ >= 0) shutdown(static_cast<SOCKET>(socket_), SD_BOTH);
}

bool Connection::Quiet() const {
  fd_set readable;
  FD_ZERO(&readable);
  FD_SET(static_cast<SOCKET>(socket_), &readable);
  timeval now{0, 0};
  return select(0, &readable, nullptr, nullptr, &now) == 0;
}

}  // namespace hcnsim
