#include "async_call.h"

#include <cstdio>
#include <new>

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

class CallWorker final : public Napi::AsyncWorker {
 public:
  CallWorker(Napi::Env env, NativeCall call)
      : Napi::AsyncWorker(env, "hcn:call"), call_(std::move(call)), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    try {
      outcome_ = call_();
    } catch (const std::bad_alloc&) {
      outcome_ = CallOutcome{true, "hcn.node", kOutOfMemory, std::nullopt, std::nullopt};
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (!outcome_.failed) {
      deferred_.Resolve(outcome_.value ? Napi::String::New(env, *outcome_.value) : env.Undefined());
    } else {
      deferred_.Reject(MakeError(env, outcome_));
    }
  }

  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  NativeCall call_;
  Napi::Promise::Deferred deferred_;
  CallOutcome outcome_;
};

}  // namespace

Napi::Promise QueueCall(Napi::Env env, NativeCall call) {
  auto* worker = new CallWorker(env, std::move(call));  // AsyncWorker deletes itself when it has settled
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
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
