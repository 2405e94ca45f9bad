/**
 * processStartTime: a token that is stable for a live process, differs between processes, and is null for a pid
 * with no live process behind it (exited, zombie, never existed).
 */
import { spawn, spawnSync } from 'child_process';

import type { NativeHcn } from '../../src/hns/native-types';
import { loadAddon } from './helpers/addon';

let hcn: NativeHcn;

beforeAll(() => {
  hcn = loadAddon();
});

test('is stable for this process and looks like clock ticks', () => {
  const token = hcn.processStartTime(process.pid);
  expect(token).toMatch(/^\d+$/);
  expect(hcn.processStartTime(process.pid)).toBe(token);
});

test('differs for another live process', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    await new Promise((resolve) => child.once('spawn', resolve));
    const token = hcn.processStartTime(child.pid!);
    expect(token).toMatch(/^\d+$/);
    expect(token).not.toBe(hcn.processStartTime(process.pid));
    expect(hcn.processStartTime(child.pid!)).toBe(token);
  } finally {
    child.kill('SIGKILL');
  }
});

test('is null once the process has exited', () => {
  const child = spawnSync('true');
  expect(child.status).toBe(0);
  expect(hcn.processStartTime(child.pid!)).toBeNull();
});

test('is null for a zombie (exited but not reaped)', async () => {
  // sh starts a short sleep in the background and then becomes a long sleep that never reaps it.
  const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const zombiePid = Number(
      await new Promise<string>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(d.toString()))),
    );
    expect(hcn.processStartTime(zombiePid)).toMatch(/^\d+$/);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(hcn.processStartTime(zombiePid)).toBeNull();
  } finally {
    parent.kill('SIGKILL');
  }
});

test('is null for a pid that never existed', () => {
  expect(hcn.processStartTime(2147483647)).toBeNull();
  expect(hcn.processStartTime(0)).toBeNull();
});

test('rejects what is not a pid', () => {
  for (const bad of [-1, 1.5, NaN, '1', 2 ** 31]) {
    expect(() => hcn.processStartTime(bad as number)).toThrow(expect.objectContaining({ name: 'TypeError' }));
  }
});
