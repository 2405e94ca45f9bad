/**
 * "Record before intent": at every instant of a commit, the attachment record or the intent claims the objects —
 * the audit lists HNS first and reads the state second, so a moment with neither would let it delete a pod being
 * committed. Likewise a DEL's tombstone is on disk before the intent it voids is gone. Each state write point is
 * made to fail (as a process killed there would), then the state on disk is read back by a fresh store. This is
 * the fast, in-process counterpart of the crash-point matrix.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { hostOs } from '../../src/hns/host-os';
import { StateStore } from '../../src/state/store';
import { attachmentRecord, intentRecord, OWNER } from '../helpers/state-records';

const owner = OWNER;
const EP = 'e1';
const intent = intentRecord('i1');
const record = attachmentRecord();

class Crash extends Error {}
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A store with the intent written, whose writes fail at `at` (every point is only recorded when undefined). */
async function storeWithIntent(at?: string, seen?: string[]): Promise<{ dir: string; store: StateStore }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-claim-'));
  dirs.push(dir);
  await new StateStore(dir, { os: hostOs() }).writeIntent(intent);
  const crash = (point: string) => {
    seen?.push(point);
    if (point === at) throw new Crash(point);
  };
  return { dir, store: new StateStore(dir, { os: hostOs(), crash }) };
}

/** Which records claim EP after a failure at each write point of `step`. */
async function claimsAtEveryPoint(step: (s: StateStore) => Promise<unknown>): Promise<Record<string, string[]>> {
  const points: string[] = [];
  await step((await storeWithIntent(undefined, points)).store);
  expect(points.length).toBeGreaterThan(2);
  const out: Record<string, string[]> = {};
  for (const at of points) {
    const { dir, store } = await storeWithIntent(at);
    await expect(step(store)).rejects.toThrow(Crash);
    const fresh = new StateStore(dir, { os: hostOs() });
    const claims: string[] = [];
    if (fresh.getAttachment(owner)?.endpoint.id === EP) claims.push('record');
    if (fresh.getIntent(owner)?.planned.some((p) => p.id === EP)) claims.push('intent');
    const tomb = fresh.getTombstone(owner);
    if (tomb?.planned.some((p) => p.id === EP) && tomb.voids?.includes(intent.id)) claims.push('tombstone');
    out[at] = claims;
  }
  return out;
}

it('a commit writes the record before it removes the intent: one of them claims the endpoint at every point', async () => {
  const claims = await claimsAtEveryPoint((s) => s.commitAttachment(record, intent.id));
  expect(Object.entries(claims).filter(([, c]) => c.length === 0)).toEqual([]);
  // And the order is the one stated: record written (both claim), then the intent removed (the record alone).
  expect(claims['attachment:written']).toEqual(['record', 'intent']);
});

it("a DEL's tombstone is written before the intent it voids is removed", async () => {
  const claims = await claimsAtEveryPoint((s) => s.tombstone(owner, 'DEL'));
  expect(Object.entries(claims).filter(([, c]) => c.length === 0)).toEqual([]);
  expect(claims['tombstone:written']).toEqual(['intent', 'tombstone']);
});
