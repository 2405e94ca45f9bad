/**
 * The fallback: when the service is absent, speaks another protocol version, or goes away before it has
 * accepted the request (three times: such a connection is offered again, as a hand-over may have closed it), the shim
 * runs hcn-cni-standalone beside it with the same environment and stdin, and the runtime gets the standalone
 * executable's answer. Once the service has accepted, the shim never runs the request
 * a second time: if the service dies mid-verb the runtime gets "try again later" (11), and the intents and the audit
 * treat the dead service's half-done ADD exactly as a killed standalone process's — its DEL leaves nothing.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { encodeRequest, KIND_CNI, parseReply } from '../../src/service/transport/protocol';
import { sendRequest } from '../../src/service/transport/client';
import { bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, recordFiles, until } from '../plugin/support';
import { makeBin, SERVICE_CREATE_OP, startHungAdd, startServiceProcess, viaShim, type Bin } from './support';

let h: Harness;
let bin: Bin;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);
beforeEach(() => {
  bin = makeBin(h);
});

/** A stand-in for the service at `address` that does `onRequest` with each connection once it has sent bytes. */
async function fakeService(address: string, onData: (socket: net.Socket, data: Buffer) => void): Promise<net.Server> {
  fs.mkdirSync(path.dirname(address), { recursive: true });
  const server = net.createServer((s) => {
    s.on('error', () => undefined); // the shim hangs up as soon as it has decided to fall back
    s.once('data', (d: Buffer) => onData(s, d));
  });
  await new Promise<void>((r) => server.listen(address, r));
  return server;
}

