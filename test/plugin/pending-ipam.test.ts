/**
 * A kept IP (tombstone ipamPending) is released only on the word of an HNS listing that began after its tombstone
 * was written: a tombstone written since may name an endpoint that listing could not have seen. Which tombstones
 * those are is known without the wall clock (the store's clock is injected and stepped here).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Attachment, IpamClient } from '../../src/cni/types';
import { hostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import type { EndpointInfo, HnsApi } from '../../src/hns/api';
import { audit } from '../../src/orphans/audit';
import { releasePendingIpam } from '../../src/plugin/pending-ipam';
import { ownerKey, tombstoneWrite, type TombstoneRecord } from '../../src/state/records';
import { StateStore } from '../../src/state/store';
import { OWNER, intentRecord } from '../helpers/state-records';
import { endpointName } from '../../src/orphans/ownership';
import { until } from './support';

let dir: string;
let clock: number;
let store: StateStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-pending-'));
  clock = 1_000_000;
  store = new StateStore(dir, { os: hostOs(), now: () => clock });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const empty = { listNetworks: async () => [], listEndpoints: async () => [] } as unknown as HnsApi;

/** A report's view of tombstones the audit read before it listed HNS, and no claim of any owner. */
function readBeforeListing(tombstones: TombstoneRecord[]) {
  return { writtenBeforeListing: new Set(tombstones.map(tombstoneWrite)), claimed: new Set<string>() };
}

function fakeIpam(released: Attachment[]): IpamClient {
  return { configured: true, delFor: async (a: Attachment) => void released.push(a) } as unknown as IpamClient;
}

const Q = { containerId: 'q', ifname: 'eth0' };

/** HNS whose endpoint listing answers (with nothing) only when the test says so. */
function heldListing(): { api: HnsApi; answer: () => void; asked: () => boolean } {
  let answer: (() => void) | undefined;
  const api = {
    listNetworks: async () => [],
    listEndpoints: () => new Promise<[]>((r) => (answer = () => r([]))),
  } as unknown as HnsApi;
  return { api, answer: () => answer!(), asked: () => answer !== undefined };
}

const auditWith = (api: HnsApi) =>
  audit({ api, store, os: hostOs(), log: silentLogger, now: () => clock, graceMs: 60_000 });

it('releases a kept IP whose tombstone was on disk before the listing began, and not one written after', async () => {
  const released: Attachment[] = [];
  // Written while the listing runs: that listing may not have seen its endpoint. Kept.
  const first = heldListing();
  const running = auditWith(first.api);
  expect(first.asked()).toBe(true);
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'cbr0' });
  first.answer();
  await releasePendingIpam(store, { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger }, await running);
  expect(released).toEqual([]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBe(true);

  // A listing begun after it, with nothing of the owner left: released, and the flag cleared.
  clock += 1_000;
  await releasePendingIpam(
    store,
    { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger },
    await auditWith(empty),
  );
  expect(released.map((a) => a.containerId)).toEqual([OWNER.containerId]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBeUndefined();
});

it('a wall clock stepping back while the listing runs does not make a tombstone written since look older', async () => {
  const released: Attachment[] = [];
  const held = heldListing();
  const running = auditWith(held.api);
  // The node's clock steps back ten minutes; then a DEL whose endpoint HNS refused to delete keeps its IP.
  clock -= 600_000;
  await store.tombstone(Q, 'DEL could not delete its endpoint', { ipamPending: true, cniNetwork: 'cbr0' });
  held.answer();
  await releasePendingIpam(store, { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger }, await running);
  expect(released).toEqual([]);
  expect(store.getTombstone(Q)?.ipamPending).toBe(true);
  // The clock steps forward again: the next listing, begun after the DEL, is the one that may release it.
  clock += 1_200_000;
  await releasePendingIpam(
    store,
    { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger },
    await auditWith(empty),
  );
  expect(released.map((a) => a.containerId)).toEqual(['q']);
});

it('keeps the IP of an owner that has a committed record again, whatever tombstone of it is left', async () => {
  const released: Attachment[] = [];
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'cbr0' });
  clock += 1_000;
  const report = await auditWith(empty);
  // The same owner was added again meanwhile: its record claims the address an IPAM release by owner would free.
  await releasePendingIpam(
    store,
    { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger },
    { ...report, claimed: new Set([ownerKey(OWNER)]) },
  );
  expect(released).toEqual([]);
});

it('a kept IP whose tombstone names its holders stays kept when the report has no endpoint listing; the next one is still released', async () => {
  const migrated = { containerId: 'migrated', ifname: 'eth0' };
  await store.tombstone(migrated, 'DEL kept the IP: another HNS endpoint holds it', {
    ipamPending: true,
    heldBy: [{ id: 'peer-ep', name: 'migrated_cbr0', address: '10.244.1.7' }],
    cniNetwork: 'cbr0',
  });
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'cbr0' });
  const byOwner = (o: { containerId: string }) =>
    store.snapshot().tombstones.find((t) => t.containerId === o.containerId)!;
  const tombstones = [byOwner(migrated), byOwner(OWNER)];
  clock += 1;
  const released: Attachment[] = [];
  // No `endpoints` in the report: nothing says the holder is gone.
  const report = { remainingOwners: new Set<string>(), tombstones, ...readBeforeListing(tombstones) };
  await releasePendingIpam(store, { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger }, report);
  expect(released.map((a) => a.containerId)).toEqual([OWNER.containerId]);
  expect(store.getTombstone(migrated)?.ipamPending).toBe(true);
});

