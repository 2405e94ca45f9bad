/**
 * Turns what the layers below throw into CNI errors: HNS unreachable or timed out → 11 (the runtime retries), an
 * API the host does not implement (E_NOTIMPL) → 107, any other HCN failure → 100 with op, HRESULT and error record
 * in details, an untranslatable policy → 7, a state lock that cannot be had → 11, file-system trouble in the state
 * directory → 5.
 */
import { CniCode, CniError } from '../cni/cni-error';
import { isHcnError, isUnreachable, type HcnError } from '../hns/hcn-error';
import { HR, hresultHex } from '../hns/hresults';
import { PolicyError } from '../hns/policies';
import { StateIoError } from '../state/io-error';
import { StateLockTimeoutError } from '../state/lock';
import { ConcurrentAddError } from '../state/store';

export function hnsDetails(e: HcnError): string {
  return JSON.stringify({ op: e.op, hresult: hresultHex(e.hresult), code: e.code, errorRecord: e.errorRecord });
}

export function toCniError(e: unknown, doing: string): CniError {
  if (e instanceof CniError) return e;
  if (isHcnError(e)) {
    if (isUnreachable(e))
      return new CniError(CniCode.TRY_AGAIN_LATER, `HNS did not answer while ${doing}: ${e.message}`, hnsDetails(e), {
        cause: e,
      });
    // HNS answers E_NOTIMPL for a whole API it does not have (HCN on a host without it, e.g. apiVersion 2 forced on
    // an older Windows): that is the host lacking the configured API, not an HNS failure.
    if (e.hresult === HR.E_NOTIMPL) {
      const which = e.op.startsWith('HNSCall') ? 'the HNS v1 API (HNSCall)' : 'the HCN (v2) API';
      return new CniError(
        CniCode.API_UNAVAILABLE,
        `${which} is not available on this host: ${e.op} answered E_NOTIMPL while ${doing}; check "apiVersion" ("auto" picks what the host has)`,
        hnsDetails(e),
        { cause: e },
      );
    }
    return new CniError(CniCode.HNS_FAILURE, `${doing}: ${e.message}`, hnsDetails(e), { cause: e });
  }
  if (e instanceof PolicyError)
    return new CniError(CniCode.INVALID_NETWORK_CONFIG, `invalid network configuration: ${e.message}`, '', {
      cause: e,
    });
  if (e instanceof StateLockTimeoutError) return new CniError(CniCode.TRY_AGAIN_LATER, e.message, '', { cause: e });
  if (e instanceof ConcurrentAddError) {
    return new CniError(
      CniCode.TRY_AGAIN_LATER,
      `${e.message}; this ADD changed nothing — try again when that one has finished`,
      '',
      { cause: e },
    );
  }
  if (e instanceof StateIoError)
    return new CniError(CniCode.IO_FAILURE, `I/O failure in the state directory while ${doing}: ${e.message}`, '', {
      cause: e,
    });
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    return new CniError(CniCode.IO_FAILURE, `I/O failure while ${doing}: ${(e as Error).message}`, '', { cause: e });
  }
  return new CniError(CniCode.INTERNAL, `unexpected failure while ${doing}`, String((e as Error)?.stack ?? e), {
    cause: e,
  });
}

/**
 * The last line of a verb: a state-directory or file-system failure that no step converted is still error 5 naming
 * the path (never 999 with a stack trace); anything else passes through to the dispatcher unchanged.
 */
export async function verbGuard<T>(verb: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof CniError) throw e;
    const code = (e as NodeJS.ErrnoException | undefined)?.code;
    if (
      e instanceof StateIoError ||
      e instanceof ConcurrentAddError ||
      (typeof code === 'string' && /^E[A-Z]+$/.test(code))
    ) {
      throw toCniError(e, verb);
    }
    throw e;
  }
}

/** Runs one step and converts its failure, naming the step. */
export async function step<T>(doing: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    throw toCniError(e, doing);
  }
}
