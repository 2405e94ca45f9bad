/**
 * A kept IP (tombstone ipamPending) is released only on the word of an HNS listing that began after its tombstone
 * was written: a tombstone written since may name an endpoint that listing could not have seen.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Attachment, IpamClient } from '../../src/cni/types';
import { hostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import { releasePendingIpam } from '../../src/plugin/pending-ipam';
import { ownerKey } from '../../src/state/records';
import { StateStore } from '../../src/state/store';
import { OWNER } from '../helpers/state-records';

let dir: string;
let clock: number;
let store: StateStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-pending-'));
  clock = 1_000_000;
  store = new StateStore(dir, { os: hostOs(), now: () => clock });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function fakeIpam(released: Attachment[]): IpamClient {
  return { configured: true, delFor: async (a: Attachment) => void released.push(a) } as unknown as IpamClient;
}

it('releases a kept IP whose tombstone predates the listing, and not one written after the listing began', async () => {
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'cbr0' });
  const [tomb] = store.snapshot().tombstones;
  const released: Attachment[] = [];
  const report = { remainingOwners: new Set<string>(), tombstones: [tomb!] };

  // The listing began when the tombstone was written: it may not have seen the endpoint. Kept.
  await releasePendingIpam(store, fakeIpam(released), 'cbr0', { ...report, listedAt: tomb!.createdAt }, silentLogger);
  expect(released).toEqual([]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBe(true);

  // A listing begun after it, with nothing of the owner left: released, and the flag cleared.
  await releasePendingIpam(
    store,
    fakeIpam(released),
    'cbr0',
    { ...report, listedAt: tomb!.createdAt + 1 },
    silentLogger,
  );
  expect(released.map((a) => a.containerId)).toEqual([OWNER.containerId]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBeUndefined();
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
  const report = { remainingOwners: new Set<string>(), tombstones, listedAt: clock };
  await releasePendingIpam(store, fakeIpam(released), 'cbr0', report, silentLogger);
  expect(released.map((a) => a.containerId)).toEqual([OWNER.containerId]);
  expect(store.getTombstone(migrated)?.ipamPending).toBe(true);
});

it('keeps an IP while the audit still lists an object of its owner, however old its tombstone', async () => {
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'cbr0' });
  const [tomb] = store.snapshot().tombstones;
  const released: Attachment[] = [];
  const report = { remainingOwners: new Set([ownerKey(OWNER)]), tombstones: [tomb!], listedAt: tomb!.createdAt + 1 };
  await releasePendingIpam(store, fakeIpam(released), 'cbr0', report, silentLogger);
  expect(released).toEqual([]);
  expect(store.getTombstone(OWNER)?.ipamPending).toBe(true);
});

it("releases a kept IP only through its own CNI network's IPAM", async () => {
  await store.tombstone(OWNER, 'DEL refused', { ipamPending: true, cniNetwork: 'other-network' });
  const [tomb] = store.snapshot().tombstones;
  const released: Attachment[] = [];
  const report = { remainingOwners: new Set<string>(), tombstones: [tomb!], listedAt: tomb!.createdAt + 1 };
  await releasePendingIpam(store, fakeIpam(released), 'cbr0', report, silentLogger);
  expect(released).toEqual([]);
  await releasePendingIpam(store, fakeIpam(released), 'other-network', report, silentLogger);
  expect(released.map((a) => a.containerId)).toEqual([OWNER.containerId]);
});
