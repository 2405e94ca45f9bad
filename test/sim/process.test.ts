/**
 * The simulator as a process: state across process restarts, a client SIGKILLed mid-create (seed 000), and the CLI.
 * These need the compiled CLI and wire client (npm run build:ts).
 */
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { simulatorCliPath, startSimulator, WireClient } from '../../src/sim';
import { findPackageRoot } from '../../src/sim/package-root';
import { Q2, V2, l2bridge, natNetwork, ok, okJson, output } from './helpers';

const run = promisify(execFile);
const DIST = path.join(findPackageRoot(__dirname), 'dist');
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-sim-test-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('--state keeps persistent networks (and their NIC) across a simulator process restart; nothing else survives', async () => {
  const stateFile = path.join(tmp, 'state.json');
  const first = await startSimulator({ stateFile });
  let kept: string;
  let firstPid: number;
  try {
    const c = new WireClient(first.address);
    kept = ok(
      await c.createNetwork(
        null,
        l2bridge('kept', '10.20.0.0/24', '10.20.0.1', {
          Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet 2' } }],
        }),
      ),
    );
    ok(await c.createNetwork(null, natNetwork('gone', { Flags: 8 })));
    const v1 = output(await c.hnsCall('POST', '/networks/', JSON.stringify({ Name: 'kept-v1', Type: 'nat' })));
    ok(await c.createEndpoint(kept, null, JSON.stringify({ ...V2, Name: 'e' })));
    ok(await c.createNamespace(null, JSON.stringify(V2)));
    const onDisk = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { networks: Array<{ name: string }> };
    expect(onDisk.networks.map((n) => n.name)).toEqual(['kept', 'kept-v1']);
    expect(v1.ID).toMatch(/^[0-9A-F-]{36}$/);
    firstPid = first.pid;
  } finally {
    await first.stop();
  }
  expect(fs.readdirSync(tmp).filter((f) => f.endsWith('.tmp'))).toEqual([]); // atomic writes leave no temp files

  const second = await startSimulator({ stateFile });
  try {
    expect(second.pid).not.toBe(firstPid);
    const c = new WireClient(second.address);
    const networks = JSON.parse(ok(await c.enumerateNetworks(null))) as string[];
    expect(networks).toHaveLength(2);
    expect(networks[0]).toBe(kept);
    expect(okJson(await c.queryNetworkProperties(kept, Q2))).toMatchObject({
      Name: 'kept',
      Type: 'L2Bridge',
      Ipams: [{ Subnets: [{ IpAddressPrefix: '10.20.0.0/24' }] }],
    });
    expect(JSON.parse(ok(await c.enumerateEndpoints(null)))).toEqual([]);
    expect(JSON.parse(ok(await c.enumerateNamespaces(null)))).toEqual([]);
    const dump = await second.control.dump();
    expect(dump.boundAdapters).toEqual({ 'Ethernet 2': kept });
    expect(dump.networks.map((n) => n.CreatedBy)).toEqual(['v2', 'v1']);
  } finally {
    await second.stop();
  }
});

