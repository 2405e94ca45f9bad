#include "js_os.h"

#include "exit_now.h"
#include "js_args.h"
#include "os_lock.h"
#include "process_time.h"

namespace hcn {

Napi::Value JsTryLockFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::u16string path = StringArg(info, 0, "tryLockFile(path: string)");
  try {
    const std::optional<int32_t> handle = TryLockFile(path);
    return handle ? Napi::Number::New(env, *handle) : env.Null();
  } catch (const LockError& error) {
    Napi::Error js = Napi::Error::New(env, "tryLockFile: " + error.message);
    js.Set("errno", Napi::Number::New(env, static_cast<double>(error.code)));
    throw js;
  }
}

Napi::Value JsUnlockFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto handle = static_cast<int32_t>(IntegerArg(info, 0, INT32_MAX, "unlockFile(handle: number)"));
  // A second unlock is a bug in the caller's bookkeeping; saying so beats silently unlocking nothing.
  if (!UnlockFile(handle)) throw Napi::RangeError::New(env, "unlockFile: no lock is held with handle " + std::to_string(handle));
  return env.Undefined();
}

Napi::Value JsProcessStartTime(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int64_t pid = IntegerArg(info, 0, INT32_MAX, "processStartTime(pid: number)");
  try {
    const std::optional<std::string> token = ProcessStartTime(pid);
    return token ? Napi::String::New(env, *token) : env.Null();
  } catch (const std::runtime_error& error) {
    throw Napi::Error::New(env, std::string("processStartTime: ") + error.what());
  }
}

Napi::Value JsExitNow(const Napi::CallbackInfo& info) {
  const auto code = static_cast<int>(IntegerArg(info, 0, 255, "exitNow(code: number)"));
  ExitNow(code);
}

}  // namespace hcn
