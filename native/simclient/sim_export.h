// Which ABI functions this build of the client exports. libhcnsim.so exports all of them; the mingw build is split
// like Windows itself: computenetwork.dll (Hcn* and HcnSimEnumerateAdapters, HCNSIM_EXPORT_V2) and vmcompute.dll
// (HNSCall, HCNSIM_EXPORT_V1). Unexported functions are still compiled, just invisible.
#ifndef HCN_CNI_SIMCLIENT_SIM_EXPORT_H_
#define HCN_CNI_SIMCLIENT_SIM_EXPORT_H_

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

#endif  // HCN_CNI_SIMCLIENT_SIM_EXPORT_H_
