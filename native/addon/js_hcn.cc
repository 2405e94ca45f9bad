#include "js_hcn.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "async_call.h"
#include "hcn_calls.h"
#include "hresults.h"
#include "js_args.h"
#include "utf.h"

namespace hcn {
namespace {

const char* Plural(ObjectKind kind) {
  static const char* const kNames[] = {"Networks", "Endpoints", "Namespaces"};
  return kNames[static_cast<int>(kind)];
}

std::string Singular(ObjectKind kind) {
  static const char* const kNames[] = {"Network", "Endpoint", "Namespace"};
  return kNames[static_cast<int>(kind)];
}

// Promise-returning functions report bad arguments as rejections too, so callers have one failure path.
template <typename MakeCall>
Napi::Value Async(const Napi::CallbackInfo& info, MakeCall make_call) {
  Napi::Env env = info.Env();
  try {
    return QueueCall(env, make_call());
  } catch (const Napi::Error& error) {
    auto deferred = Napi::Promise::Deferred::New(env);
    deferred.Reject(error.Value());
    return deferred.Promise();
  }
}

template <ObjectKind K>
Napi::Value JsEnumerate(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const std::string usage = std::string("enumerate") + Plural(K) + "(query: string | null)";
    auto query = NullableStringArg(info, 0, usage.c_str());
    return [query] { return EnumerateObjects(K, query); };
  });
}

template <ObjectKind K>
Napi::Value JsCreate(const Napi::CallbackInfo& info) {
  return Async(info, [&]() -> NativeCall {
    if constexpr (K == ObjectKind::kEndpoint) {
      const char* usage = "createEndpoint(networkId: string, id: string | null, settings: string, query: string | null)";
      const GUID network = GuidArg(info, 0, usage);
      const GUID id = NullableGuidArg(info, 1, usage);
      auto settings = StringArg(info, 2, usage);
      auto query = NullableStringArg(info, 3, usage);
      return [=] { return CreateObject(K, network, id, settings, query); };
    } else {
      const std::string usage = "create" + Singular(K) + "(id: string | null, settings: string, query: string | null)";
      const GUID id = NullableGuidArg(info, 0, usage.c_str());
      auto settings = StringArg(info, 1, usage.c_str());
      auto query = NullableStringArg(info, 2, usage.c_str());
      return [=] { return CreateObject(K, GUID{}, id, settings, query); };
    }
  });
}

template <ObjectKind K>
Napi::Value JsGetProperties(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const std::string usage = "get" + Singular(K) + "Properties(id: string, query: string | null)";
    const GUID id = GuidArg(info, 0, usage.c_str());
    auto query = NullableStringArg(info, 1, usage.c_str());
    return [=] { return GetObjectProperties(K, id, query); };
  });
}

template <ObjectKind K>
Napi::Value JsModify(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const std::string usage = "modify" + Singular(K) + "(id: string, settings: string)";
    const GUID id = GuidArg(info, 0, usage.c_str());
    auto settings = StringArg(info, 1, usage.c_str());
    return [=] { return ModifyObject(K, id, settings); };
  });
}

template <ObjectKind K>
Napi::Value JsDelete(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const std::string usage = "delete" + Singular(K) + "(id: string)";
    const GUID id = GuidArg(info, 0, usage.c_str());
    return [=] { return DeleteObject(K, id); };
  });
}

template <ObjectKind K>
Napi::Value JsListDetailed(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const std::string usage = std::string("list") + Plural(K) + "Detailed(query: string | null)";
    auto query = NullableStringArg(info, 0, usage.c_str());
    return [query] { return ListObjectsDetailed(K, query); };
  });
}

// The calls by name (hcn_calls.h QueryObject and its siblings): any function of the list whose sim column is the verb,
// so a new function of a generic verb is reached without a binding of its own.
Napi::Value JsCallQuery(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const char* usage = "callQuery(fn: string, id: string, query: string | null)";
    const Fn fn = ListedFunctionArg(info, 0, FnVerb::kQuery, usage);
    const GUID id = GuidArg(info, 1, usage);
    auto query = NullableStringArg(info, 2, usage);
    return [=] { return QueryObject(fn, id, query); };
  });
}

