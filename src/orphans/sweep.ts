/**
 * sweep(): deletes what detect() condemned, in dependency order (detach, endpoints, networks). Just before each
 * delete it asks `stillOrphan` to re-judge the object against fresh state, because no lock is held across HNS calls:
 * an ADD may have claimed the owner since the listing. Not-found counts as done (someone else removed it) once a
 * listing confirms it: HNS has answered "not found" for an endpoint it still had, and an owner whose objects count
 * as deleted gets its kept IP released (pending-ipam.ts).
 */
import { sameId, type HnsApi } from '../hns/api';
import { isUnreachable, unlessRefused } from '../hns/hcn-error';
import { deleteConfirmed, removeEndpoint } from '../hns/teardown';
import type { Logger } from '../log/logger';
import type { AuditPlan, Judged } from './detect';

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
  for (const net of plan.networks) {
    // A peer's network (peer-networks.ts) is removed only while no endpoint is on it: one may have appeared since.
    if (net.peer && (await endpointsOn(net, deps)) > 0) {
      result.skipped.push({ object: net, reason: 'an endpoint is on it now' });
      continue;
    }
    await removeOne(net, deps, result, () => deleteConfirmed(deps.api, 'network', net.id));
  }
  return result;
}

/** How many endpoints HNS lists on a network now; a listing that fails counts as one (do not delete). */
function endpointsOn(net: Judged, deps: SweepDeps): Promise<number> {
  return unlessRefused(
    deps.api.listEndpoints().then((all) => all.filter((e) => sameId(e.networkId, net.id)).length),
    () => 1,
  );
}

/** Re-judges, then removes (src/hns/teardown.ts: detached first, a "not found" confirmed by a listing). */
async function removeOne(j: Judged, deps: SweepDeps, result: SweepResult, remove: () => Promise<void>): Promise<void> {
  if (!deps.stillOrphan(j)) {
    result.skipped.push({ object: j, reason: 'claimed since the listing' });
    deps.log.info(
      { audit: 'skip', kind: j.kind, id: j.id, name: j.name },
      'orphan claimed since the listing; left alone',
    );
    return;
  }
  try {
    await remove();
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
