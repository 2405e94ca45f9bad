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
 *
 * As ADD and DEL: `prepare` makes the plan once (the configuration, the pods judged unhealthy), then each pod's repair
 * runs in its turn (repairOne here, the steps in repair-pod.ts).
 */
import type { NetConf } from '../../cni/types';
import { sameId, type EndpointInfo, type HnsApi } from '../../hns/api';
import type { Logger } from '../../log/logger';
import type { AttachmentRecord } from '../../state/records';
import type { StateStore } from '../../state/store';
import type { ClaimContext } from '../claim';
import type { HostHns } from '../host-hns';
import type { StateStores } from '../state-stores';
import { judgePod, judgePods, type PodVerdict } from '../pod-health';
import { Undo } from '../undo';
import { reporterFor, type PodRepair } from './repair-outcomes';
import { reattach, recreatable, recreate, type PodRepairRun } from './repair-pod';

export { REPAIR_OUTCOMES, type PodRepair, type RepairOutcome } from './repair-outcomes';

/** What a repair uses of the plugin's dependencies (deps.ts): HNS, the state store, and what its intents record. */
export type RepairDeps = {
  readonly hns: HostHns;
  readonly stores: StateStores;
  readonly now: () => number;
  readonly pid: number;
};

export interface RepairOptions {
  deps: RepairDeps;
  conf: NetConf;
  log: Logger;
  /** The pods judged just now (the node agent's health check), else judged here from one listing. */
  verdicts?: readonly PodVerdict[];
  /** Runs one pod's repair in the attachment's turn (the service's per-attachment queue); default: at once. */
  serialize?: <T>(attachment: { containerId: string; ifname: string }, task: () => Promise<T>) => Promise<T>;
}

/** The plan of a repair (plain data): the configuration, and its network's pods that do not have what they need. */
interface RepairPlan {
  readonly conf: NetConf;
  readonly unhealthy: readonly PodVerdict[];
}

/** What a repair runs with: the plan, the dependencies, the HNS API chosen, the state store, the log. */
interface RepairRun {
  readonly plan: RepairPlan;
  readonly deps: RepairDeps;
  readonly api: HnsApi;
  readonly store: StateStore;
  readonly log: Logger;
}

/** Repairs every recorded attachment of this configuration's network whose pod does not have what it needs. */
export async function repairAttachments(o: RepairOptions): Promise<PodRepair[]> {
  const run = await prepare(o);
  const { log } = run;
  const reports: PodRepair[] = [];
  const serialize = o.serialize ?? (<T>(_: unknown, task: () => Promise<T>) => task());
  // One pod at a time: a restart of a node with many pods is not answered by as many HNS creates at once.
  for (const verdict of run.plan.unhealthy) {
    const report = await serialize(verdict.record, () => repairOne(run, verdict));
    if (!report) continue;
    const line = { attachment: report.attachment, endpoint: report.endpoint, outcome: report.outcome };
    if (report.outcome === 'repaired') log.info(line, 'repair: endpoint re-created or re-attached');
    else log.warn({ ...line, detail: report.detail, hresult: report.hresult }, 'repair: attachment not repaired');
    reports.push(report);
  }
  return reports;
}

/** The API chosen, and the pods judged (from one listing, unless the caller judged them just now). */
async function prepare(o: RepairOptions): Promise<RepairRun> {
  const { deps, conf, log } = o;
  const { api } = await deps.hns.api(conf);
  const store = deps.stores.store(conf, log);
  const verdicts =
    o.verdicts ?? (await judgePods(api, ofNetwork(store.snapshot().attachments, conf), await api.listEndpoints()));
  const unhealthy = verdicts.filter((v) => v.problem && ofNetwork([v.record], conf).length > 0);
  return { plan: { conf, unhealthy }, deps, api, store, log };
}

/** The records this configuration repairs: its network's (records older than cniNetwork: any network's). */
export function ofNetwork(records: readonly AttachmentRecord[], conf: Pick<NetConf, 'name'>): AttachmentRecord[] {
  return records.filter((r) => r.mode !== 'shared' && (r.cniNetwork === undefined || r.cniNetwork === conf.name));
}

async function repairOne(run: RepairRun, seen: PodVerdict): Promise<PodRepair | undefined> {
  const { api, store } = run;
  const owner = { containerId: seen.record.containerId, ifname: seen.record.ifname };
  const report = reporterFor(owner, seen.record.endpoint.id);
  // Read again in this pod's turn: a DEL may have run since the listing, or an ADD re-created it.
  const rec = store.getAttachment(owner);
  if (!rec || rec.mode === 'shared') return undefined;
  const listed = seen.endpoint;
  const now = await judgePod(api, rec, withListedState(await api.getEndpoint(rec.endpoint.id), listed));
  if (!now.problem) return undefined;
  if (now.problem === 'hns-failed') return report('hns-failed', now.detail);
  const claim: ClaimContext = {
    plan: { conf: run.plan.conf, owner },
    deps: run.deps,
    log: run.log,
    store,
    undo: new Undo(),
  };
  const d: PodRepairRun = { api, claim, report };
  if (now.endpoint) return reattach(d, rec, now.endpoint);
  const plan = await recreatable(d, rec);
  if ('outcome' in plan) return plan;
  return recreate(d, plan);
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