Napi::Value JsCallModify(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const char* usage = "callModify(fn: string, id: string, settings: string)";
    const Fn fn = ListedFunctionArg(info, 0, FnVerb::kModify, usage);
    const GUID id = GuidArg(info, 1, usage);
    auto settings = StringArg(info, 2, usage);
    return [=] { return ModifyObject(fn, id, settings); };
  });
}

Napi::Value JsCallEnumerate(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const char* usage = "callEnumerate(fn: string, query: string | null)";
    const Fn fn = ListedFunctionArg(info, 0, FnVerb::kEnumerate, usage);
    auto query = NullableStringArg(info, 1, usage);
    return [=] { return EnumerateObjects(fn, query); };
  });
}

Napi::Value JsCallDelete(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const char* usage = "callDelete(fn: string, id: string)";
    const Fn fn = ListedFunctionArg(info, 0, FnVerb::kDelete, usage);
    const GUID id = GuidArg(info, 1, usage);
    return [=] { return DeleteObject(fn, id); };
  });
}

Napi::Value JsHnsCall(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const char* usage = "hnsCall(method: string, path: string, body: string | null)";
    auto method = StringArg(info, 0, usage);
    auto path = StringArg(info, 1, usage);
    auto body = NullableStringArg(info, 2, usage);
    return [=] { return CallHns(method, path, body); };
  });
}

Napi::Value JsListAdapters(const Napi::CallbackInfo& info) {
  return Async(info, [] { return [] { return ListAdapters(); }; });
}

Napi::Value JsModifyComputeSystem(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    const char* usage = "modifyComputeSystem(id: string, request: string)";
    auto id = StringArg(info, 0, usage);
    auto request = StringArg(info, 1, usage);
    return [=] { return ModifyComputeSystem(id, request); };
  });
}

Napi::Value JsOpenComputeSystem(const Napi::CallbackInfo& info) {
  return Async(info, [&] {
    auto id = StringArg(info, 0, "openComputeSystem(id: string)");
    return [=] { return OpenComputeSystem(id); };
  });
}

// Service notifications. The library calls back on a thread of its own; each registration's JS callback is reached
// through a thread-safe function. Registrations are process-wide, known to JS by a number.
struct ServiceCallback {
  Napi::ThreadSafeFunction to_js;
  HCN_CALLBACK handle = nullptr;
};
struct ServiceNotification {
  uint32_t type;
  uint32_t status;
  std::optional<std::string> data;
};
std::mutex service_callbacks_mutex;
std::map<uint64_t, ServiceCallback*> service_callbacks;
uint64_t next_service_callback = 1;

void CALLBACK OnServiceNotification(DWORD type, void* context, HRESULT status, PCWSTR data) {
  auto* callback = static_cast<ServiceCallback*>(context);
  auto* n = new ServiceNotification{type, Unsigned(status), std::nullopt};
  if (data != nullptr) n->data = Utf16ToUtf8(View(data));
  const napi_status queued =
      callback->to_js.NonBlockingCall(n, [](Napi::Env env, Napi::Function fn, ServiceNotification* raw) {
        std::unique_ptr<ServiceNotification> owned(raw);
        if (env == nullptr || fn.IsEmpty()) return;  // the environment is going away
        fn.Call({Napi::Number::New(env, owned->type), Napi::Number::New(env, owned->status),
                 owned->data ? Napi::String::New(env, *owned->data) : env.Null()});
      });
  if (queued != napi_ok) delete n;
}

