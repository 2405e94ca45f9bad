// computenetwork.dll's functions, as the simulator client implements them. Their signatures are checked against the
// function list by the declarations in sim_export.h.
#include "sim_export.h"
#include "sim_ops.h"

using hcnsim::Kind;

HCNSIM_V2_API HRESULT WINAPI HcnEnumerateNetworks(PCWSTR Query, PWSTR* Networks, PWSTR* ErrorRecord) {
  return hcnsim::Enumerate("HcnEnumerateNetworks", Query, Networks, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCreateNetwork(HCN_REFGUID Id, PCWSTR Settings, HCN_NETWORK* Network,
                                              PWSTR* ErrorRecord) {
  return hcnsim::Create("HcnCreateNetwork", Kind::kNetwork, nullptr, Id, Settings, Network, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnOpenNetwork(HCN_REFGUID Id, HCN_NETWORK* Network, PWSTR* ErrorRecord) {
  return hcnsim::Open("HcnOpenNetwork", Kind::kNetwork, Id, Network, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnModifyNetwork(HCN_NETWORK Network, PCWSTR Settings, PWSTR* ErrorRecord) {
  return hcnsim::Modify("HcnModifyNetwork", Kind::kNetwork, Network, Settings, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnQueryNetworkProperties(HCN_NETWORK Network, PCWSTR Query, PWSTR* Properties,
                                                       PWSTR* ErrorRecord) {
  return hcnsim::Query("HcnQueryNetworkProperties", Kind::kNetwork, Network, Query, Properties, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnDeleteNetwork(HCN_REFGUID Id, PWSTR* ErrorRecord) {
  return hcnsim::Delete("HcnDeleteNetwork", Id, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCloseNetwork(HCN_NETWORK Network) { return hcnsim::Close(Kind::kNetwork, Network); }

HCNSIM_V2_API HRESULT WINAPI HcnEnumerateEndpoints(PCWSTR Query, PWSTR* Endpoints, PWSTR* ErrorRecord) {
  return hcnsim::Enumerate("HcnEnumerateEndpoints", Query, Endpoints, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCreateEndpoint(HCN_NETWORK Network, HCN_REFGUID Id, PCWSTR Settings,
                                               HCN_ENDPOINT* Endpoint, PWSTR* ErrorRecord) {
  return hcnsim::Create("HcnCreateEndpoint", Kind::kEndpoint, Network, Id, Settings, Endpoint, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnOpenEndpoint(HCN_REFGUID Id, HCN_ENDPOINT* Endpoint, PWSTR* ErrorRecord) {
  return hcnsim::Open("HcnOpenEndpoint", Kind::kEndpoint, Id, Endpoint, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnModifyEndpoint(HCN_ENDPOINT Endpoint, PCWSTR Settings, PWSTR* ErrorRecord) {
  return hcnsim::Modify("HcnModifyEndpoint", Kind::kEndpoint, Endpoint, Settings, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnQueryEndpointProperties(HCN_ENDPOINT Endpoint, PCWSTR Query, PWSTR* Properties,
                                                        PWSTR* ErrorRecord) {
  return hcnsim::Query("HcnQueryEndpointProperties", Kind::kEndpoint, Endpoint, Query, Properties, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnDeleteEndpoint(HCN_REFGUID Id, PWSTR* ErrorRecord) {
  return hcnsim::Delete("HcnDeleteEndpoint", Id, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCloseEndpoint(HCN_ENDPOINT Endpoint) {
  return hcnsim::Close(Kind::kEndpoint, Endpoint);
}

HCNSIM_V2_API HRESULT WINAPI HcnEnumerateNamespaces(PCWSTR Query, PWSTR* Namespaces, PWSTR* ErrorRecord) {
  return hcnsim::Enumerate("HcnEnumerateNamespaces", Query, Namespaces, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCreateNamespace(HCN_REFGUID Id, PCWSTR Settings, HCN_NAMESPACE* Namespace,
                                                PWSTR* ErrorRecord) {
  return hcnsim::Create("HcnCreateNamespace", Kind::kNamespace, nullptr, Id, Settings, Namespace, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnOpenNamespace(HCN_REFGUID Id, HCN_NAMESPACE* Namespace, PWSTR* ErrorRecord) {
  return hcnsim::Open("HcnOpenNamespace", Kind::kNamespace, Id, Namespace, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnModifyNamespace(HCN_NAMESPACE Namespace, PCWSTR Settings, PWSTR* ErrorRecord) {
  return hcnsim::Modify("HcnModifyNamespace", Kind::kNamespace, Namespace, Settings, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnQueryNamespaceProperties(HCN_NAMESPACE Namespace, PCWSTR Query, PWSTR* Properties,
                                                         PWSTR* ErrorRecord) {
  return hcnsim::Query("HcnQueryNamespaceProperties", Kind::kNamespace, Namespace, Query, Properties, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnDeleteNamespace(HCN_REFGUID Id, PWSTR* ErrorRecord) {
  return hcnsim::Delete("HcnDeleteNamespace", Id, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCloseNamespace(HCN_NAMESPACE Namespace) {
  return hcnsim::Close(Kind::kNamespace, Namespace);
}

// Not an HCN function: the simulated host's adapters, which the addon prefers over asking the OS when present.
HCNSIM_V2_API HRESULT WINAPI HcnSimEnumerateAdapters(PWSTR* Adapters, PWSTR* ErrorRecord) {
  return hcnsim::EnumerateAdapters(Adapters, ErrorRecord);
}
