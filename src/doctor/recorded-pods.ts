/**
 * Our pods as the pod checks see them: the records that own their endpoint (a shared attachment, container:<id>,
 * follows its sandbox), each with its endpoint as HNS lists it; and whether the pod's sandbox is still on the node
 * (check-pods-gone.ts says why that is the namespace, or the compute system). A pod whose sandbox is gone is judged
 * there only: asking it to be attached or to match its record would report one gone pod three times.
 */
import { sameId, type EndpointInfo } from '../hns/api';
import type { AttachmentRecord } from '../state/records';
import type { DoctorSnapshot } from './snapshot';

export interface RecordedPod {
  record: AttachmentRecord;
  endpoint?: EndpointInfo;
}

export function recordedPods(s: DoctorSnapshot): RecordedPod[] {
  const byId = new Map((s.hns?.endpoints ?? []).map((e) => [e.id.toLowerCase(), e]));
  return (s.state?.snapshot.attachments ?? [])
    .filter((r) => r.mode !== 'shared')
    .map((record) => {
      const endpoint = byId.get(record.endpoint.id.toLowerCase());
      return endpoint ? { record, endpoint } : { record };
    });
}

/** What shows the pod's sandbox gone ("namespace N", "container C"), or undefined while it is there or unknown. */
export function sandboxGone(s: DoctorSnapshot, r: AttachmentRecord): string | undefined {
  const hns = s.hns;
  if (!hns) return undefined;
  const { kind, target } = r.attach;
  if (kind === 'namespace') return hns.namespaces.some((n) => sameId(n.id, target)) ? undefined : `namespace ${target}`;
  if (kind === 'container')
    return hns.computeSystems?.[target.toLowerCase()] === false ? `container ${target}` : undefined;
  return undefined;
}

/** The recorded pods whose sandbox is still there (or cannot be told gone). */
export function livePods(s: DoctorSnapshot): RecordedPod[] {
  return recordedPods(s).filter((p) => !sandboxGone(s, p.record));
}
