/**
 * A hand-over (src/service/hand-over/hand-over.ts) is offered only to a process that proves it is a new service (its pid is
 * the connection's peer, with its start time, and it bound a socket beside the address), each offer stands for a
 * bounded time, and "taken" is believed only once the address names the successor's socket, the lock is held and
 * the successor listens there. Whatever a client of the service's user does short of that — ask without the proof,
 * say "taken" without taking anything, fall silent after "released", or go away while another process holds the lock
 * for a moment — the service keeps serving, takes its lock back, and a later genuine hand-over completes.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from '../../src/log/logger';
import { queryStatus } from '../../src/service/transport/client';
import { startService, type Service } from '../../src/service/service';
import { useHarness, type Harness } from '../helpers/cni-harness';
import { until } from '../plugin/support';
import { askHandOver, grabLock, lockHeld, type Asking } from './hand-over-support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);

/** A logger that keeps every message, to wait for what the service says. */
function recorder(): Logger & { said: string[] } {
  const said: string[] = [];
  const log = (_o: object, msg?: string): void => void said.push(msg ?? '');
  const l = { said, trace: log, debug: log, info: log, warn: log, error: log, child: () => l };
  return l;
}

interface Running {
  service: Service;
  address: string;
  log: ReturnType<typeof recorder>;
  /** What has settled so far: the hand-over's or the retirement's message. */
  ended: { handedOver?: string; retired?: string };
  /** Asks as askHandOver does; every client is closed at stop(), whatever failed before. */
  ask(env?: Record<string, string | undefined>): Promise<Asking>;
  /** Closes the clients, then the service (whose close waits for every connection to end). */
  stop(): Promise<void>;
}

async function start(extra: { handOverDeadlineMs?: number } = {}): Promise<Running> {
  const address = path.join(h.tmp, 'run', 'svc.sock');
  const log = recorder();
  const service = await startService({
    address,
    platform: 'linux',
    pid: process.pid,
    allowUid: process.getuid!(),
    log,
    ...extra,
  });
  const ended: Running['ended'] = {};
  void service.handedOver.then((m) => (ended.handedOver = m));
  void service.retired.then((m) => (ended.retired = m));
  const clients: Asking[] = [];
  const ask = async (env?: Record<string, string | undefined>): Promise<Asking> => {
    const a = await askHandOver(address, env);
    clients.push(a);
    return a;
  };
  const stop = async (): Promise<void> => {
    for (const c of clients) await c.close();
    await service.close();
  };
  return { service, address, log, ended, ask, stop };
}

/** The service still answers at its address, holds the lock, and has neither handed over nor retired. */
async function expectServing(r: Running): Promise<void> {
  await until(() => (lockHeld(r.address) ? true : undefined), 20_000, 'the service to hold its lock');
  expect((await queryStatus(r.address)).pid).toBe(process.pid);
  expect(r.ended).toEqual({});
}

/** A genuine hand-over completes: the service says it handed over to this process. */
async function expectHandsOver(r: Running): Promise<void> {
  const next = await r.ask();
  expect(next.answer).toBe('released');
  const lock = next.take();
  try {
    expect(await until(() => r.ended.handedOver, 20_000, 'the hand-over')).toMatch(
      new RegExp(`^handed over to the service with pid ${process.pid};`),
    );
  } finally {
    lock.release();
    await next.close();
  }
}

