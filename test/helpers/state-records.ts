/** Minimal valid state records for the store's unit tests: one owner, one planned endpoint. */
import type { AttachmentRecord, IntentRecord, Owner, PlannedObject } from '../../src/state/records';

export const OWNER: Owner = { containerId: 'c1', ifname: 'eth0' };

/** An intent of this process (so live) for OWNER (or `owner`), planning endpoint `endpointId` (or `planned`). */
export function intentRecord(
  id: string,
  o: { createdAt?: number; deadline?: number; endpointId?: string; owner?: Owner; planned?: PlannedObject[] } = {},
): IntentRecord {
  return {
    kind: 'intent',
    schema: 1,
    id,
    ...(o.owner ?? OWNER),
    planned: o.planned ?? [{ kind: 'endpoint', name: 'ep', id: o.endpointId ?? 'e1' }],
    pid: process.pid,
    pidStartTime: null,
    createdAt: o.createdAt ?? 1,
    deadline: o.deadline ?? 1e15,
  };
}

/** OWNER's committed bridge-mode attachment to endpoint `endpointId`. */
export function attachmentRecord(o: { createdAt?: number; endpointId?: string } = {}): AttachmentRecord {
  return {
    kind: 'attachment',
    schema: 1,
    ...OWNER,
    netns: 'ns',
    mode: 'bridge',
    apiVersion: 2,
    network: { id: 'n', name: 'n', owned: false },
    endpoint: { id: o.endpointId ?? 'e1', name: 'ep', owned: true },
    ipamAllocated: false,
    attach: { kind: 'none', target: '' },
    result: {},
    createdAt: o.createdAt ?? 2,
  };
}
