import { describeHresult, hresultHex, HR, toUnsigned } from './hresults';

/** The HNS error record: `{"Success":false,"Error":"<text> ","ErrorCode":<HRESULT, unsigned decimal>}`. */
export interface ErrorRecord {
  Success?: boolean;
  Error?: string;
  ErrorCode?: number;
  [extra: string]: unknown;
}

function parseRecord(text: string | null): ErrorRecord | null {
  if (!text) return null;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as ErrorRecord) : { Error: text };
  } catch {
    return { Error: text };
  }
}

/**
 * A failed HCN or HNS call. The addon constructs it (registered through setErrorClass) as
 * `new HcnError(op, hresult, errorRecordText)`; the facade constructs it for v1 envelopes and timeouts.
 */
export class HcnError extends Error {
  override readonly name = 'HcnError';
  /** The C function (HcnCreateNetwork) or v1 call (HNSCall POST /networks). */
  readonly op: string;
  /** Unsigned HRESULT. */
  readonly hresult: number;
  /** Symbolic name: HCN_E_ADAPTER_NOT_FOUND, RPC_S_CALL_FAILED_DNE, … */
  readonly code: string;
  readonly errorRecord: ErrorRecord | null;

  constructor(op: string, hresult: number, errorRecord: string | null, detail?: string) {
    const record = parseRecord(errorRecord);
    // hcsshim's rule: S_OK with a non-empty record is a failure; take the record's code, else E_FAIL.
    let hr = toUnsigned(hresult);
    if (hr === 0)
      hr = typeof record?.ErrorCode === 'number' && record.ErrorCode !== 0 ? toUnsigned(record.ErrorCode) : HR.E_FAIL;
    const info = describeHresult(hr);
    // HCS result documents carry the code in Error and the text in ErrorMessage (hcsshim internal/hcs/errors.go).
    const text =
      (typeof record?.Error === 'string' ? record.Error.trim() : '') ||
      (typeof record?.ErrorMessage === 'string' ? record.ErrorMessage.trim() : '') ||
      info.message;
    super(`${op} failed: ${text} (${hresultHex(hr)} ${info.code})${detail ? `: ${detail}` : ''}`);
    this.op = op;
    this.hresult = hr;
    this.code = info.code;
    this.errorRecord = record;
  }
}

const NOT_FOUND = new Set<number>([HR.NETWORK_NOT_FOUND, HR.ENDPOINT_NOT_FOUND, HR.ERROR_NOT_FOUND, HR.PORT_NOT_FOUND]);
/** The HRESULTs isNotFound accepts, for checks written as data (the self-test's expectations). */
export const NOT_FOUND_HRESULTS: readonly number[] = [...NOT_FOUND];
const UNREACHABLE = new Set<number>([
  HR.RPC_S_SERVER_UNAVAILABLE,
  HR.RPC_S_CALL_FAILED,
  HR.RPC_S_CALL_FAILED_DNE,
  HR.EPT_S_NOT_REGISTERED,
  HR.RPC_E_DISCONNECTED,
  HR.MANAGER_STOPPED,
  HR.ERROR_TIMEOUT,
]);

export function isHcnError(e: unknown): e is HcnError {
  return e instanceof HcnError;
}

/** The object is gone (network, endpoint, namespace or port not found). */
export function isNotFound(e: unknown): boolean {
  return isHcnError(e) && NOT_FOUND.has(e.hresult);
}

/**
 * The HcnError behind a failure: the error itself, or the first of its causes that is one (a step's CniError carries
 * HNS's error as its `cause`). The one place that unwraps causes, so every caller reads a wrapped HNS error alike.
 */
export function hcnCause(e: unknown): HcnError | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 10; cur = (cur as { cause?: unknown }).cause, depth++) {
    if (cur instanceof HcnError) return cur;
  }
  return undefined;
}

/**
 * Awaits a read whose failure the caller can live with: HNS unreachable still throws (the caller answers 11, or stops
 * to try later), any other failure answers `otherwise(error)` — a listing that fails cannot confirm an absence, say.
 */
export async function unlessRefused<T>(p: Promise<T>, otherwise: (e: unknown) => T): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (isUnreachable(e)) throw e;
    return otherwise(e);
  }
}

/** An HRESULT that says HNS did not answer (down, restarting, or past the timeout), not that it refused. */
export function isUnreachableHresult(hresult: number): boolean {
  return UNREACHABLE.has(hresult);
}

export function isUnreachable(e: unknown): boolean {
  return isHcnError(e) && unreachableHresult(e.hresult);
}

/** The same by HRESULT alone (what a call observer is told). */
export function unreachableHresult(hresult: number | undefined): boolean {
  return hresult !== undefined && UNREACHABLE.has(hresult);
}

export function isTimeout(e: unknown): boolean {
  return isHcnError(e) && e.hresult === HR.ERROR_TIMEOUT;
}

export function isAlreadyExists(e: unknown): boolean {
  return isHcnError(e) && (e.hresult === HR.NETWORK_ALREADY_EXISTS || e.hresult === HR.ERROR_ALREADY_EXISTS);
}

/** 0x803B0006: HNS's answer both for an unknown adapter and for one already bound to another network. */
export function isAdapterUnavailable(e: unknown): boolean {
  return isHcnError(e) && e.hresult === HR.ADAPTER_NOT_FOUND;
}

export function hasCode(e: unknown, hresult: number): boolean {
  return isHcnError(e) && e.hresult === toUnsigned(hresult);
}

/**
 * The compute system (container) does not exist: hcsshim's IsNotExist (internal/hcs/errors.go) is
 * ErrComputeSystemDoesNotExist (0xc037010e) or ErrElementNotFound (0x490).
 */
export function isComputeSystemMissing(e: unknown): boolean {
  return (
    isHcnError(e) &&
    e.op.startsWith('Hcs') &&
    (e.hresult === HR.HCS_SYSTEM_NOT_FOUND || e.hresult === HR.ERROR_NOT_FOUND)
  );
}
