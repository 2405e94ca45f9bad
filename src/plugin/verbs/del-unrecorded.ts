/**
 * DEL without a record (the ADD never committed: killed, timed out, or never ran): tombstone the owner, which voids
 * any intent, then delete what HNS shows under the owner's names and the ids the intent planned. The tombstone stays,
 * so an object HNS completes after this DEL (seed 000) is an orphan to the next audit. A "not found" answer is a
 * claim, not a fact (HNS has answered 0x80070490 for an endpoint it still had, attached): before an address is
 * released, the endpoint's absence is confirmed through a listing, by id.
 */
import { sameId, type EndpointInfo, type HnsApi } from '../../hns/api';
import { isUnreachable } from '../../hns/hcn-error';
import { deleteObject, endpointsListed, removeEndpoint } from '../../hns/teardown';
import { endpointName, namesOwner, parseOwnedName } from '../../orphans/ownership';
import type { Owner } from '../../state/records';
import type { DelDeps, DelRun } from '../del-steps';
import { deleteOwnNetwork } from '../modes/own-network';
import { step, toCniError } from '../to-cni-error';
import { delMigrated } from './del-migrated';
import { sparing, type SparingFor } from './del-sparing';

/** DEL without a record (the ADD never committed): tombstone, delete what HNS shows, release what nothing holds. */
export async function delUnrecorded(run: DelRun): Promise<void> {
  const { plan, store, ipam, log } = run;
  const { conf, attachment, owner } = plan;
  const d = run.api ? { ...run, api: run.api } : undefined;
  const { endpointGone, listed } = d
    ? await deleteUnrecorded(d, owner, { cniNetwork: conf.name, netns: attachment.netns })
    : { endpointGone: true, listed: undefined };
  // A pod of the previous plugin (a migrated node): its endpoint under that plugin's naming scheme, and its address
  // kept while any endpoint holds it (del-migrated.ts).
  const { keepIp } = d ? await delMigrated(d, listed) : { keepIp: false };
  // The killed ADD may have allocated: DEL must release it (IPAM DEL is idempotent) — unless an endpoint of this
  // owner is still in HNS (it holds the IP): then the tombstone keeps the allocation (ipamPending) for the audit.
  // An IPAM that is not on CNI_PATH cannot have allocated anything for an ADD that left no record (that ADD could not
  // have run it either), and failing here would make the pod impossible to tear down on a node without it: warn and
  // succeed. With a record that says IPAM allocated (del-recorded.ts), its error stands, as the spec asks.
  if (ipam.configured && endpointGone && !keepIp) {
    if (await ipam.installed()) await ipam.del();
    else
      log.warn(
        { ipam: ipam.type },
        `DEL: ipam plugin "${ipam.type}" is not on CNI_PATH and no record says it allocated for this attachment; nothing to release`,
      );
  }
  // An unreadable record of this attachment protected its objects from the audit; the DEL has dealt with them.
  if (store.clearQuarantine(owner) > 0) log.info({}, 'dropped the quarantined record of this attachment');
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
interface UnrecordedPlan extends SparingFor {
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
  const { owner, planned } = plan;
  const [endpoints, networks] = await Promise.all([api.listEndpoints(), api.listNetworks()]);
  const visible = (id: string) => endpoints.some((e) => sameId(e.id, id)) || networks.some((n) => sameId(n.id, id));
  const named = endpoints.filter((e) => namedFor(e.name, 'endpoint', owner));
  const ownNetworks = networks.filter((x) => namedFor(x.name, 'network', owner));
  seen.nothingThere = planned.length === 0 && named.length === 0 && ownNetworks.length === 0;
  const spare = named.length > 0 ? sparing(store, plan) : () => undefined;
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
