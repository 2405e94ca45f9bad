/**
 * Repair after an HNS restart (opt-in: `repair: true`). A restart drops every endpoint while the pods keep running
 * with their addresses ("the pod still running and hold that IP, but hnsendpoints has been removed and is not
 * automatically re-create": docker/for-win#12425, projectcalico/calico#5164); what a restart drops and keeps, with
 * its sources, is at src/sim/store.ts restart. For each recorded attachment whose endpoint HNS no longer has, one at a
 * time, this re-creates the endpoint with its recorded id, addresses, MAC and policies (the spec the ADD gave HNS,
 * kept in the record: AttachmentRecord.recreate) — in delegated-NIC mode after the attachment's own network, which is
 * non-persistent and gone too — re-attaches it as it was attached (HCN namespace, or HCS hot-add into the Docker
 * sandbox), and commits the record again. IPAM is never touched: the addresses are the recorded ones.
 *
 * The same claim machinery as ADD (add-context.ts): an intent before any create, written only while the record is
 * still there (StateStore.writeIntent requireAttachment), and a commit that fails when a DEL voided the intent
 * meanwhile (StateStore.removeDeletedAttachment) — then the undo deletes what the repair created, so a repair racing
 * a DEL of the same pod leaves nothing. Shared attachments (container:<id>) are not acted on: they follow their
 * sandbox. A pod that cannot be repaired is reported, never guessed at.
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { NetConf } from '../cni/types';
import { sameId, type EndpointSpec, type HnsApi, type NetworkInfo, type NetworkSpec } from '../hns/api';
import { isHcnError, isUnreachable } from '../hns/hcn-error';
import { hresultHex } from '../hns/hresults';
import type { Logger } from '../log/logger';
import { ownerKey, type AttachmentRecord, type PlannedObject } from '../state/records';
import { AttachmentChangedError } from '../state/store';
import { commit, writeIntent, type ClaimContext } from './add-context';
import { detach, ensureAttached } from './attach';
import { keepClaim } from './endpoint';
import type { PluginRuntime } from './runtime';
import { Undo } from './undo';

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

export interface RepairOptions {
  rt: PluginRuntime;
  conf: NetConf;
  log: Logger;
  /** Endpoint ids HNS lists, when the caller has just listed them (else asked here). */
  listedEndpointIds?: readonly string[];
  /** Runs one pod's repair in the attachment's turn (the service's per-attachment queue); default: at once. */
  serialize?: <T>(attachment: { containerId: string; ifname: string }, task: () => Promise<T>) => Promise<T>;
}

/** Repairs every recorded attachment of this configuration's network whose endpoint HNS no longer has. */
export async function repairAttachments(o: RepairOptions): Promise<PodRepair[]> {
  const { rt, conf, log } = o;
  const { api } = await rt.api(conf);
  const listed = o.listedEndpointIds ?? (await api.endpointIds());
  const have = new Set(listed.map((id) => id.toLowerCase()));
  const store = rt.store(conf, log);
  const missing = store
    .snapshot()
    .attachments.filter(
      (r) =>
        r.mode !== 'shared' &&
        (r.cniNetwork === undefined || r.cniNetwork === conf.name) &&
        !have.has(r.endpoint.id.toLowerCase()),
    );
  const reports: PodRepair[] = [];
  const serialize = o.serialize ?? (<T>(_: unknown, task: () => Promise<T>) => task());
  // One pod at a time: a restart of a node with many pods is not answered by as many HNS creates at once.
  for (const rec of missing) {
    const report = await serialize(rec, () => repairOne(api, { rt, conf, log, store }, rec));
    if (!report) continue;
    const line = { attachment: report.attachment, endpoint: report.endpoint, outcome: report.outcome };
    if (report.outcome === 'repaired') log.info(line, 'repair: endpoint re-created and re-attached');
    else log.warn({ ...line, detail: report.detail, hresult: report.hresult }, 'repair: attachment not repaired');
    reports.push(report);
  }
  return reports;
}

