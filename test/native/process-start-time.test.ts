/**
 * processStartTime: a token that is stable for a live process, differs between processes, and is null for a pid
 * with no live process behind it (exited, zombie, never existed).
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';

import type { NativeHcn } from '../../src/hns/native-types';
import { until } from '../plugin/support';
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

/** The state letter of /proc/<pid>/stat (R, S, Z, …), or undefined once the pid is gone. */
function procState(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

test('is null for a zombie (exited but not reaped)', async () => {
  // sh starts a long sleep in the background and then becomes another long sleep that never reaps it; the test ends
  // the background one when it is ready to look (no short-lived child racing the first look).
  const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const zombiePid = Number(
      await new Promise<string>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(d.toString()))),
    );
    expect(hcn.processStartTime(zombiePid)).toMatch(/^\d+$/);
    process.kill(zombiePid, 'SIGKILL');
    await until(() => (procState(zombiePid) === 'Z' ? true : undefined), 20_000, 'the child to be a zombie');
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
