/**
 * GC (spec 1.1): remove every object and record of ours whose attachment is not in cni.dev/valid-attachments.
 * Records not listed (of this network) are deleted like DEL would (IPAM released per attachment); unfinished ADDs
 * whose intents are dead are cleaned up like a DEL without a record; quarantined (unreadable) records are left
 * alone, with their objects (they cannot say which network they are of); the previous plugin's endpoints of pods
 * not listed are removed once nothing is attached to them (gc-peers.ts); then the audit removes every object of ours
 * that nothing claims. Errors are collected, GC continues past them, and they are all reported at the end. GC is then
 * forwarded to IPAM when it speaks 1.1.0.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { ConfContext } from '../../cni/types';
import { intentLiveness } from '../../state/liveness';
import { ownerKey } from '../../state/records';
import type { StateSnapshot, StateStore } from '../../state/store';
import type { HnsApi } from '../../hns/api';

import { deleteByRecord, deleteUnrecorded } from './del';
import { gcPeerEndpoints } from './gc-peers';
import { addressesOf, heldAddresses, keepForHolders } from '../ip-holders';
import { releasePendingIpam } from '../pending-ipam';
import { step, toCniError } from '../to-cni-error';
import type { PluginDeps } from '../deps';

/** What GC uses: HNS, the state store, the auditor, and the clock its liveness checks read. */
export type GcDeps = Pick<PluginDeps, 'hns' | 'stores' | 'auditor' | 'now'>;

export interface GcReport {
  removedAttachments: string[];
  deletedObjects: string[];
  errors: string[];
}

/** What every step of one GC shares. */
interface GcRun {
  ctx: ConfContext;
  deps: GcDeps;
  api: HnsApi;
  store: StateStore;
  state: StateSnapshot;
  /** The owners cni.dev/valid-attachments lists. */
  valid: Set<string>;
  /** Whether a record or intent is of this network (another conflist sharing the stateDir has its own GC). */
  ours: (r: { cniNetwork?: string }) => boolean;
  report: GcReport;
  /** Records an error and continues. */
  note: (what: string, e: unknown) => void;
  /** Whether the previous plugin's endpoints are judged too (not by `hcn-cni uninstall`). */
  peers: boolean;
}

/**
 * `peers: false` leaves the previous plugin's endpoints alone: `hcn-cni uninstall` removes only what is provably
 * hcn-cni's, and a win-bridge endpoint named after a pod is that plugin's, whatever the pod's state.
 */
export async function gc(ctx: ConfContext, deps: GcDeps, options: { peers?: boolean } = {}): Promise<GcReport> {
  const { conf, log } = ctx;
  // parseNetConf gives every GC its list (an empty one for libcni's GC without arguments, which means none is
  // valid); a GC without one is a caller that skipped the parser, and guessing "none valid" would delete everything.
  if (!conf.validAttachments) throw new Error('GC without a parsed cni.dev/valid-attachments list');
  const valid = new Set(conf.validAttachments.map(ownerKey));
  const store = deps.stores.store(conf, log);
  const { api } = await step('choosing the HNS API', () => deps.hns.api(conf));
  const report: GcReport = { removedAttachments: [], deletedObjects: [], errors: [] };
  const note = (what: string, e: unknown) => {
    const err = toCniError(e, what);
    const msg = `${what}: ${err.message}`;
    report.errors.push(msg);
    // The details (HNS's answer, or the stack of an unexpected failure) go to the log, not the runtime's message.
    log.error({ gc: 'error', err: msg, ...(err.details ? { details: err.details } : {}) }, 'GC error; continuing');
  };
  const state = store.snapshot();
  // Another conflist's attachments and intents (same stateDir): its runtime's GC lists them, ours does not and must
  // not judge them.
  const ours = (r: { cniNetwork?: string }) => r.cniNetwork === undefined || r.cniNetwork === conf.name;
  const run: GcRun = { ctx, deps, api, store, state, valid, ours, report, note, peers: options.peers !== false };
  await removeRecorded(run);
  await removeUnfinished(run);
  leaveQuarantined(run);
  await removePeers(run);
  await auditAndRelease(run);
  await forwardToIpam(run);
  return finish(run);
}

