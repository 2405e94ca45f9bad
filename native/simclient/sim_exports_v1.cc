// vmcompute.dll's HNSCall (HNS v1), as the simulator client implements it.
#include "sim_export.h"
#include "sim_ops.h"

HCNSIM_V1_API HRESULT WINAPI HNSCall(PCWSTR Method, PCWSTR Path, PCWSTR Request, PWSTR* Response) {
  return hcnsim::HnsCall(Method, Path, Request, Response);
}