it('keeps an IP while the audit still lists an object of its owner, however old its tombstone', async () => {
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'cbr0' });
  const [tomb] = store.snapshot().tombstones;
  const released: Attachment[] = [];
  const report = { remainingOwners: new Set([ownerKey(OWNER)]), tombstones: [tomb!], ...readBeforeListing([tomb!]) };
  await releasePendingIpam(store, { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger }, report);
  expect(released).toEqual([]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBe(true);
});

it("releases a kept IP only through its own CNI network's IPAM", async () => {
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'other-network' });
  const [tomb] = store.snapshot().tombstones;
  const released: Attachment[] = [];
  const report = { remainingOwners: new Set<string>(), tombstones: [tomb!], ...readBeforeListing([tomb!]) };
  await releasePendingIpam(store, { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger }, report);
  expect(released).toEqual([]);
  await releasePendingIpam(store, { ipam: fakeIpam(released), network: 'other-network', log: silentLogger }, report);
  expect(released.map((a) => a.containerId)).toEqual([OWNER.containerId]);
});

it('keeps the IP an earlier DEL kept while a new ADD of the same pod is under way (its intent claims the owner)', async () => {
  const released: Attachment[] = [];
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'cbr0' });
  clock += 1_000;
  // A new ADD of the same pod: IPAM releases by owner, so a release now would free the address this ADD holds.
  await store.writeIntent(intentRecord('i-new-add'));
  await releasePendingIpam(
    store,
    { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger },
    await auditWith(empty),
  );
  expect(released).toEqual([]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBe(true);
});

it('keeps the "IP kept" mark when the IPAM release fails, so the next audit tries again', async () => {
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'cbr0' });
  clock += 1_000;
  const failing = {
    configured: true,
    delFor: async () => {
      throw new Error('IPAM: connection refused');
    },
  } as unknown as IpamClient;
  const errors = await releasePendingIpam(
    store,
    { ipam: failing, network: 'cbr0', log: silentLogger },
    await auditWith(empty),
  );
  expect(errors).toHaveLength(1);
  expect(store.getTombstone(OWNER)?.ipamPending).toBe(true);
  // The next audit, with IPAM answering again, releases it.
  const released: Attachment[] = [];
  clock += 1_000;
  await releasePendingIpam(
    store,
    { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger },
    await auditWith(empty),
  );
  expect(released.map((a) => a.containerId)).toEqual([OWNER.containerId]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBeUndefined();
});

it('keeps a kept IP when its named holder is gone but another endpoint now holds that address', async () => {
  await store.tombstone(OWNER, 'DEL kept the IP: another HNS endpoint holds it', {
    ipamPending: true,
    heldBy: [{ id: 'peer-ep', name: 'migrated_cbr0', address: '10.244.1.7' }],
    cniNetwork: 'cbr0',
  });
  clock += 1_000;
  const other: EndpointInfo = {
    id: 'other-ep',
    name: 'someone-else',
    networkId: 'n',
    ips: [{ address: '10.244.1.7' }],
  };
  const listing = { listNetworks: async () => [], listEndpoints: async () => [other] } as unknown as HnsApi;
  const report = await auditWith(listing);
  const released: Attachment[] = [];
  await releasePendingIpam(store, { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger }, report);
  expect(released).toEqual([]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBe(true);
  // Once no endpoint holds it, it is released.
  clock += 1_000;
  await releasePendingIpam(
    store,
    { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger },
    await auditWith(empty),
  );
  expect(released.map((a) => a.containerId)).toEqual([OWNER.containerId]);
});

it('a tombstone rewritten while the listing runs (a later DEL keeping the IP) is not released on that listing', async () => {
  // A first DEL left a tombstone without a kept IP, on disk before the listing.
  await store.tombstone(OWNER, 'DEL', { cniNetwork: 'cbr0' });
  clock += 1_000;
  const held = heldListing();
  const running = auditWith(held.api);
  expect(held.asked()).toBe(true);
  // A later DEL of the same pod rewrites it: its endpoint could not be deleted, the IP is kept.
  await store.tombstone(OWNER, 'DEL could not delete its endpoint', { ipamPending: true, cniNetwork: 'cbr0' });
  held.answer();
  const released: Attachment[] = [];
  await releasePendingIpam(store, { ipam: fakeIpam(released), network: 'cbr0', log: silentLogger }, await running);
  expect(released).toEqual([]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBe(true);
});

it("the audit's tidy keeps a tombstone rewritten while its sweep ran, however old its first write", async () => {
  await store.tombstone(OWNER, 'DEL', { cniNetwork: 'cbr0' });
  // Past its grace by the time the audit tidies.
  clock += 3_600_000;
  // HNS lists a leaked endpoint of ours (no claim): the sweep deletes it, and HNS holds that delete.
  const leak: EndpointInfo = { id: 'leak', name: endpointName(Q), networkId: 'n', ips: [] };
  let finishDelete: (() => void) | undefined;
  const api = {
    listNetworks: async () => [],
    listEndpoints: async () => (finishDelete ? [] : [leak]),
    deleteEndpoint: () => new Promise<'deleted'>((r) => (finishDelete = () => r('deleted'))),
  } as unknown as HnsApi;
  const running = auditWith(api);
  await until(() => (finishDelete ? true : undefined), 5_000, 'the sweep to delete');
  // A later DEL of the same pod rewrites the tombstone meanwhile (it planned an object HNS may still complete).
  await store.tombstone(OWNER, 'DEL again', {
    cniNetwork: 'cbr0',
    extra: [{ kind: 'endpoint', name: 'late', id: 'e-late' }],
  });
  const rewritten = store.getTombstone(OWNER)!;
  finishDelete!();
  const report = await running;
  expect(report.sweep?.deleted.map((j) => j.id)).toEqual(['leak']);
  expect(store.getTombstone(OWNER)).toEqual(rewritten);
});
