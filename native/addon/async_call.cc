#include "async_call.h"

#include <cstdio>
#include <mutex>
#include <new>
#include <system_error>

#include "call_threads.h"
#include "hresults.h"

namespace hcn {
namespace {

std::string HexHresult(HRESULT hr) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08X", Unsigned(hr));
  return text;
}

// Only reached when no class is registered or its constructor threw: an Error carrying the same fields.
Napi::Value PlainError(Napi::Env env, const CallOutcome& outcome, Napi::Value record) {
  const std::string message = outcome.hr == kOk
                                  ? outcome.op + " returned S_OK with an error record"
                                  : outcome.op + " failed with HRESULT " + HexHresult(outcome.hr);
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("op", Napi::String::New(env, outcome.op));
  error.Set("hresult", Napi::Number::New(env, Unsigned(outcome.hr)));
  error.Set("errorRecord", record);
  return error.Value();
}

Napi::Value MakeError(Napi::Env env, const CallOutcome& outcome) {
  Napi::Value record = outcome.error_record ? Napi::String::New(env, *outcome.error_record) : env.Null();
  auto* state = env.GetInstanceData<AddonState>();
  if (state != nullptr && !state->error_class.IsEmpty()) {
    try {
      return state->error_class.New(
          {Napi::String::New(env, outcome.op), Napi::Number::New(env, Unsigned(outcome.hr)), record});
    } catch (const Napi::Error&) {
      // A throwing constructor must not turn a rejection into an uncaught exception; fall back below.
    }
  }
  return PlainError(env, outcome, record);
}

void Settle(Napi::Env env, Napi::Promise::Deferred& deferred, const CallOutcome& outcome) {
  if (!outcome.failed) {
    deferred.Resolve(outcome.value ? Napi::String::New(env, *outcome.value) : env.Undefined());
  } else {
    deferred.Reject(MakeError(env, outcome));
  }
}

struct Pending;
void Deliver(Napi::Env env, Napi::Function, CallHub* hub, Pending* call);
using Completions = Napi::TypedThreadSafeFunction<CallHub, Pending, Deliver>;

}  // namespace

// One per environment, shared by its JS thread and every call thread that runs one of its calls. The call
// threads post finished calls through `completions` while `open`; the environment's teardown finalizes the
// thread-safe function and clears `open` first (under `mutex`), so a call that HNS answers after its environment
// is gone — a worker_thread that ended, a process on its way out — touches nothing that was freed.
struct CallHub {
  std::mutex mutex;
  bool open = true;
  Completions completions;
};

namespace {

struct Pending {
  Pending(Napi::Env env, NativeCall c, std::shared_ptr<CallHub> h)
      : call(std::move(c)), deferred(Napi::Promise::Deferred::New(env)), hub(std::move(h)) {}
  NativeCall call;
  Napi::Promise::Deferred deferred;
  std::shared_ptr<CallHub> hub;
  CallOutcome outcome;
};

// On a call thread.
void Run(Pending* call) {
  try {
    call->outcome = call->call();
  } catch (const std::bad_alloc&) {
    call->outcome = CallOutcome{true, "hcn.node", kOutOfMemory, std::nullopt, std::nullopt};
  }
  call->call = nullptr;
  const std::shared_ptr<CallHub> hub = call->hub;
  std::lock_guard<std::mutex> lock(hub->mutex);
  if (!hub->open || hub->completions.NonBlockingCall(call) != napi_ok) delete call;
}

// On the JS thread; env is null when the environment is being torn down with this call still queued.
void Deliver(Napi::Env env, Napi::Function, CallHub* hub, Pending* call) {
  std::unique_ptr<Pending> owned(call);
  if (static_cast<napi_env>(env) == nullptr) return;
  auto* state = env.GetInstanceData<AddonState>();
  if (state != nullptr && state->calls_pending > 0 && --state->calls_pending == 0) hub->completions.Unref(env);
  Settle(env, call->deferred, call->outcome);
}

void CloseHub(Napi::Env, std::shared_ptr<CallHub>* keep, CallHub* hub) {
  {
    std::lock_guard<std::mutex> lock(hub->mutex);
    hub->open = false;
  }
  delete keep;
}

CallHub& HubOf(Napi::Env env, AddonState* state) {
  if (!state->calls) {
    auto hub = std::make_shared<CallHub>();
    // Unlimited queue (a call thread never blocks on JS); one owner, this environment, that never releases it:
    // the function lives until the environment's teardown. Unref'd while no call is pending, so an idle addon
    // never keeps the event loop alive.
    hub->completions = Completions::New(env, "hcn:call", 0, 1, hub.get(), CloseHub, new std::shared_ptr<CallHub>(hub));
    hub->completions.Unref(env);
    state->calls = std::move(hub);
  }
  return *state->calls;
}

}  // namespace

Napi::Promise QueueCall(Napi::Env env, NativeCall call) {
  auto* state = env.GetInstanceData<AddonState>();
  CallHub& hub = HubOf(env, state);
  auto* pending = new Pending(env, std::move(call), state->calls);
  Napi::Promise promise = pending->deferred.Promise();
  try {
    RunOnCallThread([pending] { Run(pending); });
  } catch (const std::system_error&) {
    // No thread could be started (the process is at its thread or memory limit): the call was not made.
    Settle(env, pending->deferred, CallOutcome{true, "hcn.node", kOutOfMemory, std::nullopt, std::nullopt});
    delete pending;
    return promise;
  }
  // A pending call keeps the event loop alive, as libuv's pool work did: its promise is still to settle.
  if (state->calls_pending++ == 0) hub.completions.Ref(env);
  return promise;
}

Napi::Value JsCallThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const CallThreadCounts counts = CountCallThreads();
  auto* state = env.GetInstanceData<AddonState>();
  Napi::Object out = Napi::Object::New(env);
  out.Set("threads", static_cast<double>(counts.threads));
  out.Set("busy", static_cast<double>(counts.busy));
  out.Set("started", static_cast<double>(counts.started));
  out.Set("pending", static_cast<double>(state != nullptr ? state->calls_pending : 0));
  return out;
}

Napi::Value SetErrorClass(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) {
    throw Napi::TypeError::New(env, "Usage: setErrorClass(ctor: new (op, hresult, errorRecord) => Error)");
  }
  env.GetInstanceData<AddonState>()->error_class = Napi::Persistent(info[0].As<Napi::Function>());
  return env.Undefined();
}

}  // namespace hcn
