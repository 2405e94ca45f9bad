// Which ABI functions this build of the client exports. libhcnsim.so exports all of them; the mingw build is split
// like Windows itself: computenetwork.dll (Hcn* and HcnSimEnumerateAdapters, HCNSIM_EXPORT_V2) and vmcompute.dll
// (HNSCall, HCNSIM_EXPORT_V1). Unexported functions are still compiled, just invisible.
#ifndef HCN_CNI_SIMCLIENT_SIM_EXPORT_H_
#define HCN_CNI_SIMCLIENT_SIM_EXPORT_H_

#include "hcn_abi.h"

#ifdef _WIN32
#define HCNSIM_VISIBLE __declspec(dllexport)
#else
#define HCNSIM_VISIBLE __attribute__((visibility("default")))
#endif

#ifdef HCNSIM_EXPORT_V2
#define HCNSIM_V2_API extern "C" HCNSIM_VISIBLE
#else
#define HCNSIM_V2_API extern "C"
#endif

#ifdef HCNSIM_EXPORT_V1
#define HCNSIM_V1_API extern "C" HCNSIM_VISIBLE
#else
#define HCNSIM_V1_API extern "C"
#endif

// The export of each library column: computenetwork.dll's (HCN, and the simulator's own SIM) or vmcompute.dll's.
#define HCNSIM_API_HCN HCNSIM_V2_API
#define HCNSIM_API_SIM HCNSIM_V2_API
#define HCNSIM_API_V1 HCNSIM_V1_API
#define HCNSIM_API_HCS HCNSIM_V1_API

// Every function of the addon's list (native/include/hcn_functions.h) declared here with the list's signature and
// its library's export: an export defined with another signature is then a compile error ("conflicting declaration of
// C function"), so the list is the only place a signature is written. CoTaskMemFree is not declared: Windows has its
// own, and the Linux build defines it beside its allocator (sim_platform_posix.cc).
#define HCNSIM_DECLARE_FREE(name, ret, params)
#define HCNSIM_DECLARE_HCN(name, ret, params) HCNSIM_API_HCN ret WINAPI name params;
#define HCNSIM_DECLARE_SIM(name, ret, params) HCNSIM_API_SIM ret WINAPI name params;
#define HCNSIM_DECLARE_V1(name, ret, params) HCNSIM_API_V1 ret WINAPI name params;
#define HCNSIM_DECLARE_HCS(name, ret, params) HCNSIM_API_HCS ret WINAPI name params;
#define HCNSIM_DECLARE(enumerator, name, library, need, sdk, sim, ret, params) \
  HCNSIM_DECLARE_##library(name, ret, params)
HCN_FUNCTIONS(HCNSIM_DECLARE)
#undef HCNSIM_DECLARE

#endif  // HCN_CNI_SIMCLIENT_SIM_EXPORT_H_
