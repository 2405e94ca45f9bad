/**
 * The hand-over conversation's answers (src/service/hand-over/hand-over.ts), each side on its own over a real unix socket: the
 * serving side takes one hand-over at a time and stops serving only on the exact "taken"; the new side goes on only
 * after the exact "released". Anything else is not agreement: the old service serves on, the new one refuses to start.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { silentLogger } from '../../src/log/logger';
import { askHandOver, HandOverDesk } from '../../src/service/hand-over/hand-over';
import { encodeHandOver } from '../../src/service/transport/protocol';

let tmp: string;
const servers: net.Server[] = [];
const accepted: net.Socket[] = [];
beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-hand-over-'))));
afterEach(async () => {
  for (const s of accepted.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A unix socket whose connections go to `onConnection`; resolves with its path once it listens. */
async function listen(onConnection: (s: net.Socket) => void): Promise<string> {
  const address = path.join(tmp, `s${servers.length}.sock`);
  const server = net.createServer((s) => {
    accepted.push(s);
    s.on('error', () => undefined);
    onConnection(s);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(address, r));
  return address;
}

/** The serving side's desk, with a port that records what the desk asked of it. */
function desk() {
  const seen = { released: 0, resumed: 0, taken: [] as string[], lost: [] as string[] };
  // Resolves once the desk has decided: it resumed serving, or it handed over.
  let decided: () => void = () => undefined;
  const decision = new Promise<void>((r) => (decided = r));
  const d = new HandOverDesk({
    address: path.join(tmp, 'hcn-cni.sock'),
    port: {
      // Every request proves a successor here, and its "taken" holds: the proof and the check are
      // test/service/hand-over-proof.test.ts's; this file holds the answers.
      successor: (_socket, env) => ({ pid: Number(env.HCN_CNI_PID), started: 'started' }),
      notTaken: async () => undefined,
      releaseLock: () => void seen.released++,
      resume: async () => {
        seen.resumed++;
        decided();
        return true;
      },
    },
    log: silentLogger,
    onTaken: (pid) => {
      seen.taken.push(pid);
      decided();
    },
    onLost: (why) => void seen.lost.push(why),
  });
  return { d, seen, decision };
}

/** Connects to `address` and resolves with the first 8 bytes it is sent, or 'closed' if it is closed first. */
function firstFrame(address: string): Promise<{ socket: net.Socket; frame: Buffer | 'closed' }> {
  return new Promise((resolve) => {
    const socket = net.connect(address);
    let got = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (got.length >= 8) resolve({ socket, frame: got.subarray(0, 8) });
    });
    socket.on('close', () => resolve({ socket, frame: 'closed' }));
    socket.on('error', () => undefined);
  });
}

it('the serving service takes one hand-over at a time: a second request while one is offered is refused', async () => {
  const { d, seen } = desk();
  const address = await listen((s) => d.request(s, { HCN_CNI_PID: String(1000 + servers.length) }));
  const first = await firstFrame(address);
  expect(first.frame).toEqual(encodeHandOver('released'));
  // The first is offered (the lock released, "taken" not yet said): a second new service asks.
  const second = await firstFrame(address);
  expect(second.frame).toBe('closed');
  expect(seen.released).toBe(1);
  first.socket.end(encodeHandOver('taken'));
  await new Promise<void>((r) => first.socket.once('close', () => r()));
  expect(seen.taken).toHaveLength(1);
  second.socket.destroy();
});

it('the serving service stops serving only on the exact "taken": any other answer makes it take its lock back and serve on', async () => {
  const { d, seen, decision } = desk();
  const address = await listen((s) => d.request(s, { HCN_CNI_PID: '2000' }));
  const offer = await firstFrame(address);
  expect(offer.frame).toEqual(encodeHandOver('released'));
  offer.socket.write(Buffer.from('HCNXjunk', 'latin1'));
  await decision;
  expect(seen).toMatchObject({ released: 1, resumed: 1, taken: [], lost: [] });
  expect(d.handedOver).toBe(false);
  offer.socket.destroy();
});

it.each<[string, Buffer]>([
  ['"taken" (not the answer of a service handing over)', encodeHandOver('taken')],
  ['eight bytes of something else', Buffer.from('HTTP/1.1', 'latin1')],
])(
  'a new service goes on only after the exact "released": an old service answering %s is refused',
  async (_what, answer) => {
    const address = await listen((s) => s.write(answer));
    const outcome = await askHandOver(address, { HCN_CNI_PID: String(process.pid) });
    expect(typeof outcome).toBe('string');
    expect(outcome).toMatch(/answered a hand-over with something else/);
  },
);
