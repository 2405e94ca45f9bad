/**
 * `hcn-cni selftest` and `hcn-sim compare` against the simulator, through the real CLI entries: the self-test passes
 * and leaves nothing (HNS objects, state records, IPAM allocations listed before and after); an answer that differs
 * from what the plugin relies on fails it; killed at every HNS call it makes, the next audit leaves none of its
 * endpoints or networks and the next self-test finishes the rest; the simulator's replay of its own report shows no
 * difference, and a report edited to differ shows each difference.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { namespaceIdOf } from '../../src/orphans/selftest-names';
import { startHarness, stateFiles, ROOT, CLI, type Harness } from '../helpers/cni-harness';

const SIM_CLI = path.join(ROOT, 'dist', 'cli', 'hcn-sim.js');
const NETWORK = 'cbr0';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});
beforeEach(async () => {
  await freshNode();
});

/** A node with the configured bridge network and a state directory, as after install. */
async function freshNode(): Promise<void> {
  await h.reset();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNetwork({
    Name: NETWORK,
    Type: 'L2Bridge',
    Ipams: [
      {
        Type: 'Static',
        Subnets: [
          { IpAddressPrefix: '10.244.1.0/24', Routes: [{ NextHop: '10.244.1.1', DestinationPrefix: '0.0.0.0/0' }] },
        ],
      },
    ],
    Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } }],
  });
  fs.mkdirSync(h.stateDir, { recursive: true });
  fs.writeFileSync(
    conflist(),
    JSON.stringify({
      cniVersion: '1.0.0',
      name: NETWORK,
      plugins: [
        {
          type: 'hcn-cni',
          networkName: NETWORK,
          stateDir: h.stateDir,
          hnsTimeoutSeconds: 10,
          ipam: {
            type: 'host-local',
            dataDir: path.join(h.tmp, 'ipam'),
            ranges: [[{ subnet: '10.244.1.0/24', rangeStart: '10.244.1.10', rangeEnd: '10.244.1.20' }]],
          },
        },
      ],
    }),
  );
}

const conflist = () => path.join(h.tmp, '10-hcn.conflist');
const reportFile = () => path.join(h.tmp, 'report.json');

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  pid: number;
}

function run(script: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: {
        PATH: process.env.PATH,
        HCN_SIM: h.sim.address,
        CNI_PATH: '/usr/lib/cni',
        HCN_CNI_CLAIMS_DIR: path.join(h.tmp, 'claims'),
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, pid: child.pid ?? -1 }));
  });
}

const selftest = (...extra: string[]) =>
  run(CLI, ['selftest', '--conf', conflist(), '--report', reportFile(), ...extra]);
const compare = (file: string) => run(SIM_CLI, ['compare', file]);

/** What a run could leave: HNS objects, state records, IPAM allocations (host-local's files named by the address). */
async function node() {
  await h.sim.control.waitIdle();
  const dump = await h.sim.control.dump();
  const ipamDir = path.join(h.tmp, 'ipam', NETWORK);
  return {
    networks: dump.networks.map((n) => `${String(n.Name)} ${String(n.ID)}`).sort(),
    endpoints: dump.endpoints.map((e) => String(e.Name)),
    namespaces: dump.namespaces.map((n) => String(n.ID)),
    state: stateFiles(h),
    allocated: fs.existsSync(ipamDir) ? fs.readdirSync(ipamDir).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f)) : [],
  };
}

function readReport(): { passed: boolean; steps: Array<{ name: string; pass: boolean; problem?: string }> } {
  return JSON.parse(fs.readFileSync(reportFile(), 'utf8')) as ReturnType<typeof readReport>;
}