describe('a hand-over is offered only to a process that proves it is a new service', () => {
  it.each([
    ['names no socket it bound', () => ({ HCN_CNI_SOCKET: undefined })],
    ['gives another start time', () => ({ HCN_CNI_PID_START: '1' })],
    ['gives no start time', () => ({ HCN_CNI_PID_START: undefined })],
    ['names a socket outside the address directory', () => ({ HCN_CNI_SOCKET: '/tmp/elsewhere.sock' })],
    ['names a socket beside the address that is not there', (a: string) => ({ HCN_CNI_SOCKET: `${a}.none` })],
  ])('a client that %s is refused; the service keeps its lock and serves', async (_what, lie) => {
    const r = await start();
    try {
      const asking = await r.ask(lie(r.address));
      expect(asking.answer).toBeUndefined();
      await asking.close();
      await expectServing(r);
      expect(r.log.said.filter((m) => m.startsWith('service: refused a hand-over ('))).toHaveLength(1);
    } finally {
      await r.stop();
    }
  });

  it("a client that gives another live process's pid and start time is refused", async () => {
    const r = await start();
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => other.once('spawn', resolve));
      const { loadNative } = await import('../../src/hns/native');
      const started = loadNative({}).native.processStartTime(other.pid!);
      const asking = await r.ask({ HCN_CNI_PID: String(other.pid), HCN_CNI_PID_START: started! });
      expect(asking.answer).toBeUndefined();
      await asking.close();
      await expectServing(r);
      expect(r.log.said).toContain(
        `service: refused a hand-over (it says it is pid ${other.pid}, but pid ${process.pid} connected)`,
      );
    } finally {
      other.kill('SIGKILL');
      await r.stop();
    }
  });

  it('"taken" said without taking the address is not believed: the service serves on, and a later hand-over completes', async () => {
    const r = await start();
    try {
      const liar = await r.ask();
      expect(liar.answer).toBe('released');
      await liar.sayTaken();
      await until(
        () =>
          r.ended.handedOver !== undefined ||
          r.log.said.some((m) => m.includes('said "taken" but the address does not'))
            ? true
            : undefined,
        20_000,
        'the service to look at the address',
      );
      expect(r.ended).toEqual({});
      await liar.close();
      await expectServing(r);
      await expectHandsOver(r);
    } finally {
      await r.stop();
    }
  });
});

describe('an offer has a deadline', () => {
  it('a client silent after "released" loses the offer: the service takes its lock back, serves, and hands over later', async () => {
    const r = await start({ handOverDeadlineMs: 500 });
    try {
      const silent = await r.ask();
      expect(silent.answer).toBe('released');
      // It says nothing and keeps the connection open; the service ends it.
      await until(() => (silent.socket.closed ? true : undefined), 20_000, 'the service to end the offer');
      await expectServing(r);
      expect(r.log.said).toContain(
        'service: hand-over not completed (it did not say "taken" within 500 ms of "released"); serving on',
      );
      await silent.close();
      await expectHandsOver(r);
    } finally {
      await r.stop();
    }
  });
});

describe('the address lock taken for a moment by another process during a hand-over', () => {
  it('leaves the service serving on its socket; it takes the lock back once free and hands over later', async () => {
    const r = await start();
    try {
      const first = await r.ask();
      expect(first.answer).toBe('released');
      // A second new service takes the free lock (it will find the old socket answering and let go)...
      const second = grabLock(r.address);
      expect(second).not.toBeNull();
      // ...and meanwhile the first gives up, as a new service does when the lock is not free after "released".
      await first.close();
      await until(
        () =>
          r.ended.retired !== undefined || r.log.said.some((m) => m.startsWith('service: hand-over not completed'))
            ? true
            : undefined,
        20_000,
        'the service to resume',
      );
      expect(r.ended).toEqual({});
      expect((await queryStatus(r.address)).pid).toBe(process.pid);
      expect(r.ended).toEqual({});
      second!.release();
      await expectServing(r);
      await expectHandsOver(r);
    } finally {
      await r.stop();
    }
  });
});

describe('the address lock', () => {
  it('is not in the socket directory: after `rm -rf` of it, a second service is refused while the first lives', async () => {
    const r = await start();
    try {
      fs.rmSync(path.dirname(r.address), { recursive: true, force: true }); // a tmpfiles cleaner, rm -rf /run/hcn-cni
      await expect(
        startService({ address: r.address, platform: 'linux', pid: process.pid, allowUid: process.getuid!() }),
      ).rejects.toThrow(/^another hcn-cni service holds .*\.lock \(its socket may have been deleted\)/);
      expect(r.ended).toEqual({});
    } finally {
      await r.stop();
    }
  });
});
