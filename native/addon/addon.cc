// hcn.node: the export table. The surface is specified in src/hns/native-types.ts.
#include <napi.h>

#include "async_call.h"
#include "js_hcn.h"
#include "js_library.h"
#include "js_os.h"
#include "pipe_server.h"

namespace hcn {
namespace {

constexpr ObjectKind kNet = ObjectKind::kNetwork;
constexpr ObjectKind kEp = ObjectKind::kEndpoint;
constexpr ObjectKind kNs = ObjectKind::kNamespace;

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

      {"enumerateNetworks", JsEnumerate<kNet>},
      {"createNetwork", JsCreate<kNet>},
      {"getNetworkProperties", JsGetProperties<kNet>},
      {"modifyNetwork", JsModify<kNet>},
      {"deleteNetwork", JsDelete<kNet>},
      {"listNetworksDetailed", JsListDetailed<kNet>},

      {"enumerateEndpoints", JsEnumerate<kEp>},
      {"createEndpoint", JsCreate<kEp>},
      {"getEndpointProperties", JsGetProperties<kEp>},
      {"modifyEndpoint", JsModify<kEp>},
      {"deleteEndpoint", JsDelete<kEp>},
      {"listEndpointsDetailed", JsListDetailed<kEp>},

      {"enumerateNamespaces", JsEnumerate<kNs>},
      {"createNamespace", JsCreate<kNs>},
      {"getNamespaceProperties", JsGetProperties<kNs>},
      {"modifyNamespace", JsModify<kNs>},
      {"deleteNamespace", JsDelete<kNs>},
      {"listNamespacesDetailed", JsListDetailed<kNs>},

      {"hnsCall", JsHnsCall},
      {"listAdapters", JsListAdapters},
      {"modifyComputeSystem", JsModifyComputeSystem},

      {"tryLockFile", JsTryLockFile},
      {"unlockFile", JsUnlockFile},
      {"processStartTime", JsProcessStartTime},
      {"exitNow", JsExitNow},
      {"peerCredentials", JsPeerCredentials},
      {"listenPipe", JsListenPipe},
  };
  for (const auto& entry : table) exports.Set(entry.name, Napi::Function::New(env, entry.fn, entry.name));
  return exports;
}

}  // namespace
}  // namespace hcn

// NODE_API_MODULE pastes its second argument into an identifier, so it needs an unqualified name.
static Napi::Object InitHcn(Napi::Env env, Napi::Object exports) { return hcn::Init(env, exports); }
NODE_API_MODULE(hcn, InitHcn)
