#include "hcn_library.h"

#include "adapters.h"
#include "hresults.h"

namespace hcn {
namespace {

constexpr const char* kNames[kFnCount] = {
#define HCN_FN_NAME(enumerator, name, library, need, sdk, sim, ret, params) #name,
    HCN_FUNCTIONS(HCN_FN_NAME)
#undef HCN_FN_NAME
};

constexpr FnGroup kHCN = FnGroup::kHcn, kV1 = FnGroup::kV1, kHCS = FnGroup::kHcs, kFREE = FnGroup::kFree,
                  kSIM = FnGroup::kSim;
constexpr FnGroup kGroups[kFnCount] = {
#define HCN_FN_LIBRARY(enumerator, name, library, need, sdk, sim, ret, params) k##library,
    HCN_FUNCTIONS(HCN_FN_LIBRARY)
#undef HCN_FN_LIBRARY
};

constexpr bool kREQUIRED = false, kOPTIONAL = true;
constexpr bool kOptional[kFnCount] = {
#define HCN_FN_NEED(enumerator, name, library, need, sdk, sim, ret, params) k##need,
    HCN_FUNCTIONS(HCN_FN_NEED)
#undef HCN_FN_NEED
};

}  // namespace

const char* FnName(Fn fn) { return kNames[static_cast<int>(fn)]; }

FnGroup GroupOf(Fn fn) { return kGroups[static_cast<int>(fn)]; }

bool IsOptional(Fn fn) { return kOptional[static_cast<int>(fn)]; }

std::optional<Fn> FnNamed(const std::string& name) {
  for (int i = 0; i < kFnCount; ++i) {
    if (name == kNames[i]) return static_cast<Fn>(i);
  }
  return std::nullopt;
}

Library& Library::Instance() {
  static Library library;
  return library;
}

const LoadedLibraries* Library::Loaded() const {
  return initialized_.load(std::memory_order_acquire) ? &loaded_ : nullptr;
}

Capabilities Library::Init(const std::optional<std::string>& library_path) {
  std::lock_guard<std::mutex> lock(init_mutex_);
  if (!initialized_.load(std::memory_order_acquire)) {
    loaded_ = LoadLibraries(library_path);
    initialized_.store(true, std::memory_order_release);
  }
  return GetCapabilities();
}

Capabilities Library::GetCapabilities() const {
  Capabilities caps;
  const LoadedLibraries* loaded = Loaded();
  caps.v2_supported = caps.v1_supported = caps.hcs_supported = Has(Fn::kCoTaskMemFree);
  for (int i = 0; i < kFnCount; ++i) {
    const Fn fn = static_cast<Fn>(i);
    if (IsOptional(fn)) {
      // A capability of its own: it makes no library's capability, and its absence is not missing.
      if (Has(fn)) caps.optional.push_back(FnName(fn));
      continue;
    }
    if (!Has(fn)) caps.missing.push_back(FnName(fn));
    const FnGroup group = GroupOf(fn);
    if (group == FnGroup::kHcn) caps.v2_supported = caps.v2_supported && Has(fn);
    if (group == FnGroup::kV1) caps.v1_supported = caps.v1_supported && Has(fn);
    if (group == FnGroup::kHcs) caps.hcs_supported = caps.hcs_supported && Has(fn);
  }
  caps.adapter_source = Has(Fn::kSimEnumerateAdapters) ? "library" : OsAdaptersAvailable() ? "os" : "none";
  if (loaded == nullptr) {
    caps.load_error = "init() has not been called";
    return caps;
  }
  caps.hcn_library = loaded->hcn_library;
  caps.v1_library = loaded->v1_library;
  caps.load_error = loaded->load_error;
  return caps;
}

bool Library::Has(Fn fn) const {
  const LoadedLibraries* loaded = Loaded();
  return loaded != nullptr && loaded->symbols[static_cast<int>(fn)] != nullptr;
}

HRESULT Library::MissingCode(Fn fn) const {
  const LoadedLibraries* loaded = Loaded();
  if (loaded == nullptr) return kModNotFound;
  if (loaded->symbols[static_cast<int>(fn)] != nullptr) return kOk;
  const FnGroup group = GroupOf(fn);
  const bool module_loaded = group == FnGroup::kV1 || group == FnGroup::kHcs ? loaded->v1_loaded : loaded->hcn_loaded;
  return module_loaded ? kProcNotFound : kModNotFound;
}

void Library::Free(void* text) {
  if (text == nullptr) return;
  // Every call checks for the free function before it runs, so this cannot come up empty in practice.
  if (auto free_fn = Get<PFN_CoTaskMemFree>(Fn::kCoTaskMemFree)) free_fn(text);
}

std::vector<std::pair<std::string, uint64_t>> Library::CallCounts() const {
  std::vector<std::pair<std::string, uint64_t>> counts;
  for (int i = 0; i < kFnCount; ++i) {
    const Fn fn = static_cast<Fn>(i);
    if (fn == Fn::kCoTaskMemFree || !Has(fn)) continue;
    counts.emplace_back(FnName(fn), calls_[i].load(std::memory_order_relaxed));
  }
  return counts;
}

uint64_t Library::FreeCount() const {
  return calls_[static_cast<int>(Fn::kCoTaskMemFree)].load(std::memory_order_relaxed);
}

}  // namespace hcn
