// Argument checks for the exported functions. The TypeScript facade validates first; these only make sure that
// a wrong call is a TypeError with a usage line and never undefined behaviour.
#ifndef HCN_CNI_ADDON_JS_ARGS_H_
#define HCN_CNI_ADDON_JS_ARGS_H_

#include <optional>
#include <string>

#include <napi.h>

#include "hcn_abi.h"
#include "hcn_library.h"

namespace hcn {

std::u16string StringArg(const Napi::CallbackInfo& info, size_t index, const char* usage);
// null and undefined are nullopt.
std::optional<std::u16string> NullableStringArg(const Napi::CallbackInfo& info, size_t index, const char* usage);
GUID GuidArg(const Napi::CallbackInfo& info, size_t index, const char* usage);
// null, undefined and '' are GUID_NULL (HNS picks the id).
GUID NullableGuidArg(const Napi::CallbackInfo& info, size_t index, const char* usage);
// The name of a function of the list whose sim column is `verb` (the addon's calls by name, hcn_calls.h).
Fn ListedFunctionArg(const Napi::CallbackInfo& info, size_t index, FnVerb verb, const char* usage);
// A non-negative integer that fits in `max`.
int64_t IntegerArg(const Napi::CallbackInfo& info, size_t index, int64_t max, const char* usage);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_JS_ARGS_H_