test('passes on the configured network and leaves nothing: HNS objects, state and IPAM as before', async () => {
  const before = await node();
  const r = await selftest();
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  expect(r.stdout).toMatch(/address 10\.244\.1\.\d+ \(ipam\)/);
  expect(r.stdout).toMatch(/^ok {3}endpoint-create-address-in-use \(0x803B002F HCN_E_ADDR_INVALID_OR_RESERVED\)$/m);
  expect(r.stdout).toMatch(/every answer as the plugin relies on; nothing left behind/);
  expect(await node()).toEqual(before);
  const report = readReport();
  expect(report.passed).toBe(true);
  expect(report.steps.map((s) => s.name)).toEqual(
    expect.arrayContaining(['namespace-attach', 'v1-endpoint', 'namespace-detach-again', 'notifications-register']),
  );
});

test('without IPAM: the address HNS assigns, and nothing left', async () => {
  const doc = JSON.parse(fs.readFileSync(conflist(), 'utf8')) as { plugins: Array<Record<string, unknown>> };
  delete doc.plugins[0]!.ipam;
  fs.writeFileSync(conflist(), JSON.stringify(doc));
  const before = await node();
  const r = await selftest();
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  expect(r.stdout).toMatch(/address 10\.244\.1\.\d+ \(hns\)/);
  expect(await node()).toEqual(before);
});

test('with --network-of-its-own: a NAT network of its own, named as ours, and nothing left', async () => {
  const before = await node();
  const r = await selftest('--network-of-its-own', '--subnet', '172.30.9.0/24');
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  expect(r.stdout).toMatch(/NAT network of its own \(172\.30\.9\.0\/24\), address 172\.30\.9\.2 \(fixed\)/);
  const created = JSON.parse(fs.readFileSync(reportFile(), 'utf8')) as {
    steps: Array<{ name: string; call: { args: Array<{ Name?: string }> } }>;
  };
  expect(created.steps.find((s) => s.name === 'network-create')?.call.args[0]?.Name).toMatch(/^hcn-nic-[0-9a-f]{40}$/);
  expect(await node()).toEqual(before);
});

test('an answer that differs from what the plugin relies on fails the step and the run (exit 1), still leaving nothing', async () => {
  const before = await node();
  // The second HcnDeleteEndpoint is the repeated delete, which must answer "not found".
  await h.sim.control.failCall('HcnDeleteEndpoint', 0x80004005, { nth: 2 });
  const r = await selftest();
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(
    /^FAIL endpoint-delete-again: refused with 0x80004005 E_FAIL; the plugin recognises endpoint not found by /m,
  );
  expect(
    readReport()
      .steps.filter((s) => !s.pass)
      .map((s) => s.name),
  ).toEqual(['endpoint-delete-again']);
  expect(await node()).toEqual(before);
});

test('without the configured network: its lookup fails, the steps after it are not run, nothing is left', async () => {
  await h.deps.hns
    .hcn({ hnsTimeoutSeconds: 10 })
    .deleteNetwork((await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).listNetworks({ Name: NETWORK }))[0]!.ID!);
  const before = await node();
  const r = await selftest();
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(/^FAIL network-find-by-name: the answer lacks 0\.ID/m);
  expect(r.stdout).toMatch(/^SKIP endpoint-create: not run: network-find-by-name failed$/m);
  expect(await node()).toEqual(before);
});

test('a delegated-NIC configuration has no shared network to test on: refused in one line, nothing changed in HNS', async () => {
  const list = JSON.parse(fs.readFileSync(conflist(), 'utf8')) as { plugins: Array<Record<string, unknown>> };
  list.plugins[0] = { ...list.plugins[0], mode: 'delegatedNic', subnet: '10.10.3.0/24' };
  fs.writeFileSync(conflist(), JSON.stringify(list));
  const before = await node();
  const r = await selftest();
  expect(r.code).toBe(1);
  expect(r.stderr.trim()).toMatch(
    /has no shared network to test on \(delegated-NIC mode makes one network per pod\): use --network-of-its-own$/,
  );
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(await node()).toEqual(before);
  expect((await selftest('--network-of-its-own', '--subnet', '172.30.9.0/24')).code).toBe(0);
});

