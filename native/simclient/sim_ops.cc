#include "sim_ops.h"

#include "guid.h"
#include "hresults.h"
#include "sim_call.h"
#include "sim_platform.h"

namespace hcnsim {
namespace {

// Hands out the reply. A string that cannot be allocated turns the whole call into E_OUTOFMEMORY, and nothing
// half-delivered is left for the caller to free.
HRESULT Finish(const Reply& reply, PWSTR* value, PWSTR* error_record) {
  if (Deliver(reply.result, value) && Deliver(reply.error_record, error_record)) return reply.hr;
  for (PWSTR* slot : {value, error_record}) {
    if (slot != nullptr && *slot != nullptr) {
      FreeWide(*slot);
      *slot = nullptr;
    }
  }
  return hcn::kOutOfMemory;
}

// Output pointers start out NULL so that every early return leaves the caller nothing to free.
void Clear(PWSTR* slot) {
  if (slot != nullptr) *slot = nullptr;
}

// Create and Open answer with the object's GUID, which the new handle keeps.
HRESULT HandleFromReply(Kind kind, Reply reply, void** handle, PWSTR* error_record) {
  GUID guid;
  if (!hcn::Failed(reply.hr) && (!reply.result || !hcn::ParseGuid(*reply.result, &guid))) {
    reply = LocalFailure(hcn::kCallFailed, "the simulator answered without an object id");
  }
  if (!hcn::Failed(reply.hr)) {
    *handle = NewHandle(kind, hcn::FormatGuid(guid), reply.boot.value_or(""));
    if (*handle == nullptr) return hcn::kOutOfMemory;
  }
  reply.result.reset();
  const HRESULT hr = Finish(reply, nullptr, error_record);
  if (hcn::Failed(hr) && *handle != nullptr) {
    CloseHandle(*handle, kind);
    *handle = nullptr;
  }
  return hr;
}

}  // namespace

HRESULT Enumerate(const char* op, PCWSTR query, PWSTR* ids, PWSTR* error_record) {
  Clear(ids);
  Clear(error_record);
  if (ids == nullptr) return hcn::kPointer;
  return Finish(Call(op, {{"query", FromWide(query)}}), ids, error_record);
}

HRESULT Create(const char* op, Kind kind, void* network, const GUID& id, PCWSTR settings, void** handle,
               PWSTR* error_record) {
  Clear(error_record);
  if (handle == nullptr) return hcn::kPointer;
  *handle = nullptr;
  if (kind != Kind::kEndpoint) {
    return HandleFromReply(kind, Call(op, {{"id", hcn::FormatGuid(id)}, {"settings", FromWide(settings)}}), handle,
                           error_record);
  }
  const std::string* network_guid = HandleGuid(network, Kind::kNetwork);
  if (network_guid == nullptr) return hcn::kHandle;
  return HandleFromReply(
      kind,
      Call(op, {{"network", *network_guid},
                {"id", hcn::FormatGuid(id)},
                {"settings", FromWide(settings)},
                {"boot", HandleBoot(network, Kind::kNetwork)}}),
      handle, error_record);
}

HRESULT Open(const char* op, Kind kind, const GUID& id, void** handle, PWSTR* error_record) {
  Clear(error_record);
  if (handle == nullptr) return hcn::kPointer;
  *handle = nullptr;
  return HandleFromReply(kind, Call(op, {{"id", hcn::FormatGuid(id)}}), handle, error_record);
}

HRESULT Modify(const char* op, Kind kind, void* handle, PCWSTR settings, PWSTR* error_record) {
  Clear(error_record);
  const std::string* guid = HandleGuid(handle, kind);
  if (guid == nullptr) return hcn::kHandle;
  return Finish(Call(op, {{"id", *guid}, {"settings", FromWide(settings)}, {"boot", HandleBoot(handle, kind)}}), nullptr,
                error_record);
}

HRESULT Query(const char* op, Kind kind, void* handle, PCWSTR query, PWSTR* properties, PWSTR* error_record) {
  Clear(properties);
  Clear(error_record);
  if (properties == nullptr) return hcn::kPointer;
  const std::string* guid = HandleGuid(handle, kind);
  if (guid == nullptr) return hcn::kHandle;
  return Finish(Call(op, {{"id", *guid}, {"query", FromWide(query)}, {"boot", HandleBoot(handle, kind)}}), properties,
                error_record);
}

HRESULT Delete(const char* op, const GUID& id, PWSTR* error_record) {
  Clear(error_record);
  return Finish(Call(op, {{"id", hcn::FormatGuid(id)}}), nullptr, error_record);
}

HRESULT Close(Kind kind, void* handle) { return CloseHandle(handle, kind) ? hcn::kOk : hcn::kHandle; }

HRESULT EnumerateAdapters(PWSTR* adapters, PWSTR* error_record) {
  Clear(adapters);
  Clear(error_record);
  if (adapters == nullptr) return hcn::kPointer;
  return Finish(Call("HcnSimEnumerateAdapters", {}), adapters, error_record);
}

HRESULT HnsCall(PCWSTR method, PCWSTR path, PCWSTR request, PWSTR* response) {
  Clear(response);
  if (response == nullptr) return hcn::kPointer;
  Reply reply = Call("HNSCall", {{"method", FromWide(method)}, {"path", FromWide(path)}, {"request", FromWide(request)}});
  if (!reply.result) reply.result = std::move(reply.error_record);
  reply.error_record.reset();
  return Finish(reply, response, nullptr);
}

HRESULT HcsOpen(PCWSTR id, void** system, PWSTR* result) {
  Clear(result);
  if (system == nullptr) return hcn::kPointer;
  *system = nullptr;
  const std::optional<std::string> name = FromWide(id);
  if (!name) return hcn::kPointer;
  Reply reply = Call("HcsOpenComputeSystem", {{"id", name}});
  // HCS answers failures with a result document of error events (microsoft/hcsshim internal/vmcompute/vmcompute.go
  // returns it through `result`; internal/hcs/errors.go hcsResult reads it): the simulator's record plays that part.
  if (!hcn::Failed(reply.hr)) {
    *system = NewHandle(Kind::kComputeSystem, *name);
    if (*system == nullptr) return hcn::kOutOfMemory;
  }
  reply.result = std::move(reply.error_record);
  reply.error_record.reset();
  const HRESULT hr = Finish(reply, result, nullptr);
  if (hcn::Failed(hr) && *system != nullptr) {
    CloseHandle(*system, Kind::kComputeSystem);
    *system = nullptr;
  }
  return hr;
}

HRESULT HcsModify(void* system, PCWSTR configuration, PWSTR* result) {
  Clear(result);
  const std::string* id = HandleGuid(system, Kind::kComputeSystem);
  if (id == nullptr) return hcn::kHandle;
  Reply reply = Call("HcsModifyComputeSystem", {{"id", *id}, {"settings", FromWide(configuration)}});
  reply.result = std::move(reply.error_record);
  reply.error_record.reset();
  return Finish(reply, result, nullptr);
}

HRESULT HcsClose(void* system) { return CloseHandle(system, Kind::kComputeSystem) ? hcn::kOk : hcn::kHandle; }

HRESULT HcsRegisterCallback(void* system, void** callback) {
  if (callback == nullptr) return hcn::kPointer;
  *callback = nullptr;
  const std::string* id = HandleGuid(system, Kind::kComputeSystem);
  if (id == nullptr) return hcn::kHandle;
  *callback = NewHandle(Kind::kHcsCallback, *id);
  return *callback == nullptr ? hcn::kOutOfMemory : hcn::kOk;
}

HRESULT HcsUnregisterCallback(void* callback) {
  return CloseHandle(callback, Kind::kHcsCallback) ? hcn::kOk : hcn::kHandle;
}

HRESULT HcsProperties(void* system, PCWSTR query, PWSTR* properties, PWSTR* result) {
  Clear(properties);
  Clear(result);
  if (properties == nullptr) return hcn::kPointer;
  const std::string* id = HandleGuid(system, Kind::kComputeSystem);
  if (id == nullptr) return hcn::kHandle;
  Reply reply = Call("HcsGetComputeSystemProperties", {{"id", *id}, {"query", FromWide(query)}});
  // As for HcsModify, a failure's record is HCS's result document: Finish hands it out through `result`.
  return Finish(reply, properties, result);
}

HRESULT NotImplemented(PWSTR* error_record) {
  Clear(error_record);
  // The record in the form of the simulator's others (src/sim/sim-error.ts): message, trailing space, unsigned code.
  Reply reply;
  reply.hr = hcn::Hr(0x80004001u);  // E_NOTIMPL
  reply.error_record = "{\"Success\":false,\"Error\":\"Not implemented. \",\"ErrorCode\":2147500033}";
  return Finish(reply, nullptr, error_record);
}

}  // namespace hcnsim
