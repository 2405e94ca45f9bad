// The simulator's address as docs/sim-protocol.md defines it: unix:/abs/path.sock, tcp:127.0.0.1:PORT or
// tcp:localhost:PORT. Anything else is refused up front, so a typo reads as "malformed", not as a timeout.
#ifndef HCN_CNI_SIMCLIENT_SIM_ADDRESS_H_
#define HCN_CNI_SIMCLIENT_SIM_ADDRESS_H_

#include <string>
#include <string_view>

namespace hcnsim {

struct Address {
  enum class Scheme { kUnix, kTcp };
  Scheme scheme = Scheme::kUnix;
  std::string path;  // kUnix
  std::string host;  // kTcp
  std::string port;  // kTcp, decimal
};

bool ParseAddress(std::string_view text, Address* out, std::string* why);

}  // namespace hcnsim

#endif  // HCN_CNI_SIMCLIENT_SIM_ADDRESS_H_
