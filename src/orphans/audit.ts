/**
 * The audit: list HNS, then read the state, judge (detect), delete orphans (sweep), tidy the state.
 *
 * Which tombstones were written before the listing began is known by reading them before it (by identity, not by
 * comparing clocks: a wall clock stepping back made a tombstone written after the listing look older than it, and
 * the audit released an address its endpoint still held). Tidying is housekeeping (state/housekeeping.ts): its
 * failures are noted and retried by the next audit, never the audit's or its verb's failure.
 *
 * The order of the first two steps is what makes it safe without a lock across HNS calls: every create is preceded
 * by its intent, and the intent is replaced by the record atomically (record first, intent second). So any object
 * that shows up in the listing had its claim on disk before the listing began, and reading the state afterwards
 * always finds that claim (or the record that succeeded it).
 */
import type { EndpointInfo, HnsApi, NetworkInfo } from '../hns/api';
import type { HostOs } from '../hns/host-os';
import type { Logger } from '../log/logger';
import { intentLiveness, processRuns } from '../state/liveness';
import { errorText, isHousekeepingFailure, MAX_FAILED_CHORES_PER_ROUND, type FailedChore } from '../state/housekeeping';
import { ownerKey, tombstoneWrite, type Owner, type TombstoneRecord } from '../state/records';
import type { StateSnapshot, StateStore } from '../state/store';
import { detect, type AuditInput, type AuditPlan, type Judged, type Verdict } from './detect';
import { ownerTags, weakTag } from './ownership';
import { judgePeerNetworks } from './peer-networks';
import { removeDeadSelftestNamespaces } from './selftest-leftovers';
import { sweep, type SweepResult } from './sweep';

export interface AuditDeps {
  api: HnsApi;
  store: StateStore;
  os: HostOs;
  log: Logger;
  now?: () => number;
  dryRun?: boolean;
  /**
   * How long a tombstone (or a dead intent) is kept after nothing of its owner is left in HNS: long enough for any
   * create that was in flight at the DEL to complete (so the audit can still recognise why it appeared).
   */
  graceMs: number;
  /** Peers whose leaked objects the audit may remove (NetConf adopt; peer-networks.ts). */
  adopt?: readonly string[];
}

/** How long tombstones outlive the objects they void: any create in flight at the DEL has finished by then. */
export function graceMs(hnsTimeoutSeconds: number): number {
  return 2 * hnsTimeoutSeconds * 1000 + 60_000;
}

export interface AuditReport {
  plan: AuditPlan;
  /** The networks HNS listed, minus the ones this audit deleted (callers reuse it instead of listing again). */
  networks: NetworkInfo[];
  /** The endpoints HNS listed, minus the ones this audit deleted (pending-ipam.ts: does anything still hold an IP). */
  endpoints: EndpointInfo[];
  /** Owners (ownerKey) that still have objects in HNS after this audit. */
  remainingOwners: Set<string>;
  /** The tombstones read with the state (after the listing): see releasePendingIpam. */
  tombstones: TombstoneRecord[];
  /**
   * The writes (tombstoneWrite) of the tombstones on disk before the listing began: only those can the listing speak
   * for. A tombstone written (or rewritten) since may name an endpoint the listing could not have seen.
   */
  writtenBeforeListing: ReadonlySet<string>;
  /** Owners the state read after the listing still claims (a committed record or an intent): their IPs are in use. */
  claimed: ReadonlySet<string>;
  /** When the listing began (wall clock): only stamps the audit as done (audit-due.ts); no safety rests on it. */
  listedAt: number;
  /** Housekeeping (tidy) of this audit: chores done, failed (noted and retried later) and left for the next audit. */
  housekeeping: { done: number; failed: number; deferred: number };
  counts: Record<Verdict, number>;
  sweep?: SweepResult;
  durationMs: number;
}

export async function audit(deps: AuditDeps): Promise<AuditReport> {
  const now = deps.now ?? Date.now;
  // The duration on a monotonic clock (a wall-clock step would skew it); `now` is for deadlines and grace periods.
  const started = performance.now();
  const writtenBeforeListing = new Set(deps.store.tombstones().map(tombstoneWrite));
  const listedAt = now();
  const [networks, endpoints] = await Promise.all([deps.api.listNetworks(), deps.api.listEndpoints()]);
  const state = deps.store.snapshot();
  const { plan, counts } = judgeListed(deps, { networks, endpoints }, state, now());
  const report: AuditReport = {
    plan,
    networks,
    endpoints,
    counts,
    durationMs: 0,
    remainingOwners: owners(plan, undefined),
    tombstones: state.tombstones,
    writtenBeforeListing,
    claimed: claimedOwners(state),
    listedAt,
    housekeeping: { done: 0, failed: 0, deferred: 0 },
  };
  if (!deps.dryRun) {
    await removeDeadSelftestNamespaces(deps, state, now());
    if (plan.endpoints.length + plan.networks.length > 0) {
      await voidExpired(deps, plan, state, now());
      report.sweep = await sweepPlan(deps, plan, now);
    }
    report.housekeeping = await tidy(deps, report, now());
    withoutSwept(report);
    // When the whole node was last audited: ADD in the standalone executable audits only once this is old enough.
    deps.store.markAudited(listedAt);
  }
  report.durationMs = Math.round((performance.now() - started) * 100) / 100;
  logSummary(deps, report);
  return report;
}

