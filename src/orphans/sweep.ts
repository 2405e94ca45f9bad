/**
 * sweep(): deletes what detect() condemned, in dependency order (detach, endpoints, networks). Just before each
 * delete it asks `stillOrphan` to re-judge the object against fresh state, because no lock is held across HNS calls:
 * an ADD may have claimed the owner since the listing. Not-found counts as done (someone else removed it) once a
 * listing confirms it: HNS has answered "not found" for an endpoint it still had, and an owner whose objects count
 * as deleted gets its kept IP released (pending-ipam.ts).
 */
import { sameId, type HnsApi } from '../hns/api';
import { isNotFound, isUnreachable } from '../hns/hcn-error';
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
  for (const ep of plan.endpoints) {
    await removeOne(ep, deps, result, async () => {
      if (ep.namespaceId) await deps.api.detachNamespace(ep.id, ep.namespaceId);
      return deps.api.deleteEndpoint(ep.id);
    });
  }
  for (const net of plan.networks) {
    // A peer's network (peer-networks.ts) is removed only while no endpoint is on it: one may have appeared since.
    if (net.peer && (await endpointsOn(net, deps)) > 0) {
      result.skipped.push({ object: net, reason: 'an endpoint is on it now' });
      continue;
    }
    await removeOne(net, deps, result, () => deps.api.deleteNetwork(net.id));
  }
  return result;
}

/** How many endpoints HNS lists on a network now; a listing that fails counts as one (do not delete). */
async function endpointsOn(net: Judged, deps: SweepDeps): Promise<number> {
  try {
    return (await deps.api.listEndpoints()).filter((e) => sameId(e.networkId, net.id)).length;
  } catch (e) {
    if (isUnreachable(e)) throw e;
    return 1;
  }
}

/** Whether HNS still lists the object; a listing that fails cannot confirm its absence. */
async function stillListed(j: Judged, deps: SweepDeps): Promise<boolean> {
  try {
    const listed = j.kind === 'endpoint' ? await deps.api.listEndpoints() : await deps.api.listNetworks();
    return listed.some((o) => sameId(o.id, j.id));
  } catch (e) {
    if (isUnreachable(e)) throw e;
    return true;
  }
}

async function removeOne(
  j: Judged,
  deps: SweepDeps,
  result: SweepResult,
  remove: () => Promise<'deleted' | 'not-found'>,
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
    if ((await remove()) === 'not-found' && (await stillListed(j, deps))) {
      throw new Error(`HNS answered "not found" for ${j.kind} ${j.id}, but still lists it`);
    }
    result.deleted.push(j);
    deps.log.info(
      { audit: 'deleted', kind: j.kind, id: j.id, name: j.name, reason: j.reason },
      `deleted orphan ${j.kind}`,
    );
  } catch (caught) {
    let e = caught;
    if (isNotFound(e)) {
      if (!(await stillListed(j, deps))) {
        result.deleted.push(j);
        return;
      }
      e = new Error(`HNS answered "not found" for ${j.kind} ${j.id}, but still lists it`);
    }
    // HNS gone: stop here, the caller reports it; the next audit finishes the job.
    if (isUnreachable(e)) throw e;
    result.failed.push({ object: j, error: (e as Error).message });
    deps.log.error(
      { audit: 'failed', kind: j.kind, id: j.id, name: j.name, err: (e as Error).message },
      `could not delete orphan ${j.kind}`,
    );
  }
}
