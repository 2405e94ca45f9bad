/**
 * What an earlier self-test left when it was killed: its dead intent names its endpoints (and network), which the
 * audit removes as it would a pod's, and its namespace, which the audit removes by the id the owner gives
 * (src/orphans/selftest-leftovers.ts); GC releases its address, as for a pod's unfinished ADD. Each self-test first
 * finishes its predecessors the way GC finishes an unfinished ADD (src/plugin/verbs/gc.ts removeUnfinished), the
 * namespace too where no audit has run since.
 */
import type { HnsApi } from '../hns/api';
import type { HostOs } from '../hns/host-os';
import type { Logger } from '../log/logger';
import { deleteUnrecorded } from '../plugin/verbs/del-unrecorded';
import { intentLiveness } from '../state/liveness';
import { ownerKey } from '../state/records';
import type { StateStore } from '../state/store';
import { removeSelftestNamespace } from '../orphans/selftest-leftovers';
import { isSelftestOwner } from './owner';

export interface LeftoverDeps {
  api: HnsApi;
  store: StateStore;
  os: HostOs;
  log: Logger;
  now: () => number;
  cniNetwork: string;
  /** Releases an address IPAM holds for an owner (IPAM DEL on its behalf); absent without IPAM. */
  releaseFor?: (owner: { containerId: string; ifname: string }) => Promise<void>;
}

/** Finishes every dead self-test claim of this state directory; answers the owners it finished. */
export async function finishEarlierRuns(deps: LeftoverDeps): Promise<string[]> {
  const state = deps.store.snapshot();
  const tombs = new Map(state.tombstones.map((t) => [ownerKey(t), t]));
  const finished: string[] = [];
  for (const intent of state.intents.filter(isSelftestOwner)) {
    const live = intentLiveness(intent, tombs.get(ownerKey(intent)), deps.now(), deps.os.processStartTime);
    if (live.live) continue;
    await removeSelftestNamespace(deps.api, intent);
    const { endpointGone } = await deleteUnrecorded(deps, intent, {
      onlyIntent: intent.id,
      cniNetwork: intent.cniNetwork ?? deps.cniNetwork,
    });
    if (endpointGone && deps.releaseFor && (intent.cniNetwork ?? deps.cniNetwork) === deps.cniNetwork)
      await deps.releaseFor(intent);
    finished.push(ownerKey(intent));
  }
  return finished;
}