// registerServiceCallback(onNotification): the registration's number, once HCN has it.
Napi::Value JsRegisterServiceCallback(const Napi::CallbackInfo& info) {
  return Async(info, [&]() -> NativeCall {
    const char* usage = "registerServiceCallback(onNotification: (type: number, status: number, data: string | null) => void)";
    if (info.Length() < 1 || !info[0].IsFunction()) throw Napi::TypeError::New(info.Env(), usage);
    auto* callback = new ServiceCallback();
    callback->to_js =
        Napi::ThreadSafeFunction::New(info.Env(), info[0].As<Napi::Function>(), "hcnServiceNotification", 0, 1);
    callback->to_js.Unref(info.Env());  // a registration alone does not keep the process alive
    return [callback] {
      CallOutcome outcome = RegisterServiceCallback(OnServiceNotification, callback, &callback->handle);
      if (outcome.failed) {
        callback->to_js.Release();
        delete callback;
        return outcome;
      }
      std::lock_guard<std::mutex> lock(service_callbacks_mutex);
      const uint64_t id = next_service_callback++;
      service_callbacks[id] = callback;
      outcome.value = Utf8ToUtf16(std::to_string(id));
      return outcome;
    };
  });
}

// unregisterServiceCallback(id): once settled, the callback is not called again. An unknown id is already done.
Napi::Value JsUnregisterServiceCallback(const Napi::CallbackInfo& info) {
  return Async(info, [&]() -> NativeCall {
    const char* usage = "unregisterServiceCallback(id: string)";
    const std::string id = Utf16ToUtf8(StringArg(info, 0, usage));
    ServiceCallback* callback = nullptr;
    {
      std::lock_guard<std::mutex> lock(service_callbacks_mutex);
      auto found = service_callbacks.find(std::strtoull(id.c_str(), nullptr, 10));
      if (found != service_callbacks.end()) {
        callback = found->second;
        service_callbacks.erase(found);
      }
    }
    return [callback] {
      if (callback == nullptr) return CallOutcome();
      CallOutcome outcome = UnregisterServiceCallback(callback->handle);
      // Not unregistered: the library may still call it, so it stays (a leak rather than a use after free).
      if (outcome.failed) return outcome;
      callback->to_js.Release();
      delete callback;
      return outcome;
    };
  });
}

// Held handles (hcn_calls.h HeldHandle), known to JS by a number. A call takes its own reference when it starts, so a
// close while it runs only drops the table's: the handle is closed once the call is done with it.
std::mutex held_mutex;
std::map<uint64_t, std::shared_ptr<HeldHandle>> held_handles;
uint64_t next_held = 1;

std::shared_ptr<HeldHandle> FindHeld(const std::u16string& token) {
  std::lock_guard<std::mutex> lock(held_mutex);
  auto found = held_handles.find(std::strtoull(Utf16ToUtf8(token).c_str(), nullptr, 10));
  return found == held_handles.end() ? nullptr : found->second;
}

// A token that names no held handle (closed already): E_HANDLE against the function it was meant for.
CallOutcome NoSuchHandle(const char* op) { return CallOutcome{true, op, kHandle, std::nullopt, std::nullopt}; }

// open<Kind>Handle(id): the held handle's number.
template <ObjectKind K>
Napi::Value JsOpenHeld(const Napi::CallbackInfo& info) {
  return Async(info, [&]() -> NativeCall {
    const std::string usage = "open" + Singular(K) + "Handle(id: string)";
    const GUID id = GuidArg(info, 0, usage.c_str());
    return [id] {
      std::shared_ptr<HeldHandle> held;
      CallOutcome outcome = OpenHeld(K, id, &held);
      if (outcome.failed) return outcome;
      std::lock_guard<std::mutex> lock(held_mutex);
      const uint64_t token = next_held++;
      held_handles[token] = std::move(held);
      outcome.value = Utf8ToUtf16(std::to_string(token));
      return outcome;
    };
  });
}

// createEndpointIn(networkHandle, id, settings, query): the endpoint's properties.
Napi::Value JsCreateEndpointIn(const Napi::CallbackInfo& info) {
  return Async(info, [&]() -> NativeCall {
    const char* usage = "createEndpointIn(networkHandle: string, id: string | null, settings: string, query: string | null)";
    auto network = FindHeld(StringArg(info, 0, usage));
    const GUID id = NullableGuidArg(info, 1, usage);
    auto settings = StringArg(info, 2, usage);
    auto query = NullableStringArg(info, 3, usage);
    return [=] {
      if (!network || network->kind() != ObjectKind::kNetwork) return NoSuchHandle("HcnCreateEndpoint");
      return CreateEndpointIn(*network, id, settings, query);
    };
  });
}