/** Records not listed: deleted as DEL would, the IP released once no endpoint holds it. */
async function removeRecorded({ ctx, api, store, state, valid, ours, report, note }: GcRun): Promise<void> {
  const { conf, log } = ctx;
  for (const rec of state.attachments) {
    if (valid.has(ownerKey(rec)) || !ours(rec)) continue;
    try {
      const { endpointGone } =
        rec.mode === 'shared' ? { endpointGone: true } : await deleteByRecord({ api, store, log }, rec);
      // Refused by HNS: the endpoint (and its IP) lives on; the tombstone keeps the allocation until it is gone. So
      // does another endpoint holding the address (a migrated node's previous plugin's: ip-holders.ts).
      const releasable = endpointGone && rec.ipamAllocated && ctx.ipam.configured;
      const holders = releasable ? await heldAddresses(api, addressesOf(rec.result)) : [];
      if (holders.length > 0) await keepForHolders({ store, log }, rec, holders, conf.name);
      else if (releasable) await ctx.ipam.delFor(rec);
      await store.removeAttachment(rec);
      report.removedAttachments.push(ownerKey(rec));
    } catch (e) {
      note(`removing attachment ${ownerKey(rec)}`, e);
    }
  }
}

/** Unfinished ADDs not listed whose intents are dead: cleaned up like a DEL without a record. */
async function removeUnfinished({ ctx, deps, api, store, state, valid, ours, note }: GcRun): Promise<void> {
  const { conf, log } = ctx;
  const tombs = new Map(state.tombstones.map((t) => [ownerKey(t), t]));
  for (const intent of state.intents) {
    if (valid.has(ownerKey(intent)) || !ours(intent)) continue;
    if (intentLiveness(intent, tombs.get(ownerKey(intent)), deps.now(), deps.hns.os().processStartTime).live) continue;
    try {
      const { endpointGone } = await deleteUnrecorded({ api, store, log }, intent, {
        onlyIntent: intent.id,
        cniNetwork: conf.name,
      });
      // The unfinished ADD may have allocated before it died: release on its behalf (IPAM DEL is idempotent) —
      // unless its endpoint survived: then the tombstone keeps the allocation until the audit removes it.
      if (ctx.ipam.configured && endpointGone) await ctx.ipam.delFor(intent);
    } catch (e) {
      note(`removing the unfinished attachment ${ownerKey(intent)}`, e);
    }
  }
}

/**
 * An unreadable record cannot say which network it belongs to: GC leaves its objects alone (the audit protects
 * them) rather than guess. Its own DEL, or the operator (hcn-cni state --clear-quarantine), deals with it.
 */
function leaveQuarantined({ ctx, state, valid }: GcRun): void {
  for (const q of state.quarantined) {
    if (q.owner && !valid.has(ownerKey(q.owner)))
      ctx.log.warn({ owner: ownerKey(q.owner), file: q.file }, 'GC leaves an unreadable record and its objects alone');
  }
}

/** The previous plugin's endpoints of pods no longer valid (a migrated node): gc-peers.ts. */
async function removePeers({ ctx, api, report, note, peers }: GcRun): Promise<void> {
  if (!peers) return;
  try {
    const peers = await gcPeerEndpoints(api, ctx.conf, ctx.conf.validAttachments!, ctx.log);
    report.deletedObjects.push(...peers.deleted);
    report.errors.push(...peers.errors);
  } catch (e) {
    note("removing the previous plugin's endpoints", e);
  }
}

/** The audit removes every object of ours that nothing claims, then the allocations it kept are released. */
async function auditAndRelease({ ctx, deps, api, store, report, note }: GcRun): Promise<void> {
  const { conf, log } = ctx;
  try {
    const result = await deps.auditor.audit({ conf, api, store, log });
    report.deletedObjects.push(...(result.sweep?.deleted ?? []).map((j) => `${j.kind} ${j.name}`));
    for (const f of result.sweep?.failed ?? [])
      report.errors.push(`deleting ${f.object.kind} ${f.object.name}: ${f.error}`);
    report.errors.push(...(await releasePendingIpam(store, { ipam: ctx.ipam, network: conf.name, log }, result)));
  } catch (e) {
    note('auditing HNS', e);
  }
}

/** GC is forwarded to IPAM when it speaks 1.1.0. */
async function forwardToIpam({ ctx, note }: GcRun): Promise<void> {
  if (!ctx.ipam.configured) return;
  try {
    const forwarded = await ctx.ipam.gc();
    ctx.log.info(
      { ipam: ctx.ipam.type, forwarded },
      forwarded ? 'GC forwarded to IPAM' : 'IPAM does not speak GC (1.1.0); released per attachment instead',
    );
  } catch (e) {
    note(`forwarding GC to ipam ${ctx.ipam.type}`, e);
  }
}

/** Every error collected is reported at the end. */
function finish({ ctx, report }: GcRun): GcReport {
  ctx.log.info(
    {
      gc: 'done',
      removed: report.removedAttachments.length,
      deleted: report.deletedObjects.length,
      errors: report.errors.length,
    },
    'GC done',
  );
  if (report.errors.length > 0) {
    throw new CniError(
      CniCode.GC_INCOMPLETE,
      `GC finished with ${report.errors.length} error(s)`,
      report.errors.join('\n'),
    );
  }
  return report;
}
