// The seven HCN verbs, once for all three object kinds; the exports only name the operation and the kind.
#ifndef HCN_CNI_SIMCLIENT_SIM_OPS_H_
#define HCN_CNI_SIMCLIENT_SIM_OPS_H_

#include "hcn_abi.h"
#include "sim_handles.h"

namespace hcnsim {

HRESULT Enumerate(const char* op, PCWSTR query, PWSTR* ids, PWSTR* error_record);
// `network` is the network handle for HcnCreateEndpoint and nullptr for the other kinds.
HRESULT Create(const char* op, Kind kind, void* network, const GUID& id, PCWSTR settings, void** handle,
               PWSTR* error_record);
HRESULT Open(const char* op, Kind kind, const GUID& id, void** handle, PWSTR* error_record);
HRESULT Modify(const char* op, Kind kind, void* handle, PCWSTR settings, PWSTR* error_record);
HRESULT Query(const char* op, Kind kind, void* handle, PCWSTR query, PWSTR* properties, PWSTR* error_record);
HRESULT Delete(const char* op, const GUID& id, PWSTR* error_record);
HRESULT Close(Kind kind, void* handle);
HRESULT EnumerateAdapters(PWSTR* adapters, PWSTR* error_record);
// HNSCall has no error-record parameter: v1 failures travel inside the response envelope, and so do this
// client's own (its error records have the envelope's shape).
HRESULT HnsCall(PCWSTR method, PCWSTR path, PCWSTR request, PWSTR* response);

// vmcompute.dll's compute-system functions (hot attach). Open asks the simulator whether the compute system exists
// and keeps its id in the handle; Modify sends the request with that id; Close is local, like the HCN closes.
HRESULT HcsOpen(PCWSTR id, void** system, PWSTR* result);
HRESULT HcsModify(void* system, PCWSTR configuration, PWSTR* result);
HRESULT HcsClose(void* system);
// The callback is never called: the simulator sends no notifications (a running system that never exits, as far as
// hcsshim's waitBackground can tell). Register checks the system handle and hands out a handle of its own.
HRESULT HcsRegisterCallback(void* system, void** callback);
HRESULT HcsUnregisterCallback(void* callback);
HRESULT HcsProperties(void* system, PCWSTR query, PWSTR* properties, PWSTR* result);

// What a not-modelled function answers: E_NOTIMPL, the code hcsshim names HCN_E_NOTIMPL (hcn/hcnerrors.go) for an
// HNS that does not implement a request. Out parameters are cleared first.
HRESULT NotImplemented(PWSTR* error_record);

}  // namespace hcnsim

#endif  // HCN_CNI_SIMCLIENT_SIM_OPS_H_
