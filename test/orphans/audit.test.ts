/**
 * The audit's order and housekeeping: it lists HNS before it reads the state (a claim written during the listing is
 * seen); tombstones go once nothing of theirs is left and their grace period is over; intents are never dropped by it.
 * And what the audit deletes is never committed afterwards by a clock that stepped back.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { EndpointInfo, HnsApi } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import { endpointName } from '../../src/orphans/ownership';
import { ClaimRegistry } from '../../src/state/claims';
import { StateStore } from '../../src/state/store';
import { attachmentRecord, intentRecord, OWNER } from '../helpers/state-records';

const empty = { listNetworks: async () => [], listEndpoints: async () => [] } as unknown as HnsApi;

it('drops an old tombstone with nothing left in HNS, but keeps a dead intent (it may be the only trace of an IP)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-audit-'));
  try {
    let clock = 1_000_000;
    const store = new StateStore(dir, { os: hostOs(), now: () => clock });
    const a = { containerId: 'dead-add', ifname: 'eth0' };
    await store.writeIntent({
      kind: 'intent',
      schema: 1,
      id: 'i1',
      ...a,
      planned: [],
      pid: 2 ** 22 + 7,
      pidStartTime: 'x',
      createdAt: clock,
      deadline: clock + 10,
    });
    await store.tombstone({ containerId: 'old-del', ifname: 'eth0' }, 'DEL');
    clock += 10 * 60_000;
    await audit({ api: empty, store, os: hostOs(), log: silentLogger, now: () => clock, graceMs: 60_000 });
    const snap = store.snapshot();
    expect(snap.tombstones).toEqual([]);
    expect(snap.intents.map((i) => i.id)).toEqual(['i1']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** HNS with OWNER's endpoint e1, until it is deleted. */
function ownersEndpoint(): { api: HnsApi; deleted: string[] } {
  const deleted: string[] = [];
  const ep = { id: 'e1', name: endpointName(OWNER), networkId: 'n1', ips: [] };
  const api = {
    listNetworks: async () => [],
    listEndpoints: async () => (deleted.includes('e1') ? [] : [ep]),
    deleteEndpoint: async (id: string) => void deleted.push(id),
  } as unknown as HnsApi;
  return { api, deleted };
}

it('voids an intent past its deadline whose process runs before deleting what it planned: a clock stepping back cannot commit it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-audit-'));
  try {
    let clock = 1_000_000;
    const store = new StateStore(dir, { os: hostOs(), now: () => clock });
    // An ADD of this (running) process that planned endpoint e1 and has not committed yet.
    await store.writeIntent(intentRecord('i1', { deadline: clock + 1_000, endpointId: 'e1' }));
    const { api, deleted } = ownersEndpoint();
    clock += 5_000; // the clock steps forward past the intent's deadline: the audit deletes its endpoint
    await audit({ api, store, os: hostOs(), log: silentLogger, now: () => clock, graceMs: 60_000 });
    expect(deleted).toEqual(['e1']);
    clock -= 10_000; // and back: by the clock, the deadline has not passed
    expect(await store.commitAttachment(attachmentRecord({ endpointId: 'e1' }), 'i1')).toBe('deleted');
    expect(store.getAttachment(OWNER)).toBeUndefined();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it("voids another state directory's intent past its deadline whose process runs before deleting what it planned", async () => {
  // Two conflists with two state directories on one node: the audit of the first deletes what an ADD of the second
  // planned once that ADD's deadline has passed — and must void it there, as it would in its own directory.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-audit-'));
  try {
    let clock = 1_000_000;
    const registry = new ClaimRegistry(path.join(tmp, 'claims'));
    const options = { os: hostOs(), now: () => clock, registry };
    const first = new StateStore(path.join(tmp, 'first'), options);
    const second = new StateStore(path.join(tmp, 'second'), options);
    await second.writeIntent(intentRecord('i1', { deadline: clock + 1_000, endpointId: 'e1' }));
    const { api, deleted } = ownersEndpoint();
    clock += 5_000; // past the intent's deadline: the first directory's audit deletes its endpoint
    await audit({ api, store: first, os: hostOs(), log: silentLogger, now: () => clock, graceMs: 60_000 });
    expect(deleted).toEqual(['e1']);
    expect(second.getTombstone(OWNER)?.voids).toEqual(['i1']);
    clock -= 10_000; // and back: by the clock, the deadline has not passed
    expect(await second.commitAttachment(attachmentRecord({ endpointId: 'e1' }), 'i1')).toBe('deleted');
    expect(second.getAttachment(OWNER)).toBeUndefined();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

describe('the audit', () => {
  let dir: string;
  let clock: number;
  let store: StateStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-audit-'));
    clock = 1_000_000;
    store = new StateStore(dir, { os: hostOs(), now: () => clock });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const pod = { containerId: 'pod-p', ifname: 'eth0' };
  const listing = (endpoints: EndpointInfo[]) =>
    ({ listNetworks: async () => [], listEndpoints: async () => endpoints }) as unknown as HnsApi;
  const run = (api: HnsApi, extra: { dryRun?: boolean; graceMs?: number } = {}) =>
    audit({ api, store, os: hostOs(), log: silentLogger, now: () => clock, graceMs: 60_000, ...extra });

  it('reads the state after HNS answered the listing: a claim written while HNS was listing is seen', async () => {
    const listed: EndpointInfo = { id: 'e-p', name: endpointName(pod), networkId: 'n', ips: [] };
    // The ADD writes its intent, then creates the endpoint; the listing that shows the endpoint ends after both.
    const api = {
      listNetworks: async () => [],
      listEndpoints: async () => {
        await store.writeIntent(intentRecord('i-p', { owner: pod, endpointId: 'e-p', createdAt: clock }));
        return [listed];
      },
    } as unknown as HnsApi;
    const report = await run(api, { dryRun: true });
    expect(report.plan.judged.map((j) => [j.id, j.verdict])).toEqual([['e-p', 'in-flight']]);
    expect(report.counts.orphan).toBe(0);
  });

  it('keeps a tombstone past its grace period while its owner still has an object in HNS', async () => {
    await store.tombstone(pod, 'DEL without a committed attachment');
    clock += 10 * 60_000;
    // Attached to a namespace and not held by the DEL: protected, so still there after the audit.
    const attached: EndpointInfo = { id: 'e-p', name: endpointName(pod), networkId: 'n', ips: [], namespaceId: 'ns' };
    const report = await run(listing([attached]));
    expect(report.plan.judged.map((j) => j.verdict)).toEqual(['protected']);
    expect(store.getTombstone(pod)).toBeDefined();
    // Once nothing of the owner is listed, the next audit drops it.
    await run(listing([]));
    expect(store.getTombstone(pod)).toBeUndefined();
  });

  it('keeps a tombstone with nothing left in HNS until its grace period is over, then drops it', async () => {
    await store.tombstone(pod, 'DEL without a committed attachment');
    clock += 30_000;
    await run(listing([]), { graceMs: 60_000 });
    expect(store.getTombstone(pod)).toBeDefined();
    clock += 10 * 60_000;
    await run(listing([]), { graceMs: 60_000 });
    expect(store.getTombstone(pod)).toBeUndefined();
  });
});