/** After a sweep: the report's networks, endpoints and owners are what is left (a swept network takes its endpoints). */
function withoutSwept(report: AuditReport): void {
  const deleted = report.sweep?.deleted ?? [];
  const gone = new Set(deleted.filter((j) => j.kind === 'network').map((j) => j.id));
  const goneEps = new Set(deleted.filter((j) => j.kind === 'endpoint').map((j) => j.id));
  report.networks = report.networks.filter((n) => !gone.has(n.id));
  report.endpoints = report.endpoints.filter((e) => !goneEps.has(e.id) && !gone.has(e.networkId));
  report.remainingOwners = owners(report.plan, report.sweep);
}

function logSummary(deps: Pick<AuditDeps, 'log' | 'dryRun'>, report: AuditReport): void {
  deps.log.info(
    {
      audit: 'summary',
      ...report.counts,
      deleted: report.sweep?.deleted.length ?? 0,
      ...(report.housekeeping.failed ? { housekeepingFailed: report.housekeeping.failed } : {}),
      durationMs: report.durationMs,
      dryRun: !!deps.dryRun,
    },
    'audit done',
  );
}

/** What HNS showed for a query: the few objects a scoped audit judges. */
export interface Shown {
  networks: NetworkInfo[];
  endpoints: EndpointInfo[];
}

/**
 * The audit of a few objects — an ADD's own names, the network that holds the NIC it needs, the endpoints that hold
 * an address HNS refused — by the same rules as the whole node's: detect() against `state`, then sweep() with its
 * re-check of each object just before its delete. `state` must be read after HNS answered the query (the order that
 * makes the audit safe, above). Nothing is concluded about objects HNS was not asked about: no tombstone is tidied,
 * no kept IP released — that needs the whole node (audit()).
 */
export async function auditShown(
  deps: AuditDeps,
  shown: Shown,
  state: StateSnapshot,
): Promise<Pick<AuditReport, 'counts' | 'sweep'> & { sweep: SweepResult }> {
  const now = deps.now ?? Date.now;
  const { plan, counts } = judgeListed(deps, shown, state, now());
  if (plan.endpoints.length + plan.networks.length > 0) await voidExpired(deps, plan, state, now());
  return { counts, sweep: await sweepPlan(deps, plan, now) };
}

function judgeListed(
  deps: AuditDeps,
  { networks, endpoints }: Shown,
  state: StateSnapshot,
  at: number,
): { plan: AuditPlan; counts: Record<Verdict, number> } {
  const tombs = new Map(state.tombstones.map((t) => [ownerKey(t), t]));
  const intentLive = new Map(
    state.intents.map((i) => [i.id, intentLiveness(i, tombs.get(ownerKey(i)), at, deps.os.processStartTime)] as const),
  );
  const plan = detect({ networks, endpoints, state, intentLive });
  // A peer's leaked network (peer-networks.ts) is foreign to detect(); with the opt-in it is condemned instead.
  for (const p of judgePeerNetworks(networks, endpoints, deps.adopt ?? [])) {
    const i = plan.judged.findIndex((j) => j.kind === 'network' && j.id === p.id);
    if (i >= 0) plan.judged[i] = p;
    else plan.judged.push(p);
    plan.networks.push(p);
  }
  const counts: Record<Verdict, number> = { foreign: 0, live: 0, 'in-flight': 0, protected: 0, orphan: 0 };
  for (const j of plan.judged) {
    counts[j.verdict]++;
    const line = { audit: j.verdict, kind: j.kind, id: j.id, name: j.name, reason: j.reason };
    if (j.verdict === 'foreign' || j.verdict === 'live') deps.log.debug(line, 'audit verdict');
    else deps.log.info(line, 'audit verdict');
  }
  return { plan, counts };
}

/**
 * An intent is dead once its deadline has passed, by the wall clock. When its process still runs, the ADD that wrote
 * it may still commit — and its commit checks the deadline by the same clock, which may have stepped back since this
 * audit judged: it would commit a pod whose objects this audit deletes. So before the sweep, such an intent is voided
 * by a tombstone (by id, as a DEL voids one): its commit then fails, whatever the clock says, and it rolls back.
 * The same for another state directory's ADD (its node-wide claim, claims.ts), in its own directory: an object whose
 * owner this directory does not know is condemned by its owner tag, which the claim's intent carries.
 */
