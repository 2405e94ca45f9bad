/**
 * A runtime may hand the plugin a non-blocking stdin. Reading it used to retry EAGAIN in a tight
 * loop, a core at 100 % for as long as the writer took. The plugin here gets a stdin set to O_NONBLOCK, nothing to
 * read for a while, then the configuration. The CPU time the child uses while it waits — from /proc, utime + stime — must be a small fraction
 * of the wait, and the answer must still be right.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import { CLI } from '../helpers/cni-harness';
import { until } from '../plugin/support';

const TICKS = 100; // USER_HZ on Linux

function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS; // utime, stime (fields 14 and 15)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the process's CPU time stops rising — asleep (state S) and within one tick across three readings 200 ms
 * apart — or gives up after `timeoutMs` without failing. Node's start-up also sleeps in the kernel between bursts of
 * work, and a process starved of the CPU gains no time either, so neither one quiet reading nor state S alone says
 * start-up is over. A spinning reader never settles; the window measured after it then says so.
 */
async function cpuSettled(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = cpuMs(pid);
  let quiet = 0;
  while (Date.now() < deadline && quiet < 2) {
    await sleep(200);
    const now = cpuMs(pid);
    quiet = now - last <= 1000 / TICKS && sleeping(pid) ? quiet + 1 : 0;
    last = now;
  }
}

/** True if the process's main thread is asleep in the kernel (state S), not running or loading. */
function sleeping(pid: number): boolean {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('S');
}

it('waits for a slow writer on a non-blocking stdin without spinning', async () => {
  // libuv makes a child's stdio blocking when it starts it, so the flag is set by a wrapper that then execs the
  // plugin in its place (same pid): python3, which node-gyp needs on this machine anyway.
  const wrapper = 'import os, sys; os.set_blocking(0, False); os.execv(sys.argv[1], sys.argv[1:])';
  const child = spawn('python3', ['-c', wrapper, process.execPath, CLI], {
    env: { PATH: process.env.PATH, CNI_COMMAND: 'VERSION' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  // Started (the exec happened: the wrapper's pid runs the plugin) and waiting for stdin (its thread asleep in the
  // kernel), however long a loaded machine takes to get there.
  await until(
    () =>
      fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').includes(CLI) && sleeping(child.pid!) ? true : undefined,
    30_000,
    'the plugin to wait for stdin',
  );
  await cpuSettled(child.pid!, 10_000);
  const before = cpuMs(child.pid!);
  const windowStart = Date.now();
  await sleep(1500);
  const used = cpuMs(child.pid!) - before;
  const elapsed = Date.now() - windowStart;
  child.stdin.end(JSON.stringify({ cniVersion: '1.0.0' }));
  expect(await exited).toBe(0);
  expect(JSON.parse(stdout)).toMatchObject({ cniVersion: '1.0.0' });
  // A spinning reader burns the whole window (or whatever share of a core it gets); a sleeping one nearly nothing.
  expect(used).toBeLessThan(elapsed * 0.2);
});
