// HCN handles of the client: heap objects remembering which object they stand for and the service instance that
// opened it. Nothing else about a handle reaches the simulator, so Close never makes a call.
#ifndef HCN_CNI_SIMCLIENT_SIM_HANDLES_H_
#define HCN_CNI_SIMCLIENT_SIM_HANDLES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace hcnsim {

// kComputeSystem handles keep the compute system's id (a container id, not a GUID) where the others keep a GUID;
// kHcsCallback handles (a registered compute-system callback) keep the compute system's id too.
enum class Kind : uint32_t {
  kNetwork = 1,
  kEndpoint = 2,
  kNamespace = 3,
  kComputeSystem = 4,
  kLoadBalancer = 5,
  kSdnRoute = 6,
  kHcsCallback = 7,
};

// nullptr when out of memory. `boot`: the service instance that opened it ("" for none), sent with every call made
// on the handle so that the simulator refuses a handle of an instance before a restart (src/sim/stale-handles.ts).
void* NewHandle(Kind kind, const std::string& guid, const std::string& boot = "");
// The service instance of a live handle of this kind, or nullopt (none, or not a live handle).
std::optional<std::string> HandleBoot(void* handle, Kind kind);
// The GUID of a live handle of this kind, or nullptr (wrong kind, closed, or not a handle at all).
const std::string* HandleGuid(void* handle, Kind kind);
// False when `handle` is not a live handle of this kind.
bool CloseHandle(void* handle, Kind kind);

}  // namespace hcnsim

#endif  // HCN_CNI_SIMCLIENT_SIM_HANDLES_H_
