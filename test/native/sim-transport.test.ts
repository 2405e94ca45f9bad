/**
 * @jest-environment <rootDir>/test/helpers/native-environment.js
 *
 * The simulator client's transport: addresses, refusals and broken answers become the RPC HRESULTs HNS clients
 * see when the service is down (0x800706BA) or drops a call (0x800706BE), with an HNS-style error record.
 */
import * as net from 'net';

import type { NativeHcn } from '../../src/hns/native-types';
import { FakeSimServer } from './helpers/fake-sim-server';
import { TestHcnError, loadAddon, rejectionOf, simLibraryPath } from './helpers/addon';

const RPC_S_SERVER_UNAVAILABLE = 0x800706ba;
const RPC_S_CALL_FAILED = 0x800706be;

let hcn: NativeHcn;
let sim: FakeSimServer;

beforeAll(async () => {
  hcn = loadAddon();
  hcn.init({ libraryPath: simLibraryPath });
  hcn.setErrorClass(TestHcnError);
  sim = await FakeSimServer.start();
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  sim.reset();
  process.env.HCN_SIM = sim.address;
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function expectUnavailable(
  promise: Promise<unknown>,
  reason: RegExp,
  op = 'HcnEnumerateNetworks',
): Promise<void> {
  const error = await rejectionOf(promise);
  expect(error).toMatchObject({ op, hresult: RPC_S_SERVER_UNAVAILABLE });
  const record = JSON.parse(error.errorRecord as string);
  expect(record).toMatchObject({ Success: false, ErrorCode: 2147944122 });
  expect(record.Error).toMatch(reason);
}

describe('no simulator to talk to: RPC_S_SERVER_UNAVAILABLE', () => {
  test('connection refused on tcp', async () => {
    const port = await freePort();
    process.env.HCN_SIM = `tcp:127.0.0.1:${port}`;
    await expectUnavailable(
      hcn.enumerateNetworks(null),
      new RegExp(`connect tcp:127.0.0.1:${port}: Connection refused`),
    );
  });

  test('no socket at the unix path', async () => {
    process.env.HCN_SIM = 'unix:/nonexistent/hcn-sim.sock';
    await expectUnavailable(hcn.enumerateNetworks(null), /connect unix:\/nonexistent\/hcn-sim.sock: No such file/);
  });

  test('HCN_SIM unset', async () => {
    delete process.env.HCN_SIM;
    await expectUnavailable(hcn.enumerateNetworks(null), /HCN_SIM is not set/);
  });

  test.each([
    'unix:relative.sock',
    'tcp:10.0.0.1:80',
    'tcp:127.0.0.1:0',
    'tcp:127.0.0.1:99999',
    'tcp:127.0.0.1',
    'http://x',
  ])('HCN_SIM=%s is malformed', async (address) => {
    process.env.HCN_SIM = address;
    await expectUnavailable(hcn.enumerateNetworks(null), /is malformed/);
  });

  test('HNSCall has no error-record parameter: the failure comes back as the v1 envelope', async () => {
    process.env.HCN_SIM = `tcp:127.0.0.1:${await freePort()}`;
    await expectUnavailable(hcn.hnsCall('GET', '/globals/version', null), /Connection refused/, 'HNSCall');
  });
});

describe('the simulator breaks the call: RPC_S_CALL_FAILED', () => {
  test.each([
    ['closes in the middle of its answer', { raw: '{"hr":0,"result":"[' }, /in the middle of its answer/],
    ['closes without answering', { drop: true as const }, /closed the connection without answering/],
    ['answers with something that is not JSON', { raw: 'not json\n' }, /malformed answer/],
    ['answers without an hr', { raw: '{"result":"[]"}\n' }, /malformed answer/],
    ['answers with a result that is not a string', { raw: '{"hr":0,"result":[]}\n' }, /malformed answer/],
  ])('%s', async (_, reply, reason) => {
    sim.reply('HcnEnumerateNetworks', reply);
    const error = await rejectionOf(hcn.enumerateNetworks(null));
    expect(error).toMatchObject({ op: 'HcnEnumerateNetworks', hresult: RPC_S_CALL_FAILED });
    expect(JSON.parse(error.errorRecord as string)).toMatchObject({
      Success: false,
      ErrorCode: 2147944126,
      Error: expect.stringMatching(reason),
    });
  });

  test('an open that answers S_OK without an id fails instead of making a handle to nothing', async () => {
    sim.reply('HcnOpenNetwork', { result: null });
    await expect(
      rejectionOf(hcn.getNetworkProperties('5f0b1190-63be-4e0c-b974-bd0f55675a42', null)),
    ).resolves.toMatchObject({
      op: 'HcnOpenNetwork',
      hresult: RPC_S_CALL_FAILED,
    });
    expect(sim.ops()).toEqual(['HcnOpenNetwork']);
  });
});

describe('transport variants', () => {
  test('tcp:127.0.0.1 and tcp:localhost both work', async () => {
    const tcp = await FakeSimServer.start({ tcp: true });
    try {
      tcp.reply('HcnEnumerateEndpoints', { result: '["tcp"]' });
      process.env.HCN_SIM = tcp.address;
      await expect(hcn.enumerateEndpoints(null)).resolves.toBe('["tcp"]');
      process.env.HCN_SIM = tcp.address.replace('127.0.0.1', 'localhost');
      await expect(hcn.enumerateEndpoints(null)).resolves.toBe('["tcp"]');
    } finally {
      await tcp.close();
    }
  });

  test('large requests and answers cross intact (several reads and writes each)', async () => {
    const big = 'x'.repeat(3 << 20) + '🚀';
    sim.reply('HNSCall', (r) => ({ result: (r.request as string) + 'ñ' }));
    await expect(hcn.hnsCall('POST', '/networks/', big)).resolves.toBe(big + 'ñ');
  });

  test('bytes after the answer line are ignored', async () => {
    sim.reply('HcnEnumerateNamespaces', { raw: '{"hr":0,"result":"[]","errorRecord":null}\ntrailing garbage' });
    await expect(hcn.enumerateNamespaces(null)).resolves.toBe('[]');
  });
});

describe('kept connections (docs/sim-protocol.md)', () => {
  let kept: FakeSimServer;
  beforeAll(async () => {
    kept = await FakeSimServer.start({ keep: true });
  });
  afterAll(async () => {
    await kept.close();
  });
  beforeEach(async () => {
    await kept.dropIdle();
    kept.reset();
    kept.connections = 0;
    kept.reply('HcnEnumerateNetworks', { result: '[]' });
    process.env.HCN_SIM = kept.address;
  });

  test('a simulator that keeps the connection serves the next calls on it', async () => {
    for (let i = 0; i < 3; i++) await expect(hcn.enumerateNetworks(null)).resolves.toBe('[]');
    expect(kept.requests.map((r) => r.keep)).toEqual([true, true, true]);
    expect(kept.connections).toBe(1);
  });

  test('a kept connection the simulator has closed since (it stopped or restarted) is not used: the call succeeds on a new one', async () => {
    await expect(hcn.enumerateNetworks(null)).resolves.toBe('[]');
    expect(await kept.dropIdle()).toBe(1);
    // Not RPC_S_CALL_FAILED: the line was never sent on the closed connection.
    await expect(hcn.enumerateNetworks(null)).resolves.toBe('[]');
    expect(kept.connections).toBe(2);
    expect(kept.ops()).toEqual(['HcnEnumerateNetworks', 'HcnEnumerateNetworks']);
  });

  test('calls at once each get a connection, kept for the calls after them', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    kept.reply('HcnEnumerateNetworks', async () => {
      await gate;
      return { result: '[]' };
    });
    const calls = [1, 2, 3].map(() => hcn.enumerateNetworks(null));
    while (kept.requests.length < 3) await new Promise((r) => setTimeout(r, 5));
    release();
    await expect(Promise.all(calls)).resolves.toEqual(['[]', '[]', '[]']);
    for (let i = 0; i < 3; i++) await expect(hcn.enumerateNetworks(null)).resolves.toBe('[]');
    expect(kept.connections).toBe(3);
  });

  test('a simulator that answers without keep gets a connection per call', async () => {
    process.env.HCN_SIM = sim.address;
    sim.reply('HcnEnumerateNetworks', { result: '[]' });
    const before = sim.connections;
    for (let i = 0; i < 3; i++) await expect(hcn.enumerateNetworks(null)).resolves.toBe('[]');
    expect(sim.connections - before).toBe(3);
  });

  test('a call goes to the simulator HCN_SIM names now, not to a kept connection to another', async () => {
    await expect(hcn.enumerateNetworks(null)).resolves.toBe('[]');
    process.env.HCN_SIM = sim.address;
    sim.reply('HcnEnumerateNetworks', { result: '["other"]' });
    await expect(hcn.enumerateNetworks(null)).resolves.toBe('["other"]');
    expect(kept.requests).toHaveLength(1);
  });
});
