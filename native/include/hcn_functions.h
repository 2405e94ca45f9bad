// The one list of functions the addon resolves at run time. Everything else is generated from it: the addon's
// Fn enum and name table (native/addon/hcn_library.*), which library each comes from, the capability flags, and
// the tests' expectations (test/helpers/hcn-functions.ts parses this file). Add a function here and nowhere else.
//
//   HCN_FUNCTION(enumerator, exported name, group)
//
// Groups: HCN  computenetwork.dll (all of them needed for v2Supported)
//         V1   vmcompute.dll HNSCall (v1Supported)
//         HCS  vmcompute.dll compute-system functions, for Docker-style hot attach (hcsSupported); declared by
//              microsoft/hcsshim internal/vmcompute/vmcompute.go (vmcompute.HcsOpenComputeSystem, …)
//         FREE the free function for returned strings (CoTaskMemFree)
//         SIM  simulator-only exports: optional, never reported missing
// The order is the enum's order; keep each group together.
#ifndef HCN_CNI_HCN_FUNCTIONS_H_
#define HCN_CNI_HCN_FUNCTIONS_H_

#define HCN_FUNCTIONS(HCN_FUNCTION)                                        \
  HCN_FUNCTION(kEnumerateNetworks, HcnEnumerateNetworks, HCN)              \
  HCN_FUNCTION(kCreateNetwork, HcnCreateNetwork, HCN)                      \
  HCN_FUNCTION(kOpenNetwork, HcnOpenNetwork, HCN)                          \
  HCN_FUNCTION(kModifyNetwork, HcnModifyNetwork, HCN)                      \
  HCN_FUNCTION(kQueryNetworkProperties, HcnQueryNetworkProperties, HCN)    \
  HCN_FUNCTION(kDeleteNetwork, HcnDeleteNetwork, HCN)                      \
  HCN_FUNCTION(kCloseNetwork, HcnCloseNetwork, HCN)                        \
  HCN_FUNCTION(kEnumerateEndpoints, HcnEnumerateEndpoints, HCN)            \
  HCN_FUNCTION(kCreateEndpoint, HcnCreateEndpoint, HCN)                    \
  HCN_FUNCTION(kOpenEndpoint, HcnOpenEndpoint, HCN)                        \
  HCN_FUNCTION(kModifyEndpoint, HcnModifyEndpoint, HCN)                    \
  HCN_FUNCTION(kQueryEndpointProperties, HcnQueryEndpointProperties, HCN)  \
  HCN_FUNCTION(kDeleteEndpoint, HcnDeleteEndpoint, HCN)                    \
  HCN_FUNCTION(kCloseEndpoint, HcnCloseEndpoint, HCN)                      \
  HCN_FUNCTION(kEnumerateNamespaces, HcnEnumerateNamespaces, HCN)          \
  HCN_FUNCTION(kCreateNamespace, HcnCreateNamespace, HCN)                  \
  HCN_FUNCTION(kOpenNamespace, HcnOpenNamespace, HCN)                      \
  HCN_FUNCTION(kModifyNamespace, HcnModifyNamespace, HCN)                  \
  HCN_FUNCTION(kQueryNamespaceProperties, HcnQueryNamespaceProperties, HCN) \
  HCN_FUNCTION(kDeleteNamespace, HcnDeleteNamespace, HCN)                  \
  HCN_FUNCTION(kCloseNamespace, HcnCloseNamespace, HCN)                    \
  HCN_FUNCTION(kHnsCall, HNSCall, V1)                                      \
  HCN_FUNCTION(kHcsOpenComputeSystem, HcsOpenComputeSystem, HCS)           \
  HCN_FUNCTION(kHcsModifyComputeSystem, HcsModifyComputeSystem, HCS)       \
  HCN_FUNCTION(kHcsCloseComputeSystem, HcsCloseComputeSystem, HCS)         \
  HCN_FUNCTION(kCoTaskMemFree, CoTaskMemFree, FREE)                        \
  HCN_FUNCTION(kSimEnumerateAdapters, HcnSimEnumerateAdapters, SIM)

#endif  // HCN_CNI_HCN_FUNCTIONS_H_