test('--json prints the report on stdout and nothing else; a usage error exits 2', async () => {
  const r = await run(CLI, ['selftest', '--conf', conflist(), '--json']);
  expect(r.code).toBe(0);
  const report = JSON.parse(r.stdout) as { schema: string; version: number; passed: boolean; steps: unknown[] };
  expect({ schema: report.schema, version: report.version, passed: report.passed }).toEqual({
    schema: 'hcn-cni-selftest',
    version: 1,
    passed: true,
  });
  const bad = await run(CLI, ['selftest', '--conf', conflist(), '--subnet', '10.0.0.0/24']);
  expect({ code: bad.code, err: /--subnet is for --network-of-its-own/.test(bad.stderr) }).toEqual({
    code: 2,
    err: true,
  });
});

describe('hcn-sim compare', () => {
  test("of the self-test's own report: no difference", async () => {
    expect((await selftest()).code).toBe(0);
    const c = await compare(reportFile());
    expect({ code: c.code, out: c.stdout, err: c.stderr }).toEqual({
      code: 0,
      out: `compare: ${readReport().steps.length} calls replayed, 0 difference(s)\n`,
      err: '',
    });
  });

  test('of a report edited to differ: each difference (a changed error code, a missing key, a changed type, an id in another case)', async () => {
    expect((await selftest()).code).toBe(0);
    const report = JSON.parse(fs.readFileSync(reportFile(), 'utf8')) as {
      steps: Array<{ name: string; answer: { ok: boolean; hresult?: number; value?: Record<string, unknown> } }>;
    };
    const step = (n: string) => report.steps.find((s) => s.name === n)!.answer;
    step('endpoint-query-deleted').hresult = 0x80070490;
    delete step('endpoint-create').value!.MacAddress;
    step('namespace-create').value!.NamespaceId = 'two';
    step('endpoint-query').value!.ID = String(step('endpoint-query').value!.ID).toUpperCase();
    const edited = path.join(h.tmp, 'edited.json');
    fs.writeFileSync(edited, JSON.stringify(report));
    const c = await compare(edited);
    expect(c.code).toBe(1);
    expect(c.stdout.trim().split('\n')).toEqual([
      'namespace-create: NamespaceId: type: host string, simulator number',
      'endpoint-create: MacAddress: the simulator answers this key (string), the host does not',
      'endpoint-query: ID: form: host guid (upper case), simulator guid (lower case)',
      'endpoint-query-deleted: error code: host 0x80070490 ERROR_NOT_FOUND, simulator 0x803B0002 HCN_E_ENDPOINT_NOT_FOUND',
      `compare: ${report.steps.length} calls replayed, 4 difference(s)`,
    ]);
  });

  test('on a simulator given by address: no difference, and the replay leaves it as it found it', async () => {
    expect((await selftest()).code).toBe(0);
    const before = await node();
    // The running simulator holds the configured network already: the replay's copy of it is refused, so the
    // replay runs against a simulator with the network removed first, as a fresh one would be.
    const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
    await hcn.deleteNetwork((await hcn.listNetworks({ Name: NETWORK }))[0]!.ID!);
    const c = await run(SIM_CLI, ['compare', reportFile(), '--address', h.sim.address]);
    expect({ code: c.code, out: c.stdout }).toEqual({
      code: 0,
      out: `compare: ${readReport().steps.length} calls replayed, 0 difference(s)\n`,
    });
    expect((await node()).endpoints).toEqual([]);
    expect((await node()).namespaces).toEqual(before.namespaces);
  });

  test('refuses what is not a self-test report', async () => {
    const other = path.join(h.tmp, 'other.json');
    fs.writeFileSync(other, JSON.stringify({ schema: 'something-else', version: 1, steps: [] }));
    const c = await compare(other);
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/is not a self-test report/);
  });
});

