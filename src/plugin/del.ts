/**
 * DEL is best effort and idempotent, and it exits 0 unless HNS cannot be reached (then 11, so the runtime retries).
 *  - With a record: detach, delete the endpoint (and the NIC network in delegated mode), release IPAM, drop the
 *    record. If HNS refuses a delete, the record is replaced by a tombstone so the audit finishes the job.
 *  - Without a record (the ADD never committed: killed, timed out, or never ran): tombstone the owner, which voids
 *    any intent, then delete what HNS shows under the owner's names and the ids the intent planned. The tombstone
 *    stays, so an object HNS completes after this DEL (seed 000) is an orphan to the next audit.
 *  - A shared attachment (container:<id>) only drops its record: the endpoint is the sandbox's.
 */
import type { VerbContext } from '../cni/types';
import { sameId, type HnsApi } from '../hns/api';
import { isNotFound, isUnreachable } from '../hns/errors';
import type { Logger } from '../log/logger';
import { endpointName, parseOwnedName } from '../orphans/ownership';
import { sameOwner, type AttachmentRecord, type Owner, type PlannedObject } from '../state/records';
import type { StateStore } from '../state/store';
import { detach } from './attach';
import { step, toCniError } from './errors';
import type { PluginRuntime } from './runtime';

export async function del(ctx: VerbContext, rt: PluginRuntime): Promise<void> {
  const { conf, attachment, log } = ctx;
  const owner: Owner = { containerId: attachment.containerId, ifname: attachment.ifname };
  const store = rt.store(conf, log);
  const rec = store.getAttachment(owner);
  if (rec?.mode === 'shared') {
    await step('removing the shared attachment record', () => store.removeAttachment(owner));
    log.info({ sandbox: rec.sharedWith?.containerId }, 'shared attachment removed; the sandbox endpoint stays');
    return;
  }
  const { api } = await step('choosing the HNS API', () => rt.api(conf));
  if (rec) {
    await deleteByRecord(api, store, rec, log);
    if (rec.ipamAllocated && ctx.ipam.configured) await ctx.ipam.del();
    await step('removing the attachment record', () => store.removeAttachment(owner));
    return;
  }
  await deleteUnrecorded(api, store, owner, log);
  // The killed ADD may have allocated: DEL must release it (IPAM DEL is idempotent).
  if (ctx.ipam.configured) await ctx.ipam.del();
  // An unreadable record of this attachment protected its objects from the audit; the DEL has dealt with them.
  if (store.clearQuarantine(owner) > 0) log.info({}, 'dropped the quarantined record of this attachment');
}

/** Deletes the objects a record names. Unreachable HNS → 11 with the record kept for the retry. */
export async function deleteByRecord(api: HnsApi, store: StateStore, rec: AttachmentRecord, log: Logger): Promise<void> {
  try {
    await detach(api, rec.endpoint.id, rec.attach);
    if (rec.endpoint.owned) await api.deleteEndpoint(rec.endpoint.id);
    if (rec.network.owned) await api.deleteNetwork(rec.network.id);
    log.info({ endpoint: rec.endpoint.id, network: rec.network.owned ? rec.network.id : undefined }, 'attachment deleted');
  } catch (e) {
    if (isUnreachable(e)) throw toCniError(e, 'deleting the attachment');
    // HNS refused (e.g. 0x803B002C): hand it to the audit rather than fail the runtime's DEL forever.
    log.error({ err: (e as Error).message }, 'HNS refused a delete; tombstoning the attachment for the audit');
    const planned: PlannedObject[] = [{ kind: 'endpoint', name: rec.endpoint.name, id: rec.endpoint.id }];
    if (rec.network.owned) planned.push({ kind: 'network', name: rec.network.name, id: rec.network.id });
    await store.tombstone(rec, `DEL could not delete: ${(e as Error).message}`, planned);
  }
}

/** DEL without a record: tombstone first, then delete by planned ids (the create race) and by owner names. */
export async function deleteUnrecorded(api: HnsApi, store: StateStore, owner: Owner, log: Logger): Promise<void> {
  const intent = await step('tombstoning the attachment', () =>
    store.tombstone(owner, 'DEL without a committed attachment', [{ kind: 'endpoint', name: endpointName(owner) }]),
  );
  const planned = intent?.planned ?? [];
  try {
    const [endpoints, networks] = await Promise.all([api.listEndpoints(), api.listNetworks()]);
    const mine = (name: string, kind: 'endpoint' | 'network') => {
      const parsed = parseOwnedName(name);
      return !!parsed && parsed.kind === kind && sameOwner(parsed.owner, owner);
    };
    const visible = (id: string) => endpoints.some((e) => sameId(e.id, id)) || networks.some((n) => sameId(n.id, id));
    const ownEndpoints = endpoints.filter((e) => mine(e.name, 'endpoint'));
    const ownNetworks = networks.filter((x) => mine(x.name, 'network'));
    // A create still in flight in HNS is invisible and can only be named by the id its intent chose. Deleting it
    // races the create inside HNS (seed 000): either may win, which is why the tombstone stays for the audit.
    // A planned endpoint can only be in flight once its planned network exists (it is created second).
    const plannedNet = planned.find((x) => x.kind === 'network');
    const endpointMayBeInFlight = !plannedNet || (plannedNet.id ? visible(plannedNet.id) : ownNetworks.length > 0);
    for (const p of planned.filter((x) => x.kind === 'endpoint' && x.id && !visible(x.id))) {
      if (endpointMayBeInFlight) await quiet(api.deleteEndpoint(p.id!));
    }
    for (const ep of ownEndpoints) {
      if (ep.namespaceId) await quiet(api.detachNamespace(ep.id, ep.namespaceId));
      await quiet(api.deleteEndpoint(ep.id));
    }
    for (const p of planned.filter((x) => x.kind === 'network' && x.id && !visible(x.id))) await quiet(api.deleteNetwork(p.id!));
    for (const n of ownNetworks) await quiet(api.deleteNetwork(n.id));
    log.info({ intent: intent?.id, planned: planned.length }, 'DEL without a record: tombstoned and deleted what HNS shows');
  } catch (e) {
    if (isUnreachable(e)) throw toCniError(e, 'deleting the unrecorded attachment');
    log.error({ err: (e as Error).message }, 'DEL could not delete everything; the tombstone lets the audit finish');
  }
}

async function quiet(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
