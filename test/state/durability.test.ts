/**
 * Which state writes are fsynced (src/state/store.ts WRITE_DURABILITY). A tombstone outlives its DEL and may hold back
 * an IPAM release: fsync of the file, then of its directory. An attachment record is fsynced before its rename only
 * (after a power cut it is whole or absent, never torn), and its removal not at all. An intent claims its objects only
 * while its process runs, and a power cut ends every process: no fsync.
 * fs is mocked for this file only, to count fsyncs; everything else is the real fs.
 */
import * as os from 'os';
import * as path from 'path';

const fsyncs: string[] = [];
jest.mock('fs', () => {
  const real = jest.requireActual<typeof import('fs')>('fs');
  return {
    ...real,
    fsyncSync: (fd: number) => {
      fsyncs.push(real.readlinkSync(`/proc/self/fd/${fd}`));
      real.fsyncSync(fd);
    },
    fsync: (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      fsyncs.push(real.readlinkSync(`/proc/self/fd/${fd}`));
      real.fsync(fd, cb);
    },
  };
});

import * as fs from 'fs';
import { hostOs } from '../../src/hns/host-os';
import { StateStore } from '../../src/state/store';
import { attachmentRecord, intentRecord, OWNER } from '../helpers/state-records';

const owner = OWNER;
let dir: string;
let store: StateStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-durability-'));
  store = new StateStore(dir, { os: hostOs() });
  fsyncs.length = 0;
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const intent = intentRecord('i1', { createdAt: Date.now(), deadline: Date.now() + 60_000 });
const record = attachmentRecord({ createdAt: Date.now() });

it('an intent is written without fsync; the record that replaces it is fsynced before its rename only, its removal not', async () => {
  await store.writeIntent(intent);
  expect(fs.readdirSync(path.join(dir, 'intents'))).toEqual(['c1@eth0.json']);
  expect(fsyncs).toEqual([]);

  expect(await store.commitAttachment(record, 'i1')).toBe('committed');
  // The temp file (renamed since, so its descriptor's path is the temp name); not the directory.
  expect(fsyncs).toEqual([expect.stringMatching(/^.*\/attachments\/\.c1@eth0\.json\..*\.tmp$/)]);

  fsyncs.length = 0;
  expect(await store.removeAttachment(owner)).toBe(true);
  expect(fsyncs).toEqual([]);
});

it('a record prepared ahead of its commit: the same, its temp file fsynced before the rename and the directory not', async () => {
  await store.writeIntent(intent);
  const prepared = store.prepareAttachment(record);
  expect(await store.commitAttachment(record, 'i1', prepared)).toBe('committed');
  expect(fsyncs).toEqual([expect.stringMatching(/^.*\/attachments\/\.c1@eth0\.json\..*\.tmp$/)]);
  expect(fs.readdirSync(path.join(dir, 'attachments'))).toEqual(['c1@eth0.json']);
});

it('a tombstone is fsynced, file and directory', async () => {
  await store.tombstone(owner, 'DEL without a record');
  expect(fsyncs).toEqual([
    expect.stringMatching(/^.*\/tombstones\/\.c1@eth0\.json\..*\.tmp$/),
    path.join(dir, 'tombstones'),
  ]);
});