// modifyHeld(handle, settings).
Napi::Value JsModifyHeld(const Napi::CallbackInfo& info) {
  return Async(info, [&]() -> NativeCall {
    const char* usage = "modifyHeld(handle: string, settings: string)";
    auto held = FindHeld(StringArg(info, 0, usage));
    auto settings = StringArg(info, 1, usage);
    return [=] { return held ? ModifyHeld(*held, settings) : NoSuchHandle("HcnModifyNamespace"); };
  });
}

// closeHandle(handle): forgets it; closed once no call uses it. An unknown handle is already closed.
Napi::Value JsCloseHandle(const Napi::CallbackInfo& info) {
  const char* usage = "closeHandle(handle: string)";
  const std::string token = Utf16ToUtf8(StringArg(info, 0, usage));
  std::shared_ptr<HeldHandle> held;
  {
    std::lock_guard<std::mutex> lock(held_mutex);
    auto found = held_handles.find(std::strtoull(token.c_str(), nullptr, 10));
    if (found != held_handles.end()) {
      held = std::move(found->second);
      held_handles.erase(found);
    }
  }
  return info.Env().Undefined();
}

constexpr ObjectKind kNet = ObjectKind::kNetwork;
constexpr ObjectKind kEp = ObjectKind::kEndpoint;
constexpr ObjectKind kNs = ObjectKind::kNamespace;

}  // namespace

// The HCN part of the export table (addon.cc has the rest): a new binding is added here, beside its definition.
void ExportHcnVerbs(Napi::Env env, Napi::Object exports) {
  const struct {
    const char* name;
    Napi::Value (*fn)(const Napi::CallbackInfo&);
  } table[] = {
      {"enumerateNetworks", JsEnumerate<kNet>},
      {"createNetwork", JsCreate<kNet>},
      {"getNetworkProperties", JsGetProperties<kNet>},
      {"modifyNetwork", JsModify<kNet>},
      {"deleteNetwork", JsDelete<kNet>},
      {"listNetworksDetailed", JsListDetailed<kNet>},

      {"enumerateEndpoints", JsEnumerate<kEp>},
      {"createEndpoint", JsCreate<kEp>},
      {"getEndpointProperties", JsGetProperties<kEp>},
      {"modifyEndpoint", JsModify<kEp>},
      {"deleteEndpoint", JsDelete<kEp>},
      {"listEndpointsDetailed", JsListDetailed<kEp>},

      {"enumerateNamespaces", JsEnumerate<kNs>},
      {"createNamespace", JsCreate<kNs>},
      {"getNamespaceProperties", JsGetProperties<kNs>},
      {"modifyNamespace", JsModify<kNs>},
      {"deleteNamespace", JsDelete<kNs>},
      {"listNamespacesDetailed", JsListDetailed<kNs>},

      {"callQuery", JsCallQuery},
      {"callModify", JsCallModify},
      {"callEnumerate", JsCallEnumerate},
      {"callDelete", JsCallDelete},

      {"openNetworkHandle", JsOpenHeld<kNet>},
      {"openNamespaceHandle", JsOpenHeld<kNs>},
      {"createEndpointIn", JsCreateEndpointIn},
      {"modifyHeld", JsModifyHeld},
      {"closeHandle", JsCloseHandle},

      {"hnsCall", JsHnsCall},
      {"listAdapters", JsListAdapters},
      {"modifyComputeSystem", JsModifyComputeSystem},
      {"openComputeSystem", JsOpenComputeSystem},
      {"registerServiceCallback", JsRegisterServiceCallback},
      {"unregisterServiceCallback", JsUnregisterServiceCallback},
  };
  for (const auto& entry : table) exports.Set(entry.name, Napi::Function::New(env, entry.fn, entry.name));
}

}  // namespace hcn
