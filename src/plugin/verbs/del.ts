/**
 * DEL is best effort and idempotent, and it exits 0 unless HNS cannot be reached (then 11, so the runtime retries).
 *  - With a record: detach, delete the endpoint (and the NIC network in delegated mode, unless another endpoint is on
 *    it: orphans/network-holders.ts), release IPAM, drop the record. If HNS refuses a delete, the record is replaced by a tombstone so the audit finishes the job.
 *  - Without a record (the ADD never committed: killed, timed out, or never ran): tombstone the owner, which voids
 *    any intent, then delete what HNS shows under the owner's names and the ids the intent planned. The tombstone
 *    stays, so an object HNS completes after this DEL (seed 000) is an orphan to the next audit.
 *  - A shared attachment (container:<id>) only drops its record: the endpoint is the sandbox's.
 * When HNS refuses to delete an endpoint, its IP is still in use: the IPAM allocation is kept (the tombstone says
 * ipamPending) and released by the ADD or GC whose audit finally removes the endpoint — never handed out twice.
 * On a migrated node the pod may be another plugin's: its endpoint under that plugin's naming scheme is removed as that
 * plugin's DEL would (del-migrated.ts, peer-endpoints.ts), and no address is released while any HNS endpoint, ours or
 * foreign, still holds it (ip-holders.ts): the tombstone keeps it (ipamPending, heldBy) until the endpoint is gone.
 * A "not found" answer is a claim, not a fact (HNS has answered 0x80070490 for an endpoint it still had, attached):
 * before an address is released, the endpoint's absence is confirmed through a listing, by id.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { NetConf, VerbContext } from '../../cni/types';
import { sameId, type EndpointInfo, type HnsApi } from '../../hns/api';
import { isUnreachable } from '../../hns/hcn-error';
import { deleteConfirmed, deleteObject, endpointsListed, removeEndpoint } from '../../hns/teardown';
import type { Logger } from '../../log/logger';
import { deleteNetworkUnlessHeld, keptFor } from '../../orphans/network-holders';
import { endpointName, namesOwner, parseOwnedName } from '../../orphans/ownership';
import { ownerKey, type AttachmentRecord, type Owner, type PlannedObject } from '../../state/records';
import type { StateStore } from '../../state/store';
import { detach } from '../attach';
import { parseNetns } from '../netns';
import { delMigrated } from './del-migrated';
import { addressesOf, heldAddresses, keepForHolders } from '../ip-holders';
import { step, toCniError } from '../to-cni-error';
import type { PluginDeps } from '../deps';
import type { DelDeps } from './del-deps';

/** DEL with a record adds what releases the IP: the IPAM plugin, and the holders this process knows. */
interface RecordedDelDeps extends DelDeps {
  readonly ipam: VerbContext['ipam'];
  readonly addressBook: PluginDeps['addressBook'];
}

/** Who a DEL tears down, on which network (plain data). */
interface DelRequest {
  readonly owner: Owner;
  readonly conf: NetConf;
}

/** What DEL uses of the plugin's dependencies: HNS, the state store, and the holders this process knows. */
export type DelVerbDeps = Pick<PluginDeps, 'hns' | 'stores' | 'addressBook'>;

export async function del(ctx: VerbContext, deps: DelVerbDeps): Promise<void> {
  const { conf, attachment, log } = ctx;
  const owner: Owner = { containerId: attachment.containerId, ifname: attachment.ifname };
  const store = deps.stores.store(conf, log);
  const rec = store.getAttachment(owner);
  if (rec?.mode === 'shared') {
    await step('removing the shared attachment record', () => store.removeAttachment(owner));
    log.info({ sandbox: rec.sharedWith?.containerId }, 'shared attachment removed; the sandbox endpoint stays');
    return;
  }
  const api = await apiForDel(conf, deps);
  if (rec) {
    if (!api)
      throw new CniError(
        CniCode.TRY_AGAIN_LATER,
        'no HNS API is available on this host to delete the recorded attachment',
      );
    const d: RecordedDelDeps = { api, store, log, ipam: ctx.ipam, addressBook: deps.addressBook };
    return delRecorded(d, { owner, conf }, rec);
  }
  return delUnrecorded(ctx, store, api, owner);
}

