// Runs a native call on a call thread of its own (call_threads.h: never libuv's pool, which a hung HNS call would
// hold) and settles a Promise with its outcome on the JS thread. The call never touches N-API; failures reject with
// the class registered by setErrorClass, constructed as new Cls(op, hresult, errorRecord).
#ifndef HCN_CNI_ADDON_ASYNC_CALL_H_
#define HCN_CNI_ADDON_ASYNC_CALL_H_

#include <cstdint>
#include <functional>
#include <memory>

#include <napi.h>

#include "hcn_calls.h"

namespace hcn {

using NativeCall = std::function<CallOutcome()>;

Napi::Promise QueueCall(Napi::Env env, NativeCall call);

// setErrorClass(ctor).
Napi::Value SetErrorClass(const Napi::CallbackInfo& info);

// How finished calls of one environment reach its JS thread (async_call.cc).
struct CallHub;

// Per-environment state (one per Node.js environment: main thread and each worker_thread).
struct AddonState {
  Napi::FunctionReference error_class;
  std::shared_ptr<CallHub> calls;  // made on the first call
  uint64_t calls_pending = 0;      // started and not yet settled in JS (JS thread only)
};

// callThreads(): the call threads of the process and this environment's calls not yet settled.
Napi::Value JsCallThreads(const Napi::CallbackInfo& info);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_ASYNC_CALL_H_
