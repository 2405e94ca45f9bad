// The HCN C ABI as this project uses it: the exact signatures of computenetwork.dll (HCN, "HNS v2"),
// HNSCall from vmcompute.dll ("HNS v1") and the free function for the strings they return.
//
// Why our own header: the addon resolves every function at run time (LoadLibrary/GetProcAddress on Windows,
// dlopen/dlsym elsewhere), so it needs pointer typedefs, not import declarations; and the simulator client
// library (native/simclient) implements this very ABI on Linux and, cross-built with mingw-w64, as a stand-in
// computenetwork.dll/vmcompute.dll under wine. On Windows the typedefs are checked against the SDK's
// computenetwork.h at compile time (native/addon/hcn_library_win.cc).
#ifndef HCN_CNI_HCN_ABI_H_
#define HCN_CNI_HCN_ABI_H_

#include <stdint.h>

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
typedef WCHAR hcn_wchar;
#else
// Windows types with their Windows sizes: HRESULT is 32-bit, WCHAR is UTF-16 (not Linux's 32-bit wchar_t).
typedef int32_t HRESULT;
typedef char16_t hcn_wchar;
typedef hcn_wchar WCHAR;
typedef const hcn_wchar* PCWSTR;
typedef hcn_wchar* PWSTR;
typedef struct _GUID {
  uint32_t Data1;
  uint16_t Data2;
  uint16_t Data3;
  uint8_t Data4[8];
} GUID;
#define WINAPI
#endif

#ifdef __cplusplus
#define HCN_REFGUID const GUID&
#else
#define HCN_REFGUID const GUID*
#endif

typedef void* HCN_NETWORK;
typedef void* HCN_ENDPOINT;
typedef void* HCN_NAMESPACE;

// Networks
typedef HRESULT(WINAPI* PFN_HcnEnumerateNetworks)(PCWSTR Query, PWSTR* Networks, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCreateNetwork)(HCN_REFGUID Id, PCWSTR Settings, HCN_NETWORK* Network, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnOpenNetwork)(HCN_REFGUID Id, HCN_NETWORK* Network, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnModifyNetwork)(HCN_NETWORK Network, PCWSTR Settings, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnQueryNetworkProperties)(HCN_NETWORK Network, PCWSTR Query, PWSTR* Properties,
                                                      PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnDeleteNetwork)(HCN_REFGUID Id, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCloseNetwork)(HCN_NETWORK Network);

// Endpoints
typedef HRESULT(WINAPI* PFN_HcnEnumerateEndpoints)(PCWSTR Query, PWSTR* Endpoints, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCreateEndpoint)(HCN_NETWORK Network, HCN_REFGUID Id, PCWSTR Settings,
                                              HCN_ENDPOINT* Endpoint, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnOpenEndpoint)(HCN_REFGUID Id, HCN_ENDPOINT* Endpoint, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnModifyEndpoint)(HCN_ENDPOINT Endpoint, PCWSTR Settings, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnQueryEndpointProperties)(HCN_ENDPOINT Endpoint, PCWSTR Query, PWSTR* Properties,
                                                       PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnDeleteEndpoint)(HCN_REFGUID Id, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCloseEndpoint)(HCN_ENDPOINT Endpoint);

// Namespaces
typedef HRESULT(WINAPI* PFN_HcnEnumerateNamespaces)(PCWSTR Query, PWSTR* Namespaces, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCreateNamespace)(HCN_REFGUID Id, PCWSTR Settings, HCN_NAMESPACE* Namespace,
                                               PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnOpenNamespace)(HCN_REFGUID Id, HCN_NAMESPACE* Namespace, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnModifyNamespace)(HCN_NAMESPACE Namespace, PCWSTR Settings, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnQueryNamespaceProperties)(HCN_NAMESPACE Namespace, PCWSTR Query, PWSTR* Properties,
                                                        PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnDeleteNamespace)(HCN_REFGUID Id, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCloseNamespace)(HCN_NAMESPACE Namespace);

// HNS v1 (vmcompute.dll; in no public header: hcsshim declares it as vmcompute.HNSCall).
typedef HRESULT(WINAPI* PFN_HNSCall)(PCWSTR Method, PCWSTR Path, PCWSTR Request, PWSTR* Response);

// HCS compute systems (vmcompute.dll), for hot-attaching an endpoint to a Docker-style container. These are the
// vmcompute.dll functions hcsshim declares (microsoft/hcsshim internal/vmcompute/vmcompute.go:
// hcsOpenComputeSystem(id, *HcsSystem, **result), hcsModifyComputeSystem(system, configuration, **result),
// hcsCloseComputeSystem(system)); they are in no public header (computecore.h's HcsOpenComputeSystem is a different
// function of another DLL). `Result` is a JSON document of error events that the caller frees; only the HRESULT
// says whether the call failed (hcsshim internal/hcs/system.go Modify).
typedef void* HCS_SYSTEM;
typedef HRESULT(WINAPI* PFN_HcsOpenComputeSystem)(PCWSTR Id, HCS_SYSTEM* ComputeSystem, PWSTR* Result);
typedef HRESULT(WINAPI* PFN_HcsModifyComputeSystem)(HCS_SYSTEM ComputeSystem, PCWSTR Configuration, PWSTR* Result);
typedef HRESULT(WINAPI* PFN_HcsCloseComputeSystem)(HCS_SYSTEM ComputeSystem);

// Frees every string the functions above return (CoTaskMemFree on Windows).
typedef void(WINAPI* PFN_CoTaskMemFree)(void* pv);

// Simulator-only export: the simulated host's network adapters as a JSON array of
// {"Name","MacAddress","InterfaceDescription","InterfaceIndex"}. Real computenetwork.dll has no such export;
// where it is absent the addon asks the OS (GetAdaptersAddresses on Windows).
typedef HRESULT(WINAPI* PFN_HcnSimEnumerateAdapters)(PWSTR* Adapters, PWSTR* ErrorRecord);

#endif  // HCN_CNI_HCN_ABI_H_
