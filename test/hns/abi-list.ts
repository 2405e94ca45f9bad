/**
 * The stand-in ABI's expected export list: every function mingw-w64's computenetwork.h declares (parsed from the
 * header itself) plus the extras below. Shared by test/hns/abi-exports.test.ts (libhcnsim.so) and
 * test/windows/abi-exports.test.ts (computenetwork.dll, vmcompute.dll).
 */
import * as fs from 'fs';

import { HCN_FUNCTION_TABLE, functionsIn } from '../helpers/hcn-functions';

export const HEADER =
  ['/usr/share/mingw-w64/include/computenetwork.h', '/usr/x86_64-w64-mingw32/include/computenetwork.h'].find((p) =>
    fs.existsSync(p),
  ) ?? '/usr/share/mingw-w64/include/computenetwork.h';

/** `HRESULT WINAPI HcnXxx (…);` and `VOID WINAPI HcnXxx (…);` declarations. */
export function headerFunctions(): string[] {
  const text = fs.readFileSync(HEADER, 'utf8');
  return [...text.matchAll(/^\s*(?:HRESULT|VOID|void)\s+WINAPI\s+(Hcn\w+)\s*\(/gm)].map((m) => m[1]!).sort();
}

/**
 * computenetwork.dll exports the SDN-route functions without declaring them in the header (mingw-w64's
 * libcomputenetwork.a has them; microsoft/hcsshim hcn/zsyscall_windows.go calls them), and the functions of the addon's
 * list (native/include/hcn_functions.h) it takes from computenetwork.dll that no header declares (sdk NO_SDK: the
 * simulator's HcnSimEnumerateAdapters).
 */
export const COMPUTENETWORK_EXTRAS = [
  'HcnEnumerateSdnRoutes',
  'HcnCreateSdnRoute',
  'HcnOpenSdnRoute',
  'HcnModifySdnRoute',
  'HcnQuerySdnRouteProperties',
  'HcnDeleteSdnRoute',
  'HcnCloseSdnRoute',
  ...HCN_FUNCTION_TABLE.filter((f) => (f.group === 'HCN' || f.group === 'SIM') && !f.sdk).map((f) => f.name),
];

/**
 * vmcompute.dll: the addon's list's HNSCall (HNS v1) and HCS functions (libraries V1 and HCS), and the rest of what
 * hcsshim calls to open, read and close a compute system (microsoft/hcsshim internal/hcs/system.go
 * OpenComputeSystem, Properties, CloseCtx; declared in internal/vmcompute/vmcompute.go).
 */
export const VMCOMPUTE_EXPORTS = [
  ...functionsIn('V1', 'HCS'),
  'HcsRegisterComputeSystemCallback',
  'HcsGetComputeSystemProperties',
  'HcsUnregisterComputeSystemCallback',
];

/** Everything libhcnsim.so exports beyond the header (it holds both DLLs' functions). */
export const ABI_EXTRAS = [...COMPUTENETWORK_EXTRAS, ...VMCOMPUTE_EXPORTS];
