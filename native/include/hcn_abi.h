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

#include "hcn_functions.h"

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// The port-reservation and notification types below come from the header itself on Windows (mingw-w64's and the
// SDK's), so whatever declares the functions and whatever implements them agree.
#include <computenetwork.h>
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
typedef void* HCN_LOADBALANCER;
typedef void* HCN_GUESTNETWORKSERVICE;
typedef void* HCN_CALLBACK;
// SDN routes have no handle type in any header (hcsshim declares hcnRoute as a syscall.Handle, hcn/hcn.go).
typedef void* HCN_SDNROUTE;

#ifndef _WIN32
// computenetwork.h's remaining types with their Windows sizes (ULONG and DWORD are 32-bit on Windows).
typedef uint16_t USHORT;
typedef uint32_t ULONG;
typedef uint32_t DWORD;
typedef void* HANDLE;
typedef void VOID;
#define CALLBACK
typedef void(CALLBACK* HCN_NOTIFICATION_CALLBACK)(DWORD NotificationType, void* Context, HRESULT NotificationStatus,
                                                 PCWSTR NotificationData);
typedef enum tagHCN_PORT_PROTOCOL {
  HCN_PORT_PROTOCOL_TCP = 0x01,
  HCN_PORT_PROTOCOL_UDP = 0x02,
  HCN_PORT_PROTOCOL_BOTH = 0x03
} HCN_PORT_PROTOCOL;
typedef enum tagHCN_PORT_ACCESS { HCN_PORT_ACCESS_EXCLUSIVE = 0x01, HCN_PORT_ACCESS_SHARED = 0x02 } HCN_PORT_ACCESS;
typedef struct tagHCN_PORT_RANGE_RESERVATION {
  USHORT startingPort;
  USHORT endingPort;
} HCN_PORT_RANGE_RESERVATION;
typedef struct tagHCN_PORT_RANGE_ENTRY {
  GUID OwningPartitionId;
  GUID TargetPartitionId;
  HCN_PORT_PROTOCOL Protocol;
  uint64_t Priority;
  uint32_t ReservationType;
  uint32_t SharingFlags;
  uint32_t DeliveryMode;
  uint16_t StartingPort;
  uint16_t EndingPort;
} HCN_PORT_RANGE_ENTRY;
#endif

// HCS compute systems (vmcompute.dll), for hot-attaching an endpoint to a Docker-style container: the handle of
// hcsshim's internal/vmcompute/vmcompute.go.
typedef void* HCS_SYSTEM;

// PFN_<name> for every function of the addon's list, generated from native/include/hcn_functions.h.
#define HCN_PFN_TYPEDEF(enumerator, name, library, need, sdk, sim, ret, params) typedef ret(WINAPI* PFN_##name) params;
HCN_FUNCTIONS(HCN_PFN_TYPEDEF)
#undef HCN_PFN_TYPEDEF

// Load balancers (computenetwork.h).
typedef HRESULT(WINAPI* PFN_HcnEnumerateLoadBalancers)(PCWSTR Query, PWSTR* LoadBalancer, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCreateLoadBalancer)(HCN_REFGUID Id, PCWSTR Settings, HCN_LOADBALANCER* LoadBalancer,
                                                  PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnOpenLoadBalancer)(HCN_REFGUID Id, HCN_LOADBALANCER* LoadBalancer, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnModifyLoadBalancer)(HCN_LOADBALANCER LoadBalancer, PCWSTR Settings, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnQueryLoadBalancerProperties)(HCN_LOADBALANCER LoadBalancer, PCWSTR Query,
                                                           PWSTR* Properties, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnDeleteLoadBalancer)(HCN_REFGUID Id, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCloseLoadBalancer)(HCN_LOADBALANCER LoadBalancer);

