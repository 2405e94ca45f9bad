// computenetwork.dll's load-balancer and SDN-route functions, as the simulator client implements them: the same
// generic verbs as the other HCN families (sim_ops.cc); hcn-sim models the objects (src/sim/sdn-objects.ts).
#include <type_traits>

#include "sim_export.h"
#include "sim_ops.h"

using hcnsim::Kind;

HCNSIM_V2_API HRESULT WINAPI HcnEnumerateLoadBalancers(PCWSTR Query, PWSTR* LoadBalancer, PWSTR* ErrorRecord) {
  return hcnsim::Enumerate("HcnEnumerateLoadBalancers", Query, LoadBalancer, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCreateLoadBalancer(HCN_REFGUID Id, PCWSTR Settings, HCN_LOADBALANCER* LoadBalancer,
                                                   PWSTR* ErrorRecord) {
  return hcnsim::Create("HcnCreateLoadBalancer", Kind::kLoadBalancer, nullptr, Id, Settings, LoadBalancer,
                        ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnOpenLoadBalancer(HCN_REFGUID Id, HCN_LOADBALANCER* LoadBalancer, PWSTR* ErrorRecord) {
  return hcnsim::Open("HcnOpenLoadBalancer", Kind::kLoadBalancer, Id, LoadBalancer, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnModifyLoadBalancer(HCN_LOADBALANCER LoadBalancer, PCWSTR Settings, PWSTR* ErrorRecord) {
  return hcnsim::Modify("HcnModifyLoadBalancer", Kind::kLoadBalancer, LoadBalancer, Settings, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnQueryLoadBalancerProperties(HCN_LOADBALANCER LoadBalancer, PCWSTR Query,
                                                            PWSTR* Properties, PWSTR* ErrorRecord) {
  return hcnsim::Query("HcnQueryLoadBalancerProperties", Kind::kLoadBalancer, LoadBalancer, Query, Properties,
                       ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnDeleteLoadBalancer(HCN_REFGUID Id, PWSTR* ErrorRecord) {
  return hcnsim::Delete("HcnDeleteLoadBalancer", Id, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCloseLoadBalancer(HCN_LOADBALANCER LoadBalancer) {
  return hcnsim::Close(Kind::kLoadBalancer, LoadBalancer);
}

HCNSIM_V2_API HRESULT WINAPI HcnEnumerateSdnRoutes(PCWSTR Query, PWSTR* Routes, PWSTR* ErrorRecord) {
  return hcnsim::Enumerate("HcnEnumerateSdnRoutes", Query, Routes, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCreateSdnRoute(HCN_REFGUID Id, PCWSTR Settings, HCN_SDNROUTE* Route,
                                               PWSTR* ErrorRecord) {
  return hcnsim::Create("HcnCreateSdnRoute", Kind::kSdnRoute, nullptr, Id, Settings, Route, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnOpenSdnRoute(HCN_REFGUID Id, HCN_SDNROUTE* Route, PWSTR* ErrorRecord) {
  return hcnsim::Open("HcnOpenSdnRoute", Kind::kSdnRoute, Id, Route, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnModifySdnRoute(HCN_SDNROUTE Route, PCWSTR Settings, PWSTR* ErrorRecord) {
  return hcnsim::Modify("HcnModifySdnRoute", Kind::kSdnRoute, Route, Settings, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnQuerySdnRouteProperties(HCN_SDNROUTE Route, PCWSTR Query, PWSTR* Properties,
                                                        PWSTR* ErrorRecord) {
  return hcnsim::Query("HcnQuerySdnRouteProperties", Kind::kSdnRoute, Route, Query, Properties, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnDeleteSdnRoute(HCN_REFGUID Id, PWSTR* ErrorRecord) {
  return hcnsim::Delete("HcnDeleteSdnRoute", Id, ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCloseSdnRoute(HCN_SDNROUTE Route) { return hcnsim::Close(Kind::kSdnRoute, Route); }

#define HCNSIM_MATCHES_ABI(name) static_assert(std::is_same_v<decltype(&name), PFN_##name>, #name " differs from hcn_abi.h")
HCNSIM_MATCHES_ABI(HcnEnumerateLoadBalancers);
HCNSIM_MATCHES_ABI(HcnCreateLoadBalancer);
HCNSIM_MATCHES_ABI(HcnOpenLoadBalancer);
HCNSIM_MATCHES_ABI(HcnModifyLoadBalancer);
HCNSIM_MATCHES_ABI(HcnQueryLoadBalancerProperties);
HCNSIM_MATCHES_ABI(HcnDeleteLoadBalancer);
HCNSIM_MATCHES_ABI(HcnCloseLoadBalancer);
HCNSIM_MATCHES_ABI(HcnEnumerateSdnRoutes);
HCNSIM_MATCHES_ABI(HcnCreateSdnRoute);
HCNSIM_MATCHES_ABI(HcnOpenSdnRoute);
HCNSIM_MATCHES_ABI(HcnModifySdnRoute);
HCNSIM_MATCHES_ABI(HcnQuerySdnRouteProperties);
HCNSIM_MATCHES_ABI(HcnDeleteSdnRoute);
HCNSIM_MATCHES_ABI(HcnCloseSdnRoute);
#undef HCNSIM_MATCHES_ABI
