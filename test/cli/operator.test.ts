/**
 * The operator's tool (`hcn-cni` without CNI_COMMAND) as a child process of the real CLI (dist/cli/hcn-cni.js, built
 * by `npm test` first) against a simulator started here: tables and --json of every command, audit --dry-run versus a
 * real audit of a leaked network, gc with a valid list, state with a quarantined record, version, and HNS unreachable.
 */
import { spawn } from 'child_process';
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { endpointName, nicNetworkName, ownerTag } from '../../src/orphans/ownership';
import { hcnPluginConf, loadConf } from '../../src/cli/operator/conf';
import { parseArgs, USAGE } from '../../src/cli/operator/args';
import { UsageError } from '../../src/cli/usage-error';
import { runOps } from '../../src/cli/operator';
import { CLI, ROOT, cni, bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';

let h: Harness;
useHarness(undefined, (x) => (h = x));
beforeEach(() => {
  fs.mkdirSync(h.stateDir, { recursive: true });
  fs.writeFileSync(confFile(), JSON.stringify(conflist()));
});

const PKG_VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;
const LEAK_OWNER = { containerId: 'leaked', ifname: 'eth0' };

function confFile(): string {
  return path.join(h.tmp, '10-hcn.conflist');
}

function conflist(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'cbr0',
    plugins: [
      { type: 'portmap-lookalike', capabilities: { portMappings: true } },
      {
        type: 'hcn-cni',
        createNetwork: true,
        subnet: '10.244.1.0/24',
        stateDir: h.stateDir,
        hnsTimeoutSeconds: 10,
        ...extra,
      },
    ],
  };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** ms from spawn to the first stderr output (not compared by toEqual: set only when there was some). */
  stderrAfterMs?: number;
}

/** The real executable, as an operator runs it: no CNI_COMMAND, HCN_SIM in the environment. */
function ops(args: string[], env: Record<string, string | undefined> = {}, onFirstStderr?: () => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, HCN_SIM: h.sim.address, ...env } as NodeJS.ProcessEnv,
      cwd: h.tmp,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const started = Date.now();
    let stderrAt: number | undefined;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      if (stderrAt === undefined) onFirstStderr?.();
      stderrAt ??= Date.now();
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout, stderr, ...(stderrAt !== undefined ? { stderrAfterMs: stderrAt - started } : {}) }),
    );
  });
}

/** With the test's configuration. */
function opsConf(
  args: string[],
  env: Record<string, string | undefined> = {},
  onFirstStderr?: () => void,
): Promise<Run> {
  return ops([...args, '--conf', confFile()], env, onFirstStderr);
}

function json<T = any>(r: Run): T {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(r.stdout) as T;
}

/** The table row (split on runs of 2+ spaces) whose first cell is `first`. */
function row(text: string, first: string | RegExp): string[] {
  const rows = text.split('\n').map((l) => l.split(/ {2,}/));
  const hit = rows.find((cells) => (typeof first === 'string' ? cells[0] === first : first.test(cells[0] ?? '')));
  if (!hit) throw new Error(`no row starting with ${first} in:\n${text}`);
  return hit;
}

