#include <winsock2.h>
#include <ws2ipdef.h>
#include <iphlpapi.h>
#include <netioapi.h>
#include <windows.h>

#include <memory>

#include "adapters.h"
#include "json.h"
#include "utf.h"

namespace hcn {
namespace {

// Windows shows MACs as AA-BB-CC-DD-EE-FF, which is also how HNS writes them.
std::string FormatMac(const BYTE* address, ULONG length) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string mac;
  for (ULONG i = 0; i < length; ++i) {
    if (i != 0) mac.push_back('-');
    mac.push_back(kHex[address[i] >> 4]);
    mac.push_back(kHex[address[i] & 0xF]);
  }
  return mac;
}

// A hardware NIC, as Get-NetAdapter -Physical decides it: the interface is backed by hardware. A host vNIC of an
// HNS switch ("vEthernet (…)", Hyper-V Virtual Ethernet Adapter) has the NIC's MAC but is not, and HNS refuses it
// as a network's adapter (Azure network/network_windows.go: "the hns calls fails if passed a vSwitch interface").
bool IsPhysical(const IP_ADAPTER_ADDRESSES* a) {
  MIB_IF_ROW2 row = {};
  row.InterfaceLuid = a->Luid;
  if (GetIfEntry2(&row) != NO_ERROR) return false;
  return row.InterfaceAndOperStatusFlags.HardwareInterface != FALSE;
}

}  // namespace

bool OsAdaptersAvailable() { return true; }

HRESULT OsListAdapters(std::string* json) {
  const ULONG flags = GAA_FLAG_SKIP_UNICAST | GAA_FLAG_SKIP_ANYCAST | GAA_FLAG_SKIP_MULTICAST |
                      GAA_FLAG_SKIP_DNS_SERVER;
  ULONG size = 16 * 1024;
  std::unique_ptr<char[]> buffer;
  ULONG status = ERROR_BUFFER_OVERFLOW;
  // The adapter list can grow between the sizing call and the real one; a few rounds settle it.
  for (int attempt = 0; attempt < 4 && status == ERROR_BUFFER_OVERFLOW; ++attempt) {
    buffer.reset(new char[size]);
    status = GetAdaptersAddresses(AF_UNSPEC, flags, nullptr, reinterpret_cast<IP_ADAPTER_ADDRESSES*>(buffer.get()),
                                  &size);
  }
  if (status == ERROR_NO_DATA) {
    *json = "[]";
    return 0;
  }
  if (status != ERROR_SUCCESS) return HRESULT_FROM_WIN32(status);
  *json = "[";
  for (auto* a = reinterpret_cast<IP_ADAPTER_ADDRESSES*>(buffer.get()); a != nullptr; a = a->Next) {
    if (a->IfType == IF_TYPE_SOFTWARE_LOOPBACK) continue;  // Get-NetAdapter does not show it either
    if (json->size() > 1) json->push_back(',');
    json->append("{\"Name\":");
    json::AppendString(json, Utf16ToUtf8(View(a->FriendlyName)));
    json->append(",\"MacAddress\":");
    json::AppendString(json, FormatMac(a->PhysicalAddress, a->PhysicalAddressLength));
    json->append(",\"InterfaceDescription\":");
    json::AppendString(json, Utf16ToUtf8(View(a->Description)));
    json->append(",\"InterfaceIndex\":" + std::to_string(a->IfIndex));
    // AdapterName is the adapter's NetCfgInstanceId ("{GUID}", what Get-NetAdapter shows as InterfaceGuid): unlike
    // the friendly name it is permanent (MicrosoftDocs/sdk-api
    // sdk-api-src/content/iptypes/ns-iptypes-ip_adapter_addresses_lh.md), so a NIC replaced or reinstalled under the
    // same name and MAC still shows as another adapter.
    json->append(",\"InterfaceGuid\":");
    json::AppendString(json, a->AdapterName != nullptr ? a->AdapterName : "");
    json->append(IsPhysical(a) ? ",\"Physical\":true}" : ",\"Physical\":false}");
  }
  json->push_back(']');
  return 0;
}

}  // namespace hcn
