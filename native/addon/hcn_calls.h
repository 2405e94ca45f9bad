// The call sequences behind each addon verb: open -> act -> query -> close inside one native call, so HCN handles
// never leave C++ — except held handles (HeldHandle), which a caller keeps across calls under a number (js_hcn.cc).
// Runs on worker threads; knows nothing of N-API and nothing of the platform.
#ifndef HCN_CNI_ADDON_HCN_CALLS_H_
#define HCN_CNI_ADDON_HCN_CALLS_H_

#include <memory>
#include <optional>
#include <string>

#include "hcn_abi.h"
#include "hcn_library.h"

namespace hcn {

enum class ObjectKind { kNetwork, kEndpoint, kNamespace };

using OptionalText = std::optional<std::u16string>;

// How a native call ended. A failure names the HCN function that failed; hr is 0 when that function returned
// S_OK with a non-empty error record (hcsshim's rule: that is a failure too).
struct CallOutcome {
  bool failed = false;
  std::string op;
  HRESULT hr = 0;
  OptionalText error_record;
  OptionalText value;  // nullopt: the verb has no result
};

// A function of the list by its entry, for the generic verbs whose sequence is the same in every family: the
// function's family (its name, hcn_family.h) gives the open and close around it, its sim column (VerbOf) says which of
// these it is for, and the compiler checks it has that verb's signature (hcn_calls.cc). So a new function of such a
// shape — HcnQueryEndpointStats, say — needs no code here or in the bindings (js_hcn.cc callQuery and siblings).
//   QueryObject:      HcnOpen<Family>(id) -> fn(query) -> HcnClose<Family>; the value is fn's answer
//   ModifyObject:     HcnOpen<Family>(id) -> fn(settings) -> HcnClose<Family>
//   EnumerateObjects: fn(query); the value is the id list
//   DeleteObject:     fn(id)
CallOutcome QueryObject(Fn fn, const GUID& id, const OptionalText& query);
CallOutcome ModifyObject(Fn fn, const GUID& id, const std::u16string& settings);
CallOutcome EnumerateObjects(Fn fn, const OptionalText& query);
CallOutcome DeleteObject(Fn fn, const GUID& id);

// The same with the family's own function (HcnQuery<Family>Properties, HcnModify<Family>, …).
CallOutcome EnumerateObjects(ObjectKind kind, const OptionalText& query);
CallOutcome GetObjectProperties(ObjectKind kind, const GUID& id, const OptionalText& query);
CallOutcome ModifyObject(ObjectKind kind, const GUID& id, const std::u16string& settings);
CallOutcome DeleteObject(ObjectKind kind, const GUID& id);
// `network` is used for endpoints only (the network the endpoint is created in).
CallOutcome CreateObject(ObjectKind kind, const GUID& network, const GUID& id, const std::u16string& settings,
                         const OptionalText& query);
// Enumerate, then open/query/close each object; objects that disappear in between are left out.
CallOutcome ListObjectsDetailed(ObjectKind kind, const OptionalText& query);
// An HCN handle held across native calls (the resident service keeps its network's and each attached pod's
// namespace's: src/hns/held-handles.ts). Closed when the last holder lets go — a call still using it keeps it open.
class HeldHandle {
 public:
  HeldHandle(ObjectKind kind, void* handle) : kind_(kind), handle_(handle) {}
  ~HeldHandle();
  HeldHandle(const HeldHandle&) = delete;
  HeldHandle& operator=(const HeldHandle&) = delete;
  ObjectKind kind() const { return kind_; }
  void* get() const { return handle_; }

 private:
  ObjectKind kind_;
  void* handle_;
};

// HcnOpen<Kind>: *held is set on success.
CallOutcome OpenHeld(ObjectKind kind, const GUID& id, std::shared_ptr<HeldHandle>* held);
// HcnCreateEndpoint on a held network handle -> HcnQueryEndpointProperties -> HcnCloseEndpoint.
CallOutcome CreateEndpointIn(const HeldHandle& network, const GUID& id, const std::u16string& settings,
                             const OptionalText& query);
// HcnModify<Kind> on a held handle.
CallOutcome ModifyHeld(const HeldHandle& held, const std::u16string& settings);
CallOutcome CallHns(const std::u16string& method, const std::u16string& path, const OptionalText& body);
CallOutcome ListAdapters();
// HCS hot attach/detach (hcsshim hnsendpoint.go modifyContainer): HcsOpenComputeSystem(id) ->
// HcsModifyComputeSystem(request) -> HcsCloseComputeSystem. A failure names the function and carries HCS's result
// document as the error record.
CallOutcome ModifyComputeSystem(const std::u16string& id, const std::u16string& request);
// HcsOpenComputeSystem(id) -> HcsCloseComputeSystem: whether HCS has the compute system (read-only; a container that
// does not exist fails the open with HCS_E_SYSTEM_NOT_FOUND).
CallOutcome OpenComputeSystem(const std::u16string& id);
// HCN service notifications: `callback` runs with `context` on a thread of the library's until
// UnregisterServiceCallback(*handle) returns. A host without them reports ERROR_PROC_NOT_FOUND (an optional function).
CallOutcome RegisterServiceCallback(HCN_NOTIFICATION_CALLBACK callback, void* context, HCN_CALLBACK* handle);
CallOutcome UnregisterServiceCallback(HCN_CALLBACK handle);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_HCN_CALLS_H_
