#include <windows.h>
#include <objbase.h>
#include <computenetwork.h>

#include <type_traits>

#include "hcn_library.h"
#include "utf.h"

// Our pointer types must be exactly the SDK's declarations, or a call through them is undefined behaviour that
// no test on Linux would catch. Every function of the list says which applies (its sdk column): SDK is checked
// here; NO_SDK has no public declaration to check against (test/native/function-list.test.ts keeps that true).
#define HCN_SDK_CHECK_SDK(name) \
  static_assert(std::is_same_v<PFN_##name, decltype(&::name)>, #name " differs from the SDK's declaration");
#define HCN_SDK_CHECK_NO_SDK(name)
#define HCN_SDK_CHECK(enumerator, name, library, need, sdk, sim, ret, params) HCN_SDK_CHECK_##sdk(name)
HCN_FUNCTIONS(HCN_SDK_CHECK)
#undef HCN_SDK_CHECK
#undef HCN_SDK_CHECK_NO_SDK
#undef HCN_SDK_CHECK_SDK

namespace hcn {
namespace {

std::string ErrorText(DWORD error) {
  wchar_t* text = nullptr;
  const DWORD length = FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, error, 0,
      reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string message = length != 0 ? Utf16ToUtf8(View(text)) : "Win32 error";
  LocalFree(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' || message.back() == ' ')) {
    message.pop_back();
  }
  return message + " (" + std::to_string(error) + ")";
}

std::string ModulePath(HMODULE module) {
  wchar_t path[MAX_PATH + 1] = {};
  const DWORD length = GetModuleFileNameW(module, path, MAX_PATH);
  return Utf16ToUtf8(std::u16string_view(reinterpret_cast<const char16_t*>(path), length));
}

// System32 only: a DLL that happens to sit next to the executable or in the working directory must never be
// mistaken for HNS (DLL planting).
HMODULE LoadSystemLibrary(const wchar_t* name, std::optional<std::string>* error) {
  HMODULE module = LoadLibraryExW(name, nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (module == nullptr) {
    const std::string text = Utf16ToUtf8(View(name)) + ": " + ErrorText(GetLastError());
    *error = *error ? **error + "; " + text : text;
  }
  return module;
}

}  // namespace

// Never freed: function pointers from these modules may be in use on worker threads until the process exits.
LoadedLibraries LoadLibraries(const std::optional<std::string>&) {
  LoadedLibraries loaded;
  if (HMODULE hcn = LoadSystemLibrary(L"computenetwork.dll", &loaded.load_error)) {
    loaded.hcn_loaded = true;
    loaded.hcn_library = ModulePath(hcn);
    for (int i = 0; i < kFnCount; ++i) {
      const Fn fn = static_cast<Fn>(i);
      const FnGroup group = GroupOf(fn);
      if (group != FnGroup::kHcn && group != FnGroup::kSim) continue;
      loaded.symbols[i] = reinterpret_cast<void*>(GetProcAddress(hcn, FnName(fn)));
    }
  }
  if (HMODULE v1 = LoadSystemLibrary(L"vmcompute.dll", &loaded.load_error)) {
    loaded.v1_loaded = true;
    // HNSCall and the HCS compute-system functions; each may be missing on its own (a capability, not a crash).
    for (int i = 0; i < kFnCount; ++i) {
      const Fn fn = static_cast<Fn>(i);
      const FnGroup group = GroupOf(fn);
      if (group != FnGroup::kV1 && group != FnGroup::kHcs) continue;
      loaded.symbols[i] = reinterpret_cast<void*>(GetProcAddress(v1, FnName(fn)));
    }
    if (loaded.symbols[static_cast<int>(Fn::kHnsCall)] != nullptr) loaded.v1_library = ModulePath(v1);
  }
  loaded.symbols[static_cast<int>(Fn::kCoTaskMemFree)] = reinterpret_cast<void*>(&::CoTaskMemFree);
  return loaded;
}

}  // namespace hcn
