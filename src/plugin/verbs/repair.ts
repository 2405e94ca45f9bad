/**
 * Repair after an HNS restart (opt-in: `repair: true`). A restart drops every endpoint while the pods keep running
 * with their addresses ("the pod still running and hold that IP, but hnsendpoints has been removed and is not
 * automatically re-create": docker/for-win#12425, projectcalico/calico#5164); what a restart drops and keeps, with
 * its sources, is at src/sim/store.ts restart. For each recorded attachment whose network is not what the pod needs
 * (pod-health.ts: the endpoint missing, or there but not attached as recorded — a repair killed between its create
 * and its attach, an attach HNS refused once), one at a time: an endpoint that is there is re-attached; a missing one
 * is re-created with its recorded id, addresses, MAC and policies (the spec the ADD gave HNS,
 * kept in the record: AttachmentRecord.recreate) — in delegated-NIC mode after the attachment's own network, which is
 * non-persistent and gone too — re-attaches it as it was attached (HCN namespace, or HCS hot-add into the Docker
 * sandbox), and commits the record again. IPAM is never touched: the addresses are the recorded ones.
 *
 * The same claim machinery as ADD (claim.ts): an intent before any create, written only while the record is
 * still there (StateStore.writeIntent requireAttachment), and a commit that fails when a DEL voided the intent
 * meanwhile (StateStore.removeDeletedAttachment) — then the undo deletes what the repair created, so a repair racing
 * a DEL of the same pod leaves nothing. Shared attachments (container:<id>) are not acted on: they follow their
 * sandbox. A pod that cannot be repaired is reported, never guessed at.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { NetConf } from '../../cni/types';
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
import { hresultHex } from '../../hns/hresults';
import type { Logger } from '../../log/logger';
import { deleteNetworkUnlessHeld } from '../../orphans/network-holders';
import {
  ownerKey,
  type AttachmentRecord,
  type IntentRecord,
  type PlannedObject,
  type RecordedAdapter,
} from '../../state/records';
import { AttachmentChangedError, type StateStore } from '../../state/store';
import { commit, keepClaim, writeIntent, type ClaimContext } from '../claim';
import { detach, ensureAttached } from '../attach';
import { recordedAdapter } from '../modes/delegated-nic';
import { judgePod, judgePods, type PodVerdict } from '../pod-health';
import type { PluginDeps } from '../deps';
import { Undo } from '../undo';

/** What became of one pod's repair (docs/repair.md, "Per pod, reported"); the service's metrics label them all. */
export const REPAIR_OUTCOMES = [
  'repaired',
  'namespace-gone',
  'container-gone',
  'network-gone',
  'no-recorded-spec',
  'deleted-meanwhile',
  'hns-refused',
  'hns-unreachable',
  'hns-failed',
] as const;
export type RepairOutcome = (typeof REPAIR_OUTCOMES)[number];

export interface PodRepair {
  /** containerId@ifname */
  attachment: string;
  endpoint: string;
  outcome: RepairOutcome;
  detail?: string;
  /** The HRESULT HNS (or HCS) answered, "0x803B0006", when it refused. */
  hresult?: string;
}

/** What a repair uses of the plugin's dependencies (deps.ts): HNS, the state store, and what its intents record. */
export type RepairDeps = Pick<PluginDeps, 'hns' | 'stores' | 'now' | 'pid'>;

export interface RepairOptions {
  deps: RepairDeps;
  conf: NetConf;
  log: Logger;
  /** The pods judged just now (the node agent's health check), else judged here from one listing. */
  verdicts?: readonly PodVerdict[];
  /** Runs one pod's repair in the attachment's turn (the service's per-attachment queue); default: at once. */
  serialize?: <T>(attachment: { containerId: string; ifname: string }, task: () => Promise<T>) => Promise<T>;
}

/** Repairs every recorded attachment of this configuration's network whose pod does not have what it needs. */
export async function repairAttachments(o: RepairOptions): Promise<PodRepair[]> {
  const { deps, conf, log } = o;
  const { api } = await deps.hns.api(conf);
  const store = deps.stores.store(conf, log);
  const verdicts =
    o.verdicts ?? (await judgePods(api, ofNetwork(store.snapshot().attachments, conf), await api.listEndpoints()));
  const unhealthy = verdicts.filter((v) => v.problem && ofNetwork([v.record], conf).length > 0);
  const reports: PodRepair[] = [];
  const serialize = o.serialize ?? (<T>(_: unknown, task: () => Promise<T>) => task());
  // One pod at a time: a restart of a node with many pods is not answered by as many HNS creates at once.
  for (const { record, endpoint } of unhealthy) {
    const report = await serialize(record, () => repairOne(api, { deps, conf, log, store }, record, endpoint));
    if (!report) continue;
    const line = { attachment: report.attachment, endpoint: report.endpoint, outcome: report.outcome };
    if (report.outcome === 'repaired') log.info(line, 'repair: endpoint re-created or re-attached');
    else log.warn({ ...line, detail: report.detail, hresult: report.hresult }, 'repair: attachment not repaired');
    reports.push(report);
  }
  return reports;
}

