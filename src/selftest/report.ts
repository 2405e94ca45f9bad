/**
 * The self-test's report: what it asked HNS and what HNS answered, step by step, in a versioned JSON document that
 * `hcn-sim compare` replays. Answers are kept as HNS gave them — ids, MACs and their case unchanged.
 */
import type { Answer, HnsCallRecord } from './calls';
import { CALLS } from './calls';
import type { Expect, NetworkChoice } from './plan';

export const REPORT_SCHEMA = 'hcn-cni-selftest';
export const REPORT_VERSION = 1;

export interface StepRecord {
  name: string;
  why: string;
  /** The call as made: arguments with the objects' values in. */
  call: HnsCallRecord;
  answer: Answer;
  expect: Expect;
  pass: boolean;
  problem?: string;
  /** In an array answer, the id of the element a comparison looks at. */
  focus?: string;
  /** Not made: an earlier step that the rest depends on failed. */
  skipped?: boolean;
}

export interface SelftestReport {
  schema: typeof REPORT_SCHEMA;
  version: typeof REPORT_VERSION;
  startedAt: string;
  finishedAt?: string;
  platform: string;
  host: {
    capabilities: { v1Supported: boolean; v2Supported: boolean; hcsSupported: boolean; optional: string[] };
  };
  /** The network the endpoint was made on; for the configured one, its document as HNS gave it (replays recreate it). */
  network: NetworkChoice & { document?: unknown };
  owner: { containerId: string; ifname: string };
  /** How the endpoint got its address. */
  address: { from: 'ipam' | 'fixed' | 'hns'; ip?: string };
  steps: StepRecord[];
  /** Cleanup calls that found something other than "already gone". */
  cleanupProblems: string[];
  passed: boolean;
}

export class ReportError extends Error {
  override readonly name = 'ReportError';
}

/** A report read back (compare): refused unless it is one this version knows how to replay. */
export function parseReport(text: string, where: string): SelftestReport {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ReportError(`${where} is not JSON: ${(e as Error).message}`);
  }
  const r = doc as Partial<SelftestReport> | null;
  if (!r || typeof r !== 'object' || r.schema !== REPORT_SCHEMA)
    throw new ReportError(`${where} is not a self-test report (schema "${REPORT_SCHEMA}")`);
  if (r.version !== REPORT_VERSION)
    throw new ReportError(
      `${where} is a report of version ${String(r.version)}; this hcn-sim reads version ${REPORT_VERSION}`,
    );
  if (!Array.isArray(r.steps)) throw new ReportError(`${where}: "steps" must be an array`);
  r.steps.forEach((s, i) => {
    const bad = (what: string) => new ReportError(`${where}: step ${i + 1} ${what}`);
    if (!s || typeof s.name !== 'string') throw bad('has no name');
    if (!s.call || !(CALLS as readonly string[]).includes(s.call.fn) || !Array.isArray(s.call.args))
      throw bad(`(${s.name}) has no call this version knows`);
    if (!s.answer || typeof s.answer.ok !== 'boolean') throw bad(`(${s.name}) has no answer`);
    if (!s.answer.ok && typeof s.answer.hresult !== 'number') throw bad(`(${s.name}) has a refusal without an HRESULT`);
  });
  return r as SelftestReport;
}