/** DEL with a record: delete what it names, release the IP once no endpoint holds it, drop the record. */
async function delRecorded(d: RecordedDelDeps, req: DelRequest, rec: AttachmentRecord): Promise<void> {
  const outcome = await deleteByRecord(d, rec);
  if (outcome.endpointGone && rec.endpoint.owned) d.addressBook?.deleted(rec.endpoint.id);
  const released = await releaseRecorded(d, req, rec, outcome.endpointGone);
  try {
    await deleteRepaired(d, rec, outcome);
  } catch (e) {
    // The HNS objects and the IP are dealt with; the runtime (and the operator) must learn that, not only the error.
    const done = outcome.endpointGone
      ? `deleted endpoint ${rec.endpoint.id}${released ? ' and released its IP' : ''}`
      : `could not delete endpoint ${rec.endpoint.id} (tombstoned, its IP kept)`;
    const err = toCniError(e, 'removing the attachment record');
    throw new CniError(err.code, `DEL ${done}, but ${err.message}`, err.details, { cause: e });
  }
}

/** Releases the recorded IPAM allocation when the endpoint is gone; returns whether it did. */
async function releaseRecorded(
  d: RecordedDelDeps,
  req: DelRequest,
  rec: AttachmentRecord,
  endpointGone: boolean,
): Promise<boolean> {
  // Rule 1 (ip-holders.ts): not while another endpoint (a migrated node's previous plugin's) holds the address —
  // as this process knows the holders from a listing young enough (address-book.ts), else as HNS lists them.
  const releasable = endpointGone && rec.ipamAllocated && d.ipam.configured;
  const holders = releasable ? await heldAddresses(d.api, addressesOf(rec.result), d.addressBook?.for(req.conf)) : [];
  if (holders.length > 0) await keepForHolders(d, req.owner, holders, req.conf.name);
  const released = releasable && holders.length === 0;
  if (released) await d.ipam.del();
  return released;
}

/**
 * Drops the record; a repair (repair.ts) that re-created the objects meanwhile left a record naming them: deleted
 * too, and `outcome` says whether the last endpoint deleted is gone.
 */
async function deleteRepaired(d: DelDeps, rec: AttachmentRecord, outcome: { endpointGone: boolean }): Promise<void> {
  const { store, log } = d;
  let deleted = rec;
  for (let again = await store.removeDeletedAttachment(deleted); again;) {
    log.warn({ endpoint: again.endpoint.id }, 'DEL: a repair re-created the attachment meanwhile; deleting that too');
    outcome.endpointGone = (await deleteByRecord(d, again)).endpointGone;
    deleted = again;
    again = await store.removeDeletedAttachment(deleted);
  }
}

/** DEL without a record (the ADD never committed): tombstone, delete what HNS shows, release what nothing holds. */
async function delUnrecorded(
  ctx: VerbContext,
  store: StateStore,
  api: HnsApi | undefined,
  owner: Owner,
): Promise<void> {
  const { conf, attachment, log } = ctx;
  const d: DelDeps | undefined = api && { api, store, log };
  const { endpointGone, listed } = d
    ? await deleteUnrecorded(d, owner, { cniNetwork: conf.name, netns: attachment.netns })
    : { endpointGone: true, listed: undefined };
  // A pod of the previous plugin (a migrated node): its endpoint under that plugin's naming scheme, and its address
  // kept while any endpoint holds it (del-migrated.ts).
  const { keepIp } = d ? await delMigrated(d, ctx, owner, listed) : { keepIp: false };
  // The killed ADD may have allocated: DEL must release it (IPAM DEL is idempotent) — unless an endpoint of this
  // owner is still in HNS (it holds the IP): then the tombstone keeps the allocation (ipamPending) for the audit.
  // An IPAM that is not on CNI_PATH cannot have allocated anything for an ADD that left no record (that ADD could not
  // have run it either), and failing here would make the pod impossible to tear down on a node without it: warn and
  // succeed. With a record that says IPAM allocated (above), its error stands, as the spec asks.
  if (ctx.ipam.configured && endpointGone && !keepIp) {
    if (await ctx.ipam.installed()) await ctx.ipam.del();
    else
      log.warn(
        { ipam: ctx.ipam.type },
        `DEL: ipam plugin "${ctx.ipam.type}" is not on CNI_PATH and no record says it allocated for this attachment; nothing to release`,
      );
  }
  // An unreadable record of this attachment protected its objects from the audit; the DEL has dealt with them.
  if (store.clearQuarantine(owner) > 0) log.info({}, 'dropped the quarantined record of this attachment');
}

