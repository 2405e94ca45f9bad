// The one list of functions the addon resolves at run time, with their signatures. Everything else is generated
// from it: the PFN_ pointer types (native/include/hcn_abi.h), the addon's Fn enum, name table, library and
// capability of each (native/addon/hcn_library.*), the compile-time check against the Windows SDK's declaration
// (native/addon/hcn_library_win.cc), the simulator client's export declarations, which make the compiler check each
// export against the signature here (native/simclient/sim_export.h), the simulator client's exports that only
// forward to a generic verb (native/simclient/sim_exports_v2.cc), the addon's calls by name of the functions of a
// generic verb (native/addon/hcn_calls.h QueryObject and its siblings, js_hcn.cc callQuery …), and the tests'
// expectations (test/helpers/hcn-functions.ts parses this file). Add a function here and nowhere else of those.
//
//   X(enumerator, exported name, library, need, sdk, sim, return type, (parameters))
//
// library: HCN  computenetwork.dll (the required ones make v2Supported)
//          V1   vmcompute.dll HNSCall (v1Supported)
//          HCS  vmcompute.dll compute-system functions, for Docker-style hot attach (hcsSupported); declared by
//               microsoft/hcsshim internal/vmcompute/vmcompute.go (vmcompute.HcsOpenComputeSystem, …)
//          FREE the free function for returned strings (CoTaskMemFree)
//          SIM  simulator-only exports (never in a real DLL)
// need:    REQUIRED  missing: listed in capabilities().missing, and its library's capability is false
//          OPTIONAL  a capability of its own: listed in capabilities().optional when the host has it, never missing
// sdk:     SDK     the Windows SDK declares it (<computenetwork.h>, <objbase.h>): the win build static_asserts that
//                  the signature here is the SDK's
//          NO_SDK  no public header declares it: the comment on its entry names where the signature comes from.
//                  test/native/function-list.test.ts fails if <computenetwork.h> does declare it after all, so
//                  the compile-time check cannot be skipped by choosing NO_SDK.
// sim:     its verb. A verb of native/simclient/sim_ops.h for an HCN function of the network/endpoint/namespace
//          families (the family is read from the name, hcn_family.h), whose simulator export is then generated:
//          ENUMERATE, CREATE, CREATE_IN_NETWORK (the endpoint's create), OPEN, MODIFY, QUERY (any query of an open
//          object: Hcn<Query…><Family>…, sent as a request named after the function), DELETE, CLOSE. The addon calls
//          a function of ENUMERATE, QUERY, MODIFY or DELETE by name with no code of its own. Both builds check that
//          the signature is the verb's. OWN: written by hand in native/simclient/sim_exports_*.cc and the addon.
// The order is the enum's order; keep each library together. Types are those of hcn_abi.h, which expands this list.
#ifndef HCN_CNI_HCN_FUNCTIONS_H_
#define HCN_CNI_HCN_FUNCTIONS_H_

