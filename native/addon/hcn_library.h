// The HCN functions the addon uses, resolved once from a library loaded at run time (computenetwork.dll and
// vmcompute.dll on Windows, the simulator client elsewhere), with call counters for stats().
#ifndef HCN_CNI_ADDON_HCN_LIBRARY_H_
#define HCN_CNI_ADDON_HCN_LIBRARY_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hcn_abi.h"
#include "hcn_functions.h"

namespace hcn {

// One enumerator per entry of native/include/hcn_functions.h, in its order.
enum class Fn : int {
#define HCN_FN_ENUMERATOR(enumerator, name, library, need, sdk, sim, ret, params) enumerator,
  HCN_FUNCTIONS(HCN_FN_ENUMERATOR)
#undef HCN_FN_ENUMERATOR
  kCount
};
constexpr int kFnCount = static_cast<int>(Fn::kCount);

// The exported name, e.g. "HcnOpenNetwork".
const char* FnName(Fn fn);

// Where a function comes from (the library column of hcn_functions.h).
enum class FnGroup { kHcn, kV1, kHcs, kFree, kSim };
FnGroup GroupOf(Fn fn);
// The need column: an optional function is a capability of its own, never missing.
bool IsOptional(Fn fn);

// The sim column: the generic verb whose signature a function has, or kOwn. A function of a verb of the addon's calls
// by name (hcn_calls.h QueryObject and its siblings) needs no code of its own.
enum class FnVerb { kOwn, kEnumerate, kCreate, kCreateInNetwork, kOpen, kModify, kQuery, kDelete, kClose };
// The column's words as constants (kVerb##sim): DELETE is a macro of <windows.h>, so the words cannot be enumerators.
constexpr FnVerb kVerbOWN = FnVerb::kOwn, kVerbENUMERATE = FnVerb::kEnumerate, kVerbCREATE = FnVerb::kCreate,
                 kVerbCREATE_IN_NETWORK = FnVerb::kCreateInNetwork, kVerbOPEN = FnVerb::kOpen,
                 kVerbMODIFY = FnVerb::kModify, kVerbQUERY = FnVerb::kQuery, kVerbDELETE = FnVerb::kDelete,
                 kVerbCLOSE = FnVerb::kClose;
inline constexpr FnVerb kFnVerbs[kFnCount] = {
#define HCN_FN_VERB(enumerator, name, library, need, sdk, sim, ret, params) kVerb##sim,
    HCN_FUNCTIONS(HCN_FN_VERB)
#undef HCN_FN_VERB
};
constexpr FnVerb VerbOf(Fn fn) { return kFnVerbs[static_cast<int>(fn)]; }

// The entry with this exported name, if the list has one.
std::optional<Fn> FnNamed(const std::string& name);

// What a platform loader (hcn_library_posix.cc / hcn_library_win.cc) found.
struct LoadedLibraries {
  void* symbols[kFnCount] = {};
  bool hcn_loaded = false;  // the library of the Hcn* functions (and, off Windows, of everything)
  bool v1_loaded = false;   // the library of HNSCall and the HCS functions (vmcompute.dll)
  std::optional<std::string> hcn_library;
  std::optional<std::string> v1_library;
  std::optional<std::string> load_error;
};
LoadedLibraries LoadLibraries(const std::optional<std::string>& library_path);

struct Capabilities {
  bool v2_supported = false;
  bool v1_supported = false;
  bool hcs_supported = false;  // HcsOpen/Modify/CloseComputeSystem: Docker-style hot attach
  std::optional<std::string> hcn_library;
  std::optional<std::string> v1_library;
  std::vector<std::string> missing;   // required functions the host lacks
  std::vector<std::string> optional;  // optional functions the host has
  const char* adapter_source = "none";
  std::optional<std::string> load_error;
};

class Library {
 public:
  static Library& Instance();

  // Loads on the first call; every later call returns the first call's answer, whatever its argument, because
  // a loaded library cannot be swapped under calls that may be running.
  Capabilities Init(const std::optional<std::string>& library_path);
  Capabilities GetCapabilities() const;

  bool Has(Fn fn) const;
  // HRESULT to report when `fn` is missing (ERROR_MOD_NOT_FOUND: its library is not loaded;
  // ERROR_PROC_NOT_FOUND: the library lacks it), S_OK when it is there.
  HRESULT MissingCode(Fn fn) const;

  // The function `fn` as a callable that counts each invocation for stats(); empty (false) when missing.
  template <typename Pfn>
  class Counted {
   public:
    Counted(Pfn fn, std::atomic<uint64_t>* counter) : fn_(fn), counter_(counter) {}
    explicit operator bool() const { return fn_ != nullptr; }
    template <typename... Args>
    auto operator()(Args... args) const {
      counter_->fetch_add(1, std::memory_order_relaxed);
      return fn_(args...);
    }

   private:
    Pfn fn_;
    std::atomic<uint64_t>* counter_;
  };
  template <typename Pfn>
  Counted<Pfn> Get(Fn fn) {
    const int i = static_cast<int>(fn);
    return Counted<Pfn>(Has(fn) ? reinterpret_cast<Pfn>(loaded_.symbols[i]) : nullptr, &calls_[i]);
  }

  // Frees a string the library returned, with the library's free function (counted).
  void Free(void* text);

  // Calls per resolved function, CoTaskMemFree excluded (that is FreeCount()).
  std::vector<std::pair<std::string, uint64_t>> CallCounts() const;
  uint64_t FreeCount() const;

 private:
  Library() = default;
  const LoadedLibraries* Loaded() const;

  std::mutex init_mutex_;  // worker_threads may each load the addon and call init()
  std::atomic<bool> initialized_{false};
  LoadedLibraries loaded_;
  std::atomic<uint64_t> calls_[kFnCount] = {};
};

}  // namespace hcn

#endif  // HCN_CNI_ADDON_HCN_LIBRARY_H_