/**
 * The API DEL uses: the configured one, else whichever the host has (an ADD that failed for want of HCN must not
 * leave a DEL failing forever), else none — then nothing of ours can have been created through this host's HNS.
 */
async function apiForDel(conf: NetConf, deps: Pick<PluginDeps, 'hns'>): Promise<HnsApi | undefined> {
  const settings: NetConf['apiVersion'][] = conf.apiVersion === 'auto' ? ['auto'] : [conf.apiVersion, 'auto'];
  for (const apiVersion of settings) {
    try {
      return (await step('choosing the HNS API', () => deps.hns.api({ ...conf, apiVersion }))).api;
    } catch (e) {
      if (!(e instanceof CniError && e.code === CniCode.API_UNAVAILABLE)) throw e;
    }
  }
  return undefined;
}

/**
 * Deletes the objects a record names. Unreachable HNS → 11 with the record kept for the retry. HNS refusing → a
 * tombstone, and the audit finishes it. `endpointGone` says whether the endpoint (the holder of the IP) is gone, i.e.
 * whether the IPAM allocation may be released now; if not, the tombstone keeps it (ipamPending).
 */
export async function deleteByRecord(d: DelDeps, rec: AttachmentRecord): Promise<{ endpointGone: boolean }> {
  const { api, store, log } = d;
  let endpointGone = !rec.endpoint.owned;
  try {
    await detach(api, rec.endpoint.id, rec.attach);
    if (rec.endpoint.owned) await deleteConfirmed(api, 'endpoint', rec.endpoint.id);
    endpointGone = true;
    const networkGone = rec.network.owned && (await deleteOwnNetwork(api, rec.network.id, log));
    log.info({ endpoint: rec.endpoint.id, network: networkGone ? rec.network.id : undefined }, 'attachment deleted');
    return { endpointGone };
  } catch (e) {
    if (isUnreachable(e)) throw toCniError(e, 'deleting the attachment');
    // HNS refused (e.g. 0x803B002C): hand it to the audit rather than fail the runtime's DEL forever.
    log.error(
      { err: (e as Error).message, endpointGone },
      'HNS refused a delete; tombstoning the attachment for the audit',
    );
    const extra: PlannedObject[] = [{ kind: 'endpoint', name: rec.endpoint.name, id: rec.endpoint.id }];
    if (rec.network.owned) extra.push({ kind: 'network', name: rec.network.name, id: rec.network.id });
    await store.tombstone(rec, `DEL could not delete: ${(e as Error).message}`, {
      extra,
      ipamPending: rec.ipamAllocated && !endpointGone,
      ...(rec.cniNetwork ? { cniNetwork: rec.cniNetwork } : {}),
    });
    return { endpointGone };
  }
}

/**
 * DEL without a record: tombstone first, then delete by planned ids (the create race) and by owner names.
 * `endpointGone`: no endpoint of the owner is listed afterwards, so an IPAM allocation may be released; when one
 * survived (HNS refused, or answered a lying "not found"), the tombstone keeps the allocation (ipamPending).
 */
