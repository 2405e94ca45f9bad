/**
 * The state store's decisions that must not depend on timing or clocks: a commit past the intent's deadline is
 * refused under the lock; a tombstone voids an intent by naming its id (a clock stepping back changes nothing); the
 * audit's tidy never drops an intent (it may be the only trace of an IPAM allocation).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { hostOs } from '../../src/hns/host-os';
import { intentLiveness } from '../../src/state/liveness';
import { AttachmentChangedError, StateStore } from '../../src/state/store';
import { attachmentRecord, intentRecord, OWNER } from '../helpers/state-records';

const owner = OWNER;
let dir: string;
let clock: number;
let store: StateStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-state-'));
  clock = 1_000_000;
  store = new StateStore(dir, { os: hostOs(), now: () => clock });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const intent = (id: string, deadline = clock + 60_000) => intentRecord(id, { createdAt: clock, deadline });
const record = () => attachmentRecord({ createdAt: clock });

describe('state store', () => {
  it('refuses, under the lock, a commit whose intent passed its deadline (an audit may already have judged it dead)', async () => {
    await store.writeIntent(intent('i1', clock + 1000));
    clock += 1000;
    expect(await store.commitAttachment(record(), 'i1')).toBe('expired');
    expect(store.getAttachment(owner)).toBeUndefined();
  });

  it('commits while the intent is current, and refuses once a DEL voided it', async () => {
    await store.writeIntent(intent('i1'));
    expect(await store.commitAttachment(record(), 'i1')).toBe('committed');
    await store.removeAttachment(owner);
    await store.writeIntent(intent('i2'));
    const voided = await store.tombstone(owner, 'DEL');
    expect(voided?.id).toBe('i2');
    expect(store.getTombstone(owner)?.voids).toEqual(['i2']);
    expect(await store.commitAttachment(record(), 'i2')).toBe('deleted');
  });

  it('a prepared record is invisible until its commit, and discarded (no temp file left) when the commit is refused', async () => {
    const files = () => fs.readdirSync(path.join(dir, 'attachments')).sort();
    await store.writeIntent(intent('i1'));
    const r = record();
    const prepared = store.prepareAttachment(r);
    expect(store.getAttachment(owner)).toBeUndefined();
    expect(store.snapshot().attachments).toEqual([]);
    expect(files()).toEqual([expect.stringMatching(/^\.c1@eth0\.json\..+\.tmp$/)]);
    expect(await store.commitAttachment(r, 'i1', prepared)).toBe('committed');
    expect(files()).toEqual(['c1@eth0.json']);
    expect(store.getAttachment(owner)).toEqual(r);

    await store.removeAttachment(owner);
    await store.writeIntent(intent('i2'));
    await store.tombstone(owner, 'DEL');
    const again = record();
    const refused = store.prepareAttachment(again);
    expect(await store.commitAttachment(again, 'i2', refused)).toBe('deleted');
    expect(files()).toEqual([]);
  });

  it('a crash hook that throws where a prepared record is written fails that commit, not the process', async () => {
    const hooked = new StateStore(dir, {
      os: hostOs(),
      now: () => clock,
      crash: (point) => {
        if (point === 'attachment:tmp-written') throw new Error('crash here');
      },
    });
    await hooked.writeIntent(intent('i1'));
    const r = record();
    await expect(hooked.commitAttachment(r, 'i1', hooked.prepareAttachment(r))).rejects.toThrow('crash here');
    expect(fs.readdirSync(path.join(dir, 'attachments'))).toEqual([]);
    expect(hooked.getIntent(owner)?.id).toBe('i1');
  });

  it('judges an intent voided by the id its tombstone names, whatever the clocks say', () => {
    const live = () => 'same';
    const i = { ...intent('i3'), pidStartTime: 'same' };
    // A tombstone written "later" by a clock, but naming another intent: i3 is a newer ADD and stays live.
    const later = {
      kind: 'tombstone' as const,
      schema: 1 as const,
      ...owner,
      createdAt: clock + 60_000,
      reason: 'DEL',
      planned: [],
      voids: ['i2'],
    };
    expect(intentLiveness(i, later, clock, live).live).toBe(true);
    // A tombstone written "earlier" (the clock stepped back) that names i3: dead.
    const earlier = { ...later, createdAt: clock - 60_000, voids: ['i3'] };
    expect(intentLiveness(i, earlier, clock, live)).toEqual({ live: false, reason: 'voided by a DEL (tombstone)' });
  });

  it("treats an unanswerable process check as live (a guess of 'dead' would delete)", () => {
    const i = { ...intent('i4'), pidStartTime: 'x' };
    const r = intentLiveness(i, undefined, clock, () => {
      throw new Error('access denied');
    });
    expect(r.live).toBe(true);
    expect(r.reason).toMatch(/cannot tell/);
  });

  it('a GC-scoped tombstone leaves a newer intent alone (onlyIntent)', async () => {
    await store.writeIntent(intent('newer'));
    const voided = await store.tombstone(owner, 'GC', { onlyIntent: 'older' });
    expect(voided).toBeUndefined();
    expect(store.getIntent(owner)?.id).toBe('newer');
    expect(store.getTombstone(owner)?.voids).toBeUndefined();
  });

  it('keeps a tombstone that still holds back an IPAM release until it is released', async () => {
    await store.tombstone(owner, 'DEL refused', { ipamPending: true });
    expect(await store.removeTombstone(owner)).toBe(false);
    await store.ipamReleased(owner);
    expect(store.getTombstone(owner)?.ipamPending).toBeUndefined();
    expect(await store.removeTombstone(owner)).toBe(true);
  });

  it("quarantines a record whose owner is not its file name's: pod B's record under pod A's name is not A's", async () => {
    await store.commitAttachment(record());
    const a = { containerId: 'pod-a', ifname: 'eth0' };
    const attachments = path.join(dir, 'attachments');
    fs.copyFileSync(path.join(attachments, 'c1@eth0.json'), path.join(attachments, 'pod-a@eth0.json'));
    expect(store.getAttachment(a)).toBeUndefined();
    expect(store.quarantined()).toEqual([
      expect.objectContaining({ kind: 'attachment', owner: a, reason: 'owner does not match the file name' }),
    ]);
    // B's own record is untouched, and the snapshot shows it once.
    expect(store.getAttachment(owner)).toEqual(record());
    expect(store.snapshot().attachments).toEqual([record()]);
  });

  describe('repair against DEL (src/plugin/verbs/repair.ts)', () => {
    it('a repair claims only while the record it repairs is there, unchanged', async () => {
      const rec = record();
      await store.commitAttachment(rec);
      await store.removeAttachment(owner); // a DEL finished first
      await expect(store.writeIntent(intent('r1'), { requireAttachment: rec })).rejects.toBeInstanceOf(
        AttachmentChangedError,
      );
      expect(store.getIntent(owner)).toBeUndefined();
    });

    it("DEL's removal voids a repair under way: its commit is then refused, and the record stays gone", async () => {
      const rec = record();
      await store.commitAttachment(rec);
      await store.writeIntent(intent('r1'), { requireAttachment: rec });
      expect(await store.removeDeletedAttachment(rec)).toBeUndefined();
      expect(await store.commitAttachment({ ...rec, repairedAt: clock }, 'r1')).toBe('deleted');
      expect(store.getAttachment(owner)).toBeUndefined();
      expect(store.getTombstone(owner)?.voids).toEqual(['r1']);
    });

    it('a repair that committed before the DEL removed the record: the DEL is handed the new record to delete by', async () => {
      const rec = record();
      await store.commitAttachment(rec);
      await store.writeIntent(intent('r1'), { requireAttachment: rec });
      const repaired = { ...rec, repairedAt: clock + 1 };
      expect(await store.commitAttachment(repaired, 'r1')).toBe('committed');
      expect(await store.removeDeletedAttachment(rec)).toEqual(repaired);
      expect(store.getAttachment(owner)).toEqual(repaired);
      expect(await store.removeDeletedAttachment(repaired)).toBeUndefined();
      expect(store.getAttachment(owner)).toBeUndefined();
    });
  });
});
