/**
 * GC (spec 1.1): remove every object and record of ours whose attachment is not in cni.dev/valid-attachments.
 * Records not listed (of this network) are deleted like DEL would (IPAM released per attachment); unfinished ADDs
 * whose intents are dead are cleaned up like a DEL without a record; quarantined (unreadable) records are left
 * alone, with their objects (they cannot say which network they are of); the previous plugin's endpoints of pods
 * not listed are removed once nothing is attached to them (gc-peers.ts); then the audit removes every object of ours
 * that nothing claims. Errors are collected, GC continues past them, and they are all reported at the end. GC is then
 * forwarded to IPAM when it speaks 1.1.0.
 * As ADD and DEL: a plan made once (gc-plan.ts prepare), then named steps over the run.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { ConfContext } from '../../cni/types';
import { intentLiveness } from '../../state/liveness';
import { ownerKey } from '../../state/records';
import { addressesOf, heldAddresses, keepForHolders } from '../ip-holders';
import { releasePendingIpam } from '../pending-ipam';
import { deleteByRecord } from './del-recorded';
import { deleteUnrecorded } from './del-unrecorded';
import { gcPeerEndpoints } from './gc-peers';
import { note, ours, prepare, type GcDeps, type GcReport, type GcRun } from './gc-plan';

export type { GcDeps, GcReport } from './gc-plan';

/**
 * `peers: false` leaves the previous plugin's endpoints alone: `hcn-cni uninstall` removes only what is provably
 * hcn-cni's, and a win-bridge endpoint named after a pod is that plugin's, whatever the pod's state.
 */
export async function gc(ctx: ConfContext, deps: GcDeps, options: { peers?: boolean } = {}): Promise<GcReport> {
  const run = await prepare(ctx, deps, options);
  await removeRecorded(run);
  await removeUnfinished(run);
  leaveQuarantined(run);
  await removePeers(run);
  await auditAndRelease(run);
  await forwardToIpam(run);
  return finish(run);
}

/** Records not listed: deleted as DEL would, the IP released once no endpoint holds it. */
async function removeRecorded(run: GcRun): Promise<void> {
  const { plan, api, store, ipam, log, report } = run;
  const { conf, state, valid } = plan;
  for (const rec of state.attachments) {
    if (valid.has(ownerKey(rec)) || !ours(plan, rec)) continue;
    try {
      const { endpointGone } =
        rec.mode === 'shared' ? { endpointGone: true } : await deleteByRecord({ api, store, log }, rec);
      // Refused by HNS: the endpoint (and its IP) lives on; the tombstone keeps the allocation until it is gone. So
      // does another endpoint holding the address (a migrated node's previous plugin's: ip-holders.ts).
      const releasable = endpointGone && rec.ipamAllocated && ipam.configured;
      const holders = releasable ? await heldAddresses(api, addressesOf(rec.result)) : [];
      if (holders.length > 0) await keepForHolders({ store, log }, rec, holders, conf.name);
      else if (releasable) await ipam.delFor(rec);
      await store.removeAttachment(rec);
      report.removedAttachments.push(ownerKey(rec));
    } catch (e) {
      note(run, `removing attachment ${ownerKey(rec)}`, e);
    }
  }
}

/** Unfinished ADDs not listed whose intents are dead: cleaned up like a DEL without a record. */
async function removeUnfinished(run: GcRun): Promise<void> {
  const { plan, deps, api, store, ipam, log } = run;
  const { conf, state, valid } = plan;
  const tombs = new Map(state.tombstones.map((t) => [ownerKey(t), t]));
  for (const intent of state.intents) {
    if (valid.has(ownerKey(intent)) || !ours(plan, intent)) continue;
    if (intentLiveness(intent, tombs.get(ownerKey(intent)), deps.now(), deps.hns.os().processStartTime).live) continue;
    try {
      const { endpointGone } = await deleteUnrecorded({ api, store, log }, intent, {
        onlyIntent: intent.id,
        cniNetwork: conf.name,
      });
      // The unfinished ADD may have allocated before it died: release on its behalf (IPAM DEL is idempotent) —
      // unless its endpoint survived: then the tombstone keeps the allocation until the audit removes it.
      if (ipam.configured && endpointGone) await ipam.delFor(intent);
    } catch (e) {
      note(run, `removing the unfinished attachment ${ownerKey(intent)}`, e);
    }
  }
}

/**
 * An unreadable record cannot say which network it belongs to: GC leaves its objects alone (the audit protects
 * them) rather than guess. Its own DEL, or the operator (hcn-cni state --clear-quarantine), deals with it.
 */
function leaveQuarantined({ plan, log }: GcRun): void {
  for (const q of plan.state.quarantined) {
    if (q.owner && !plan.valid.has(ownerKey(q.owner)))
      log.warn({ owner: ownerKey(q.owner), file: q.file }, 'GC leaves an unreadable record and its objects alone');
  }
}

/** The previous plugin's endpoints of pods no longer valid (a migrated node): gc-peers.ts. */
async function removePeers(run: GcRun): Promise<void> {
  const { plan, api, log, report } = run;
  if (!plan.peers) return;
  try {
    const peers = await gcPeerEndpoints(api, plan.conf, plan.validAttachments, log);
    report.deletedObjects.push(...peers.deleted);
    report.errors.push(...peers.errors);
  } catch (e) {
    note(run, "removing the previous plugin's endpoints", e);
  }
}

/** The audit removes every object of ours that nothing claims, then the allocations it kept are released. */
async function auditAndRelease(run: GcRun): Promise<void> {
  const { plan, deps, api, store, ipam, log, report } = run;
  const { conf } = plan;
  try {
    const result = await deps.auditor.audit({ conf, api, store, log });
    report.deletedObjects.push(...(result.sweep?.deleted ?? []).map((j) => `${j.kind} ${j.name}`));
    for (const f of result.sweep?.failed ?? [])
      report.errors.push(`deleting ${f.object.kind} ${f.object.name}: ${f.error}`);
    report.errors.push(...(await releasePendingIpam(store, { ipam, network: conf.name, log }, result)));
  } catch (e) {
    note(run, 'auditing HNS', e);
  }
}

/** GC is forwarded to IPAM when it speaks 1.1.0. */
async function forwardToIpam(run: GcRun): Promise<void> {
  const { ipam, log } = run;
  if (!ipam.configured) return;
  try {
    const forwarded = await ipam.gc();
    log.info(
      { ipam: ipam.type, forwarded },
      forwarded ? 'GC forwarded to IPAM' : 'IPAM does not speak GC (1.1.0); released per attachment instead',
    );
  } catch (e) {
    note(run, `forwarding GC to ipam ${ipam.type}`, e);
  }
}

/** Every error collected is reported at the end. */
function finish({ log, report }: GcRun): GcReport {
  log.info(
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
