/**
 * HCN handles that outlive the HNS service instance that opened them. An HCN handle stands for an object held open in
 * HNS's service (computenetwork.dll calls into it over RPC); a restarted service has none of the old instance's open
 * objects, so a call on a handle from before the restart is refused as an RPC context handle a server does not know:
 * RPC_X_SS_CONTEXT_MISMATCH, which is ERROR_INVALID_HANDLE (mingw-w64/mingw-w64 mingw-w64-headers/include/rpcnterr.h),
 * E_HANDLE as an HRESULT. That HCN's handles are RPC context handles is our assumption (no public source says how
 * they are made); hcsshim never keeps one across calls (microsoft/hcsshim hcn/hcnendpoint.go opens, acts and closes).
 *
 * The simulator's client library keeps the service instance (`boot`) an Open or Create answered with in the handle
 * and sends it with every call made on that handle (native/simclient/sim_ops.cc); the engine answers a call whose
 * instance is not the current one with E_HANDLE.
 */
import { HR } from '../hns/hresults';
import type { OpRequest } from './wire-types';

/** E_HANDLE when the request names a handle of an earlier service instance, else undefined. */
export function staleHandle(req: OpRequest, boot: number): number | undefined {
  // The client library sends it as text (a request field is a string or null).
  if (req.boot === undefined || req.boot === null) return undefined;
  return Number(req.boot) !== boot ? HR.E_HANDLE : undefined;
}
