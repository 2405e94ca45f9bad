/**
 * `hcn-cni serve --listen PATH` replaces only what a dead service left there (a socket nobody answers on); a regular
 * file, a symlink or a directory at PATH is the operator's, and the service refuses to start in one line (no stack
 * trace) and leaves it as it was.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { queryStatus } from '../../src/service/transport/client';
import { CLI, useHarness, type Harness } from '../helpers/cni-harness';
import { until } from '../plugin/support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

function serve(address: string): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'serve', '--listen', address], {
    env: { PATH: process.env.PATH, HCN_SIM: h.sim.address } as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: r.status, stderr: r.stderr };
}

/** `hcn-cni serve --listen address` as a child process, against the test's simulator. */
function startServe(address: string): ChildProcess {
  return spawn(process.execPath, [CLI, 'serve', '--listen', address], {
    env: { PATH: process.env.PATH, HCN_SIM: h.sim.address } as NodeJS.ProcessEnv,
  });
}

/** Stops a service started by startServe and waits for it to exit. */
async function stop(c: ChildProcess): Promise<void> {
  c.kill('SIGTERM');
  await new Promise((r) => c.on('exit', r));
}

function expectOneLineRefusal(r: { code: number | null; stderr: string }, what: RegExp): void {
  expect(r.code).toBe(1);
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'));
  expect(lines).toEqual([expect.stringMatching(what)]);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

describe('serve --listen PATH', () => {
  it('refuses a regular file there and leaves it untouched', () => {
    const file = path.join(h.tmp, 'important.conf');
    fs.writeFileSync(file, 'precious operator data\n');
    expectOneLineRefusal(serve(file), /^hcn-cni serve: .*important\.conf is a regular file, not a socket/);
    expect(fs.readFileSync(file, 'utf8')).toBe('precious operator data\n');
  });

  it('refuses a symlink there (to a file) and leaves the link and its target', () => {
    const target = path.join(h.tmp, 'target');
    fs.writeFileSync(target, 'data\n');
    const link = path.join(h.tmp, 'link.sock');
    fs.symlinkSync(target, link);
    expectOneLineRefusal(serve(link), /is a symbolic link, not a socket/);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('data\n');
  });

  it('refuses a directory there in one line', () => {
    const dir = path.join(h.tmp, 'adir');
    fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
    expectOneLineRefusal(serve(dir), /is a directory, not a socket/);
    expect(fs.existsSync(path.join(dir, 'sub'))).toBe(true);
  });

  it('refuses a socket that answers (another service) in one line', async () => {
    const address = path.join(h.tmp, 'live.sock');
    const server = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(address, r));
    try {
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        // Asynchronously: this process must keep answering on the socket while the service probes it.
        const c = startServe(address);
        let stderr = '';
        c.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
        c.on('close', (code) => resolve({ code, stderr }));
      });
      expectOneLineRefusal(r, /another hcn-cni service is already listening/);
    } finally {
      server.close();
    }
  });

  it("refuses a second service when the first one's socket file was deleted under it (its lock is held)", async () => {
    const address = path.join(h.tmp, 'run', 'svc.sock');
    const first = startServe(address);
    try {
      await until(() => queryStatus(address).catch(() => undefined), 20_000, 'the first service to listen');
      fs.rmSync(address); // a tmpfiles cleaner, rm -rf /run/hcn-cni/*.sock
      expectOneLineRefusal(serve(address), /another hcn-cni service holds .*svc\.sock\.lock/);
    } finally {
      await stop(first);
    }
    // The first service is gone: its lock went with it, and a new service starts.
    const second = startServe(address);
    try {
      const st = await until(() => queryStatus(address).catch(() => undefined), 20_000, 'the second service');
      expect(st.pid).toBe(second.pid);
    } finally {
      await stop(second);
    }
  });

  it('refuses a second service after `rm -rf` of the socket directory: the lock is not in it', async () => {
    const address = path.join(h.tmp, 'run', 'svc.sock');
    const first = startServe(address);
    try {
      await until(() => queryStatus(address).catch(() => undefined), 20_000, 'the first service to listen');
      fs.rmSync(path.dirname(address), { recursive: true, force: true }); // a tmpfiles cleaner, rm -rf /run/hcn-cni
      expectOneLineRefusal(serve(address), /another hcn-cni service holds .*svc\.sock\.lock/);
      expect(first.exitCode).toBeNull();
    } finally {
      await stop(first);
    }
  });

  it('replaces a stale socket (nobody answers on it) and serves', async () => {
    const address = path.join(h.tmp, 'stale.sock');
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(address, r));
    // Closing a listener removes its socket file; a dead process leaves it: take the file away from the server first.
    fs.renameSync(address, `${address}.keep`);
    server.close();
    fs.renameSync(`${address}.keep`, address);
    expect(fs.lstatSync(address).isSocket()).toBe(true);
    const c = startServe(address);
    try {
      const st = await until(() => queryStatus(address).catch(() => undefined), 20_000, 'the service to listen');
      expect(st.pid).toBe(c.pid);
    } finally {
      await stop(c);
    }
  });
});