export async function deleteUnrecorded(
  d: DelDeps,
  owner: Owner,
  options: { cniNetwork?: string; onlyIntent?: string; netns?: string } = {},
): Promise<{ endpointGone: boolean; listed?: EndpointInfo[] }> {
  const { store, log } = d;
  const { netns, ...tombOptions } = options;
  const intent = await step('tombstoning the attachment', () =>
    store.tombstone(owner, 'DEL without a committed attachment', {
      extra: [{ kind: 'endpoint', name: endpointName(owner) }],
      ...tombOptions,
    }),
  );
  const planned = intent?.planned ?? [];
  const plan: UnrecordedPlan = { owner, netns, planned, cniNetwork: options.cniNetwork };
  const seen: Unrecorded = { nothingThere: false, spared: [], othersEndpoints: [] };
  try {
    await deleteShown(d, plan, seen);
    log.info(
      { intent: intent?.id, planned: planned.length },
      'DEL without a record: tombstoned and deleted what HNS shows',
    );
  } catch (e) {
    if (isUnreachable(e)) throw toCniError(e, 'deleting the unrecorded attachment');
    log.error({ err: (e as Error).message }, 'DEL could not delete everything; the tombstone lets the audit finish');
  }
  // Nothing was deleted: the listing still says what HNS holds (peer-endpoints.ts reuses it).
  if (seen.nothingThere) return { endpointGone: true, ...(seen.listed ? { listed: seen.listed } : {}) };
  return confirmUnrecordedGone(d, plan, seen);
}

/** What a DEL without a record deletes (plain data): the owner, its namespace, what its intent planned. */
interface UnrecordedPlan {
  readonly owner: Owner;
  readonly netns: string | undefined;
  readonly planned: readonly PlannedObject[];
  /** Written into the tombstone when an endpoint survives. */
  readonly cniNetwork: string | undefined;
}

/** What a DEL without a record learnt from its listing of HNS. */
interface Unrecorded {
  /**
   * The listing showed nothing of this owner and no intent planned anything: then nothing was deleted and nothing
   * can be in flight, and that listing is the confirmation (a repeated DEL lists HNS once, not twice).
   */
  nothingThere: boolean;
  /** Endpoints that carry this owner's name but that this DEL may not delete (sparing() says why). */
  spared: string[];
  /** Endpoints another owner's committed record names: not this owner's, whatever their name says. */
  othersEndpoints: string[];
  listed?: EndpointInfo[];
}

/** Deletes what HNS shows under the owner's names and the ids its intent planned; fills `seen`. */
async function deleteShown(d: DelDeps, plan: UnrecordedPlan, seen: Unrecorded): Promise<void> {
  const { api, store, log } = d;
  const { owner, netns, planned } = plan;
  const [endpoints, networks] = await Promise.all([api.listEndpoints(), api.listNetworks()]);
  const visible = (id: string) => endpoints.some((e) => sameId(e.id, id)) || networks.some((n) => sameId(n.id, id));
  const named = endpoints.filter((e) => namedFor(e.name, 'endpoint', owner));
  const ownNetworks = networks.filter((x) => namedFor(x.name, 'network', owner));
  seen.nothingThere = planned.length === 0 && named.length === 0 && ownNetworks.length === 0;
  const spare = named.length > 0 ? sparing(store, owner, netns, planned) : () => undefined;
  const ownEndpoints = named.filter((ep) => {
    const why = spare(ep);
    if (!why) return true;
    log.warn({ endpoint: ep.id, name: ep.name }, `DEL leaves endpoint ${ep.name} alone: ${why.reason}`);
    (why.othersRecord ? seen.othersEndpoints : seen.spared).push(ep.id.toLowerCase());
    return false;
  });
  seen.listed = endpoints;
  // A create still in flight in HNS is invisible and can only be named by the id its intent chose. Deleting it
  // races the create inside HNS (seed 000): either may win, which is why the tombstone stays for the audit.
  // A planned endpoint can only be in flight once its planned network exists (it is created second).
  const plannedNet = planned.find((x) => x.kind === 'network');
  const endpointMayBeInFlight = !plannedNet || (plannedNet.id ? visible(plannedNet.id) : ownNetworks.length > 0);
  for (const p of planned.filter((x) => x.kind === 'endpoint' && x.id && !visible(x.id))) {
    if (endpointMayBeInFlight) await deleteObject(api, 'endpoint', p.id!);
  }
  for (const ep of ownEndpoints) await deleteNamedEndpoint(api, ep, owner);
  // A network of ours holding any endpoint left (a spared one, another plugin's) stays: network-holders.ts.
  for (const p of planned.filter((x) => x.kind === 'network' && x.id && !visible(x.id)))
    await deleteOwnNetwork(api, p.id!, log);
  for (const n of ownNetworks) await deleteOwnNetwork(api, n.id, log);
}

