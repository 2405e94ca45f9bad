// vmcompute.dll's compute-system functions that hot attach uses (microsoft/hcsshim internal/vmcompute/vmcompute.go),
// as the simulator client implements them. They live beside HNSCall: the mingw build exports them from the stand-in
// vmcompute.dll, as Windows does.
#include <type_traits>

#include "sim_export.h"
#include "sim_ops.h"

HCNSIM_V1_API HRESULT WINAPI HcsOpenComputeSystem(PCWSTR Id, HCS_SYSTEM* ComputeSystem, PWSTR* Result) {
  return hcnsim::HcsOpen(Id, ComputeSystem, Result);
}
HCNSIM_V1_API HRESULT WINAPI HcsModifyComputeSystem(HCS_SYSTEM ComputeSystem, PCWSTR Configuration, PWSTR* Result) {
  return hcnsim::HcsModify(ComputeSystem, Configuration, Result);
}
HCNSIM_V1_API HRESULT WINAPI HcsCloseComputeSystem(HCS_SYSTEM ComputeSystem) { return hcnsim::HcsClose(ComputeSystem); }
HCNSIM_V1_API HRESULT WINAPI HcsRegisterComputeSystemCallback(HCS_SYSTEM ComputeSystem, void* Callback, void* Context,
                                                              HCS_CALLBACK* CallbackHandle) {
  (void)Callback;
  (void)Context;
  return hcnsim::HcsRegisterCallback(ComputeSystem, CallbackHandle);
}
HCNSIM_V1_API HRESULT WINAPI HcsUnregisterComputeSystemCallback(HCS_CALLBACK CallbackHandle) {
  return hcnsim::HcsUnregisterCallback(CallbackHandle);
}
HCNSIM_V1_API HRESULT WINAPI HcsGetComputeSystemProperties(HCS_SYSTEM ComputeSystem, PCWSTR PropertyQuery,
                                                           PWSTR* Properties, PWSTR* Result) {
  return hcnsim::HcsProperties(ComputeSystem, PropertyQuery, Properties, Result);
}

// HcsOpen/Modify/CloseComputeSystem are in the function list (checked by sim_export.h); these three are not.
static_assert(std::is_same_v<decltype(&HcsRegisterComputeSystemCallback), PFN_HcsRegisterComputeSystemCallback>,
              "differs from hcn_abi.h");
static_assert(std::is_same_v<decltype(&HcsUnregisterComputeSystemCallback), PFN_HcsUnregisterComputeSystemCallback>,
              "differs from hcn_abi.h");
static_assert(std::is_same_v<decltype(&HcsGetComputeSystemProperties), PFN_HcsGetComputeSystemProperties>,
              "differs from hcn_abi.h");
