#include "js_hcn.h"

#include <string>

#include "async_call.h"
#include "js_args.h"

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

}  // namespace

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

#define HCN_DEFINE_VERBS(K)                                          \
  template Napi::Value JsEnumerate<K>(const Napi::CallbackInfo&);     \
  template Napi::Value JsCreate<K>(const Napi::CallbackInfo&);        \
  template Napi::Value JsGetProperties<K>(const Napi::CallbackInfo&); \
  template Napi::Value JsModify<K>(const Napi::CallbackInfo&);        \
  template Napi::Value JsDelete<K>(const Napi::CallbackInfo&);        \
  template Napi::Value JsListDetailed<K>(const Napi::CallbackInfo&);
HCN_DEFINE_VERBS(ObjectKind::kNetwork)
HCN_DEFINE_VERBS(ObjectKind::kEndpoint)
HCN_DEFINE_VERBS(ObjectKind::kNamespace)
#undef HCN_DEFINE_VERBS

}  // namespace hcn
