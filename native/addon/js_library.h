// init(), capabilities() and stats(): the library's state as JavaScript sees it.
#ifndef HCN_CNI_ADDON_JS_LIBRARY_H_
#define HCN_CNI_ADDON_JS_LIBRARY_H_

#include <napi.h>

namespace hcn {

Napi::Value JsInit(const Napi::CallbackInfo& info);
Napi::Value JsCapabilities(const Napi::CallbackInfo& info);
Napi::Value JsStats(const Napi::CallbackInfo& info);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_JS_LIBRARY_H_
