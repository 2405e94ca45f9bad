// Connections kept between calls (docs/sim-protocol.md, "Kept connections"). Opening a connection costs the
// simulator, a Node process, more than most calls it then answers (an accept, a socket object, a teardown): with a
// connection per call, a "zero-latency" simulator added about half a millisecond of its own to every HCN call.
// Kept connections change nothing a caller can see: a call is still carried out once its line is sent, whatever
// becomes of the caller, and a simulator that went away is noticed before a kept connection is used again.
#ifndef HCN_CNI_SIMCLIENT_SIM_POOL_H_
#define HCN_CNI_SIMCLIENT_SIM_POOL_H_

#include <memory>
#include <string>

#include "sim_connection.h"

namespace hcnsim {

// An idle connection to the simulator at `address` (HCN_SIM's text) that is still open and has nothing unread, or
// nullptr. Connections the simulator has closed since (it stopped or restarted) are dropped on the way.
std::unique_ptr<Connection> TakeKept(const std::string& address);

// Keeps `connection` for a later call to `address`. Connections to another address are closed: HCN_SIM changed.
void Keep(const std::string& address, std::unique_ptr<Connection> connection);

}  // namespace hcnsim

#endif  // HCN_CNI_SIMCLIENT_SIM_POOL_H_