// SDN routes: exported by computenetwork.dll (mingw-w64's libcomputenetwork.a) but in no header; the shapes of the
// other families, as microsoft/hcsshim hcn/zsyscall_windows.go calls them (hcnCreateRoute … HcnCreateSdnRoute).
typedef HRESULT(WINAPI* PFN_HcnEnumerateSdnRoutes)(PCWSTR Query, PWSTR* Routes, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCreateSdnRoute)(HCN_REFGUID Id, PCWSTR Settings, HCN_SDNROUTE* Route,
                                              PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnOpenSdnRoute)(HCN_REFGUID Id, HCN_SDNROUTE* Route, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnModifySdnRoute)(HCN_SDNROUTE Route, PCWSTR Settings, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnQuerySdnRouteProperties)(HCN_SDNROUTE Route, PCWSTR Query, PWSTR* Properties,
                                                       PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnDeleteSdnRoute)(HCN_REFGUID Id, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCloseSdnRoute)(HCN_SDNROUTE Route);

// Guest network services, their callbacks and port reservations (computenetwork.h). Nothing of ours or of hcsshim's
// calls them; the simulator client answers them as not implemented.
typedef HRESULT(WINAPI* PFN_HcnRegisterGuestNetworkServiceCallback)(HCN_GUESTNETWORKSERVICE GuestNetworkService,
                                                                   HCN_NOTIFICATION_CALLBACK Callback, void* Context,
                                                                   HCN_CALLBACK* CallbackHandle);
typedef HRESULT(WINAPI* PFN_HcnUnregisterGuestNetworkServiceCallback)(HCN_CALLBACK CallbackHandle);
typedef HRESULT(WINAPI* PFN_HcnCreateGuestNetworkService)(HCN_REFGUID Id, PCWSTR Settings,
                                                         HCN_GUESTNETWORKSERVICE* GuestNetworkService,
                                                         PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnCloseGuestNetworkService)(HCN_GUESTNETWORKSERVICE GuestNetworkService);
typedef HRESULT(WINAPI* PFN_HcnModifyGuestNetworkService)(HCN_GUESTNETWORKSERVICE GuestNetworkService,
                                                         PCWSTR Settings, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnDeleteGuestNetworkService)(HCN_REFGUID Id, PWSTR* ErrorRecord);
typedef HRESULT(WINAPI* PFN_HcnReserveGuestNetworkServicePort)(HCN_GUESTNETWORKSERVICE GuestNetworkService,
                                                              HCN_PORT_PROTOCOL Protocol, HCN_PORT_ACCESS Access,
                                                              USHORT Port, HANDLE* PortReservationHandle);
typedef HRESULT(WINAPI* PFN_HcnReserveGuestNetworkServicePortRange)(HCN_GUESTNETWORKSERVICE GuestNetworkService,
                                                                   USHORT PortCount,
                                                                   HCN_PORT_RANGE_RESERVATION* PortRangeReservation,
                                                                   HANDLE* PortReservationHandle);
typedef HRESULT(WINAPI* PFN_HcnReleaseGuestNetworkServicePortReservationHandle)(HANDLE PortReservationHandle);
typedef HRESULT(WINAPI* PFN_HcnEnumerateGuestNetworkPortReservations)(ULONG* ReturnCount,
                                                                     HCN_PORT_RANGE_ENTRY** PortEntries);
typedef VOID(WINAPI* PFN_HcnFreeGuestNetworkPortReservations)(HCN_PORT_RANGE_ENTRY* PortEntries);

// The rest of hcsshim's open/properties/close path (internal/hcs/system.go OpenComputeSystem registers a callback and
// reads the properties; Close unregisters it), declared in internal/vmcompute/vmcompute.go as
// hcsRegisterComputeSystemCallback(system, callback uintptr, context uintptr, *HcsCallback),
// hcsUnregisterComputeSystemCallback(HcsCallback) and hcsGetComputeSystemProperties(system, query, **properties,
// **result).
typedef void* HCS_CALLBACK;
typedef HRESULT(WINAPI* PFN_HcsRegisterComputeSystemCallback)(HCS_SYSTEM ComputeSystem, void* Callback, void* Context,
                                                             HCS_CALLBACK* CallbackHandle);
typedef HRESULT(WINAPI* PFN_HcsUnregisterComputeSystemCallback)(HCS_CALLBACK CallbackHandle);
typedef HRESULT(WINAPI* PFN_HcsGetComputeSystemProperties)(HCS_SYSTEM ComputeSystem, PCWSTR PropertyQuery,
                                                          PWSTR* Properties, PWSTR* Result);

#endif  // HCN_CNI_HCN_ABI_H_
