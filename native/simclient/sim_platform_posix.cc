#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "sim_export.h"
#include "sim_platform.h"

namespace hcnsim {

uint32_t UnixPid() { return static_cast<uint32_t>(getpid()); }

uint32_t WindowsPid() { return 0; }

// Read on every call rather than once: a long-lived host (the test suite, the benchmark) may point the client at
// another simulator between calls. Changing it while calls are in flight is not supported.
std::optional<std::string> AddressFromEnvironment() {
  const char* value = std::getenv("HCN_SIM");
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

hcn_wchar* AllocWide(std::u16string_view text) {
  auto* out = static_cast<hcn_wchar*>(std::malloc((text.size() + 1) * sizeof(hcn_wchar)));
  if (out == nullptr) return nullptr;
  std::memcpy(out, text.data(), text.size() * sizeof(hcn_wchar));
  out[text.size()] = 0;
  return out;
}

void FreeWide(hcn_wchar* text) { std::free(text); }

}  // namespace hcnsim

// The free function that goes with AllocWide. On Windows the strings come from CoTaskMemAlloc and ole32's
// CoTaskMemFree frees them, so only this build exports one.
extern "C" HCNSIM_VISIBLE void CoTaskMemFree(void* memory) { std::free(memory); }

static_assert(std::is_same_v<decltype(&CoTaskMemFree), PFN_CoTaskMemFree>, "CoTaskMemFree differs from hcn_abi.h");
