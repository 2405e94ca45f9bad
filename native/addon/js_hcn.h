// The Promise-returning HCN exports (networks, endpoints and namespaces, HNSCall, adapters, HCS hot attach). Each
// binding and its entry in the export table live in js_hcn.cc, so a new one touches that file only.
#ifndef HCN_CNI_ADDON_JS_HCN_H_
#define HCN_CNI_ADDON_JS_HCN_H_

#include <napi.h>

namespace hcn {

void ExportHcnVerbs(Napi::Env env, Napi::Object exports);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_JS_HCN_H_