// clang-format off
#define HCN_FUNCTIONS(X)                                                                                              \
  X(kEnumerateNetworks, HcnEnumerateNetworks, HCN, REQUIRED, SDK, ENUMERATE, HRESULT,                                 \
    (PCWSTR Query, PWSTR* Networks, PWSTR* ErrorRecord))                                                              \
  X(kCreateNetwork, HcnCreateNetwork, HCN, REQUIRED, SDK, CREATE, HRESULT,                                            \
    (HCN_REFGUID Id, PCWSTR Settings, HCN_NETWORK* Network, PWSTR* ErrorRecord))                                      \
  X(kOpenNetwork, HcnOpenNetwork, HCN, REQUIRED, SDK, OPEN, HRESULT, (HCN_REFGUID Id, HCN_NETWORK* Network, PWSTR* ErrorRecord)) \
  X(kModifyNetwork, HcnModifyNetwork, HCN, REQUIRED, SDK, MODIFY, HRESULT,                                            \
    (HCN_NETWORK Network, PCWSTR Settings, PWSTR* ErrorRecord))                                                       \
  X(kQueryNetworkProperties, HcnQueryNetworkProperties, HCN, REQUIRED, SDK, QUERY, HRESULT,                           \
    (HCN_NETWORK Network, PCWSTR Query, PWSTR* Properties, PWSTR* ErrorRecord))                                       \
  X(kDeleteNetwork, HcnDeleteNetwork, HCN, REQUIRED, SDK, DELETE, HRESULT, (HCN_REFGUID Id, PWSTR* ErrorRecord))      \
  X(kCloseNetwork, HcnCloseNetwork, HCN, REQUIRED, SDK, CLOSE, HRESULT, (HCN_NETWORK Network))                        \
  X(kEnumerateEndpoints, HcnEnumerateEndpoints, HCN, REQUIRED, SDK, ENUMERATE, HRESULT,                               \
    (PCWSTR Query, PWSTR* Endpoints, PWSTR* ErrorRecord))                                                             \
  X(kCreateEndpoint, HcnCreateEndpoint, HCN, REQUIRED, SDK, CREATE_IN_NETWORK, HRESULT,                               \
    (HCN_NETWORK Network, HCN_REFGUID Id, PCWSTR Settings, HCN_ENDPOINT* Endpoint, PWSTR* ErrorRecord))               \
  X(kOpenEndpoint, HcnOpenEndpoint, HCN, REQUIRED, SDK, OPEN, HRESULT,                                                \
    (HCN_REFGUID Id, HCN_ENDPOINT* Endpoint, PWSTR* ErrorRecord))                                                     \
  X(kModifyEndpoint, HcnModifyEndpoint, HCN, REQUIRED, SDK, MODIFY, HRESULT,                                          \
    (HCN_ENDPOINT Endpoint, PCWSTR Settings, PWSTR* ErrorRecord))                                                     \
  X(kQueryEndpointProperties, HcnQueryEndpointProperties, HCN, REQUIRED, SDK, QUERY, HRESULT,                         \
    (HCN_ENDPOINT Endpoint, PCWSTR Query, PWSTR* Properties, PWSTR* ErrorRecord))                                     \
  X(kDeleteEndpoint, HcnDeleteEndpoint, HCN, REQUIRED, SDK, DELETE, HRESULT, (HCN_REFGUID Id, PWSTR* ErrorRecord))    \
  X(kCloseEndpoint, HcnCloseEndpoint, HCN, REQUIRED, SDK, CLOSE, HRESULT, (HCN_ENDPOINT Endpoint))                    \
  X(kEnumerateNamespaces, HcnEnumerateNamespaces, HCN, REQUIRED, SDK, ENUMERATE, HRESULT,                             \
    (PCWSTR Query, PWSTR* Namespaces, PWSTR* ErrorRecord))                                                            \
  X(kCreateNamespace, HcnCreateNamespace, HCN, REQUIRED, SDK, CREATE, HRESULT,                                        \
    (HCN_REFGUID Id, PCWSTR Settings, HCN_NAMESPACE* Namespace, PWSTR* ErrorRecord))                                  \
  X(kOpenNamespace, HcnOpenNamespace, HCN, REQUIRED, SDK, OPEN, HRESULT,                                              \
    (HCN_REFGUID Id, HCN_NAMESPACE* Namespace, PWSTR* ErrorRecord))                                                   \
  X(kModifyNamespace, HcnModifyNamespace, HCN, REQUIRED, SDK, MODIFY, HRESULT,                                        \
    (HCN_NAMESPACE Namespace, PCWSTR Settings, PWSTR* ErrorRecord))                                                   \
  X(kQueryNamespaceProperties, HcnQueryNamespaceProperties, HCN, REQUIRED, SDK, QUERY, HRESULT,                       \
    (HCN_NAMESPACE Namespace, PCWSTR Query, PWSTR* Properties, PWSTR* ErrorRecord))                                   \
  X(kDeleteNamespace, HcnDeleteNamespace, HCN, REQUIRED, SDK, DELETE, HRESULT, (HCN_REFGUID Id, PWSTR* ErrorRecord))  \
  X(kCloseNamespace, HcnCloseNamespace, HCN, REQUIRED, SDK, CLOSE, HRESULT, (HCN_NAMESPACE Namespace))                \
  /* Service notifications (HCN_NOTIFICATIONS): a capability, since a host without them keeps working on its probe. */ \
  X(kRegisterServiceCallback, HcnRegisterServiceCallback, HCN, OPTIONAL, SDK, OWN, HRESULT,                           \
    (HCN_NOTIFICATION_CALLBACK Callback, void* Context, HCN_CALLBACK* CallbackHandle))                                \
  X(kUnregisterServiceCallback, HcnUnregisterServiceCallback, HCN, OPTIONAL, SDK, OWN, HRESULT, (HCN_CALLBACK CallbackHandle)) \
  /* In no public header: hcsshim declares it as vmcompute.HNSCall (internal/vmcompute/vmcompute.go). */              \
  X(kHnsCall, HNSCall, V1, REQUIRED, NO_SDK, OWN, HRESULT, (PCWSTR Method, PCWSTR Path, PCWSTR Request, PWSTR* Response)) \
  /* In no public header (computecore.h's HcsOpenComputeSystem is another DLL's function): hcsshim                    \
     internal/vmcompute/vmcompute.go hcsOpenComputeSystem(id, *HcsSystem, **result), hcsModifyComputeSystem(system,   \
     configuration, **result), hcsCloseComputeSystem(system). Result is a JSON document of error events. */           \
  X(kHcsOpenComputeSystem, HcsOpenComputeSystem, HCS, REQUIRED, NO_SDK, OWN, HRESULT,                                 \
    (PCWSTR Id, HCS_SYSTEM* ComputeSystem, PWSTR* Result))                                                            \
  X(kHcsModifyComputeSystem, HcsModifyComputeSystem, HCS, REQUIRED, NO_SDK, OWN, HRESULT,                             \
    (HCS_SYSTEM ComputeSystem, PCWSTR Configuration, PWSTR* Result))                                                  \
  X(kHcsCloseComputeSystem, HcsCloseComputeSystem, HCS, REQUIRED, NO_SDK, OWN, HRESULT, (HCS_SYSTEM ComputeSystem))   \
  X(kCoTaskMemFree, CoTaskMemFree, FREE, REQUIRED, SDK, OWN, void, (void* pv))                                        \
  /* Ours (the simulated host's adapters, a JSON array of {"Name","MacAddress","InterfaceDescription",                \
     "InterfaceIndex"}); where it is absent the addon asks the OS (GetAdaptersAddresses on Windows). */               \
  X(kSimEnumerateAdapters, HcnSimEnumerateAdapters, SIM, OPTIONAL, NO_SDK, OWN, HRESULT, (PWSTR* Adapters, PWSTR* ErrorRecord))
// clang-format on

#endif  // HCN_CNI_HCN_FUNCTIONS_H_
