// hcn.node: the export table (the HCN calls' part is js_hcn.cc's). The surface is specified in
// src/hns/native-types.ts.
#include <napi.h>

#include "async_call.h"
#include "js_hcn.h"
#include "js_library.h"
#include "js_os.h"
#include "pipe_server.h"

namespace hcn {
namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // Loading the module again in the same environment (a test runner's module registry, say) keeps the state, and
  // with it the registered error class.
  if (env.GetInstanceData<AddonState>() == nullptr) env.SetInstanceData(new AddonState());
  const struct {
    const char* name;
    Napi::Value (*fn)(const Napi::CallbackInfo&);
  } table[] = {
      {"init", JsInit},
      {"capabilities", JsCapabilities},
      {"setErrorClass", SetErrorClass},
      {"stats", JsStats},
      {"callThreads", JsCallThreads},

      {"tryLockFile", JsTryLockFile},
      {"unlockFile", JsUnlockFile},
      {"processStartTime", JsProcessStartTime},
      {"exitNow", JsExitNow},
      {"peerCredentials", JsPeerCredentials},
      {"listenPipe", JsListenPipe},
  };
  for (const auto& entry : table) exports.Set(entry.name, Napi::Function::New(env, entry.fn, entry.name));
  ExportHcnVerbs(env, exports);  // js_hcn.cc: the HCN calls
  return exports;
}

}  // namespace
}  // namespace hcn

// NODE_API_MODULE pastes its second argument into an identifier, so it needs an unqualified name.
static Napi::Object InitHcn(Napi::Env env, Napi::Object exports) { return hcn::Init(env, exports); }
NODE_API_MODULE(hcn, InitHcn)