async function voidExpired(deps: AuditDeps, plan: AuditPlan, state: StateSnapshot, at: number): Promise<void> {
  const voided = new Set(state.tombstones.flatMap((t) => t.voids ?? []));
  const judged = [...plan.endpoints, ...plan.networks].filter((j) => !j.peer);
  const condemned = new Set(judged.flatMap((j) => (j.owner ? [ownerKey(j.owner)] : [])));
  const tags = new Set(judged.flatMap((j) => (j.ownerTag ? [j.ownerTag] : [])));
  const own = state.intents
    .filter((i) => condemned.has(ownerKey(i)) && !voided.has(i.id) && at >= i.deadline)
    .filter((i) => processRuns(i, deps.os.processStartTime))
    .map((intent) => ({ intent, store: deps.store }));
  const others = (state.expiredClaims ?? [])
    .filter((c) => ownerTags(c.intent).some((t) => tags.has(t)))
    .map((c) => ({ intent: c.intent, store: deps.store.sibling(c.stateDir) }));
  for (const { intent: i, store } of [...own, ...others]) {
    await store.tombstone(i, 'an audit removes what this ADD planned: its deadline has passed', {
      onlyIntent: i.id,
      ...(i.cniNetwork ? { cniNetwork: i.cniNetwork } : {}),
    });
    deps.log.info(
      { owner: ownerKey(i), intent: i.id, stateDir: store.dir },
      'voided an intent past its deadline whose process still runs',
    );
  }
}

async function sweepPlan(deps: AuditDeps, plan: AuditPlan, now: () => number): Promise<SweepResult> {
  if (plan.endpoints.length + plan.networks.length === 0) return { deleted: [], skipped: [], failed: [] };
  return sweep(plan, { api: deps.api, log: deps.log, stillOrphan: (j) => stillOrphan(j, deps, now()) });
}

/** Re-judges one object against its owner's state as it is on disk now. */
function stillOrphan(j: Judged, deps: AuditDeps, now: number): boolean {
  // A peer's network has no owner in our state: sweep() re-checks that no endpoint is on it before deleting.
  if (j.peer) return true;
  let owner = j.owner;
  // A 48-bit tag of the previous version's names may be shared by two owners: judge such a name against the whole
  // state as it is now, so a record of the other owner that names the object by id still protects it.
  if (j.ownerTag && weakTag(j.ownerTag)) {
    const snap = deps.store.snapshot();
    const intentLive = new Map(
      snap.intents.map((i) => [
        i.id,
        intentLiveness(
          i,
          snap.tombstones.find((t) => ownerKey(t) === ownerKey(i)),
          now,
          deps.os.processStartTime,
        ),
      ]),
    );
    return again(j, snap, intentLive);
  }
  if (!owner) {
    if (!j.ownerTag) return false;
    // A name carries only the owner's tag: an owner the listing-time state did not know may have appeared since.
    const snap = deps.store.snapshot();
    owner = ownerWithTag(snap, j.ownerTag);
    // Still nobody's: judge it against the whole state as it is now (an unreadable record of unknown owner, or
    // another configuration's claim, still protects it).
    if (!owner) return again(j, snap, new Map());
  }
  const state = deps.store.ownerSnapshot(owner);
  const intent = state.intents[0];
  const intentLive = new Map(
    intent ? [[intent.id, intentLiveness(intent, state.tombstones[0], now, deps.os.processStartTime)]] : [],
  );
  return again(j, state, intentLive);
}

function again(j: Judged, state: AuditInput['state'], intentLive: AuditInput['intentLive']): boolean {
  const listed = { id: j.id, name: j.name };
  const plan =
    j.kind === 'endpoint'
      ? detect({
          networks: [],
          endpoints: [
            {
              ...listed,
              networkId: j.networkId ?? '',
              ips: [],
              ...(j.namespaceId ? { namespaceId: j.namespaceId } : {}),
            },
          ],
          state,
          intentLive,
        })
      : detect({ networks: [{ ...listed, type: '', flags: 0, subnets: [] }], endpoints: [], state, intentLive });
  return plan.judged[0]?.verdict === 'orphan';
}

/** The owner with this tag in the state as it is on disk now (quarantined records count: they protect). */
function ownerWithTag(s: StateSnapshot, tag: string): Owner | undefined {
  const all: Owner[] = [
    ...s.attachments,
    ...s.intents,
    ...s.tombstones,
    ...s.quarantined.flatMap((q) => (q.owner ? [q.owner] : [])),
  ];
  return all.find((o) => ownerTags(o).includes(tag));
}

