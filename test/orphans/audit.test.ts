/** The audit's housekeeping: tombstones go once nothing of theirs is left; intents are never dropped by it. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { HnsApi } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import { StateStore } from '../../src/state/store';

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
