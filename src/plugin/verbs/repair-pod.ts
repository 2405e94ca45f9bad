/**
 * One pod's repair, under the same claim machinery as ADD (claim.ts): an endpoint that is there re-attached, a missing
 * one re-created with its recorded id, addresses, MAC and policies — after the attachment's own network in
 * delegated-NIC mode — then attached as it was and the record committed again; a failure undone and reported by
 * cause (repair.ts says when a pod is repaired at all).
 */
import { CniCode, CniError } from '../../cni/cni-error';
import {
  sameId,
  type EndpointInfo,
  type EndpointSpec,
  type HnsApi,
  type NetworkInfo,
  type NetworkSpec,
} from '../../hns/api';
import { hcnCause, isUnreachable } from '../../hns/hcn-error';
import { deleteObject } from '../../hns/teardown';
import { deleteNetworkUnlessHeld } from '../../orphans/network-holders';
import {
  ownerKey,
  type AttachmentRecord,
  type IntentRecord,
  type PlannedObject,
  type RecordedAdapter,
} from '../../state/records';
import { AttachmentChangedError } from '../../state/store';
import { detach, ensureAttached } from '../attach';
import { commit, keepClaim, writeIntent, type ClaimContext } from '../claim';
import { modeOfRecord } from '../modes/choose';
import { recordedAdapter } from '../modes/delegated-nic';
import type { PodRepair, Reporter } from './repair-outcomes';

/** What one pod's repair steps (recreate, reattach) use: HNS, the claim they work under, how they report. */
export interface PodRepairRun {
  readonly api: HnsApi;
  readonly claim: ClaimContext;
  readonly report: Reporter;
}

/**
 * What re-creating a gone endpoint needs: the record, its recorded spec, and its network (present, or ours with its
 * spec).
 */
export interface Recreation {
  readonly rec: AttachmentRecord;
  readonly spec: EndpointSpec;
  readonly network: NetworkInfo | undefined;
  readonly networkSpec: NetworkSpec | undefined;
}

/** The recorded attachment can be re-created as it was, or the report of why not. */
export async function recreatable(d: PodRepairRun, rec: AttachmentRecord): Promise<Recreation | PodRepair> {
  const { api, report } = d;
  const spec = rec.recreate?.endpoint as EndpointSpec | undefined;
  if (!spec)
    return report('no-recorded-spec', 'the record was written by a version that did not keep the endpoint spec');
  if (rec.attach.kind === 'namespace' && !(await api.namespaceExists(rec.attach.target))) {
    return report(
      'namespace-gone',
      `HCN namespace ${rec.attach.target} is gone too; the runtime must re-create the pod`,
    );
  }
  const network: NetworkInfo | undefined = await api.getNetwork(rec.network.id);
  const networkSpec = rec.recreate?.network as NetworkSpec | undefined;
  // Not ours to create in bridge mode (the operator's network, or one shared by every pod): modes/bridge.ts.
  const notOurs = network ? undefined : modeOfRecord(rec).networkNotRecreated(rec);
  if (notOurs) return report('network-gone', notOurs);
  if (!network && !networkSpec) return report('no-recorded-spec', 'the record does not keep its network spec');
  return { rec, spec, network, networkSpec };
}

/** Re-creates the endpoint (and its own network) under a claim, as an ADD does, and commits the repaired record. */
export async function recreate(d: PodRepairRun, plan: Recreation): Promise<PodRepair> {
  const { claim: a, report } = d;
  const { rec } = plan;
  const planned: PlannedObject[] = [
    ...(plan.network ? [] : [{ kind: 'network' as const, name: rec.network.name, id: rec.network.id }]),
    { kind: 'endpoint', name: rec.endpoint.name, id: rec.endpoint.id },
  ];
  let intent;
  try {
    intent = await writeIntent(a, planned, rec.mac, rec);
  } catch (e) {
    if (e instanceof AttachmentChangedError) return report('deleted-meanwhile', e.message);
    throw e;
  }
  try {
    const { network, ep, claim, adapter } = await recreateObjects(d, plan, intent);
    const repaired: AttachmentRecord = {
      ...rec,
      network: { ...rec.network, id: network.id },
      endpoint: { ...rec.endpoint, id: ep.id },
      ...(adapter ? { adapter } : {}),
      repairedAt: a.deps.now(),
    };
    await commit(a, repaired, claim);
    if (!sameId(ep.id, rec.endpoint.id)) return { ...report('repaired', `HNS gave it id ${ep.id}`) };
    return report('repaired');
  } catch (e) {
    return failed(d, e, intent.id);
  } finally {
    a.store.attemptEnded(intent.id);
  }
}

/**
 * The network (when gone), the endpoint, the attach; the claim (returned) follows the ids HNS gave. A NIC network
 * re-created binds the adapter of its recorded name as the host has it now (after a reboot, maybe another
 * NetCfgInstanceId): the record then names that one, so the doctor does not call the repaired network stale.
 */
