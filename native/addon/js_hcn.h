// The Promise-returning exports: one template per verb, instantiated for networks, endpoints and namespaces.
#ifndef HCN_CNI_ADDON_JS_HCN_H_
#define HCN_CNI_ADDON_JS_HCN_H_

#include <napi.h>

#include "hcn_calls.h"

namespace hcn {

template <ObjectKind K> Napi::Value JsEnumerate(const Napi::CallbackInfo& info);
template <ObjectKind K> Napi::Value JsCreate(const Napi::CallbackInfo& info);
template <ObjectKind K> Napi::Value JsGetProperties(const Napi::CallbackInfo& info);
template <ObjectKind K> Napi::Value JsModify(const Napi::CallbackInfo& info);
template <ObjectKind K> Napi::Value JsDelete(const Napi::CallbackInfo& info);
template <ObjectKind K> Napi::Value JsListDetailed(const Napi::CallbackInfo& info);

Napi::Value JsHnsCall(const Napi::CallbackInfo& info);
Napi::Value JsListAdapters(const Napi::CallbackInfo& info);
Napi::Value JsModifyComputeSystem(const Napi::CallbackInfo& info);

#define HCN_DECLARE_VERBS(K)                                                \
  extern template Napi::Value JsEnumerate<K>(const Napi::CallbackInfo&);     \
  extern template Napi::Value JsCreate<K>(const Napi::CallbackInfo&);        \
  extern template Napi::Value JsGetProperties<K>(const Napi::CallbackInfo&); \
  extern template Napi::Value JsModify<K>(const Napi::CallbackInfo&);        \
  extern template Napi::Value JsDelete<K>(const Napi::CallbackInfo&);        \
  extern template Napi::Value JsListDetailed<K>(const Napi::CallbackInfo&);
HCN_DECLARE_VERBS(ObjectKind::kNetwork)
HCN_DECLARE_VERBS(ObjectKind::kEndpoint)
HCN_DECLARE_VERBS(ObjectKind::kNamespace)
#undef HCN_DECLARE_VERBS

}  // namespace hcn

#endif  // HCN_CNI_ADDON_JS_HCN_H_
