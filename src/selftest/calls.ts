/**
 * The HNS calls a self-test makes, as data: a method of the HCN facade (src/hns/hcn.ts) and its JSON arguments. The
 * same record is made on the host and replayed on the simulator (replay.ts), so one table says how a recorded call is
 * made, and one function says how an answer is written down: the document as HNS returned it (ids and MACs as they
 * are), or the HRESULT and error record.
 */
import { HcnError } from '../hns/hcn-error';
import { describeHresult, hresultHex, HR } from '../hns/hresults';
import type { Hcn } from '../hns/hcn';

/** The facade methods a self-test calls: nothing else of HNS is reachable from a plan. */
export const CALLS = [
  'hnsCall',
  'listNetworks',
  'getNetwork',
  'createNetwork',
  'deleteNetwork',
  'enumerateEndpoints',
  'getEndpoint',
  'createEndpoint',
  'deleteEndpoint',
  'createNamespace',
  'getNamespace',
  'deleteNamespace',
  'addNamespaceEndpoint',
  'removeNamespaceEndpoint',
  'registerServiceCallback',
  'unregisterServiceCallback',
] as const;
export type CallName = (typeof CALLS)[number];

/** The narrow dependency: those methods of the facade, and what the host offers. */
export type SelftestHns = Pick<Hcn, CallName | 'capabilities' | 'hasServiceNotifications'>;

export interface HnsCallRecord {
  fn: CallName;
  args: unknown[];
}

export type Answer =
  | { ok: true; value: unknown }
  | { ok: false; hresult: number; hex: string; code: string; record: unknown; message: string };

/** Makes a recorded call. The notification registration's callback is the one argument JSON cannot carry. */
export function invoke(hns: SelftestHns, call: HnsCallRecord): Promise<unknown> {
  if (!(CALLS as readonly string[]).includes(call.fn))
    return Promise.reject(new Error(`not a self-test call: ${call.fn}`));
  if (call.fn === 'registerServiceCallback') return hns.registerServiceCallback(() => undefined);
  const method = hns[call.fn] as (...args: unknown[]) => Promise<unknown>;
  return method.apply(hns, call.args);
}

/** The answer as written in the report: what HNS returned, or how it refused. */
export async function answerOf(call: Promise<unknown>): Promise<Answer> {
  try {
    const value = await call;
    return { ok: true, value: value === undefined ? null : value };
  } catch (e) {
    const hresult = e instanceof HcnError ? e.hresult : HR.E_FAIL;
    return {
      ok: false,
      hresult,
      hex: hresultHex(hresult),
      code: describeHresult(hresult).code,
      record: e instanceof HcnError ? e.errorRecord : null,
      message: (e as Error).message,
    };
  }
}