async function recreateObjects(
  d: PodRepairRun,
  plan: Recreation,
  intent: IntentRecord,
): Promise<{ network: NetworkInfo; ep: EndpointInfo; claim: IntentRecord; adapter?: RecordedAdapter }> {
  const { api, claim: a } = d;
  const { rec } = plan;
  let claim = intent;
  let network = plan.network;
  let adapter: RecordedAdapter | undefined;
  if (!network) {
    // Delegated NIC: the attachment's own network, non-persistent, went with the restart. The NIC it bound is free
    // again (the network holding it is gone); HNS refuses (0x803B0006) if something else took it meanwhile.
    network = await api.createNetwork(plan.networkSpec!, rec.network.id);
    const created = network;
    a.undo.push('delete the network', () => deleteNetworkUnlessHeld(api, created.id));
    claim = await keepClaim(a, claim, { kind: 'network', planned: rec.network.id, actual: created.id });
    adapter = await adapterNow(api, rec.adapter);
  }
  const ep = await api.createEndpoint(network, plan.spec, rec.endpoint.id);
  a.undo.push('delete the endpoint', () => deleteObject(api, 'endpoint', ep.id));
  claim = await keepClaim(a, claim, { kind: 'endpoint', planned: rec.endpoint.id, actual: ep.id });
  await ensureAttached(api, ep, rec.attach, { fresh: true });
  a.undo.push('detach the endpoint', () => detach(api, ep.id, rec.attach));
  return { network, ep, claim, ...(adapter ? { adapter } : {}) };
}

/** The host's adapter of the recorded one's name, as the record keeps it; undefined where none was recorded. */
async function adapterNow(api: HnsApi, was: RecordedAdapter | undefined): Promise<RecordedAdapter | undefined> {
  if (!was) return undefined;
  const listed = await api.listAdapters().catch(() => []);
  const now = listed.find((x) => x.physical !== false && x.name.toLowerCase() === was.name.toLowerCase());
  return now ? recordedAdapter(now) : undefined;
}

/**
 * The endpoint is there but not attached as recorded: attached again, under the same claim as a re-create (an intent
 * written only while the record is there, a commit that fails when a DEL voided it), so a DEL racing it wins and an
 * intent a killed repair left behind is replaced. Nothing is created, so the undo only detaches.
 */
export async function reattach(d: PodRepairRun, rec: AttachmentRecord, ep: EndpointInfo): Promise<PodRepair> {
  const { api, claim: a, report } = d;
  const elsewhere = attachedElsewhere(rec, ep);
  if (elsewhere) return report('attached-elsewhere', elsewhere);
  let intent;
  try {
    intent = await writeIntent(a, [{ kind: 'endpoint', name: rec.endpoint.name, id: rec.endpoint.id }], rec.mac, rec);
  } catch (e) {
    if (e instanceof AttachmentChangedError) return report('deleted-meanwhile', e.message);
    throw e;
  }
  try {
    if (rec.attach.kind === 'namespace' && !(await api.namespaceExists(rec.attach.target))) {
      await a.undo.run(a.log);
      return report('namespace-gone', `HCN namespace ${rec.attach.target} is gone; the runtime must re-create the pod`);
    }
    await ensureAttached(api, ep, rec.attach, { fresh: true });
    a.undo.push('detach the endpoint', () => detach(api, ep.id, rec.attach));
    await commit(a, { ...rec, repairedAt: a.deps.now() }, intent);
    return report('repaired', 're-attached');
  } catch (e) {
    return failed(d, e, intent.id);
  } finally {
    a.store.attemptEnded(intent.id);
  }
}

/**
 * Why the endpoint is not re-attached: it is in another HCN namespace than its record names. Something other than
 * this plugin put it there (a sandbox the runtime made again, an operator): taking it out would cut whatever uses it
 * now, and HNS keeps an endpoint in one namespace at a time, so the repair leaves it and says where it is.
 */
function attachedElsewhere(rec: AttachmentRecord, ep: EndpointInfo): string | undefined {
  if (rec.attach.kind !== 'namespace' || !ep.namespaceId || sameId(ep.namespaceId, rec.attach.target)) return undefined;
  return `endpoint ${ep.id} is attached to HCN namespace ${ep.namespaceId}, not ${rec.attach.target} as recorded; left where it is (the pod's DEL removes it)`;
}

/** How a repair that threw ended: HNS unreachable (the intent stays), else undone and reported by cause. */
async function failed(d: PodRepairRun, e: unknown, intentId: string): Promise<PodRepair> {
  const { claim: a, report } = d;
  const cause = hcnCause(e);
  if (cause && isUnreachable(cause)) {
    // As ADD: HNS may still complete what was asked; the intent stays for the audit (or the next repair).
    return report('hns-unreachable', (e as Error).message, cause.hresult);
  }
  await a.undo.run(a.log);
  // A DEL voided this repair (its commit failed, or the DEL deleted the endpoint under the attach).
  if (await dropOwnTombstone(a, intentId)) return report('deleted-meanwhile', (e as Error).message);
  if (e instanceof CniError && e.code === CniCode.UNKNOWN_CONTAINER) return report('container-gone', e.message);
  if (e instanceof CniError && /namespace .* does not exist/.test(e.message))
    return report('namespace-gone', e.message);
  return report('hns-refused', (e as Error).message, cause?.hresult);
}

/**
 * Whether a DEL voided this repair's intent. Its tombstone was left only for the repair (to have the audit finish what
 * the repair might not): the undo has run, so a tombstone that voids nothing else and keeps no IP is dropped — the DEL
 * left nothing, and neither does the repair.
 */
async function dropOwnTombstone(a: ClaimContext, intentId: string): Promise<boolean> {
  const t = a.store.getTombstone(a.plan.owner);
  if (!t?.voids?.includes(intentId)) return false;
  if (t.ipamPending || t.heldBy?.length || t.voids.length !== 1) return true;
  if (a.store.getAttachment(a.plan.owner) || a.store.getIntent(a.plan.owner)) return true;
  // A tombstone that cannot be removed now is noted (logged, counted) and left to the audit: nothing rests on it.
  await a.store.tidyTombstone(a.plan.owner, `removing the tombstone of ${ownerKey(a.plan.owner)} a voided repair left`);
  return true;
}
