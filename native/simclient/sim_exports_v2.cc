// computenetwork.dll's functions, as the simulator client implements them. Their signatures are checked against the
// function list by the declarations in sim_export.h.
#include <string_view>

#include "hcn_family.h"
#include "sim_export.h"
#include "sim_ops.h"

namespace {

using hcnsim::Kind;

// The family of an HCN function (hcn_family.h), for the verbs that need one. Evaluated at compile time: a name of
// another family does not compile (its export is written by hand, OWN).
constexpr Kind FamilyOf(std::string_view name) {
  switch (HcnFamilyOf(name)) {
    case HcnFamily::kNetwork:
      return Kind::kNetwork;
    case HcnFamily::kEndpoint:
      return Kind::kEndpoint;
    case HcnFamily::kNamespace:
      return Kind::kNamespace;
    default:
      throw "not a function of the network, endpoint or namespace family: its sim column must be OWN";
  }
}

}  // namespace

// The exports that only forward to a generic verb of sim_ops.cc, one per entry of the list whose sim column names
// that verb. Each verb's parameters are written once, here; the list's declaration of every function (sim_export.h)
// makes an entry whose signature is not its verb's a compile error.
#define HCNSIM_FORWARD_OWN(api, name)
#define HCNSIM_FORWARD_ENUMERATE(api, name)                                   \
  api HRESULT WINAPI name(PCWSTR Query, PWSTR* Objects, PWSTR* ErrorRecord) { \
    return hcnsim::Enumerate(#name, Query, Objects, ErrorRecord);             \
  }
#define HCNSIM_FORWARD_CREATE(api, name)                                                        \
  api HRESULT WINAPI name(HCN_REFGUID Id, PCWSTR Settings, void** Object, PWSTR* ErrorRecord) { \
    constexpr Kind kFamily = FamilyOf(#name);                                                   \
    return hcnsim::Create(#name, kFamily, nullptr, Id, Settings, Object, ErrorRecord);          \
  }
#define HCNSIM_FORWARD_CREATE_IN_NETWORK(api, name)                                                                  \
  api HRESULT WINAPI name(HCN_NETWORK Network, HCN_REFGUID Id, PCWSTR Settings, void** Object, PWSTR* ErrorRecord) { \
    constexpr Kind kFamily = FamilyOf(#name);                                                                        \
    return hcnsim::Create(#name, kFamily, Network, Id, Settings, Object, ErrorRecord);                               \
  }
#define HCNSIM_FORWARD_OPEN(api, name)                                         \
  api HRESULT WINAPI name(HCN_REFGUID Id, void** Object, PWSTR* ErrorRecord) { \
    constexpr Kind kFamily = FamilyOf(#name);                                  \
    return hcnsim::Open(#name, kFamily, Id, Object, ErrorRecord);              \
  }
#define HCNSIM_FORWARD_MODIFY(api, name)                                       \
  api HRESULT WINAPI name(void* Object, PCWSTR Settings, PWSTR* ErrorRecord) { \
    constexpr Kind kFamily = FamilyOf(#name);                                  \
    return hcnsim::Modify(#name, kFamily, Object, Settings, ErrorRecord);      \
  }
#define HCNSIM_FORWARD_QUERY(api, name)                                                        \
  api HRESULT WINAPI name(void* Object, PCWSTR Query, PWSTR* Properties, PWSTR* ErrorRecord) { \
    constexpr Kind kFamily = FamilyOf(#name);                                                  \
    return hcnsim::Query(#name, kFamily, Object, Query, Properties, ErrorRecord);              \
  }
#define HCNSIM_FORWARD_DELETE(api, name)                        \
  api HRESULT WINAPI name(HCN_REFGUID Id, PWSTR* ErrorRecord) { \
    return hcnsim::Delete(#name, Id, ErrorRecord);              \
  }
#define HCNSIM_FORWARD_CLOSE(api, name)       \
  api HRESULT WINAPI name(void* Object) {     \
    constexpr Kind kFamily = FamilyOf(#name); \
    return hcnsim::Close(kFamily, Object);    \
  }
#define HCNSIM_FORWARD(enumerator, name, library, need, sdk, sim, ret, params) \
  HCNSIM_FORWARD_##sim(HCNSIM_API_##library, name)
HCN_FUNCTIONS(HCNSIM_FORWARD)
#undef HCNSIM_FORWARD

// Not an HCN function: the simulated host's adapters, which the addon prefers over asking the OS when present.
HCNSIM_V2_API HRESULT WINAPI HcnSimEnumerateAdapters(PWSTR* Adapters, PWSTR* ErrorRecord) {
  return hcnsim::EnumerateAdapters(Adapters, ErrorRecord);
}
