/**
 * A recorded pod's network, judged by what the pod needs, not by what exists: its endpoint is in HNS, attached as the
 * record says (that HCN namespace, or that sandbox container), and not in a failed state of HNS's own. An endpoint
 * that exists but is not attached — a repair killed between its create and its attach, an attach HNS refused once,
 * an endpoint "stuck created but not attached" (projectcalico/calico issues 12795 and 11203) — leaves the pod without
 * network just as a missing one does. STATUS, repair and the node agent all judge with this one function.
 */
import { sameId, type EndpointInfo, type HnsApi } from '../hns/api';
import type { AttachmentRecord } from '../state/records';
import { isAttached } from './attach';

/** What is wrong with a pod's network; absent when it is healthy. */
export const POD_PROBLEMS = ['endpoint-missing', 'not-attached', 'hns-failed'] as const;
export type PodProblem = (typeof POD_PROBLEMS)[number];

export interface PodVerdict {
  record: AttachmentRecord;
  /** The endpoint as listed (absent when HNS has none by the recorded id). */
  endpoint?: EndpointInfo;
  problem?: PodProblem;
  detail?: string;
}

/**
 * HNS's own endpoint states that mean the endpoint no longer carries traffic: Degraded (5) and Destroyed (6), in
 * microsoft/hcsshim internal/hns/hnsendpoint.go EndpointState. Created (1) and Detached (4) are not judged here: an
 * endpoint in an HCN namespace is shown Created by some builds, so the attach itself is asked instead.
 */
export const FAILED_STATES: ReadonlyMap<number, string> = new Map([
  [5, 'Degraded'],
  [6, 'Destroyed'],
]);

/**
 * Judges every recorded attachment that owns its endpoint (a shared attachment, container:<id>, follows its sandbox
 * and is not judged on its own). `listed`: the endpoints HNS listed just now, so a node of N pods costs one listing
 * plus, only where the listing's view does not show the attach, one question per pod.
 */
export async function judgePods(
  api: HnsApi,
  records: readonly AttachmentRecord[],
  listed: readonly EndpointInfo[],
): Promise<PodVerdict[]> {
  const byId = new Map(listed.map((e) => [e.id.toLowerCase(), e]));
  const verdicts: PodVerdict[] = [];
  for (const record of records) {
    if (record.mode === 'shared') continue;
    verdicts.push(await judgePod(api, record, byId.get(record.endpoint.id.toLowerCase())));
  }
  return verdicts;
}

/** One pod, with its endpoint as HNS shows it now (undefined: HNS has no endpoint by the recorded id). */
export async function judgePod(
  api: HnsApi,
  record: AttachmentRecord,
  endpoint: EndpointInfo | undefined,
): Promise<PodVerdict> {
  if (!endpoint || !sameId(endpoint.id, record.endpoint.id)) {
    return {
      record,
      problem: 'endpoint-missing',
      detail: `endpoint ${record.endpoint.id} is missing from HNS`,
    };
  }
  const failed = endpoint.state !== undefined ? FAILED_STATES.get(endpoint.state) : undefined;
  if (failed) {
    return { record, endpoint, problem: 'hns-failed', detail: `HNS shows endpoint ${endpoint.id} as ${failed}` };
  }
  if (!(await isAttached(api, endpoint, record.attach))) {
    return {
      record,
      endpoint,
      problem: 'not-attached',
      detail: `endpoint ${endpoint.id} is not attached to ${record.attach.kind} ${record.attach.target}`,
    };
  }
  return { record, endpoint };
}

/** Counts by problem ("healthy" for none), every key present: the service's status and metrics show them all. */
export function countByHealth(verdicts: readonly PodVerdict[]): Record<'healthy' | PodProblem, number> {
  const counts = { healthy: 0, 'endpoint-missing': 0, 'not-attached': 0, 'hns-failed': 0 };
  for (const v of verdicts) counts[v.problem ?? 'healthy']++;
  return counts;
}