test('seed 000: a CNI-like child SIGKILLed mid-HcnCreateNetwork; the network commits later and holds the NIC', async () => {
  const sim = await startSimulator({ host: { latencyMs: { HcnCreateNetwork: 500 } } });
  try {
    await sim.control.killClient('HcnCreateNetwork');
    const id = 'eeeeeeee-0000-4000-8000-00000000000e';
    const script = `
      const { WireClient } = require(${JSON.stringify(path.join(DIST, 'sim/wire-client.js'))});
      new WireClient(process.argv[1]).createNetwork(${JSON.stringify(id)}, process.argv[2])
        .then((r) => { process.stdout.write('RETURNED ' + JSON.stringify(r)); process.exit(0); });
    `;
    const delegated = (name: string) =>
      l2bridge(name, '10.30.0.0/24', '10.30.0.1', {
        Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet 2' } }],
      });
    const child = spawn(process.execPath, ['-e', script, sim.address, delegated('leaked')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    );
    expect({ code, signal, out }).toEqual({ code: null, signal: 'SIGKILL', out: '' });

    const c = new WireClient(sim.address);
    // The caller is dead, the create is still running: not visible yet…
    expect(JSON.parse(ok(await c.enumerateNetworks(null)))).toEqual([]);
    // …and it commits anyway.
    await sim.control.waitIdle(5000);
    expect(
      JSON.parse(ok(await c.enumerateNetworks(JSON.stringify({ ...V2, Filter: JSON.stringify({ Name: 'leaked' }) })))),
    ).toEqual([id]);
    const record = (await sim.control.calls()).find((r) => r.op === 'HcnCreateNetwork');
    expect(record).toMatchObject({ pid: child.pid, id, hr: 0, fault: 'killed-client' });

    // The next ADD for the same NIC fails as it does on Windows…
    await sim.control.setLatency('HcnCreateNetwork', 0);
    const retry = await c.createNetwork(null, delegated('next-add'));
    expect(retry).toEqual({
      hr: 0x803b0006,
      result: null,
      errorRecord: '{"Success":false,"Error":"An adapter was not found. ","ErrorCode":2151350278}',
    });
    // …until the leaked network is found and deleted.
    ok(await c.deleteNetwork(id));
    ok(await c.createNetwork(null, delegated('next-add')));
  } finally {
    await sim.stop();
  }
});

test('kill-client never kills the simulator itself or its parent (the test runner)', async () => {
  const sim = await startSimulator();
  try {
    await sim.control.killClient('HcnEnumerateNetworks', { count: 2 });
    const own = new WireClient(sim.address, { pid: process.pid }); // our pid is the simulator's parent
    ok(await own.enumerateNetworks(null));
    const self = new WireClient(sim.address, { pid: sim.pid });
    ok(await self.enumerateNetworks(null));
    expect((await sim.control.calls()).map((r) => r.fault)).toEqual(['kill-refused', 'kill-refused']);
    expect((await sim.control.ping()).pid).toBe(sim.pid);
  } finally {
    await sim.stop();
  }
});

describe('CLI', () => {
  const cli = () => simulatorCliPath();
  const ctl = async (address: string, ...args: string[]) => {
    const { stdout } = await run(process.execPath, [cli(), 'ctl', '--address', address, ...args]);
    return JSON.parse(stdout) as unknown;
  };
  const ctlFails = async (args: string[], env: NodeJS.ProcessEnv = process.env) => {
    try {
      await run(process.execPath, [cli(), ...args], { env });
    } catch (e) {
      const err = e as { code: number; stderr: string };
      return { code: err.code, stderr: err.stderr };
    }
    throw new Error('expected the command to fail');
  };

  test('serve on tcp:127.0.0.1:0 prints one listening line; ctl drives every control command; shutdown stops it', async () => {
    const server = spawn(process.execPath, [cli(), 'serve', '--listen', 'tcp:127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => server.on('exit', (c) => resolve(c)));
    let stderr = '';
    server.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const line = await new Promise<string>((resolve) => {
      let buf = '';
      server.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        if (buf.includes('\n')) resolve(buf);
      });
    });
    const ready = JSON.parse(line) as { listening: string; pid: number };
    expect(line.trim().split('\n')).toHaveLength(1);
    expect(ready.listening).toMatch(/^tcp:127\.0\.0\.1:[1-9]\d*$/);
    expect(ready.pid).toBe(server.pid);
    const a = ready.listening;

    // Independent settings, sent side by side (each ctl is its own process).
    const answers = await Promise.all([
      ctl(a, 'ping'),
      ctl(a, 'latency', 'HcnCreateNetwork', '20'),
      ctl(a, 'fail', 'HcnCreateNetwork', 'HCN_E_ADAPTER_NOT_FOUND', '--nth', '1'),
      ctl(a, 'hang', 'HcnDeleteNetwork', '--ms', '10'),
      ctl(a, 'release'),
      ctl(a, 'kill-client', 'HNSCall POST /networks', '--nth', '3'),
      ctl(a, 'race', 'create-wins', '--seed', '5'),
      ctl(a, 'delete-with-endpoints', 'refuse'),
      ctl(a, 'version', '9.3', '--no-v2'),
      ctl(a, 'adapter', 'add', 'Ethernet 3', '00-15-5d-aa-00-03'),
      ctl(a, 'adapter', 'rm', 'Ethernet'),
    ]);
    expect(answers).toEqual([
      expect.objectContaining({ pid: server.pid }),
      ...Array(3).fill({ ok: true }),
      { released: 0 },
      ...Array(4).fill({ ok: true }),
      expect.objectContaining({ Name: 'Ethernet 3', MacAddress: '00-15-5D-AA-00-03' }),
      { ok: true },
    ]);
    expect(await ctl(a, 'host')).toMatchObject({
      adapters: [{ Name: 'Ethernet 2' }, { Name: 'Ethernet 3' }],
      version: { major: 9, minor: 3 },
      v2: false,
      race: 'create-wins',
      seed: 5,
      deleteNetworkWithEndpoints: 'refuse',
      latencyMs: { HcnCreateNetwork: 20 },
    });

    const c = new WireClient(a);
    expect((await c.createNetwork(null, natNetwork('n'))).hr).toBe(0x80004001);
    expect(output(await c.hnsCall('GET', '/globals/version'))).toEqual({ Major: 9, Minor: 3 });
    await ctl(a, 'version', '15.4', '--v2');
    expect((await c.createNetwork(null, natNetwork('n'))).hr).toBe(0x803b0006); // the fail fault
    ok(await c.createNetwork(null, natNetwork('n')));
    // HCN_SIM stands in for --address.
    const [idle, viaEnv] = await Promise.all([
      ctl(a, 'wait-idle'),
      run(process.execPath, [cli(), 'ctl', 'ping'], { env: { ...process.env, HCN_SIM: a } }),
    ]);
    expect(idle).toEqual({ ok: true });
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({ pid: server.pid });
    const [stats, dump, calls] = await Promise.all([ctl(a, 'stats'), ctl(a, 'dump'), ctl(a, 'calls')]);
    expect(stats).toMatchObject({
      calls: { HcnCreateNetwork: 3, 'HNSCall GET /globals/version': 1 },
      counts: { networks: 1 },
    });
    expect((dump as { networks: unknown[] }).networks).toHaveLength(1);
    expect(calls as unknown[]).toHaveLength(4);
    expect(await ctl(a, 'reset', '--keep-objects')).toEqual({ ok: true });
    const [kept, restarted] = await Promise.all([ctl(a, 'stats'), ctl(a, 'restart', '--down-ms', '0')]);
    expect(kept).toMatchObject({ calls: {}, counts: { networks: 1 } }); // objects kept, counters not
    expect(restarted).toMatchObject({ downUntil: expect.any(Number) });
    expect(await ctl(a, 'reset')).toEqual({ ok: true });
    expect(await ctl(a, 'stats')).toMatchObject({ calls: {}, counts: { networks: 0 }, restarts: 0 });

    expect(await ctl(a, 'shutdown')).toEqual({ ok: true });
    expect(await exited).toBe(0);
    // Logs are JSON lines on stderr.
    const logs = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string });
    expect(logs.map((l) => l.msg)).toContain('hcn-sim listening');
  });

  test('usage errors exit 2 with usage text; service errors and unreachable addresses exit 1 with a clear message', async () => {
    const env = { ...process.env, HCN_SIM: '' };
    const [noMode, noAddress, latency, badCode, unknown, badAddress, serve, unreachable] = await Promise.all([
      ctlFails(['bogus']),
      ctlFails(['ctl', 'ping'], env),
      ctlFails(['ctl', '--address', 'unix:/x', 'latency', 'HcnCreateNetwork']),
      ctlFails(['ctl', '--address', 'unix:/x', 'fail', 'HcnCreateNetwork', 'NOT_A_CODE']),
      ctlFails(['ctl', '--address', 'unix:/x', 'frobnicate']),
      ctlFails(['ctl', '--address', 'tcp:10.0.0.1:80', 'ping']),
      ctlFails(['serve']),
      ctlFails(['ctl', '--address', `unix:${path.join(tmp, 'nobody.sock')}`, 'ping']),
    ]);
    expect(noMode.code).toBe(2);
    expect(noMode.stderr).toMatch(/unknown mode bogus[\s\S]*usage:/);
    expect(noAddress).toMatchObject({ code: 2 });
    expect(noAddress.stderr).toMatch(/--address/);
    expect(latency).toMatchObject({ code: 2, stderr: expect.stringMatching(/latency needs OP MS/) });
    expect(badCode.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command frobnicate/);
    expect(badAddress.stderr).toMatch(/expected unix:\/path.sock or tcp:127.0.0.1:PORT/);
    expect(serve.stderr).toMatch(/serve needs --listen/);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/nobody\.sock/);

    const sim = await startSimulator();
    try {
      const refused = await ctlFails(['ctl', '--address', sim.address, 'race', 'sometimes']);
      expect(refused).toMatchObject({ code: 1 });
      expect(refused.stderr).toMatch(/race mode: delete-wins, create-wins or random/);
    } finally {
      await sim.stop();
    }
  });

  test('SIGTERM stops serve cleanly and removes its unix socket', async () => {
    const sock = path.join(tmp, 'term.sock');
    const server = spawn(process.execPath, [cli(), 'serve', '--listen', `unix:${sock}`], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise<number | null>((resolve) => server.on('exit', (c) => resolve(c)));
    await new Promise<void>((resolve) => server.stdout.once('data', () => resolve()));
    expect(fs.existsSync(sock)).toBe(true);
    ok(await new WireClient(`unix:${sock}`).enumerateNetworks(null));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(fs.existsSync(sock)).toBe(false);
  });
});

test('startSimulator applies a host and reports a simulator that cannot start', async () => {
  const sim = await startSimulator({
    host: { adapters: [{ Name: 'NIC1', MacAddress: '00-15-5D-00-00-01' }], version: { major: 10, minor: 2 } },
  });
  try {
    const c = new WireClient(sim.address);
    expect(JSON.parse(ok(await c.enumerateAdapters()))).toEqual([
      {
        Name: 'NIC1',
        MacAddress: '00-15-5D-00-00-01',
        InterfaceDescription: 'Microsoft Hyper-V Network Adapter #4',
        InterfaceIndex: 4,
        // Not given in the host: one of its own, new for the adapter.
        InterfaceGuid: expect.stringMatching(/^\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}$/),
        Physical: true,
      },
    ]);
    expect(output(await c.hnsCall('GET', '/globals/version'))).toEqual({ Major: 10, Minor: 2 });
    // The address is taken: a second simulator on it fails to start, with the reason.
    await expect(startSimulator({ listen: sim.address })).rejects.toThrow(/in use/);
  } finally {
    await sim.stop();
  }
  // After stop, clients see the service gone.
  const gone = await new WireClient(sim.address).enumerateNetworks(null);
  expect(gone.hr).toBe(0x800706ba);
});
