/**
 * Which endpoints with the owner's name a DEL without a record leaves alone (del-unrecorded.ts), and why.
 */
import { sameId } from '../../hns/api';
import { ownerKey, type Owner, type PlannedObject } from '../../state/records';
import type { StateStore } from '../../state/store';
import { parseNetns } from '../netns';

/** Who a DEL without a record is for, and what its intent planned (plain data). */
export interface SparingFor {
  readonly owner: Owner;
  /** CNI_NETNS of the DEL; undefined when the caller (GC, the self-test) holds no namespace. */
  readonly netns: string | undefined;
  readonly planned: readonly PlannedObject[];
}

/** Why an endpoint is spared; `othersRecord`: another owner's committed record names it. */
export type Spared = { reason: string; othersRecord?: true } | undefined;

/**
 * A name is evidence, not proof, that an endpoint is this owner's: names of the previous version carry a 48-bit tag
 * two container ids can be made to share, and a DEL may come for a pod that was never added. So an endpoint with
 * the owner's name is spared (the reason is returned) when another owner's committed record names it by id, or when
 * it is attached to a namespace or container this DEL does not hold: a namespace other than CNI_NETNS, a container
 * other than the owner's own (Docker-style pods hot-attach the sandbox's endpoint to the sandbox container, whose id
 * is the owner's). An id the owner's own intent planned is its own, wherever its ADD attached it.
 */
export function sparing(
  store: StateStore,
  plan: SparingFor,
): (ep: { id: string; namespaceId?: string; containers?: string[] }) => Spared {
  const { owner, netns, planned } = plan;
  const self = ownerKey(owner);
  const recordedBy = new Map<string, string>();
  for (const r of store.snapshot().attachments)
    if (ownerKey(r) !== self && r.endpoint.owned) recordedBy.set(r.endpoint.id.toLowerCase(), ownerKey(r));
  let heldNamespace: string | undefined;
  try {
    const t = netns ? parseNetns(netns) : undefined;
    if (t?.kind === 'namespace') heldNamespace = t.namespaceId;
  } catch {
    // An unparsable CNI_NETNS holds no namespace.
  }
  const plannedIds = planned.filter((p) => p.kind === 'endpoint' && p.id).map((p) => p.id!);
  return (ep) => {
    const other = recordedBy.get(ep.id.toLowerCase());
    if (other) return { reason: `the committed attachment ${other} names it`, othersRecord: true };
    if (plannedIds.some((id) => sameId(id, ep.id))) return undefined;
    if (ep.namespaceId && !sameId(ep.namespaceId, heldNamespace)) {
      const held = JSON.stringify(netns ?? '');
      return {
        reason: `it is attached to namespace ${ep.namespaceId}, which this DEL (CNI_NETNS ${held}) does not name`,
      };
    }
    if (ep.containers?.length && !ep.containers.some((c) => c.toLowerCase() === owner.containerId.toLowerCase()))
      return { reason: `it is attached to container ${ep.containers[0]}, not to ${owner.containerId}` };
    return undefined;
  };
}
