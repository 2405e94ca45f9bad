/**
 * The audit's housekeeping: tombstones go once nothing of theirs is left; intents are never dropped by it. And what
 * the audit deletes is never committed afterwards by a clock that stepped back.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { HnsApi } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import { endpointName } from '../../src/orphans/ownership';
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

it('voids an intent past its deadline whose process runs before deleting what it planned: a clock stepping back cannot commit it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-audit-'));
  try {
    let clock = 1_000_000;
    const store = new StateStore(dir, { os: hostOs(), now: () => clock });
    // An ADD of this (running) process that planned endpoint e1 and has not committed yet.
    await store.writeIntent(intentRecord('i1', { deadline: clock + 1_000, endpointId: 'e1' }));
    const deleted: string[] = [];
    const ep = { id: 'e1', name: endpointName(OWNER), networkId: 'n1', ips: [] };
    const api = {
      listNetworks: async () => [],
      listEndpoints: async () => (deleted.includes('e1') ? [] : [ep]),
      deleteEndpoint: async (id: string) => void deleted.push(id),
    } as unknown as HnsApi;
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