async function newNamespace(): Promise<string> {
  const id = randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

async function addPod(containerId: string, netns?: string): Promise<void> {
  const r = await cni(h, {
    verb: 'ADD',
    conf: bridgeConf({ cniVersion: '1.1.0', stateDir: h.stateDir }),
    containerId,
    netns: netns ?? (await newNamespace()),
  });
  expect(r.exitCode).toBe(0);
}

/** A delegated-NIC network named like ours that no state claims: the seed-000 leak. */
async function leakNetwork(owner = LEAK_OWNER, adapterName = 'Ethernet 2'): Promise<{ id: string; name: string }> {
  const { api } = await h.deps.hns.api({ apiVersion: 2, hnsTimeoutSeconds: 10 });
  const name = nicNetworkName(owner);
  const n = await api.createNetwork({
    name,
    type: 'Transparent',
    flags: 8,
    adapterName,
    subnets: [{ prefix: '10.9.0.0/24', gateway: '10.9.0.1' }],
    policies: [],
  });
  return { id: n.id, name };
}

async function hnsNames(): Promise<{ networks: string[]; endpoints: string[] }> {
  const d = await h.sim.control.dump();
  return { networks: d.networks.map((n) => n.Name).sort(), endpoints: d.endpoints.map((e) => e.Name).sort() };
}

describe('usage', () => {
  it("names the configuration and plugin directories the code uses (containerd's defaults)", () => {
    expect(USAGE).toContain('C:\\Program Files\\containerd\\cni\\conf on Windows, /etc/cni/net.d elsewhere');
    expect(USAGE).toContain('C:\\Program Files\\containerd\\cni\\bin on Windows, /opt/cni/bin elsewhere');
    expect(USAGE).not.toMatch(/C:\\(etc|opt)\\cni/);
  });

  it('help and --help print the usage on stdout with exit 0; no arguments is a usage error', async () => {
    const help = await ops(['help']);
    expect(help.code).toBe(0);
    for (const c of [
      'networks',
      'endpoints',
      'namespaces',
      'audit [--dry-run]',
      'gc --valid FILE',
      'state [--clear-quarantine]',
      'version',
      '--conf FILE',
      '--state-dir DIR',
      '--json',
    ]) {
      expect(help.stdout).toContain(c);
    }
    const dashHelp = await ops(['audit', '--help']);
    expect(dashHelp).toEqual({ code: 0, stdout: help.stdout, stderr: '' });
    const none = await ops([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('a command is needed');
    expect(none.stderr).toContain('usage: hcn-cni <command>');
  });

  it.each([
    [['frobnicate'], /unknown command "frobnicate"/],
    [['networks', '--dry-run'], /--dry-run only applies to "audit"/],
    [['gc'], /gc needs --valid FILE/],
    [['state', '--conf'], /--conf needs a value/],
    [['networks', 'endpoints'], /unexpected argument "endpoints"/],
    [['version', '--jsn'], /unknown option --jsn/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const r = await ops(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it('parses options in any order, with = or a separate value', () => {
    expect(parseArgs(['--state-dir=/x', 'audit', '--dry-run', '--json'])).toMatchObject({
      command: 'audit',
      stateDir: '/x',
      dryRun: true,
      json: true,
    });
    expect(parseArgs(['gc', '--valid', 'f.json', '-v'])).toMatchObject({
      command: 'gc',
      valid: 'f.json',
      verbose: true,
    });
    expect(() => parseArgs(['--json=yes', 'state'])).toThrow(new UsageError('--json takes no value'));
    expect(() => parseArgs(['state', '--conf='])).toThrow(new UsageError('--conf needs a value'));
    expect(() => parseArgs(['state', '--conf', '--json'])).toThrow(new UsageError('--conf needs a value'));
    expect(() => parseArgs(['state', '-x'])).toThrow(new UsageError('unknown option -x'));
    expect(() => parseArgs(['audit', '--valid=f'])).toThrow(new UsageError('--valid only applies to "gc"'));
    expect(parseArgs(['state', '-h', '--valid=f'])).toMatchObject({ command: 'state', help: true });
  });

  it('runs in process through runOps with the given writers', async () => {
    let out = '';
    let err = '';
    const io = { env: {}, load: {}, out: (s: string) => void (out += s), err: (s: string) => void (err += s) };
    expect(await runOps(['help'], io)).toBe(0);
    expect(out).toMatch(/^usage: hcn-cni <command>/);
    expect(await runOps(['bogus'], io)).toBe(2);
    expect(err).toMatch(/unknown command "bogus"/);
  });
});

describe('configuration', () => {
  it('finds the first conf file (sorted) with an hcn-cni plugin, giving it the list name and cniVersion', () => {
    const dir = path.join(h.tmp, 'net.d');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, '00-broken.conflist'), '{ not json');
    fs.writeFileSync(
      path.join(dir, '05-other.conflist'),
      JSON.stringify({ cniVersion: '1.0.0', name: 'x', plugins: [{ type: 'bridge' }] }),
    );
    fs.writeFileSync(
      path.join(dir, '10-hcn.conflist'),
      JSON.stringify({
        cniVersion: '1.0.0',
        name: 'first',
        plugins: [{ type: 'hcn-cni', stateDir: '/srv/a', apiVersion: 1 }],
      }),
    );
    fs.writeFileSync(
      path.join(dir, '20-hcn.conf'),
      JSON.stringify({ cniVersion: '1.1.0', name: 'second', type: 'hcn-cni', stateDir: '/srv/b' }),
    );
    fs.writeFileSync(
      path.join(dir, '05-notes.txt'),
      JSON.stringify({ cniVersion: '1.1.0', name: 'txt', type: 'hcn-cni' }),
    );
    const loaded = loadConf({ confDir: dir, platform: 'linux' });
    expect(loaded.file).toBe(path.join(dir, '10-hcn.conflist'));
    expect(loaded.conf).toMatchObject({ name: 'first', cniVersion: '1.0.0', stateDir: '/srv/a', apiVersion: 1 });
    expect(loadConf({ confDir: dir, platform: 'linux', stateDir: 'rel/state' }).conf.stateDir).toBe(
      path.resolve('rel/state'),
    );
  });

  it('falls back to built-in defaults, whose stateDir is the plugin default', () => {
    const loaded = loadConf({ confDir: path.join(h.tmp, 'none'), platform: 'linux' });
    expect(loaded.file).toBeUndefined();
    expect(loaded.source).toMatch(/^built-in defaults/);
    expect(loaded.conf).toMatchObject({ apiVersion: 'auto', hnsTimeoutSeconds: 30, stateDir: '/var/lib/hcn-cni' });
    expect(hcnPluginConf({ cniVersion: '1.1.0', name: 'n', plugins: [{ type: 'bridge' }] })).toBeUndefined();
  });

  it('a conf file without hcn-cni, or with an invalid one, fails with the file named (exit 1)', async () => {
    const other = path.join(h.tmp, 'other.conflist');
    fs.writeFileSync(other, JSON.stringify({ cniVersion: '1.1.0', name: 'x', plugins: [{ type: 'bridge' }] }));
    const none = await ops(['networks', '--conf', other]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`${other} has no plugin of type "hcn-cni"`);
    fs.writeFileSync(confFile(), JSON.stringify(conflist({ apiVersion: 3 })));
    const bad = await opsConf(['state']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/invalid hcn-cni configuration: .*apiVersion.*\(CNI code 7\)/);
  });
});

describe('networks, endpoints, namespaces', () => {
  it('tables show type, adapter, subnets, flags, IPs, MAC, namespace and the owning attachment', async () => {
    const ns = await newNamespace();
    await addPod('pod-a', ns);
    const leak = await leakNetwork();

    const nets = await opsConf(['networks']);
    expect(nets.code).toBe(0);
    expect(nets.stderr).toBe('');
    expect(row(nets.stdout, 'ID')).toEqual(['ID', 'NAME', 'TYPE', 'ADAPTER', 'SUBNETS', 'FLAGS', 'OWNER']);
    const byName = (name: string) =>
      nets.stdout
        .split('\n')
        .map((l) => l.split(/ {2,}/))
        .find((c) => c[1] === name);
    // No adapterName in the configuration: HCN shows none, HNS v1 the adapter it bound; either is right here.
    expect(byName('cbr0')?.slice(1)).toEqual([
      'cbr0',
      'L2Bridge',
      expect.stringMatching(/^(-|Ethernet)$/),
      '10.244.1.0/24 via 10.244.1.1',
      '-',
      '-',
    ]);
    expect(byName(leak.name)).toEqual([
      leak.id,
      leak.name,
      'Transparent',
      'Ethernet 2',
      '10.9.0.0/24 via 10.9.0.1',
      '8 (EnableNonPersistent)',
      `? (owner tag ${ownerTag(LEAK_OWNER)})`,
    ]);

    const eps = await opsConf(['endpoints']);
    expect(eps.code).toBe(0);
    expect(row(eps.stdout, 'ID')).toEqual(['ID', 'NAME', 'NETWORK', 'IPS', 'MAC', 'NAMESPACE', 'OWNER']);
    const ep = eps.stdout
      .split('\n')
      .map((l) => l.split(/ {2,}/))
      .find((c) => c[1] === endpointName({ containerId: 'pod-a', ifname: 'eth0' }))!;
    expect(ep).toEqual([
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      endpointName({ containerId: 'pod-a', ifname: 'eth0' }),
      'cbr0',
      expect.stringMatching(/^10\.244\.1\.\d+\/24$/),
      expect.stringMatching(/^00-15-5D(-[0-9A-F]{2}){3}$/),
      ns,
      'pod-a@eth0',
    ]);

    const nss = await opsConf(['namespaces']);
    expect(nss.code).toBe(0);
    expect(row(nss.stdout, ns)).toEqual([
      ns,
      expect.any(String),
      expect.any(String),
      `endpoint ${ep[1]}`,
      'pod-a@eth0',
    ]);
  });

  it('a dual-stack endpoint shows both addresses, and its network both subnets', async () => {
    fs.writeFileSync(confFile(), JSON.stringify(conflist({ subnet: ['10.244.1.0/24', 'fd00:10:244:1::/64'] })));
    const r = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ cniVersion: '1.1.0', stateDir: h.stateDir, subnet: ['10.244.1.0/24', 'fd00:10:244:1::/64'] }),
      containerId: 'pod-d',
      netns: await newNamespace(),
    });
    expect(r.exitCode).toBe(0);
    const eps = await opsConf(['endpoints']);
    const ep = eps.stdout
      .split('\n')
      .map((l) => l.split(/ {2,}/))
      .find((c) => c[1] === endpointName({ containerId: 'pod-d', ifname: 'eth0' }))!;
    expect(ep[3]).toBe('10.244.1.2/24,fd00:10:244:1::2/64');
    const nets = await opsConf(['networks']);
    expect(nets.stdout).toContain('10.244.1.0/24 via 10.244.1.1,fd00:10:244:1::/64 via fd00:10:244:1::1');
  });

  it('--json gives the objects with their owner (null for foreign ones)', async () => {
    const ns = await newNamespace();
    await addPod('pod-a', ns);
    const leak = await leakNetwork();

    const nets = json<Array<Record<string, unknown>>>(await opsConf(['networks', '--json']));
    expect(nets).toHaveLength(2);
    expect(nets.find((n) => n.name === 'cbr0')).toMatchObject({
      type: 'L2Bridge',
      owner: null,
      subnets: [{ prefix: '10.244.1.0/24', gateway: '10.244.1.1' }],
    });
    expect(nets.find((n) => n.name === leak.name)).toEqual({
      id: leak.id,
      name: leak.name,
      type: 'Transparent',
      flags: 8,
      flagNames: ['EnableNonPersistent'],
      adapterName: 'Ethernet 2',
      sourceMac: '00-15-5D-AA-00-02',
      subnets: [{ prefix: '10.9.0.0/24', gateway: '10.9.0.1' }],
      // No state knows the leak's owner: its name says it is ours and gives the owner's tag.
      owner: { tag: ownerTag(LEAK_OWNER) },
    });

    const eps = json<Array<Record<string, any>>>(await opsConf(['endpoints', '--json']));
    expect(eps).toHaveLength(1);
    expect(eps[0]).toMatchObject({
      networkName: 'cbr0',
      namespaceId: ns,
      owner: { containerId: 'pod-a', ifname: 'eth0' },
      ips: [{ address: expect.stringMatching(/^10\.244\.1\./), prefixLength: 24 }],
    });

    const nss = json<Array<Record<string, any>>>(await opsConf(['namespaces', '--json']));
    expect(nss).toEqual([
      {
        id: ns,
        type: 'Host',
        compartment: expect.any(Number),
        // As HNS lists them, upper case (src/sim/views.ts resourcesOf); name and owner are still found.
        resources: [
          {
            type: 'Endpoint',
            id: String(eps[0].id).toUpperCase(),
            name: eps[0].name,
            owner: { containerId: 'pod-a', ifname: 'eth0' },
          },
        ],
      },
    ]);
  });

  it('with apiVersion 1 the same objects come through HNSCall (v1)', async () => {
    const ns = await newNamespace();
    await addPod('pod-a', ns);
    const leak = await leakNetwork();
    const v2 = {
      nets: json(await opsConf(['networks', '--json'])),
      eps: json(await opsConf(['endpoints', '--json'])),
      nss: json<Array<Record<string, unknown>>>(await opsConf(['namespaces', '--json'])),
    };
    fs.writeFileSync(confFile(), JSON.stringify(conflist({ apiVersion: 1 })));
    const calls = (await h.sim.control.stats()).calls;
    const nets = json<Array<Record<string, unknown>>>(await opsConf(['networks', '--json']));
    expect(nets.find((n) => n.name === leak.name)).toEqual(
      (v2.nets as Array<Record<string, unknown>>).find((n) => n.name === leak.name),
    );
    expect(json(await opsConf(['endpoints', '--json']))).toEqual(v2.eps);
    const nss = json<Array<Record<string, unknown>>>(await opsConf(['namespaces', '--json']));
    expect(nss).toEqual(v2.nss);
    const after = (await h.sim.control.stats()).calls;
    expect((after['HNSCall GET /networks'] ?? 0) - (calls['HNSCall GET /networks'] ?? 0)).toBeGreaterThan(0);
    expect((after['HNSCall GET /namespaces'] ?? 0) - (calls['HNSCall GET /namespaces'] ?? 0)).toBe(1);
    expect(after.HcnEnumerateNetworks ?? 0).toBe(calls.HcnEnumerateNetworks ?? 0);
  });

  it('says so when HNS holds nothing', async () => {
    expect(await opsConf(['networks'])).toEqual({ code: 0, stdout: 'no HNS networks\n', stderr: '' });
    expect(json(await opsConf(['endpoints', '--json']))).toEqual([]);
  });
});

describe('audit', () => {
  it('--dry-run judges every object and deletes nothing; a real audit deletes the orphan only', async () => {
    await addPod('pod-a');
    const leak = await leakNetwork();
    const before = await hnsNames();
    expect(before.networks).toEqual(['cbr0', leak.name].sort());

    const dry = await opsConf(['audit', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toBe('');
    expect(row(dry.stdout, 'VERDICT')).toEqual(['VERDICT', 'KIND', 'NAME', 'ID', 'OWNER', 'REASON']);
    expect(row(dry.stdout, 'orphan')).toEqual([
      'orphan',
      'network',
      leak.name,
      leak.id,
      `? (owner tag ${ownerTag(LEAK_OWNER)})`,
      'no committed attachment and no intent claims it',
    ]);
    expect(row(dry.stdout, 'live')).toEqual([
      'live',
      'endpoint',
      endpointName({ containerId: 'pod-a', ifname: 'eth0' }),
      expect.any(String),
      'pod-a@eth0',
      'attachment pod-a@eth0 is committed with it',
    ]);
    expect(row(dry.stdout, 'foreign').slice(0, 3)).toEqual(['foreign', 'network', 'cbr0']);
    expect(dry.stdout).toContain(`would delete network ${leak.name} (${leak.id})`);
    expect(dry.stdout).not.toMatch(/^deleted /m);
    expect(dry.stdout.trimEnd().split('\n').pop()).toBe(
      'audit: 3 objects (1 foreign, 1 live, 0 in-flight, 0 protected, 1 orphan); dry run: would delete 1, deleted nothing',
    );
    expect(await hnsNames()).toEqual(before);

    const real = await opsConf(['audit']);
    expect(real.code).toBe(0);
    expect(real.stdout).toContain(`deleted network ${leak.name} (${leak.id})`);
    expect(real.stdout.trimEnd().split('\n').pop()).toBe(
      'audit: 3 objects (1 foreign, 1 live, 0 in-flight, 0 protected, 1 orphan); deleted 1',
    );
    const after = await hnsNames();
    expect(after.networks).toEqual(['cbr0']);
    expect(after.endpoints).toEqual(before.endpoints);

    const verbose = await opsConf(['audit', '--dry-run', '--verbose']);
    expect(verbose.code).toBe(0);
    const logLines = verbose.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; audit?: string });
    expect(
      logLines
        .filter((l) => l.msg === 'audit verdict')
        .map((l) => l.audit)
        .sort(),
    ).toEqual(['foreign', 'live']);
    expect(logLines.find((l) => l.audit === 'summary')).toMatchObject({ msg: 'audit done', dryRun: true });

    const again = json(await opsConf(['audit', '--json']));
    expect(again).toMatchObject({ dryRun: false, counts: { orphan: 0, live: 1, foreign: 1 }, deleted: [] });
  });

  it('leaves an object that a live ADD is creating (in-flight) and reports it in --json', async () => {
    const busy = { containerId: 'busy', ifname: 'eth0' };
    const inflight = await leakNetwork(busy, 'Ethernet');
    const leak = await leakNetwork();
    const now = Date.now();
    fs.mkdirSync(path.join(h.stateDir, 'intents'), { recursive: true });
    fs.writeFileSync(
      path.join(h.stateDir, 'intents', 'busy@eth0.json'),
      JSON.stringify({
        kind: 'intent',
        schema: 1,
        containerId: 'busy',
        ifname: 'eth0',
        id: 'attempt-1',
        mac: '00-15-5D-AA-00-01',
        planned: [{ kind: 'network', name: inflight.name }],
        pid: process.pid,
        pidStartTime: h.deps.hns.os().processStartTime(process.pid),
        createdAt: now,
        deadline: now + 120_000,
      }),
    );
    const r = json<Record<string, any>>(await opsConf(['audit', '--json']));
    expect(r.counts).toEqual({ foreign: 0, live: 0, 'in-flight': 1, protected: 0, orphan: 1 });
    expect(r.objects.find((o: { name: string }) => o.name === inflight.name)).toMatchObject({
      verdict: 'in-flight',
      reason: `a running ADD (pid ${process.pid}) is creating it`,
      owner: { containerId: 'busy', ifname: 'eth0', mac: '00-15-5D-AA-00-01' },
    });
    expect(r.deleted.map((o: { id: string }) => o.id)).toEqual([leak.id]);
    expect((await hnsNames()).networks).toEqual([inflight.name]);
  });

  it('refuses to delete with a state directory that does not exist; --dry-run judges without creating it', async () => {
    const leak = await leakNetwork();
    const missing = path.join(h.tmp, 'no-such-state');
    const refused = await opsConf(['audit', '--state-dir', missing]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`the state directory ${missing} does not exist; refusing to delete anything`);
    const dry = await opsConf(['audit', '--dry-run', '--state-dir', missing]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`note: the state directory ${missing} does not exist: judged as if it were empty`);
    expect(dry.stdout).toContain(`would delete network ${leak.name}`);
    expect(fs.existsSync(missing)).toBe(false);
    expect((await hnsNames()).networks).toEqual([leak.name]);
  });
});

describe('gc', () => {
  it('removes what the valid list does not name, and reports it', async () => {
    await addPod('pod-a');
    await addPod('pod-b');
    const leak = await leakNetwork();
    const valid = path.join(h.tmp, 'valid.json');
    fs.writeFileSync(valid, JSON.stringify([{ containerID: 'pod-a', ifname: 'eth0' }]));
    const epB = (await hnsNames()).endpoints.find((n) => n === endpointName({ containerId: 'pod-b', ifname: 'eth0' }))!;

    const r = await opsConf(['gc', '--valid', valid]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toContain('removed attachment pod-b@eth0');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^deleted endpoint ${epB} \\(`)),
        expect.stringMatching(new RegExp(`^deleted network ${leak.name} \\(${leak.id}\\)$`)),
      ]),
    );
    expect(lines.pop()).toBe('gc: 1 valid attachment; removed 1 attachment, deleted 2 HNS objects, 0 errors');
    expect(fs.readdirSync(path.join(h.stateDir, 'attachments'))).toEqual(['pod-a@eth0.json']);
    const after = await hnsNames();
    expect(after.networks).toEqual(['cbr0']);
    expect(after.endpoints).toEqual([endpointName({ containerId: 'pod-a', ifname: 'eth0' })]);
  });

  it('reports every error, keeps going, and exits 1 when HNS refuses a delete', async () => {
    await addPod('pod-a');
    await addPod('pod-b');
    const leak = await leakNetwork();
    await h.sim.control.failCall('HcnDeleteEndpoint', 0x80070005, { count: 5 });
    const valid = path.join(h.tmp, 'valid.json');
    fs.writeFileSync(
      valid,
      JSON.stringify({ 'cni.dev/valid-attachments': [{ containerID: 'pod-a', ifname: 'eth0' }] }),
    );
    const r = await opsConf(['gc', '--valid', valid]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^hcn-cni gc: GC finished with 1 error \(see above\)/);
    const lines = r.stdout.trimEnd().split('\n');
    // DEL-by-record hands a refused delete to the audit (tombstone); the audit's failed delete is the error.
    expect(lines.filter((l) => l.startsWith('ERROR '))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^ERROR deleting endpoint ${endpointName({ containerId: 'pod-b', ifname: 'eth0' })}: HcnDeleteEndpoint failed: .*\\(0x80070005 E_ACCESSDENIED\\)$`,
        ),
      ),
    ]);
    expect(lines).toContain('removed attachment pod-b@eth0');
    expect(lines).toContain(`deleted network ${leak.name} (${leak.id})`);
    expect(lines.pop()).toBe('gc: 1 valid attachment; removed 1 attachment, deleted 1 HNS object, 1 error');
    expect(fs.readdirSync(path.join(h.stateDir, 'attachments'))).toEqual(['pod-a@eth0.json']);
    expect((await hnsNames()).endpoints).toEqual(
      [
        endpointName({ containerId: 'pod-a', ifname: 'eth0' }),
        endpointName({ containerId: 'pod-b', ifname: 'eth0' }),
      ].sort(),
    );
    const st = json<Record<string, Array<Record<string, unknown>>>>(await opsConf(['state', '--json']));
    expect(st.tombstones).toEqual([
      expect.objectContaining({
        owner: 'pod-b@eth0',
        reason: expect.stringMatching(/^DEL could not delete: .*0x80070005/),
      }),
    ]);
  });

  it('accepts a whole CNI GC request, and --json lists removals', async () => {
    await addPod('pod-a');
    const doc = path.join(h.tmp, 'gc-request.json');
    fs.writeFileSync(
      doc,
      JSON.stringify({ cniVersion: '1.1.0', name: 'cbr0', type: 'hcn-cni', 'cni.dev/valid-attachments': null }),
    );
    const r = json<Record<string, unknown>>(await opsConf(['gc', '--valid', doc, '--json']));
    expect(r).toMatchObject({
      valid: [],
      removedAttachments: ['pod-a@eth0'],
      errors: [],
      ipam: null,
      deletedObjects: [
        { id: expect.any(String), object: `endpoint ${endpointName({ containerId: 'pod-a', ifname: 'eth0' })}` },
      ],
    });
    expect((await hnsNames()).endpoints).toEqual([]);
  });

  it('a malformed valid list is refused before anything is deleted', async () => {
    await addPod('pod-a');
    const valid = path.join(h.tmp, 'valid.json');
    fs.writeFileSync(valid, JSON.stringify([{ containerID: 'pod-a' }]));
    const r = await opsConf(['gc', '--valid', valid]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/valid\.json: .*cni\.dev\/valid-attachments\[0\]\.ifname/);
    expect((await hnsNames()).endpoints).toHaveLength(1);
    expect(fs.readdirSync(path.join(h.stateDir, 'attachments'))).toEqual(['pod-a@eth0.json']);
  });
});

