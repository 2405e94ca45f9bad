// One stream connection to the simulator; the platform files implement it over BSD sockets or Winsock.
#ifndef HCN_CNI_SIMCLIENT_SIM_CONNECTION_H_
#define HCN_CNI_SIMCLIENT_SIM_CONNECTION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim_address.h"

namespace hcnsim {

class Connection {
 public:
  Connection() = default;
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // False with a reason when nothing accepted the connection (the simulator is not there).
  bool Open(const Address& address, std::string* why);
  // False when the peer went away or the write failed.
  bool SendAll(std::string_view data, std::string* why);
  // Bytes read (> 0), 0 at end of stream, or -1 on error (with a reason).
  ptrdiff_t Receive(char* buffer, size_t size, std::string* why);
  // True when nothing can be read right now: no end of stream, no stray bytes. A kept connection is used again only
  // then (sim_pool.h).
  bool Quiet() const;
  // Ends both directions now: a Receive blocked on another thread returns (a service-callback registration's reader,
  // sim_exports_notifications.cc). The socket itself is closed by the destructor.
  void Shutdown();

 private:
  intptr_t socket_ = -1;
};

}  // namespace hcnsim

#endif  // HCN_CNI_SIMCLIENT_SIM_CONNECTION_H_
