/**
 * The service's guarantees: a shim killed mid-ADD does not cancel it and the runtime's DEL that follows
 * leaves nothing; requests for one attachment run one after another in arrival order while other attachments run
 * concurrently; only the service's own user may connect (socket 0600 and a peer check before anything is read).
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { encodeRequest, KIND_STATUS } from '../../src/service/transport/protocol';
import { KeyedQueue } from '../../src/service/transport/queue';
import { startService } from '../../src/service/service';
import { silentLogger } from '../../src/log/logger';
import { bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { hungOn, newNamespace, recordFiles, until } from '../plugin/support';
import {
  makeBin,
  SERVICE_CREATE_OP,
  startHungAdd,
  startServiceProcess,
  startShim,
  type Bin,
  type RunningService,
} from './support';

let h: Harness;
let bin: Bin;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);
beforeEach(() => {
  bin = makeBin(h);
});

const inFlight = async (s: RunningService) =>
  (await s.status()).inFlight.map((r) => `${r.verb} ${r.containerId} ${r.state}`);

describe('a shim killed mid-ADD', () => {
  it('the ADD still commits, and the runtime DEL that follows leaves nothing', async () => {
    const service = await startServiceProcess(h);
    try {
      const ns = await newNamespace(h);
      const add = await startHungAdd(h, bin, service.address, 'pod1', ns);
      add.child.kill('SIGKILL'); // the runtime gave up on the ADD
      expect((await add.done).signal).toBe('SIGKILL');
      // The runtime's DEL arrives while the ADD is still running: it waits for it (same attachment).
      const del = startShim(h, bin, service.address, {
        verb: 'DEL',
        conf: bridgeConf(),
        containerId: 'pod1',
        netns: ns,
      });
      await until(async () => ((await inFlight(service)).length === 2 ? true : undefined), 20_000, 'the DEL to queue');
      expect(await inFlight(service)).toEqual(['ADD pod1 running', 'DEL pod1 queued']);
      await h.sim.control.release();
      const out = await del.done;
      expect({ exit: out.exitCode, out: out.stdout }).toEqual({ exit: 0, out: '' });
      // The ADD committed (DEL found a record and deleted by id), then DEL removed everything.
      const ops = (await h.sim.control.calls()).map((c) => c.op);
      expect(ops.indexOf('HcnDeleteEndpoint')).toBeGreaterThan(ops.indexOf(SERVICE_CREATE_OP));
      expect((await h.sim.control.dump()).endpoints).toEqual([]);
      for (const kind of ['attachments', 'intents', 'tombstones'] as const) expect(recordFiles(h, kind)).toEqual([]);
      expect(bin.standaloneRuns()).toBe(0);
    } finally {
      await service.stop();
    }
  });
});

describe('one attachment at a time, in arrival order; others concurrently', () => {
  it('ADD, DEL, ADD of pod1 queue behind each other while pod2 runs', async () => {
    const service = await startServiceProcess(h);
    try {
      const ns1 = await newNamespace(h);
      const ns2 = await newNamespace(h);
      await h.sim.control.hang(SERVICE_CREATE_OP);
      const call = (verb: 'ADD' | 'DEL', cid: string, ns: string) =>
        startShim(h, bin, service.address, { verb, conf: bridgeConf(), containerId: cid, netns: ns }).done;
      const runs: Array<Promise<{ exitCode: number }>> = [];
      const arrive = async (p: Promise<{ exitCode: number }>, n: number) => {
        runs.push(p);
        await until(
          async () => ((await service.status()).inFlight.length === n ? true : undefined),
          20_000,
          `request ${n}`,
        );
      };
      await arrive(call('ADD', 'pod1', ns1), 1);
      await hungOn(h.sim.control, SERVICE_CREATE_OP);
      await arrive(call('DEL', 'pod1', ns1), 2);
      await arrive(call('ADD', 'pod1', ns1), 3);
      await arrive(call('ADD', 'pod2', ns2), 4);
      // pod2 is running: its create waits in HNS's mutation queue (not in ours), accepted before anything pod1's DEL
      // sends once released. Running alone is not that: its reads before the create may still be under way.
      await until(
        async () => (((await h.sim.control.stats()).calls[SERVICE_CREATE_OP] ?? 0) >= 2 ? true : undefined),
        20_000,
        "pod2's create to be accepted by HNS",
      );
      // pod1's DEL and second ADD wait their turn.
      expect(await inFlight(service)).toEqual([
        'ADD pod1 running',
        'DEL pod1 queued',
        'ADD pod1 queued',
        'ADD pod2 running',
      ]);
      await h.sim.control.release();
      const results = await Promise.all(runs);
      expect(results.map((r) => r.exitCode)).toEqual([0, 0, 0, 0]);
      // Arrival order held: create (pod1), delete (pod1), create (pod1) — the last word is the second ADD.
      const pod1 = (await h.sim.control.calls()).filter(
        (c) => c.op === SERVICE_CREATE_OP || c.op === 'HcnDeleteEndpoint',
      );
      expect(pod1.map((c) => c.op)).toEqual([
        SERVICE_CREATE_OP,
        SERVICE_CREATE_OP,
        'HcnDeleteEndpoint',
        SERVICE_CREATE_OP,
      ]);
      expect(recordFiles(h, 'attachments')).toEqual(['pod1@eth0.json', 'pod2@eth0.json']);
      expect((await h.sim.control.dump()).endpoints).toHaveLength(2);
    } finally {
      await service.stop();
    }
  });

  it('KeyedQueue: same key in order, other keys not held up', async () => {
    const q = new KeyedQueue();
    const order: string[] = [];
    let releaseA!: () => void;
    const a = q.run('k', () => new Promise<void>((r) => (releaseA = r)).then(() => void order.push('a')));
    const b = q.run('k', async () => void order.push('b'));
    const c = q.run('other', async () => void order.push('c'));
    await c;
    expect(order).toEqual(['c']);
    releaseA();
    await Promise.all([a, b]);
    expect(order).toEqual(['c', 'a', 'b']);
    expect(q.size).toBe(0);
  });
});

describe('who may connect', () => {
  it('the socket is 0600 in a 0700 directory', async () => {
    const service = await startServiceProcess(h);
    try {
      expect(fs.statSync(service.address).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(service.address)).mode & 0o777).toBe(0o700);
    } finally {
      await service.stop();
    }
  });

  it('a peer that is not the service user is refused before its request is read', async () => {
    if (process.getuid?.() !== 0) throw new Error('this test needs root (it connects as nobody)');
    const address = path.join(h.tmp, 'open', 'service.sock');
    // Mode 0666 only here, so that nobody can reach the peer check at all.
    const service = await startService({
      address,
      platform: 'linux',
      pid: process.pid,
      allowUid: 0,
      log: silentLogger,
      socketMode: 0o666,
    });
    fs.chmodSync(path.dirname(address), 0o755);
    fs.chmodSync(h.tmp, 0o755);
    try {
      const request = encodeRequest(KIND_STATUS, {}, Buffer.alloc(0)).toString('base64');
      const client = `const s=require('net').connect(${JSON.stringify(address)});let n=0;let c=false;s.on('connect',()=>{c=true;s.write(Buffer.from('${request}','base64'))});s.on('data',d=>n+=d.length);s.on('error',()=>{});s.on('close',()=>{process.stdout.write(c+' '+n)})`;
      const asNobody = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', client], { uid: 65534, gid: 65534 });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('close', () => resolve(out));
      });
      expect(asNobody).toBe('true 0'); // it connected, and got not a byte back
      expect(service.status()).toMatchObject({ refused: 1, served: 0 });
    } finally {
      await service.close();
    }
  });
});