/** Owners with a committed record, or an intent no tombstone of theirs voids (a voided one claims nothing). */
function claimedOwners(state: StateSnapshot): Set<string> {
  const voided = new Set(state.tombstones.flatMap((t) => t.voids ?? []));
  return new Set([...state.attachments, ...state.intents.filter((i) => !voided.has(i.id))].map(ownerKey));
}

function owners(plan: AuditPlan, swept: SweepResult | undefined): Set<string> {
  const deleted = new Set((swept?.deleted ?? []).map((j) => j.id));
  return new Set(plan.judged.filter((j) => j.owner && !deleted.has(j.id)).map((j) => ownerKey(j.owner!)));
}

/**
 * What the audit knows when it tidies (its report so far): the tombstones it read, which were on disk before its
 * listing, its judgement and its sweep.
 */
type TidyInput = Pick<AuditReport, 'tombstones' | 'writtenBeforeListing' | 'plan' | 'sweep'>;

interface Chore {
  what: string;
  file: string;
  deleteFile: boolean;
  run: () => Promise<unknown>;
}

/** The chores of this round: tombstones nothing of their owner needs any more, then the noted files to delete. */
function choresOf(
  deps: AuditDeps,
  { tombstones, writtenBeforeListing, plan, sweep }: TidyInput,
  now: number,
  noted: ReturnType<AuditDeps['store']['housekeeping']>,
): Chore[] {
  const remaining = owners(plan, sweep);
  const chores: Chore[] = [];
  for (const t of tombstones) {
    if (!writtenBeforeListing.has(tombstoneWrite(t)) || remaining.has(ownerKey(t))) continue;
    if (t.ipamPending || now - t.createdAt <= deps.graceMs) continue;
    chores.push({
      what: `removing the tombstone of ${ownerKey(t)}`,
      file: deps.store.recordFile('tombstone', t),
      deleteFile: false,
      run: () => deps.store.removeTombstone(t, t),
    });
  }
  for (const c of noted)
    if (c.deleteFile)
      chores.push({ what: c.what, file: c.file, deleteFile: true, run: async () => deps.store.deleteNoted(c.file) });
  return chores;
}

/**
 * Drops tombstones once nothing of their owner is left in HNS and the grace period is over (a tombstone still
 * holding back an IPAM release stays: see ipamPending), and retries the noted chores that are deleting a file as it
 * is (housekeeping.ts). Intents are left alone: a dead intent may be the only trace of an IPAM allocation, and only
 * DEL or GC, which hold an IPAM client, may drop it after releasing (an intent a tombstone voids goes with it).
 * Only tombstones on disk before the listing began are judged (the listing speaks for nothing newer), and
 * removeTombstone re-reads under the lock and removes only the same write, so a tombstone replaced since stays.
 * The grace is the one wall-clock judgement here, and it decides nothing that protects: a tombstone holding back an
 * IPAM release, or voiding an intent still on disk, is never removed, and once nothing of the owner is in HNS what
 * HNS completes later carries the owner's name and no claim, an orphan with or without the tombstone.
 *
 * Housekeeping: nothing here throws. A failure is noted and retried by the next audit; after
 * MAX_FAILED_CHORES_PER_ROUND failures the rest waits for it, chores that failed before being tried last.
 */
async function tidy(deps: AuditDeps, input: TidyInput, now: number): Promise<AuditReport['housekeeping']> {
  const noted = deps.store.housekeeping();
  const failedBefore = new Set(noted.map((c) => c.file));
  const chores = choresOf(deps, input, now, noted);
  // What failed before goes last, so a few files that always fail do not starve the others.
  chores.sort((a, b) => Number(failedBefore.has(a.file)) - Number(failedBefore.has(b.file)));
  const failed: FailedChore[] = [];
  const done: string[] = [];
  let deferred = 0;
  for (const c of chores) {
    if (failed.length >= MAX_FAILED_CHORES_PER_ROUND) {
      deferred++;
      continue;
    }
    try {
      await c.run();
      if (failedBefore.has(c.file)) done.push(c.file);
    } catch (e) {
      if (!isHousekeepingFailure(e)) throw e;
      failed.push({
        what: c.what,
        file: c.file,
        error: errorText(e),
        ...(c.deleteFile ? { deleteFile: true as const } : {}),
      });
    }
  }
  if (failed.length + done.length > 0) deps.store.noteHousekeeping(failed, done);
  if (deferred > 0)
    deps.log.warn(
      { housekeeping: 'deferred', deferred, failed: failed.length },
      'housekeeping left for the next audit',
    );
  return { done: chores.length - failed.length - deferred, failed: failed.length, deferred };
}
