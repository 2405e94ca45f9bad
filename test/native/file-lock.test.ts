/**
 * tryLockFile/unlockFile: exclusive, non-blocking, per open file (two handles in one process exclude each other),
 * across processes, and released by the kernel when the holder dies.
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import type { NativeHcn } from '../../src/hns/native-types';
import { addonPath, loadAddon } from './helpers/addon';

let hcn: NativeHcn;
let dir: string;
let file: string;

beforeAll(() => {
  hcn = loadAddon();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-lock-'));
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

beforeEach(() => {
  file = path.join(dir, `${expect.getState().currentTestName?.replace(/\W+/g, '-')}.lock`);
});

/** What tryLockFile returns in a separate process. */
function tryInChild(lockFile: string): number | null {
  const child = spawnSync(
    process.execPath,
    [
      '-e',
      'process.stdout.write(JSON.stringify(require(process.argv[1]).tryLockFile(process.argv[2])))',
      addonPath,
      lockFile,
    ],
    { encoding: 'utf8' },
  );
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout);
}

/** A child that takes the lock, says so, and then waits to be killed. */
async function holderChild(lockFile: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `
    const handle = require(process.argv[1]).tryLockFile(process.argv[2]);
    process.stdout.write(handle === null ? 'busy\\n' : 'locked\\n');
    setInterval(() => {}, 1000);`,
      addonPath,
      lockFile,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const first = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString())),
  );
  expect(first).toBe('locked\n');
  return child;
}

test('a second handle in the same process is refused until the first is unlocked', () => {
  const first = hcn.tryLockFile(file);
  expect(typeof first).toBe('number');
  expect(hcn.tryLockFile(file)).toBeNull();
  expect(hcn.tryLockFile(file)).toBeNull(); // a refused attempt leaves nothing behind that would hold the lock
  hcn.unlockFile(first!);
  const again = hcn.tryLockFile(file);
  expect(typeof again).toBe('number');
  expect(again).not.toBe(first);
  hcn.unlockFile(again!);
});

test('creates the file with mode 0600', () => {
  const handle = hcn.tryLockFile(file)!;
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  hcn.unlockFile(handle);
});

test('another process is refused while this one holds the lock, and gets it afterwards', () => {
  const handle = hcn.tryLockFile(file)!;
  expect(tryInChild(file)).toBeNull();
  hcn.unlockFile(handle);
  expect(typeof tryInChild(file)).toBe('number');
});

test('the lock is released when the holding process is SIGKILLed', async () => {
  const child = await holderChild(file);
  try {
    expect(hcn.tryLockFile(file)).toBeNull();
  } finally {
    child.kill('SIGKILL');
  }
  await new Promise((resolve) => child.once('exit', resolve));
  const handle = hcn.tryLockFile(file);
  expect(typeof handle).toBe('number');
  hcn.unlockFile(handle!);
});

test('a child started while the lock is held does not inherit it (O_CLOEXEC)', async () => {
  const handle = hcn.tryLockFile(file)!;
  const bystander = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    hcn.unlockFile(handle);
    // If the child had inherited the descriptor, the lock would live on in it.
    const again = hcn.tryLockFile(file);
    expect(typeof again).toBe('number');
    hcn.unlockFile(again!);
  } finally {
    bystander.kill('SIGKILL');
  }
});

test('unlocking a handle that is not held throws a RangeError', () => {
  const handle = hcn.tryLockFile(file)!;
  hcn.unlockFile(handle);
  expect(() => hcn.unlockFile(handle)).toThrow(
    expect.objectContaining({ name: 'RangeError', message: expect.stringMatching(/no lock is held/) }),
  );
  expect(() => hcn.unlockFile(987654)).toThrow(expect.objectContaining({ name: 'RangeError' }));
});

test('a path that cannot be opened throws with errno, rather than reading as "busy"', () => {
  expect(() => hcn.tryLockFile(path.join(dir, 'missing-dir', 'x.lock'))).toThrow(
    expect.objectContaining({ errno: 2, message: expect.stringMatching(/tryLockFile: open .*No such file/) }),
  );
});
