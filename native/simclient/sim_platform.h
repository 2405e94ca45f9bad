// What differs between the Linux and the Windows (mingw, under wine) builds of the client, apart from sockets.
#ifndef HCN_CNI_SIMCLIENT_SIM_PLATFORM_H_
#define HCN_CNI_SIMCLIENT_SIM_PLATFORM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hcn_abi.h"

namespace hcnsim {

// The Unix pid the simulator may SIGKILL to model a killed client (under wine: the wine process's own pid).
uint32_t UnixPid();
// GetCurrentProcessId() on Windows, 0 elsewhere.
uint32_t WindowsPid();
// The value of HCN_SIM, as UTF-8, or nullopt when unset.
std::optional<std::string> AddressFromEnvironment();
// A NUL-terminated copy allocated so that the caller's CoTaskMemFree releases it; nullptr when out of memory.
hcn_wchar* AllocWide(std::u16string_view text);
void FreeWide(hcn_wchar* text);

}  // namespace hcnsim

#endif  // HCN_CNI_SIMCLIENT_SIM_PLATFORM_H_
