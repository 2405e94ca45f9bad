// The synchronous OS helpers the state store needs: file locks and process identity.
#ifndef HCN_CNI_ADDON_JS_OS_H_
#define HCN_CNI_ADDON_JS_OS_H_

#include <napi.h>

namespace hcn {

Napi::Value JsTryLockFile(const Napi::CallbackInfo& info);
Napi::Value JsUnlockFile(const Napi::CallbackInfo& info);
Napi::Value JsProcessStartTime(const Napi::CallbackInfo& info);
Napi::Value JsExitNow(const Napi::CallbackInfo& info);
Napi::Value JsPeerCredentials(const Napi::CallbackInfo& info);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_JS_OS_H_