/** The records this configuration repairs: its network's (records older than cniNetwork: any network's). */
export function ofNetwork(records: readonly AttachmentRecord[], conf: Pick<NetConf, 'name'>): AttachmentRecord[] {
  return records.filter((r) => r.mode !== 'shared' && (r.cniNetwork === undefined || r.cniNetwork === conf.name));
}

/** Says what became of one pod's repair. */
type Reporter = (outcome: RepairOutcome, detail?: string, hresult?: number) => PodRepair;

/** What one pod's repair steps (recreate, reattach) use: HNS, the claim they work under, how they report. */
interface PodRepairDeps {
  readonly api: HnsApi;
  readonly claim: ClaimContext;
  readonly report: Reporter;
}

async function repairOne(
  api: HnsApi,
  base: { deps: RepairDeps; conf: NetConf; log: Logger; store: StateStore },
  seen: AttachmentRecord,
  listed: EndpointInfo | undefined,
): Promise<PodRepair | undefined> {
  const owner = { containerId: seen.containerId, ifname: seen.ifname };
  const report: Reporter = (outcome, detail, hresult) => ({
    attachment: ownerKey(owner),
    endpoint: seen.endpoint.id,
    outcome,
    ...(detail ? { detail } : {}),
    ...(hresult !== undefined ? { hresult: hresultHex(hresult) } : {}),
  });
  // Read again in this pod's turn: a DEL may have run since the listing, or an ADD re-created it.
  const rec = base.store.getAttachment(owner);
  if (!rec || rec.mode === 'shared') return undefined;
  const now = await judgePod(api, rec, withListedState(await api.getEndpoint(rec.endpoint.id), listed));
  if (!now.problem) return undefined;
  if (now.problem === 'hns-failed') return report('hns-failed', now.detail);
  const claim: ClaimContext = {
    plan: { conf: base.conf, owner },
    deps: base.deps,
    log: base.log,
    store: base.store,
    undo: new Undo(),
  };
  const d: PodRepairDeps = { api, claim, report };
  if (now.endpoint) return reattach(d, rec, now.endpoint);
  const plan = await recreatable(api, rec, report);
  if ('outcome' in plan) return plan;
  return recreate(d, rec, plan);
}

/**
 * HCN's view of one endpoint has no lifecycle state (microsoft/hcsshim hcn/hcnendpoint.go HostComputeEndpoint), the
 * v1 listing's has (State): an endpoint the listing showed Degraded or Destroyed stays so for this pod's repair unless
 * the re-read itself shows a state — else the repair would call that pod healthy and report nothing.
 */
function withListedState(fresh: EndpointInfo | undefined, listed: EndpointInfo | undefined): EndpointInfo | undefined {
  if (!fresh || fresh.state !== undefined || listed?.state === undefined || !sameId(fresh.id, listed.id)) return fresh;
  return { ...fresh, state: listed.state };
}

/** What re-creating a gone endpoint needs: its recorded spec, and its network (present, or ours with its spec). */
interface Recreation {
  spec: EndpointSpec;
  network: NetworkInfo | undefined;
  networkSpec: NetworkSpec | undefined;
}

/** The recorded attachment can be re-created as it was, or the report of why not. */
async function recreatable(api: HnsApi, rec: AttachmentRecord, report: Reporter): Promise<Recreation | PodRepair> {
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
  if (!network && !rec.network.owned) {
    // Not ours to create (bridge mode: the operator's network, or one shared by every pod).
    return report('network-gone', `HNS network "${rec.network.name}" (${rec.network.id}) is gone`);
  }
  if (!network && !networkSpec) return report('no-recorded-spec', 'the record does not keep its network spec');
  return { spec, network, networkSpec };
}

/** Re-creates the endpoint (and its own network) under a claim, as an ADD does, and commits the repaired record. */
async function recreate(d: PodRepairDeps, rec: AttachmentRecord, plan: Recreation): Promise<PodRepair> {
  const { claim: a, report } = d;
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
    const { network, ep, claim, adapter } = await recreateObjects(d, rec, plan, intent);
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
    return failed(a, e, intent.id, report);
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
  d: PodRepairDeps,
  rec: AttachmentRecord,
  plan: Recreation,
  intent: IntentRecord,
): Promise<{ network: NetworkInfo; ep: EndpointInfo; claim: IntentRecord; adapter?: RecordedAdapter }> {
  const { api, claim: a } = d;
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
async function reattach(d: PodRepairDeps, rec: AttachmentRecord, ep: EndpointInfo): Promise<PodRepair> {
  const { api, claim: a, report } = d;
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
    return failed(a, e, intent.id, report);
  } finally {
    a.store.attemptEnded(intent.id);
  }
}

/** How a repair that threw ended: HNS unreachable (the intent stays), else undone and reported by cause. */
async function failed(a: ClaimContext, e: unknown, intentId: string, report: Reporter): Promise<PodRepair> {
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