/**
 * Deletes the pod's own network (delegated NIC) unless an endpoint is still on it (network-holders.ts: HNS would take
 * it along); returns whether it went. One left carries the owner's name with nothing claiming it once the record or
 * tombstone is gone: the audit keeps it while something is on it and deletes it once it is empty.
 */
async function deleteOwnNetwork(api: HnsApi, networkId: string, log: Logger): Promise<boolean> {
  const kept = keptFor(await deleteNetworkUnlessHeld(api, networkId));
  if (!kept) return true;
  log.warn(
    { network: networkId, endpoints: kept.map((e) => e.name) },
    'DEL leaves the network: other endpoint(s) are on it; the audit deletes it once it is empty',
  );
  return false;
}

/**
 * Detaches (its namespace; the owner's own sandbox container, when hot-attached to it) and deletes an endpoint of the
 * owner; its absence is confirmed afterwards by one listing (confirmUnrecordedGone).
 */
async function deleteNamedEndpoint(api: HnsApi, ep: EndpointInfo, owner: Owner): Promise<void> {
  const sandbox = ep.containers?.some((c) => c.toLowerCase() === owner.containerId.toLowerCase());
  await removeEndpoint(
    api,
    ep.id,
    { namespaceId: ep.namespaceId, containerId: sandbox ? owner.containerId : undefined },
    { confirm: 'by-caller' },
  );
}

/**
 * Whether an endpoint of the owner is still listed; one that is keeps the IP (a tombstone with ipamPending naming it,
 * for the audit).
 */
async function confirmUnrecordedGone(
  d: DelDeps,
  plan: UnrecordedPlan,
  seen: Unrecorded,
): Promise<{ endpointGone: boolean }> {
  const { api, store, log } = d;
  const { owner, planned, cniNetwork } = plan;
  const plannedIds = planned.filter((p) => p.kind === 'endpoint' && p.id).map((p) => p.id!);
  const survivors = await step('confirming the endpoint is gone', () =>
    endpointsListed(
      api,
      (e) =>
        !seen.othersEndpoints.includes(e.id.toLowerCase()) &&
        (namedFor(e.name, 'endpoint', owner) || plannedIds.some((id) => sameId(id, e.id))),
    ),
  );
  // A spared endpoint may hold this owner's IP (our own pod's, when the runtime's DEL named no namespace): the IP is
  // kept (ipamPending) until it is gone, but the tombstone does not name it, so the audit does not delete it either.
  const left = survivors.filter((e) => !seen.spared.includes(e.id.toLowerCase()));
  if (survivors.length === 0) return { endpointGone: true };
  log.error(
    { endpoints: left.map((e) => e.id) },
    'an endpoint of this attachment survived the DEL; its IP stays allocated until the audit removes it',
  );
  await step('tombstoning the attachment', () =>
    store.tombstone(owner, 'DEL could not delete its endpoint', {
      extra: left.filter((e) => e.id !== 'unknown').map((e) => ({ kind: 'endpoint' as const, name: e.name, id: e.id })),
      ipamPending: true,
      ...(cniNetwork ? { cniNetwork } : {}),
    }),
  );
  return { endpointGone: false };
}

function namedFor(name: string, kind: 'endpoint' | 'network', owner: Owner): boolean {
  const parsed = parseOwnedName(name);
  return !!parsed && parsed.kind === kind && namesOwner(parsed, owner);
}

/**
 * A name is evidence, not proof, that an endpoint is this owner's: names of the previous version carry a 48-bit tag
 * two container ids can be made to share, and a DEL may come for a pod that was never added. So an endpoint with
 * the owner's name is spared (the reason is returned) when another owner's committed record names it by id, or when
 * it is attached to a namespace or container this DEL does not hold: a namespace other than CNI_NETNS, a container
 * other than the owner's own (Docker-style pods hot-attach the sandbox's endpoint to the sandbox container, whose id
 * is the owner's). An id the owner's own intent planned is its own, wherever its ADD attached it.
 */
function sparing(
  store: StateStore,
  owner: Owner,
  netns: string | undefined,
  planned: readonly PlannedObject[],
): (ep: {
  id: string;
  namespaceId?: string;
  containers?: string[];
}) => { reason: string; othersRecord?: true } | undefined {
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
