/**
 * Which state writes are fsynced. Records and tombstones outlive the processes that write them, so they are durable
 * (fsync of the file, then of its directory after the rename or unlink). An intent claims its objects only while its
 * process runs, and a power cut ends every process, so it is written without fsync (src/state/store.ts `write`).
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

it('an intent is written without fsync; the record that replaces it, and the record removal, are fsynced', async () => {
  await store.writeIntent(intent);
  expect(fs.readdirSync(path.join(dir, 'intents'))).toEqual(['c1@eth0.json']);
  expect(fsyncs).toEqual([]);

  expect(await store.commitAttachment(record, 'i1')).toBe('committed');
  const attachments = path.join(dir, 'attachments');
  // The temp file (renamed since, so its descriptor's path is the temp name), then the directory.
  expect(fsyncs).toEqual([expect.stringMatching(/^.*\/attachments\/\.c1@eth0\.json\..*\.tmp$/), attachments]);

  fsyncs.length = 0;
  expect(await store.removeAttachment(owner)).toBe(true);
  expect(fsyncs).toEqual([attachments]);
});
