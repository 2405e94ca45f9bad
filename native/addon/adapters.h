// The host's network adapters from the operating system, for hosts whose HCN library cannot list them
// (real computenetwork.dll has no such function; the simulator client does).
#ifndef HCN_CNI_ADDON_ADAPTERS_H_
#define HCN_CNI_ADDON_ADAPTERS_H_

#include <string>

#include "hcn_abi.h"

namespace hcn {

bool OsAdaptersAvailable();
// A JSON array of {Name, MacAddress, InterfaceDescription, InterfaceIndex, Physical, InterfaceGuid}, as UTF-8.
HRESULT OsListAdapters(std::string* json);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_ADAPTERS_H_
