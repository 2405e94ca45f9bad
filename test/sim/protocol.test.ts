/** The wire protocol itself (docs/sim-protocol.md): one line in, one line out, odd clients, transport errors. */
import * as net from 'node:net';
import { parseAddress, WireClient } from '../../src/sim';
import { errorRecordFor, natNetwork, ok, useSimulator } from './helpers';

const fx = useSimulator();
const INVALIDARG = {
  hr: 0x80070057,
  result: null,
  errorRecord: errorRecordFor(0x80070057, 'The parameter is incorrect.'),
};

/**
 * An op's answer without `boot`, the service instance that answered (stale-handles.ts), which every test of the file
 * would otherwise have to know; the test at the end holds it.
 */
function answer(line: string): unknown {
  const { boot, ...rest } = JSON.parse(line) as { boot?: unknown };
  void boot;
  return rest;
}

/** Writes raw bytes, optionally half-closes, and returns everything the service sent back. */
function raw(text: string, halfClose = false): Promise<string> {
  const a = parseAddress(fx.sim.address);
  return new Promise((resolve, reject) => {
    const s = net.connect(a.kind === 'unix' ? { path: a.path } : { host: a.host, port: a.port }, () => {
      s.write(text);
      if (halfClose) s.end();
    });
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

test('malformed lines get one E_INVALIDARG response line', async () => {
  expect(answer(await raw('this is not json\n'))).toEqual(INVALIDARG);
  expect(answer(await raw('[1,2]\n'))).toEqual(INVALIDARG);
  expect(answer(await raw('{"v":2,"op":"HcnEnumerateNetworks"}\n'))).toEqual(INVALIDARG);
  expect(answer(await raw('{"v":1,"op":"HcnCreateNetwork","id":null,"settings":5}\n'))).toEqual(INVALIDARG);
  expect(answer(await raw('{"v":1}\n'))).toEqual(INVALIDARG);
});

test('a request whose client half-closes without a newline is still answered; a line is exactly one response', async () => {
  const out = await raw('{"v":1,"pid":1,"op":"HcnEnumerateNetworks","query":null}', true);
  expect(out.endsWith('\n')).toBe(true);
  expect(out.trim().split('\n')).toHaveLength(1);
  expect(answer(out)).toEqual({ hr: 0, result: '[]', errorRecord: null });
});

test('a service-callback registration whose client shuts its side is ended by the service (the client unregistered)', async () => {
  // raw() resolves when the service ends the connection; a registration it kept open would never resolve.
  const out = await raw('{"v":1,"pid":1,"op":"HcnRegisterServiceCallback"}\n', true);
  expect(
    out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown),
  ).toEqual([{ hr: 0, result: null, errorRecord: null }]);
});

test('"keep": true: answered with "keep": true, one line at a time, and the connection serves the next line', async () => {
  const a = parseAddress(fx.sim.address);
  const s = net.connect(a.kind === 'unix' ? { path: a.path } : { host: a.host, port: a.port });
  let got = '';
  let ended = false;
  s.on('data', (d) => (got += d.toString()));
  s.on('end', () => (ended = true));
  const nextLine = async (): Promise<unknown> => {
    while (!got.includes('\n')) await new Promise((r) => setTimeout(r, 5));
    const line = got.slice(0, got.indexOf('\n'));
    got = got.slice(got.indexOf('\n') + 1);
    return answer(line);
  };
  const create = JSON.stringify({
    v: 1,
    keep: true,
    pid: 1,
    op: 'HcnCreateNetwork',
    id: null,
    settings: natNetwork('kept'),
  });
  s.write(`${create}\n`);
  const created = (await nextLine()) as { hr: number; result: string; keep: boolean };
  expect(created).toMatchObject({ hr: 0, keep: true });
  // Two lines in one write: answered in order, each once.
  const open = JSON.stringify({ v: 1, keep: true, pid: 1, op: 'HcnOpenNetwork', id: created.result });
  const list = JSON.stringify({ v: 1, keep: true, pid: 1, op: 'HcnEnumerateNetworks', query: null });
  s.write(`${open}\n${list}\n`);
  expect(await nextLine()).toEqual({ hr: 0, result: created.result, errorRecord: null, keep: true });
  expect(await nextLine()).toEqual({ hr: 0, result: JSON.stringify([created.result]), errorRecord: null, keep: true });
  expect(ended).toBe(false);
  // A line without keep is answered without it, and the service ends the connection.
  s.write('{"v":1,"pid":1,"op":"HcnEnumerateNetworks","query":null}\n');
  expect(await nextLine()).toEqual({ hr: 0, result: JSON.stringify([created.result]), errorRecord: null });
  await new Promise<void>((resolve) => (ended ? resolve() : s.once('end', () => resolve())));
  s.destroy();
});

test('control requests: ok/result, and ok:false with a message for unknown commands or bad arguments', async () => {
  expect(JSON.parse(await raw('{"v":1,"ctl":"stats"}\n'))).toMatchObject({
    ok: true,
    result: { busyMs: expect.any(Number) },
  });
  expect(JSON.parse(await raw('{"v":1,"ctl":"frob"}\n'))).toEqual({
    ok: false,
    error: 'unknown control command "frob"',
  });
  expect(JSON.parse(await raw('{"v":1,"ctl":"latency","args":{"op":"*"}}\n'))).toEqual({
    ok: false,
    error: 'missing argument ms',
  });
  expect(JSON.parse(await raw('{"v":1,"ctl":"fail","args":{"op":"*","hresult":0}}\n'))).toEqual({
    ok: false,
    error: 'fail needs a failing HRESULT',
  });
});

test('a client that disconnects right after sending does not cancel its call', async () => {
  await fx.sim.control.setLatency('HcnCreateNetwork', 50);
  const a = parseAddress(fx.sim.address);
  const line =
    JSON.stringify({ v: 1, pid: 1, op: 'HcnCreateNetwork', id: null, settings: natNetwork('orphan') }) + '\n';
  await new Promise<void>((resolve) => {
    const s = net.connect(a.kind === 'unix' ? { path: a.path } : { host: a.host, port: a.port }, () =>
      s.end(line, () => {
        s.destroy();
        resolve();
      }),
    );
  });
  await fx.sim.control.waitIdle(2000);
  const c = new WireClient(fx.sim.address);
  expect(JSON.parse(ok(await c.enumerateNetworks(JSON.stringify({ Filter: '{"Name":"orphan"}' }))))).toHaveLength(1);
});

test('the wire client maps transport failures to the RPC HRESULTs the C client uses', async () => {
  const gone = await new WireClient('unix:/nonexistent/hns.sock').enumerateNetworks(null);
  expect(gone.hr).toBe(0x800706ba);
  expect(JSON.parse(gone.errorRecord!)).toMatchObject({ Success: false, ErrorCode: 0x800706ba });
  const malformed = await new WireClient('http://localhost:80').enumerateNetworks(null);
  expect(malformed.hr).toBe(0x800706ba);
  // A server that closes without answering: RPC_S_CALL_FAILED.
  const mute = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => mute.listen(0, '127.0.0.1', () => r()));
  try {
    const broken = await new WireClient(`tcp:127.0.0.1:${(mute.address() as net.AddressInfo).port}`).enumerateNetworks(
      null,
    );
    expect(broken.hr).toBe(0x800706be);
  } finally {
    mute.close();
  }
});

test('every op answer names the service instance, a new one after a restart; a call on a handle of the old one is E_HANDLE', async () => {
  const call = async (req: Record<string, unknown>) =>
    JSON.parse(await raw(`${JSON.stringify({ v: 1, pid: 1, ...req })}\n`)) as {
      hr: number;
      boot: number;
      result: string;
    };
  const created = await call({ op: 'HcnCreateNetwork', id: null, settings: natNetwork('booted') });
  expect(created).toMatchObject({ hr: 0, boot: expect.any(Number) });
  const query = { op: 'HcnQueryNetworkProperties', id: created.result, query: null };
  expect(await call({ ...query, boot: String(created.boot) })).toMatchObject({ hr: 0, boot: created.boot });
  await fx.sim.control.restart();
  const after = await call({ ...query, boot: String(created.boot) });
  expect(after).toMatchObject({ hr: 0x80070006 });
  expect(after.boot).not.toBe(created.boot);
  expect(await call({ ...query, boot: String(after.boot) })).toMatchObject({ hr: 0 });
});
