/** The op protocol's request and response lines (docs/sim-protocol.md). */

export interface OpRequest {
  v?: number;
  /** The caller's Unix pid: the process a kill-client fault SIGKILLs. */
  pid?: number;
  winpid?: number;
  op: string;
  id?: string | null;
  network?: string | null;
  settings?: string | null;
  query?: string | null;
  method?: string | null;
  path?: string | null;
  request?: string | null;
  /** A call on an HCN handle: the service instance that opened it (stale-handles.ts). */
  boot?: string | number | null;
}

export interface OpResponse {
  /** Unsigned HRESULT. */
  hr: number;
  result: string | null;
  errorRecord: string | null;
  /** The service instance that answered: what a handle opened by this call belongs to (stale-handles.ts). */
  boot?: number;
}

export type ControlResponse = { ok: true; result?: unknown } | { ok: false; error: string };
