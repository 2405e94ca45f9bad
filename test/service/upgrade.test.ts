/**
 * Upgrading without a gap (src/service/hand-over/hand-over.ts): a new service started on the address of one that serves takes
 * it over. While the old one serves a steady stream of ADD/DEL through the real shim, every verb succeeds and none
 * falls back to the standalone executable, and a client connecting over and over is never refused; the old one exits 0 once it has finished what it accepted — a verb held
 * in it by HNS at the moment of the hand-over included — and the new one serves from then on. Asked not to take
 * over, or meeting a service that does not hand over, a new service still refuses to start.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { silentLogger } from '../../src/log/logger';
import { queryStatus } from '../../src/service/transport/client';
import { encodeRequest, KIND_STATUS, parseReply, type Reply } from '../../src/service/transport/protocol';
import { startService } from '../../src/service/service';
import { bridgeConf, CLI, useHarness, type Harness, type ProcessOutcome } from '../helpers/cni-harness';
import { logLines, newNamespace, until } from '../plugin/support';
import { askHandOver, lockHeld } from './hand-over-support';
import {
  adDelLanes,
  expectNothingLeft,
  makeBin,
  startHungAdd,
  startServiceProcess,
  viaShim,
  type Bin,
  type RunningService,
} from './support';

let h: Harness;
let bin: Bin;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(120_000);
beforeEach(() => {
  bin = makeBin(h);
});

/** The pid of the process that served a verb: its log lines on the shim's stderr carry it. */
const servedBy = (out: ProcessOutcome): unknown => logLines(out.stderr)[0]?.pid;

/**
 * Connects to `address` again and again (nothing sent) until `stop()` says so: how many connections it made, and
 * the errors of those refused — at every moment of a hand-over the address must name a listening socket.
 */
function probeConnects(address: string): {
  stop(): Promise<{ connected: number; busy: number; refused: string[] }>;
} {
  let stopped = false;
  let connected = 0;
  let busy = 0;
  const refused: string[] = [];
  const once = (): Promise<void> =>
    new Promise((resolve) => {
      const s = net.connect(address);
      s.once('connect', () => {
        connected++;
        s.destroy();
        resolve();
      });
      s.once('error', (e: NodeJS.ErrnoException) => {
        // This probe connects as fast as it can and sends nothing, which a CPU-starved service notices late: EAGAIN
        // is a listener whose backlog is full (connect(2): a nonblocking UNIX domain socket whose connection cannot
        // be completed immediately), not a missing one; a blocking client such as the shim waits there. It is not
        // "nothing listens" (ENOENT, ECONNREFUSED) or "dropped from the old socket's queue" (ECONNRESET), which is
        // what this probe looks for.
        if (e.code === 'EAGAIN') busy++;
        else refused.push(e.code ?? e.message);
        resolve();
      });
    });
  const loops = [0, 1].map(async () => {
    while (!stopped) await once();
  });
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return { connected, busy, refused };
    },
  };
}

/** A connection made (queued on the listener, accepted or not) with `bytes` handed to the kernel, and its reply. */
function connectAndWrite(address: string, bytes: Buffer): Promise<{ reply: Promise<Reply | undefined> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(address);
    const chunks: Buffer[] = [];
    const reply = new Promise<Reply | undefined>((r) => socket.on('close', () => r(parseReply(Buffer.concat(chunks)))));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.on('connect', () => socket.write(bytes, () => resolve({ reply })));
  });
}

/**
 * Waits until the address answers with `s`'s status: its socket is the one at the address. When it does not, the
 * error carries what the new service said (its exit, the last lines of its log): a hand-over that fails must say why.
 */
const serving = async (s: RunningService) => {
  try {
    await until(
      async () => ((await s.status().catch(() => undefined))?.pid === s.child.pid ? true : undefined),
      30_000,
      `pid ${s.child.pid} to serve the address`,
    );
  } catch (e) {
    const tail = s.stderr().trim().split('\n').slice(-12).join('\n');
    throw new Error(
      `${(e as Error).message}; exit ${JSON.stringify(s.child.exitCode ?? s.child.signalCode)}; its log:\n${tail}`,
      { cause: e },
    );
  }
};

