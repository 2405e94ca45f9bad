/**
 * The audit's removal of a killed self-test's namespace (src/orphans/selftest-leftovers.ts), in process: which
 * namespace ids it asks HNS to delete, for claims of every kind. Only a dead self-test claim gives one; a running
 * self-test's and a pod's never do (a pod's owner would give an id no namespace of ours has — or, by chance, one
 * that is not ours).
 */
import type { HnsApi } from '../../src/hns/api';
import type { HostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import { removeDeadSelftestNamespaces } from '../../src/orphans/selftest-leftovers';
import { namespaceIdOf } from '../../src/orphans/selftest-names';
import type { IntentRecord } from '../../src/state/records';

const NOW = 1_800_000_000_000;
const RUNNING_PID = 4242;
const GONE_PID = 4343;

/** A host where RUNNING_PID runs (started at "t0") and GONE_PID does not. */
const os = { processStartTime: (pid: number) => (pid === RUNNING_PID ? 't0' : null) } as unknown as HostOs;

function intent(containerId: string, pid: number): IntentRecord {
  return {
    kind: 'intent',
    schema: 1,
    id: `intent-${containerId}`,
    containerId,
    ifname: 'eth0',
    planned: [],
    pid,
    pidStartTime: 't0',
    createdAt: NOW - 1_000,
    deadline: NOW + 60_000,
  };
}

/** HNS with HCN, recording every namespace delete. */
function hns(): { api: HnsApi; deleted: string[] } {
  const deleted: string[] = [];
  const hcn = {
    capabilities: { v2Supported: true },
    deleteNamespace: async (id: string) => void deleted.push(id),
  };
  return { api: { hcn } as unknown as HnsApi, deleted };
}

const SELFTEST_DEAD = 'hcn-cni-selftest-00000000000000aa';
const SELFTEST_RUNNING = 'hcn-cni-selftest-00000000000000bb';

it("deletes the namespace of a dead self-test's claim, by the id its owner gives, and no other", async () => {
  const { api, deleted } = hns();
  const state = {
    intents: [
      intent(SELFTEST_DEAD, GONE_PID),
      // A self-test running now, in another process: its namespace is in use.
      intent(SELFTEST_RUNNING, RUNNING_PID),
      // A pod's ADD that died: its objects are the audit's to judge by name; it has no derived namespace.
      intent('0123456789abcdef0123456789abcdef', GONE_PID),
    ],
    tombstones: [],
  };
  const removed = await removeDeadSelftestNamespaces({ api, os, log: silentLogger }, state, NOW);
  const id = namespaceIdOf({ containerId: SELFTEST_DEAD, ifname: 'eth0' });
  expect({ removed, deleted }).toEqual({ removed: [id], deleted: [id] });
});

it('deletes nothing while the self-test that claimed it still runs', async () => {
  const { api, deleted } = hns();
  const state = { intents: [intent(SELFTEST_RUNNING, RUNNING_PID)], tombstones: [] };
  expect(await removeDeadSelftestNamespaces({ api, os, log: silentLogger }, state, NOW)).toEqual([]);
  expect(deleted).toEqual([]);
});
