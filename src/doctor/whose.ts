/**
 * Who an HNS endpoint belongs to and whether something uses it, from the snapshot alone: the words the checks use
 * to name an object ("ours, pod a/eth0, attached to namespace N" or "a peer's, attached to nothing").
 */
import type { EndpointInfo } from '../hns/api';
import { parseOwnedName } from '../orphans/ownership';
import { ownerKey, type AttachmentRecord } from '../state/records';
import type { DoctorSnapshot } from './snapshot';

/** The attachment records by their endpoint's id (lower case). */
export function recordsByEndpoint(s: DoctorSnapshot): Map<string, AttachmentRecord> {
  const out = new Map<string, AttachmentRecord>();
  for (const r of s.state?.snapshot.attachments ?? []) out.set(r.endpoint.id.toLowerCase(), r);
  return out;
}

/** Whether the endpoint is attached to anything: a namespace (on it, or listing it) or a container. */
export function attachedTo(s: DoctorSnapshot, e: EndpointInfo): string | undefined {
  if (e.namespaceId) return `namespace ${e.namespaceId}`;
  const ns = s.hns?.namespaces.find((n) => n.endpoints.some((id) => id.toLowerCase() === e.id.toLowerCase()));
  if (ns) return `namespace ${ns.id}`;
  if (e.containers?.length) return `container ${e.containers.join(', ')}`;
  return undefined;
}

/** "endpoint NAME (ID)". */
export function endpointSubject(e: Pick<EndpointInfo, 'id' | 'name'>): string {
  return `endpoint ${e.name} (${e.id})`;
}

/** One endpoint as the checks name it: whose it is, what it is attached to, whether a pod of ours uses it. */
export function describeEndpoint(s: DoctorSnapshot, e: EndpointInfo, records: Map<string, AttachmentRecord>): string {
  const record = records.get(e.id.toLowerCase());
  const whose = record
    ? `ours, pod ${ownerKey(record)}`
    : parseOwnedName(e.name)
      ? 'ours, no pod records it'
      : "another plugin's";
  const attached = attachedTo(s, e);
  return `${e.name} (${e.id}; ${whose}; ${attached ? `attached to ${attached}` : 'attached to nothing'})`;
}