async function repairOne(
  api: HnsApi,
  base: Omit<ClaimContext, 'owner' | 'undo'>,
  seen: AttachmentRecord,
): Promise<PodRepair | undefined> {
  const owner = { containerId: seen.containerId, ifname: seen.ifname };
  const report = (outcome: RepairOutcome, detail?: string, hresult?: number): PodRepair => ({
    attachment: ownerKey(owner),
    endpoint: seen.endpoint.id,
    outcome,
    ...(detail ? { detail } : {}),
    ...(hresult !== undefined ? { hresult: hresultHex(hresult) } : {}),
  });
  // Read again in this pod's turn: a DEL may have run since the listing, or an ADD re-created it.
  const rec = base.store.getAttachment(owner);
  if (!rec || rec.mode === 'shared') return undefined;
  if (await api.getEndpoint(rec.endpoint.id)) return undefined;
  const spec = rec.recreate?.endpoint as EndpointSpec | undefined;
  if (!spec)
    return report('no-recorded-spec', 'the record was written by a version that did not keep the endpoint spec');
  if (rec.attach.kind === 'namespace' && !(await api.namespaceExists(rec.attach.target))) {
    return report(
      'namespace-gone',
      `HCN namespace ${rec.attach.target} is gone too; the runtime must re-create the pod`,
    );
  }
  let network: NetworkInfo | undefined = await api.getNetwork(rec.network.id);
  const networkSpec = rec.recreate?.network as NetworkSpec | undefined;
  if (!network && !rec.network.owned) {
    // Not ours to create (bridge mode: the operator's network, or one shared by every pod).
    return report('network-gone', `HNS network "${rec.network.name}" (${rec.network.id}) is gone`);
  }
  if (!network && !networkSpec) return report('no-recorded-spec', 'the record does not keep its network spec');

  const a: ClaimContext = { ...base, owner, undo: new Undo() };
  const planned: PlannedObject[] = [
    ...(network ? [] : [{ kind: 'network' as const, name: rec.network.name, id: rec.network.id }]),
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
    if (!network) {
      // Delegated NIC: the attachment's own network, non-persistent, went with the restart. The NIC it bound is free
      // again (the network holding it is gone); HNS refuses (0x803B0006) if something else took it meanwhile.
      network = await api.createNetwork(networkSpec!, rec.network.id);
      const created = network;
      a.undo.push('delete the network', () => api.deleteNetwork(created.id));
      intent = await keepClaim(a, intent, 'network', rec.network.id, created.id);
    }
    const ep = await api.createEndpoint(network, spec, rec.endpoint.id);
    a.undo.push('delete the endpoint', () => api.deleteEndpoint(ep.id));
    intent = await keepClaim(a, intent, 'endpoint', rec.endpoint.id, ep.id);
    await ensureAttached(api, ep, rec.attach, { fresh: true });
    a.undo.push('detach the endpoint', () => detach(api, ep.id, rec.attach));
    const repaired: AttachmentRecord = {
      ...rec,
      network: { ...rec.network, id: network.id },
      endpoint: { ...rec.endpoint, id: ep.id },
      repairedAt: base.rt.now(),
    };
    await commit(a, repaired, intent);
    if (!sameId(ep.id, rec.endpoint.id)) return { ...report('repaired', `HNS gave it id ${ep.id}`) };
    return report('repaired');
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause ?? e;
    if (isHcnError(cause) && isUnreachable(cause)) {
      // As ADD: HNS may still complete what was asked; the intent stays for the audit (or the next repair).
      return report('hns-unreachable', (e as Error).message, cause.hresult);
    }
    await a.undo.run(base.log);
    // A DEL voided this repair (its commit failed, or the DEL deleted the endpoint under the attach).
    if (await dropOwnTombstone(a, intent.id)) return report('deleted-meanwhile', (e as Error).message);
    if (e instanceof CniError && e.code === CniCode.UNKNOWN_CONTAINER) return report('container-gone', e.message);
    if (e instanceof CniError && /namespace .* does not exist/.test(e.message))
      return report('namespace-gone', e.message);
    return report('hns-refused', (e as Error).message, isHcnError(cause) ? cause.hresult : undefined);
  } finally {
    base.store.attemptEnded(intent.id);
  }
}

/**
 * Whether a DEL voided this repair's intent. Its tombstone was left only for the repair (to have the audit finish what
 * the repair might not): the undo has run, so a tombstone that voids nothing else and keeps no IP is dropped — the DEL
 * left nothing, and neither does the repair.
 */
async function dropOwnTombstone(a: ClaimContext, intentId: string): Promise<boolean> {
  const t = a.store.getTombstone(a.owner);
  if (!t?.voids?.includes(intentId)) return false;
  if (t.ipamPending || t.heldBy?.length || t.voids.length !== 1) return true;
  if (a.store.getAttachment(a.owner) || a.store.getIntent(a.owner)) return true;
  await a.store.removeTombstone(a.owner).catch(() => undefined);
  return true;
}