describe('a new service takes the address over', () => {
  it('while the old one serves a stream of ADD/DEL: every verb succeeds, none falls back, the old one exits 0', async () => {
    const a = await startServiceProcess(h);
    let b: RunningService | undefined;
    // Declared out here so that a failed assertion still stops the lanes before the services go.
    let lanes: ReturnType<typeof adDelLanes> | undefined;
    try {
      lanes = adDelLanes(h, bin, a.address);
      const { outcomes } = lanes;
      const servedByA = () => outcomes.filter((o) => servedBy(o.out) === a.child.pid).length;
      await until(() => (servedByA() >= 4 ? true : undefined), 60_000, 'the old service to serve some verbs');

      const probe = probeConnects(a.address);
      b = await startServiceProcess(h, a.address);
      await serving(b);
      expect(await a.exited).toEqual({ code: 0, signal: null });
      const connects = await probe.stop();
      expect(connects.refused).toEqual([]);
      expect(connects.connected).toBeGreaterThan(10);
      const servedByB = () => outcomes.filter((o) => servedBy(o.out) === b!.child.pid).length;
      await until(() => (servedByB() >= 4 ? true : undefined), 60_000, 'the new service to serve some verbs');
      await lanes.stop();

      const failed = outcomes.filter((o) => o.out.exitCode !== 0).map((o) => `${o.what}: ${o.out.stdout}`);
      expect(failed).toEqual([]);
      expect(bin.standaloneRuns()).toBe(0);
      // Every verb was served by one of the two services (no other process wrote its log lines).
      const servers = new Set(outcomes.map((o) => servedBy(o.out)));
      expect([...servers].sort()).toEqual([a.child.pid, b.child.pid].sort());
      expect(a.stderr()).toMatch(/handed over to the service with pid \d+; every accepted request has finished/);
      expect((await b.status()).served).toBe(servedByB());
      await expectNothingLeft(h);
    } finally {
      await lanes?.stop();
      await b?.stop();
      await a.stop();
    }
  });

  it('every connection queued on the old socket when it is told "taken" is served there, however many', async () => {
    const a = await startServiceProcess(h);
    let lock: { release(): void } | undefined;
    try {
      const handOver = await askHandOver(a.address);
      expect(handOver.answer).toBe('released');
      // Stopped, the old service accepts nothing: ten whole requests wait on its socket, and "taken" behind them (as
      // when the CPU starves it while shims connect just before the new service's rename).
      a.child.kill('SIGSTOP');
      const queued = await Promise.all(
        Array.from({ length: 10 }, () => connectAndWrite(a.address, encodeRequest(KIND_STATUS, {}, Buffer.alloc(0)))),
      );
      lock = handOver.take();
      a.child.kill('SIGCONT');
      const replies = await Promise.all(queued.map((q) => q.reply));
      expect(replies.map((r) => r?.type)).toEqual(Array(10).fill('result'));
      expect(await a.exited).toEqual({ code: 0, signal: null });
      await handOver.close();
    } finally {
      lock?.release();
      a.child.kill('SIGCONT');
      await a.stop();
    }
  });

  it('a verb held in the old service at the hand-over completes there, then the old one exits 0', async () => {
    const a = await startServiceProcess(h);
    let b: RunningService | undefined;
    try {
      const ns = await newNamespace(h);
      const held = await startHungAdd(h, bin, a.address, 'pod-held', ns);
      b = await startServiceProcess(h, a.address);
      await serving(b);
      // The new service serves while the old one still holds the ADD (HNS holds its create).
      const version = await viaShim(h, bin, a.address, { verb: 'VERSION', conf: bridgeConf() });
      expect(version.exitCode).toBe(0);
      expect(a.child.exitCode).toBeNull();
      expect((await h.sim.control.stats()).pendingMutations).toBeGreaterThan(0);

      await h.sim.control.release();
      const add = await held.done;
      expect(add.exitCode).toBe(0);
      expect(servedBy(add)).toBe(a.child.pid);
      expect(await a.exited).toEqual({ code: 0, signal: null });
      expect(bin.standaloneRuns()).toBe(0);
      // The new service serves the pod's DEL: it finds the record the old one committed.
      const del = await viaShim(h, bin, a.address, { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-held' });
      expect({ code: del.exitCode, by: servedBy(del) }).toEqual({ code: 0, by: b.child.pid });
      expect((await h.sim.control.dump()).endpoints).toEqual([]);
    } finally {
      await b?.stop();
      await a.stop();
    }
  });

  it('--no-take-over refuses to start in one line, and the serving one goes on', async () => {
    const a = await startServiceProcess(h);
    try {
      const r = spawnSync(process.execPath, [CLI, 'serve', '--listen', a.address, '--no-take-over'], {
        env: { PATH: process.env.PATH, HCN_SIM: h.sim.address } as NodeJS.ProcessEnv,
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'))).toEqual([
        expect.stringMatching(/^hcn-cni serve: another hcn-cni service holds .*\.lock .*--no-take-over/),
      ]);
      expect((await a.status()).pid).toBe(a.child.pid);
      expect(a.child.exitCode).toBeNull();
    } finally {
      await a.stop();
    }
  });
});

/** A TCP port free at the moment (bound at 0 and closed), for a fixed --metrics address. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** `hcn-cni service --probe KIND` as the pod `podUid`'s exec probe runs it (its container's environment). */
function probe(kind: string, address: string, podUid: string): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [CLI, 'service', '--probe', kind], {
    env: { PATH: process.env.PATH, HCN_CNI_SERVICE: address, HCN_CNI_POD_UID: podUid } as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: r.status, out: r.stdout };
}

describe('a DaemonSet update (deploy/daemonset.yaml: the new pod starts beside the old one)', () => {
  it('the metrics port the old service holds is bound by the new one once it has handed over', async () => {
    const port = await freePort();
    const metrics = ['--metrics', `127.0.0.1:${port}`];
    const a = await startServiceProcess(h, undefined, metrics);
    let b: RunningService | undefined;
    try {
      const url = `http://127.0.0.1:${port}/metrics`;
      expect((await a.status()).metricsUrl).toBe(url);
      b = await startServiceProcess(h, a.address, metrics);
      await serving(b);
      expect(await a.exited).toEqual({ code: 0, signal: null });
      await until(
        async () => ((await b!.status()).metricsUrl === url ? true : undefined),
        30_000,
        'the new service to serve the metrics',
      );
      const scrape = await fetch(url);
      expect(scrape.status).toBe(200);
      expect(await scrape.text()).toMatch(/^hcn_cni_/m);
    } finally {
      await b?.stop();
      await a.stop();
    }
  });

  it("--stay-after-hand-over: the old pod's service stays alive serving nothing, its pod not ready, until SIGTERM", async () => {
    const a = await startServiceProcess(h, undefined, ['--stay-after-hand-over'], { HCN_CNI_POD_UID: 'pod-old' });
    let b: RunningService | undefined;
    try {
      expect((await a.status()).pod).toBe('pod-old');
      expect(probe('readiness', a.address, 'pod-old').code).toBe(0);
      b = await startServiceProcess(h, a.address, ['--stay-after-hand-over'], { HCN_CNI_POD_UID: 'pod-new' });
      await serving(b);
      await until(
        () => (/staying, serving nothing, until stopped/.test(a.stderr()) ? true : undefined),
        30_000,
        'the old service to have handed over and drained',
      );
      expect(a.child.exitCode).toBeNull();
      // Both pods' probes reach the new service: the new pod is ready, the old one not, and both live.
      expect(probe('readiness', a.address, 'pod-new')).toEqual({
        code: 0,
        out: expect.stringMatching(/^readiness: ok: /),
      });
      expect(probe('readiness', a.address, 'pod-old')).toEqual({
        code: 1,
        out: `readiness: failed: the service at ${a.address} (pid ${b.child.pid}) is pod pod-new's, not this pod's (pod-old)\n`,
      });
      expect(probe('liveness', a.address, 'pod-old').code).toBe(0);
      a.child.kill('SIGTERM');
      expect(await a.exited).toEqual({ code: 0, signal: null });
      expect((await b.status()).pid).toBe(b.child.pid);
    } finally {
      await b?.stop();
      await a.stop();
    }
  });

  it("the old pod's service, dead before its pod is deleted and restarted by the kubelet, does not take the address back", async () => {
    const stay = ['--stay-after-hand-over'];
    const old = { HCN_CNI_POD_UID: 'pod-old' };
    const a = await startServiceProcess(h, undefined, stay, old);
    let b: RunningService | undefined;
    let restarted: RunningService | undefined;
    let again: RunningService | undefined;
    try {
      b = await startServiceProcess(h, a.address, stay, { HCN_CNI_POD_UID: 'pod-new' });
      await serving(b);
      await until(() => (/staying, serving nothing/.test(a.stderr()) ? true : undefined), 30_000, 'a to hand over');
      await a.kill(); // it dies; the kubelet restarts its container: the same command, the same pod
      restarted = await startServiceProcess(h, a.address, stay, old);
      await until(
        () =>
          /not taking it back from pid \d+; staying, serving nothing/.test(restarted!.stderr()) ? true : undefined,
        30_000,
        'the restarted old service to stand aside',
      );
      expect(restarted.stderr()).toContain(
        `hcn-cni serve: pod pod-old's service handed ${a.address} over before; not taking it back from pid ${b.child.pid}`,
      );
      expect((await b.status()).pid).toBe(b.child.pid);
      expect(probe('readiness', a.address, 'pod-new').code).toBe(0);
      expect(probe('readiness', a.address, 'pod-old').code).toBe(1);
      expect(restarted.child.exitCode).toBeNull();
      await restarted.stop();
      expect(await restarted.exited).toEqual({ code: 0, signal: null });
      // With nothing serving the address (the new pod gone too), the old pod's service serves: a node is not left
      // without a service by the note, and the note is gone with it.
      await b.stop();
      again = await startServiceProcess(h, a.address, stay, old);
      expect((await again.status()).pid).toBe(again.child.pid);
      expect(fs.readdirSync(path.join(path.dirname(a.address), 'retired-pods'))).toEqual([]);
    } finally {
      await again?.stop();
      await restarted?.stop();
      await b?.stop();
      await a.stop();
    }
  });
});

describe('a hand-over that does not complete', () => {
  it('leaves the old service serving: it takes its lock back, and its address when a dead socket was put there', async () => {
    const address = path.join(h.tmp, 'run', 'svc.sock');
    const service = await startService({
      address,
      platform: 'linux',
      pid: process.pid,
      allowUid: process.getuid!(),
      log: silentLogger,
    });
    try {
      expect(lockHeld(address)).toBe(true);
      // A new service asks, is told the lock is released, and dies.
      const first = await askHandOver(address);
      expect(first.answer).toBe('released');
      expect(lockHeld(address)).toBe(false);
      await first.close();
      await until(() => (lockHeld(address) ? true : undefined), 10_000, 'the old service to take its lock back');
      expect((await queryStatus(address)).pid).toBe(process.pid);

      // Another one gets as far as renaming its socket over the address, and dies with it.
      const second = await askHandOver(address);
      expect(second.answer).toBe('released');
      fs.renameSync(second.temp, address);
      await new Promise<void>((resolve) => second.server.close(() => resolve()));
      await expect(queryStatus(address)).rejects.toThrow(/ECONNREFUSED/);
      second.socket.destroy();
      const st = await until(() => queryStatus(address).catch(() => undefined), 10_000, 'the old service to rebind');
      expect(st.pid).toBe(process.pid);
      expect(lockHeld(address)).toBe(true);
    } finally {
      await service.close();
    }
    expect(fs.existsSync(address)).toBe(false);
  });
});