/** An ADD through the shim at `address` that falls back: it works, and the shim's one stderr line says `why`. */
async function addAndCheck(address: string, why: string): Promise<void> {
  const ns = await newNamespace(h);
  const add = await viaShim(h, bin, address, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod1', netns: ns });
  expect({ exit: add.exitCode, cni: add.json?.cniVersion }).toEqual({ exit: 0, cni: '1.0.0' });
  expect(add.stderr.split('\n').filter((l) => l.startsWith('hcn-cni:'))).toEqual([
    `hcn-cni: not using the service at ${address}: ${why}; running hcn-cni-standalone`,
  ]);
  expect(recordFiles(h, 'attachments')).toEqual(['pod1@eth0.json']);
  expect((await h.sim.control.dump()).endpoints).toHaveLength(1);
}

describe('the shim falls back to the standalone executable', () => {
  it('when no service is listening', async () => {
    await addAndCheck(path.join(h.tmp, 'nobody-here.sock'), 'connect: No such file or directory');
    expect(bin.standaloneRuns()).toBe(1);
  });

  it('when the service closes the connection before accepting the request, on each of three offers', async () => {
    const address = path.join(h.tmp, 'dies.sock');
    const offers: number[] = [];
    const server = await fakeService(address, (s) => {
      offers.push(performance.now());
      s.destroy();
    });
    try {
      await addAndCheck(address, 'it closed the connection before accepting the request, 3 times');
    } finally {
      server.close();
    }
    expect(offers).toHaveLength(3);
    // The later offers wait (20 ms, then 200 ms) for a service handing over to finish closing what it has not read.
    expect([offers[1] - offers[0] >= 20, offers[2] - offers[1] >= 200]).toEqual([true, true]);
    expect(bin.standaloneRuns()).toBe(1);
  });

  it('when the service speaks another protocol version (HCNV)', async () => {
    const address = path.join(h.tmp, 'v2.sock');
    const refusal = Buffer.concat([Buffer.from('HCNV'), Buffer.from([2, 0, 0, 0])]);
    const server = await fakeService(address, (s) => s.end(refusal));
    try {
      await addAndCheck(address, 'it speaks protocol version 2, this shim 1');
    } finally {
      server.close();
    }
    expect(bin.standaloneRuns()).toBe(1);
  });

  it('when the service accepts with another version number', async () => {
    const address = path.join(h.tmp, 'v7.sock');
    const server = await fakeService(address, (s) =>
      s.end(Buffer.concat([Buffer.from('HCNA'), Buffer.from([7, 0, 0, 0, 0, 0, 0, 0])])),
    );
    try {
      await addAndCheck(address, "it answered something that is not the service's protocol");
    } finally {
      server.close();
    }
    expect(bin.standaloneRuns()).toBe(1);
  });
});

describe('connections closed unread at a hand-over', () => {
  /**
   * The old service's side of a hand-over as the shim meets it: its listener still answers the connect, and the
   * connection is closed unread (a Windows pipe instance reached in the last instant: pipe_server_win.cc
   * CloseInstances). The stand-in closes `closes` offers so; at the last of them it moves the address to the real
   * service (a hard link renamed over it, as a hand-over renames the new socket over the old). The shim's next offer
   * is served there, and the standalone executable runs nothing.
   */
  async function servedAfterUnreadCloses(closes: number): Promise<void> {
    const service = await startServiceProcess(h, path.join(h.tmp, 'run', 'successor.sock'));
    const address = path.join(h.tmp, 'run', 'handing-over.sock');
    let offers = 0;
    const old = await fakeService(address, (s) => {
      if (++offers === closes) {
        fs.linkSync(service.address, `${address}.next`);
        fs.renameSync(`${address}.next`, address);
      }
      s.destroy();
    });
    try {
      const ns = await newNamespace(h);
      const add = await viaShim(h, bin, address, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod1', netns: ns });
      expect({ exit: add.exitCode, cni: add.json?.cniVersion }).toEqual({ exit: 0, cni: '1.0.0' });
      // No fallback said; the log lines are the service's, sent back with its result.
      expect(add.stderr.split('\n').filter((l) => l.startsWith('hcn-cni:'))).toEqual([]);
      expect(add.stderr).toMatch(/"service":true,"verb":"ADD".*"msg":"ADD ok"/);
      expect({ offers, standalone: bin.standaloneRuns(), served: (await service.status()).served }).toEqual({
        offers: closes,
        standalone: 0,
        served: 1,
      });
      expect(recordFiles(h, 'attachments')).toEqual(['pod1@eth0.json']);
    } finally {
      old.close();
      await service.stop();
    }
  }

  it('one: the request is offered again to the service that serves the address now', () => servedAfterUnreadCloses(1));

  it('two (the old service still closing its instances one after another): the third offer, 200 ms later, is served by its successor', () =>
    servedAfterUnreadCloses(2));
});

describe('the real service and protocol skew', () => {
  it('answers a request of another protocol version with HCNV and runs nothing', async () => {
    const service = await startServiceProcess(h);
    try {
      const reply = await sendRequest(
        service.address,
        encodeRequest(KIND_CNI, { CNI_COMMAND: 'VERSION' }, Buffer.alloc(0), 2),
      );
      expect(reply).toEqual({ type: 'refused', version: 1 });
      expect((await service.status()).served).toBe(0);
    } finally {
      await service.stop();
    }
  });

  it('a reply cut short is not a reply', () => {
    expect(parseReply(Buffer.from('HCNA'))).toBeUndefined();
    expect(
      parseReply(Buffer.concat([Buffer.from('HCNA'), Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('HCNR')])),
    ).toBeUndefined();
  });
});

describe('the service dies after accepting an ADD', () => {
  it('the shim says try again (11) and does not run it again; the runtime DEL leaves nothing', async () => {
    const service = await startServiceProcess(h);
    const ns = await newNamespace(h);
    // HNS completes the endpoint create and kills its caller — the service — as a crash mid-verb would.
    await h.sim.control.killClient(SERVICE_CREATE_OP);
    const add = await viaShim(h, bin, service.address, {
      verb: 'ADD',
      conf: bridgeConf(),
      containerId: 'pod1',
      netns: ns,
    });
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(add.exitCode).toBe(1);
    expect(add.json).toEqual({
      cniVersion: '1.0.0',
      code: 11,
      msg: 'the hcn-cni service ended before it finished ADD; try again',
    });
    expect(bin.standaloneRuns()).toBe(0); // accepted requests are never run twice
    await h.sim.control.waitIdle();
    // What the dead service left: an intent (its pid is dead now) and the endpoint HNS finished.
    expect(recordFiles(h, 'intents')).toEqual(['pod1@eth0.json']);
    expect((await h.sim.control.dump()).endpoints).toHaveLength(1);

    // The runtime's DEL (service gone: through the standalone executable) removes it all.
    const del = await viaShim(h, bin, service.address, {
      verb: 'DEL',
      conf: bridgeConf(),
      containerId: 'pod1',
      netns: ns,
    });
    expect({ exit: del.exitCode, out: del.stdout }).toEqual({ exit: 0, out: '' });
    expect(bin.standaloneRuns()).toBe(1);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    expect(recordFiles(h, 'attachments')).toEqual([]);
    expect(recordFiles(h, 'intents')).toEqual([]);
  });

  it('a killed shim does not stop the service; a shim that vanished shows in the status', async () => {
    const service = await startServiceProcess(h);
    try {
      const ns = await newNamespace(h);
      // The endpoint create is hung in HNS: the ADD is in the middle of its work.
      const run = await startHungAdd(h, bin, service.address, 'pod1', ns);
      run.child.kill('SIGKILL');
      await run.done;
      const st = await until(
        async () => {
          const s = await service.status();
          return s.inFlight[0]?.shimConnected === false ? s : undefined;
        },
        20_000,
        'the service to see the shim gone',
      );
      expect(st.inFlight).toEqual([
        expect.objectContaining({
          verb: 'ADD',
          containerId: 'pod1',
          ifname: 'eth0',
          state: 'running',
          shimConnected: false,
        }),
      ]);
      await h.sim.control.release();
      await until(
        async () => ((await service.status()).inFlight.length === 0 ? true : undefined),
        20_000,
        'the ADD to finish',
      );
      expect(recordFiles(h, 'attachments')).toEqual(['pod1@eth0.json']); // committed although nobody was waiting
      expect(recordFiles(h, 'intents')).toEqual([]);
    } finally {
      await service.stop();
    }
  });
});
