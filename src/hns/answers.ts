/** How HNS's answers read, the same for both APIs: "not found" as undefined or as an outcome, ids in any case. */
import type { DeleteOutcome } from './api-types';
import { hasCode, isNotFound } from './hcn-error';
import { HR } from './hresults';

export function sameId(a: string | undefined, b: string | undefined): boolean {
  return !!a && !!b && a.toLowerCase() === b.toLowerCase();
}

export async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/**
 * A detach that finds the endpoint no longer attached has nothing left to do, like one whose endpoint or namespace
 * is gone: another verb detached it first (a GC's audit racing the same pod's DEL). HNS answers that with
 * HCN_E_ENDPOINT_NOT_ATTACHED (MicrosoftDocs/Virtualization-Documentation virtualization/api/hcn/Reference/HCNHResult.md).
 */
export async function detachOutcome(p: Promise<unknown>): Promise<DeleteOutcome> {
  try {
    return await outcome(p);
  } catch (e) {
    if (hasCode(e, HR.ENDPOINT_NOT_ATTACHED)) return 'not-found';
    throw e;
  }
}

export async function outcome(p: Promise<unknown>): Promise<DeleteOutcome> {
  try {
    await p;
    return 'deleted';
  } catch (e) {
    if (isNotFound(e)) return 'not-found';
    throw e;
  }
}
