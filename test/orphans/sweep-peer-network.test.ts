/**
 * A previous plugin's leaked network (the `adopt` opt-in) is removed only when a fresh listing shows no endpoint on
 * it: HNS cascades a network's delete to every endpoint on it, so a listing that cannot be had keeps the network.
 */
import type { EndpointInfo, HnsApi } from '../../src/hns/api';
import { silentLogger } from '../../src/log/logger';
import type { Judged } from '../../src/orphans/detect';
import { sweep } from '../../src/orphans/sweep';

const peerNet: Judged = {
  kind: 'network',
  id: 'azure-net',
  name: 'azure',
  verdict: 'orphan',
  reason: 'a leaked network of a previous plugin',
  peer: 'azure',
};

/** HNS whose endpoint listing and query answer with `listing` (or refuse), recording every delete. */
function hns(listing: () => Promise<EndpointInfo[]>): { api: HnsApi; deleted: string[] } {
  const deleted: string[] = [];
  const api = {
    listEndpoints: listing,
    findEndpoints: listing,
    listNetworks: async () => [],
    deleteNetwork: async (id: string) => {
      deleted.push(id);
      return 'deleted';
    },
  } as unknown as HnsApi;
  return { api, deleted };
}

const deps = (api: HnsApi) => ({ api, stillOrphan: () => true, log: silentLogger });
const plan = { judged: [peerNet], endpoints: [], networks: [peerNet] };

it("keeps a previous plugin's leaked network when the re-check's endpoint listing fails", async () => {
  const refused = hns(() => Promise.reject(new Error('HNS refused the listing (0x80070005)')));
  const result = await sweep(plan, deps(refused.api));
  expect(refused.deleted).toEqual([]);
  expect(result.deleted).toEqual([]);
  expect(result.skipped.map((s) => s.object.id)).toEqual(['azure-net']);
});

it("removes a previous plugin's leaked network when the re-check lists no endpoint on it, and keeps it while one is", async () => {
  const onIt: EndpointInfo = { id: 'e', name: 'pod-eth0', networkId: 'AZURE-NET', ips: [] };
  const busy = hns(async () => [onIt]);
  await sweep(plan, deps(busy.api));
  expect(busy.deleted).toEqual([]);
  const empty = hns(async () => []);
  const result = await sweep(plan, deps(empty.api));
  expect(result.deleted.map((j) => j.id)).toEqual(['azure-net']);
});
