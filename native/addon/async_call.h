// Runs a native call on the libuv pool and settles a Promise with its outcome. Execute() never touches N-API;
// failures reject with the class registered by setErrorClass, constructed as new Cls(op, hresult, errorRecord).
#ifndef HCN_CNI_ADDON_ASYNC_CALL_H_
#define HCN_CNI_ADDON_ASYNC_CALL_H_

#include <functional>

#include <napi.h>

#include "hcn_calls.h"

namespace hcn {

using NativeCall = std::function<CallOutcome()>;

Napi::Promise QueueCall(Napi::Env env, NativeCall call);

// setErrorClass(ctor).
Napi::Value SetErrorClass(const Napi::CallbackInfo& info);

// Per-environment state (one per Node.js environment: main thread and each worker_thread).
struct AddonState {
  Napi::FunctionReference error_class;
};

}  // namespace hcn

#endif  // HCN_CNI_ADDON_ASYNC_CALL_H_
