/**
 * sweep(): deletes what detect() condemned, in dependency order (detach, endpoints, networks). Just before each
 * delete it asks `stillOrphan` to re-judge the object against fresh state, because no lock is held across HNS calls:
 * an ADD may have claimed the owner since the listing. Not-found counts as done (someone else removed it) once a
 * listing confirms it: HNS has answered "not found" for an endpoint it still had, and an owner whose objects count
 * as deleted gets its kept IP released (pending-ipam.ts).
 */
import type { HnsApi } from '../hns/api';
import { isUnreachable } from '../hns/hcn-error';
import { removeEndpoint } from '../hns/teardown';
import type { Logger } from '../log/logger';
import type { AuditPlan, Judged } from './detect';
import { deleteNetworkUnlessHeld, keptFor } from './network-holders';

export interface SweepDeps {
  api: HnsApi;
  /** Re-judges one object against the state as it is now; true when it is still an orphan. */
  stillOrphan(j: Judged): boolean;
  log: Logger;
}

export interface SweepResult {
  deleted: Judged[];
  skipped: Array<{ object: Judged; reason: string }>;
  failed: Array<{ object: Judged; error: string }>;
}

export async function sweep(plan: AuditPlan, deps: SweepDeps): Promise<SweepResult> {
  const result: SweepResult = { deleted: [], skipped: [], failed: [] };
  for (const ep of plan.endpoints)
    await removeOne(ep, deps, result, () => removeEndpoint(deps.api, ep.id, { namespaceId: ep.namespaceId }));
  // A network is deleted only while nothing is on it (network-holders.ts): an endpoint may have appeared since the
  // listing (another plugin's, or one of ours this plan could not delete), and HNS would take it along.
  for (const net of plan.networks) await removeOne(net, deps, result, () => removeNetwork(net, deps));
  return result;
}

/** Deletes an orphan network unless an endpoint is on it now; returns why it was left, if it was. */
async function removeNetwork(net: Judged, deps: SweepDeps): Promise<string | undefined> {
  const kept = keptFor(await deleteNetworkUnlessHeld(deps.api, net.id, { confirm: true }));
  if (!kept) return undefined;
  deps.log.info({ audit: 'kept', id: net.id, name: net.name, on: kept.map((e) => e.name) }, 'orphan network in use');
  return 'an endpoint is on it now';
}

/** Re-judges, then removes (src/hns/teardown.ts: detached first, a "not found" confirmed by a listing). */
async function removeOne(
  j: Judged,
  deps: SweepDeps,
  result: SweepResult,
  remove: () => Promise<string | undefined | void>,
): Promise<void> {
  if (!deps.stillOrphan(j)) {
    result.skipped.push({ object: j, reason: 'claimed since the listing' });
    deps.log.info(
      { audit: 'skip', kind: j.kind, id: j.id, name: j.name },
      'orphan claimed since the listing; left alone',
    );
    return;
  }
  try {
    const left = await remove();
    if (left) {
      result.skipped.push({ object: j, reason: left });
      return;
    }
    result.deleted.push(j);
    deps.log.info(
      { audit: 'deleted', kind: j.kind, id: j.id, name: j.name, reason: j.reason },
      `deleted orphan ${j.kind}`,
    );
  } catch (e) {
    // HNS gone: stop here, the caller reports it; the next audit finishes the job.
    if (isUnreachable(e)) throw e;
    result.failed.push({ object: j, error: (e as Error).message });
    deps.log.error(
      { audit: 'failed', kind: j.kind, id: j.id, name: j.name, err: (e as Error).message },
      `could not delete orphan ${j.kind}`,
    );
  }
}