describe('killed at an HNS call', () => {
  /** The HNS calls a clean run makes, in order, as (op, nth) pairs: from the simulator's call log. */
  async function points(extra: string[]): Promise<Array<{ op: string; nth: number }>> {
    const r = await selftest(...extra);
    expect(r.code).toBe(0);
    const seen = new Map<string, number>();
    return (await h.sim.control.calls())
      .filter((c) => c.pid === r.pid)
      .sort((a, b) => a.seq - b.seq)
      .map((c) => {
        const nth = (seen.get(c.op) ?? 0) + 1;
        seen.set(c.op, nth);
        return { op: c.op, nth };
      });
  }

  /** Kills a run at each point, then audits, then runs the self-test again: what each step left, one line per point. */
  async function killAt(all: Array<{ op: string; nth: number }>, extra: string[]) {
    const outcomes: string[] = [];
    for (const p of all) {
      await freshNode();
      await h.sim.control.killClient(p.op, { nth: p.nth });
      const killed = await selftest(...extra);
      const audited = await run(CLI, ['audit', '--conf', conflist()]);
      const afterAudit = await node();
      const next = await selftest(...extra);
      const afterNext = await node();
      outcomes.push(
        JSON.stringify({
          point: `${p.op} #${p.nth}`,
          killed: killed.signal,
          audit: audited.code,
          endpointsAfterAudit: afterAudit.endpoints,
          // By name: each fresh node's configured network has a new id.
          networksAfterAudit: afterAudit.networks.map((n) => n.split(' ')[0]),
          namespacesAfterAudit: afterAudit.namespaces,
          next: next.code,
          namespaces: afterNext.namespaces,
          endpoints: afterNext.endpoints,
          allocated: afterNext.allocated,
          intents: afterNext.state.filter((f) => f.startsWith('intents')),
        }),
      );
    }
    return outcomes;
  }

  const nothingLeft = (networks: string[]) => (p: { op: string; nth: number }) =>
    JSON.stringify({
      point: `${p.op} #${p.nth}`,
      killed: 'SIGKILL',
      audit: 0,
      endpointsAfterAudit: [],
      networksAfterAudit: networks,
      namespacesAfterAudit: [],
      next: 0,
      namespaces: [],
      endpoints: [],
      allocated: [],
      intents: [],
    });

  test("killed with its namespace made: the audit removes that namespace by the id its dead claim gives, and no other (not a dry run's)", async () => {
    const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
    // A pod's namespace, and one with the id a self-test of another owner would derive (no claim of it here).
    const pods = String((await hcn.createNamespace()).ID).toLowerCase();
    const unclaimed = namespaceIdOf({ containerId: 'hcn-cni-selftest-0123456789abcdef', ifname: 'eth0' });
    await hcn.createNamespace({}, unclaimed);
    await h.sim.control.killClient('HcnCreateEndpoint', { nth: 1 });
    expect((await selftest()).signal).toBe('SIGKILL');
    const left = (await node()).namespaces.map((id) => id.toLowerCase());
    expect(left).toHaveLength(3);
    const its = left.find((id) => id !== pods && id !== unclaimed)!;
    expect((await run(CLI, ['audit', '--dry-run', '--conf', conflist()])).code).toBe(0);
    expect((await node()).namespaces.map((id) => id.toLowerCase()).sort()).toEqual([...left].sort());
    const audited = await run(CLI, ['audit', '--conf', conflist()]);
    expect(audited.code).toBe(0);
    expect((await node()).namespaces.map((id) => id.toLowerCase()).sort()).toEqual([pods, unclaimed].sort());
    expect(its).not.toBe(unclaimed);
  }, 60_000);

  test('at every call: the next audit leaves none of its endpoints, and the next self-test finishes the rest', async () => {
    const all = await points([]);
    expect(all.length).toBeGreaterThan(20);
    expect(await killAt(all, [])).toEqual(all.map(nothingLeft([NETWORK])));
  }, 900_000);

  test('with a network of its own, at every create and delete: the next audit leaves none of its networks either', async () => {
    const own = ['--network-of-its-own'];
    const all = (await points(own)).filter((p) => /Create|Delete/.test(p.op));
    expect(all.map((p) => p.op)).toContain('HcnCreateNetwork');
    expect(await killAt(all, own)).toEqual(all.map(nothingLeft([NETWORK])));
  }, 900_000);
});
