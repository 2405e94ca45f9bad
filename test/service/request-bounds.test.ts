/**
 * What a client can hold in the service, and what a queued request whose shim is gone costs:
 *  - a connection that does not finish its request within requestTimeoutMs is closed unread;
 *  - at most maxPendingConnections connections may have an incomplete request; more are closed at once (a shim
 *    then runs the standalone executable), and a real pod's ADD still gets through once they are gone;
 *  - a request gathered from many chunks is the request that was sent (RequestReader joins once);
 *  - a request queued behind the same pod's running verb, whose shim the runtime killed, is not run.
 */
import * as net from 'net';
import * as path from 'path';
import { silentLogger } from '../../src/log/logger';
import { encodeRequest, KIND_CNI, KIND_STATUS, RequestReader } from '../../src/service/transport/protocol';
import { startService, type Service } from '../../src/service/service';
import { bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, recordFiles, until } from '../plugin/support';
import { makeBin, startHungAdd, startServiceProcess, startShim, type Bin } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);

async function inProcess(extra: { requestTimeoutMs?: number; maxPendingConnections?: number }): Promise<Service> {
  return startService({
    address: path.join(h.tmp, 'run', 'service.sock'),
    platform: 'linux',
    pid: process.pid,
    allowUid: process.getuid!(),
    log: silentLogger,
    ...extra,
  });
}

/** A client that connects and sends `bytes`, then nothing; resolves when the service closes it. */
function idleClient(address: string, bytes: Buffer): { socket: net.Socket; closed: Promise<void> } {
  const socket = net.connect(address);
  socket.on('error', () => undefined);
  socket.on('connect', () => socket.write(bytes));
  return { socket, closed: new Promise((r) => socket.on('close', () => r())) };
}

const partial = encodeRequest(KIND_STATUS, {}, Buffer.alloc(0)).subarray(0, 10);

describe('the service bounds what clients hold', () => {
  it('closes a connection whose request is not complete within requestTimeoutMs', async () => {
    const service = await inProcess({ requestTimeoutMs: 300 });
    try {
      const c = idleClient(service.address, partial);
      await c.closed;
      expect(service.status()).toMatchObject({ timedOut: 1, pendingConnections: 0 });
    } finally {
      await service.close();
    }
  });

  it('closes connections beyond maxPendingConnections at once, and serves again when they are gone', async () => {
    const service = await inProcess({ maxPendingConnections: 5, requestTimeoutMs: 60_000 });
    const clients: Array<ReturnType<typeof idleClient>> = [];
    try {
      for (let i = 0; i < 5; i++) clients.push(idleClient(service.address, partial));
      await until(async () => (service.status().pendingConnections === 5 ? true : undefined), 10_000, '5 pending');
      const extra = idleClient(service.address, partial);
      await extra.closed;
      expect(service.status()).toMatchObject({ tooMany: 1, pendingConnections: 5 });
      for (const c of clients) c.socket.destroy();
      await until(async () => (service.status().pendingConnections === 0 ? true : undefined), 10_000, '0 pending');
      const bin = makeBin(h);
      const ns = await newNamespace(h);
      const add = await startShim(h, bin, service.address, {
        verb: 'ADD',
        conf: bridgeConf(),
        containerId: 'real',
        netns: ns,
      }).done;
      expect(add.exitCode).toBe(0);
      expect(bin.standaloneRuns()).toBe(0);
    } finally {
      for (const c of clients) c.socket.destroy();
      await service.close();
    }
  });

  it('gathers a request sent in 4 KiB chunks into exactly the request sent', () => {
    const stdin = Buffer.alloc(1024 * 1024, 0x20);
    stdin.write('{"cniVersion":"1.1.0"}');
    const env = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c', CNI_IFNAME: 'eth0' };
    const whole = encodeRequest(KIND_CNI, env, stdin);
    const reader = new RequestReader();
    let got;
    for (let off = 0; off < whole.length; off += 4096) {
      expect(got).toBeUndefined();
      got = reader.push(whole.subarray(off, Math.min(off + 4096, whole.length)));
    }
    expect(got).toMatchObject({ kind: KIND_CNI, env });
    expect(got!.stdin.equals(stdin)).toBe(true);
    // Byte by byte through the header, then a garbage magic is refused as soon as it can be read.
    const r2 = new RequestReader();
    for (const b of whole.subarray(0, 19)) expect(r2.push(Buffer.from([b]))).toBeUndefined();
    expect(() => new RequestReader().push(Buffer.from('GET / HTTP/1.1\r\n'))).toThrow(/not a hcn-cni service request/);
  });
});

describe('a queued request whose shim is gone before it starts', () => {
  let bin: Bin;
  beforeEach(() => {
    bin = makeBin(h);
  });

  it('is not run: the running ADD commits, the queued DEL (its shim killed) does nothing, the retry DEL works', async () => {
    const service = await startServiceProcess(h);
    try {
      const ns = await newNamespace(h);
      const add = await startHungAdd(h, bin, service.address, 'pod1', ns);
      const del = startShim(h, bin, service.address, {
        verb: 'DEL',
        conf: bridgeConf(),
        containerId: 'pod1',
        netns: ns,
      });
      await until(async () => ((await service.status()).inFlight.length === 2 ? true : undefined), 20_000, 'queued');
      del.child.kill('SIGKILL'); // the runtime's timeout
      await del.done;
      await until(
        async () => ((await service.status()).inFlight[1]?.shimConnected === false ? true : undefined),
        20_000,
        'the service to see the DEL shim gone',
      );
      await h.sim.control.release();
      expect((await add.done).exitCode).toBe(0);
      await until(async () => ((await service.status()).inFlight.length === 0 ? true : undefined), 20_000, 'idle');
      expect((await service.status()).notRun).toBe(1);
      // The DEL did nothing: the ADD's record and endpoint are there, as the runtime's retry expects.
      expect(recordFiles(h, 'attachments')).toEqual(['pod1@eth0.json']);
      expect((await h.sim.control.dump()).endpoints).toHaveLength(1);
      const retry = await startShim(h, bin, service.address, {
        verb: 'DEL',
        conf: bridgeConf(),
        containerId: 'pod1',
        netns: ns,
      }).done;
      expect(retry.exitCode).toBe(0);
      expect((await h.sim.control.dump()).endpoints).toEqual([]);
      expect(recordFiles(h, 'attachments')).toEqual([]);
    } finally {
      await service.stop();
    }
  });
});
