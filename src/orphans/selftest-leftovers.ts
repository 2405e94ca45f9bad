/**
 * The namespace a self-test killed mid-run leaves. Its endpoint and network carry the ownership scheme's names and
 * its dead intent names them, so the audit removes those as it would a pod's; a namespace has no name, so the audit
 * removes it by the id the self-test derived from its owner (selftest-names.ts namespaceIdOf), for each self-test
 * intent of this state directory whose run is dead — nothing else: a namespace whose id no dead self-test claim here
 * gives is never touched. From the state the audit read anyway (a dead intent stays dead). Its endpoint, still in
 * the namespace when listed, is the audit's orphan all the same: a dead intent names it (detect.ts).
 * Housekeeping: a failure is logged and tried again by the next audit, never the audit's failure.
 */
import type { HnsApi } from '../hns/api';
import { isNotFound } from '../hns/hcn-error';
import type { HostOs } from '../hns/host-os';
import type { Logger } from '../log/logger';
import { intentLiveness } from '../state/liveness';
import { ownerKey, type Owner } from '../state/records';
import type { StateSnapshot } from '../state/store';
import { isSelftestOwner, namespaceIdOf } from './selftest-names';

/** Deletes the self-test's namespace; true when it was there (not found counts as done). */
export async function removeSelftestNamespace(api: HnsApi, owner: Owner): Promise<boolean> {
  try {
    await api.hcn.deleteNamespace(namespaceIdOf(owner));
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

export interface SelftestLeftoverDeps {
  api: HnsApi;
  os: HostOs;
  log: Logger;
}

/** Removes the namespaces of this state directory's dead self-test runs (`state`: read by the audit); their ids. */
export async function removeDeadSelftestNamespaces(
  deps: SelftestLeftoverDeps,
  state: Pick<StateSnapshot, 'intents' | 'tombstones'>,
  at: number,
): Promise<string[]> {
  const tombs = new Map(state.tombstones.map((t) => [ownerKey(t), t]));
  const dead = state.intents
    .filter(isSelftestOwner)
    .filter((i) => !intentLiveness(i, tombs.get(ownerKey(i)), at, deps.os.processStartTime).live);
  // The self-test runs only where HCN is (it refuses a host without): elsewhere no such namespace can exist.
  if (dead.length === 0 || !deps.api.hcn.capabilities.v2Supported) return [];
  const removed: string[] = [];
  for (const intent of dead) {
    try {
      if (await removeSelftestNamespace(deps.api, intent)) {
        removed.push(namespaceIdOf(intent));
        deps.log.info(
          { owner: ownerKey(intent), namespace: namespaceIdOf(intent) },
          'audit: removed the namespace of a self-test that did not finish',
        );
      }
    } catch (e) {
      deps.log.warn(
        { owner: ownerKey(intent), namespace: namespaceIdOf(intent), err: (e as Error).message },
        "audit: could not remove a self-test's namespace; the next audit tries again",
      );
    }
  }
  return removed;
}