describe('state', () => {
  it('lists attachments, intents with their liveness, and a quarantined record; --clear-quarantine removes it', async () => {
    await addPod('pod-a');
    fs.writeFileSync(path.join(h.stateDir, 'attachments', 'x@eth0.json'), 'garbage{');
    const now = Date.now();
    fs.mkdirSync(path.join(h.stateDir, 'intents'), { recursive: true });
    fs.writeFileSync(
      path.join(h.stateDir, 'intents', 'gone@eth0.json'),
      JSON.stringify({
        kind: 'intent',
        schema: 1,
        containerId: 'gone',
        ifname: 'eth0',
        id: 'i1',
        planned: [{ kind: 'endpoint', name: endpointName({ containerId: 'gone', ifname: 'eth0' }) }],
        pid: 2 ** 22 + 7,
        pidStartTime: '1',
        createdAt: now,
        deadline: now + 60_000,
      }),
    );

    const r = await opsConf(['state']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain(`state directory ${h.stateDir}`);
    expect(r.stdout).toContain('attachments (1):');
    const att = row(r.stdout, 'pod-a@eth0');
    expect(att.slice(0, 3)).toEqual(['pod-a@eth0', 'bridge', 'v2']);
    expect(att[3]).toMatch(
      new RegExp(`^[0-9a-f-]{36} \\(${endpointName({ containerId: 'pod-a', ifname: 'eth0' })}\\)$`),
    );
    expect(att[4]).toMatch(/^[0-9a-f-]{36} \(cbr0\)$/);
    expect(att[5]).toMatch(/^10\.244\.1\.\d+\/24$/);
    const intent = row(r.stdout, 'gone@eth0');
    expect(intent.slice(0, 4)).toEqual(['gone@eth0', String(2 ** 22 + 7), 'no', `its process ${2 ** 22 + 7} is gone`]);
    expect(intent[4]).toMatch(/\(in \d+s\)$/);
    expect(r.stdout).toContain('quarantined (1):');
    const q = row(r.stdout, 'attachment');
    expect(q[1]).toBe('x@eth0');
    expect(q[2]).toMatch(/quarantine[/\\]attachment--x@eth0\.json\.\d+$/);
    expect(q[4]).toMatch(/^not JSON: /);
    expect(fs.existsSync(path.join(h.stateDir, 'attachments', 'x@eth0.json'))).toBe(false);

    const j = json<Record<string, any>>(await opsConf(['state', '--json']));
    expect(j.attachments).toEqual([
      expect.objectContaining({
        owner: 'pod-a@eth0',
        mode: 'bridge',
        apiVersion: 2,
        ips: [expect.stringMatching(/^10\.244\.1\./)],
      }),
    ]);
    expect(j.intents).toEqual([
      expect.objectContaining({ owner: 'gone@eth0', alive: false, why: expect.stringMatching(/is gone$/) }),
    ]);
    expect(j.quarantined).toEqual([
      {
        kind: 'attachment',
        owner: 'x@eth0',
        file: expect.any(String),
        reason: expect.stringMatching(/^not JSON/),
        at: expect.any(String),
      },
    ]);

    const cleared = await opsConf(['state', '--clear-quarantine']);
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toContain('cleared 1 quarantined file');
    expect(json<Record<string, unknown>>(await opsConf(['state', '--json'])).quarantined).toEqual([]);
    expect(fs.readdirSync(path.join(h.stateDir, 'quarantine'))).toEqual([]);
  });

  it('a state directory that does not exist is reported, not created', async () => {
    const missing = path.join(h.tmp, 'absent');
    const r = await opsConf(['state', '--state-dir', missing]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`the state directory ${missing} does not exist`);
    expect(fs.existsSync(missing)).toBe(false);
  });
});

describe('version', () => {
  it('shows the plugin and CNI versions, HCN v2 support, the HNS version and the API auto picks', async () => {
    const r = await opsConf(['version']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const kv = Object.fromEntries(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => [l.slice(0, 22).trim().replace(/:$/, ''), l.slice(22)]),
    );
    expect(kv['hcn-cni']).toBe(PKG_VERSION);
    expect(kv['CNI versions']).toBe('0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0');
    expect(kv['HCN (v2)']).toMatch(/^yes from .*libhcnsim\.so$/);
    expect(kv['HNSCall (v1)']).toMatch(/^yes/);
    expect(kv['missing functions']).toBe('none');
    expect(kv['HNS version']).toBe('15.4');
    expect(kv['"auto" would pick']).toBe('v2 (auto: HCN present, HNS version 15.4 >= 9.2)');
    expect(kv.configuration).toBe(confFile());

    const j = json<Record<string, any>>(await opsConf(['version', '--json']));
    expect(j).toMatchObject({
      plugin: PKG_VERSION,
      cniVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
      hns: { version: '15.4' },
      api: { configured: 'auto', auto: { version: 2 } },
    });
    expect(j.addon.capabilities).toMatchObject({ v2Supported: true, v1Supported: true, missing: [], loadError: null });
  });

  it('on an old HNS, auto picks v1, and an explicit apiVersion 2 is shown too', async () => {
    await h.sim.control.setVersion(9, 1);
    fs.writeFileSync(confFile(), JSON.stringify(conflist({ apiVersion: 2 })));
    const j = json<Record<string, any>>(await opsConf(['version', '--json']));
    expect(j.hns).toEqual({ version: '9.1' });
    expect(j.api).toEqual({
      configured: '2',
      auto: { version: 1, reason: 'auto: HNS version 9.1 < 9.2' },
      configuredPick: { version: 2, reason: 'apiVersion 2 in the configuration' },
    });
    await h.sim.control.setVersion(15, 4);
  });
});

describe('HNS unreachable', () => {
  let dead: string;
  beforeAll(async () => {
    // A socket file whose listener was killed: connecting is refused, as when the hns service is stopped.
    dead = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-ops-dead-')), 'hns.sock');
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['-e', `require('net').createServer().listen(${JSON.stringify(dead)}, () => console.log('up'))`],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      child.stdout.once('data', () => child.kill('SIGKILL'));
      child.on('exit', () => resolve());
      child.on('error', reject);
    });
    expect(fs.existsSync(dead)).toBe(true);
  });
  afterAll(() => fs.rmSync(path.dirname(dead), { recursive: true, force: true }));

  it.each(
    [['networks'], ['endpoints'], ['namespaces'], ['audit', '--dry-run'], ['audit']].map(
      (a) => [a.join(' '), a] as const,
    ),
  )('%s says HNS is not reachable and exits 1', async (_title, args) => {
    const r = await opsConf([...args], { HCN_SIM: `unix:${dead}` });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      new RegExp(`^hcn-cni ${args[0]}: HNS is not reachable: RPC_S_SERVER_UNAVAILABLE \\(0x800706BA\\)`),
    );
    expect(r.stderr).toContain('is the hns service running?');
    expect(r.stderr).toContain(`HCN_SIM="unix:${dead}"`);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('an HNS that does not answer within hnsTimeoutSeconds is said so', async () => {
    fs.writeFileSync(confFile(), JSON.stringify(conflist({ hnsTimeoutSeconds: 1 })));
    await h.sim.control.hang('HNSCall GET /globals/version');
    // HNS answers only once the message is out (the process itself exits only once the native call returns): said
    // after the 1 s bound, not the default 30 s one, and before HNS answered.
    const r = await opsConf(['networks'], {}, () => void h.sim.control.release());
    expect(r.code).toBe(1);
    expect(r.stderrAfterMs).toBeGreaterThanOrEqual(1000);
    expect(r.stderrAfterMs).toBeLessThan(20_000);
    expect(r.stderr).toMatch(/^hcn-cni networks: HNS did not answer within 1s: ERROR_TIMEOUT \(0x800705B4\)/);
    expect(r.stderr).toContain('is the hns service running?');
  });

  it('gc and version say so too; state needs no HNS', async () => {
    const valid = path.join(h.tmp, 'valid.json');
    fs.writeFileSync(valid, '[]');
    const gc = await opsConf(['gc', '--valid', valid], { HCN_SIM: `unix:${dead}` });
    expect(gc.code).toBe(1);
    expect(gc.stderr).toMatch(/^hcn-cni gc: HNS is not reachable: RPC_S_SERVER_UNAVAILABLE/);
    const v = await opsConf(['version'], { HCN_SIM: `unix:${dead}` });
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/^ {2}HCN \(v2\): +yes/m);
    expect(v.stdout).toMatch(/^HNS version: +unknown: HNS is not reachable/m);
    expect(v.stderr).toMatch(/^hcn-cni version: HNS is not reachable/);
    const unset = await opsConf(['networks'], { HCN_SIM: undefined });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('HCN_SIM=unset');
    const st = await opsConf(['state'], { HCN_SIM: `unix:${dead}` });
    expect(st.code).toBe(0);
  });
});
