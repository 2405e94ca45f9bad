/**
 * The node agent runs the doctor's checks after each visit of a state directory and exports them as
 * hcn_cni_node_findings{kind,severity}: every pair present (0 where none) on a healthy node, and the finding once an
 * HNS restart that keeps the endpoints drops their policies. It also remembers how long a peer's endpoint has been
 * attached to nothing, which one look cannot tell.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as path from 'path';
import { promisify } from 'util';
import { parseNetConf } from '../../src/cni/config';
import { NodeDoctor } from '../../src/service/agent/node-doctor';
import { silentLogger } from '../../src/log/logger';
import { FINDING_KINDS, SEVERITIES, type Finding } from '../../src/doctor/finding';
import { bridgeConf, CLI, useHarness, type Harness } from '../helpers/cni-harness';
import { hostLocal, newNamespace, until } from '../plugin/support';
import { makeBin, startServiceProcess, viaShim } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(90_000);
const execFileP = (file: string, args: string[], o: { env: NodeJS.ProcessEnv }) =>
  promisify(execFile)(file, args, o).then((r) => ({ code: 0, ...r }));

function scrape(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

/** hcn_cni_node_findings by "kind/severity". */
function findings(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^hcn_cni_node_findings\{kind="([^"]+)",severity="([^"]+)"\} (\S+)$/gm))
    out[`${m[1]}/${m[2]}`] = Number(m[3]);
  return out;
}

const nonZero = (f: Record<string, number>) => Object.fromEntries(Object.entries(f).filter(([, n]) => n > 0));

/** The bridge configuration the agent serves in these tests, as an ADD parses it. */
function servedBridgeConf() {
  return parseNetConf(bridgeConf({ stateDir: h.stateDir, hnsTimeoutSeconds: 10 }), {
    platform: 'linux',
    defaults: { stateDir: h.stateDir },
    verb: 'ADD',
  });
}

it("exports the doctor's findings by kind and severity: none but info on a healthy node, pod-drift once HNS drops the policies", async () => {
  const bin = makeBin(h);
  const service = await startServiceProcess(h, undefined, ['--metrics', '127.0.0.1:0', '--hns-probe-seconds', '0']);
  try {
    const url = (await service.status()).metricsUrl!;
    const conf = bridgeConf({ ipam: hostLocal(h), auditIntervalSeconds: 1, outboundNatExceptions: ['10.0.0.0/8'] });
    const add = await viaShim(h, bin, service.address, {
      verb: 'ADD',
      conf,
      containerId: 'p1',
      netns: await newNamespace(h),
    });
    expect(add.exitCode).toBe(0);
    // The agent's first visit of the directory: every pair is exported; only the host's information is counted.
    const healthy = await until(
      async () => {
        const f = findings(await scrape(url));
        return f['host/info'] === 1 ? f : undefined;
      },
      20_000,
      "the doctor's first look",
    );
    expect(Object.keys(healthy)).toHaveLength(FINDING_KINDS.length * SEVERITIES.length);
    expect(nonZero(healthy)).toEqual({ 'host/info': 1 });
    await h.sim.control.restart({ rehydrate: true });
    const drifted = await until(
      async () => {
        const f = findings(await scrape(url));
        return f['pod-drift/error'] === 1 ? f : undefined;
      },
      20_000,
      'the drift',
    );
    expect(nonZero(drifted)).toEqual({ 'host/info': 1, 'pod-drift/error': 1 });
    // `hcn-cni doctor` asks the running service for its status, as `hcn-cni service` does.
    const r = await execFileP(
      process.execPath,
      [CLI, 'doctor', '--json', '--state-dir', h.stateDir, '--service', service.address],
      {
        env: { PATH: process.env.PATH, HCN_SIM: h.sim.address },
      },
    ).catch((e: { code: number; stdout: string }) => e);
    expect(r.code).toBe(2);
    const report = JSON.parse(r.stdout) as { findings: Finding[] };
    expect(report.findings.find((f) => f.subject === 'service')!.why).toMatch(
      new RegExp(`^running at ${service.address} \\(pid ${service.child.pid}\\); 0 queued, 0 running; last audit 20`),
    );
    expect(report.findings.filter((f) => f.kind === 'pod-drift')).toHaveLength(1);
  } finally {
    await service.stop();
  }
});

it("the agent remembers a peer's endpoint attached to nothing: nothing within the grace period, a warning after it", async () => {
  let now = 1_000_000;
  const doctor = new NodeDoctor({ deps: h.deps, platform: 'linux', now: () => now });
  const conf = servedBridgeConf();
  const { api } = await h.deps.hns.api({ apiVersion: 2, hnsTimeoutSeconds: 10 });
  const net = await api.createNetwork({
    name: 'peer-nat',
    type: 'NAT',
    flags: 0,
    subnets: [{ prefix: '10.7.0.0/24' }],
    policies: [],
  });
  await api.createEndpoint(net, { name: 'peer-stuck', ips: [], dns: { servers: [], search: [] }, policies: [] });
  const unattached = async () =>
    (await doctor.run(conf, silentLogger)).filter((f) => f.kind === 'endpoint-unattached').map((f) => f.severity);
  expect(await unattached()).toEqual([]);
  now += 2 * 10_000 + 60_000; // graceMs(10 s): 2 × the HNS timeout + 60 s
  expect(await unattached()).toEqual([]);
  now += 1;
  expect(await unattached()).toEqual(['warning']);
});

it("hcn-cni doctor through the service knows since when an endpoint is attached to nothing (the agent's memory); alone it cannot", async () => {
  const bin = makeBin(h);
  const service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  try {
    const conf = bridgeConf({ ipam: hostLocal(h), auditIntervalSeconds: 1 });
    const add = await viaShim(h, bin, service.address, {
      verb: 'ADD',
      conf,
      containerId: 'p1',
      netns: await newNamespace(h),
    });
    expect(add.exitCode).toBe(0);
    const { api } = await h.deps.hns.api({ apiVersion: 2, hnsTimeoutSeconds: 10 });
    const net = (await api.listNetworks()).find((n) => n.name === 'cbr0')!;
    const peer = await api.createEndpoint(net, {
      name: 'peer-stuck',
      ips: [],
      dns: { servers: [], search: [] },
      policies: [],
    });
    await until(
      async () => ((await service.status()).agent.unattachedSince?.[peer.id.toLowerCase()] ? true : undefined),
      20_000,
      "the agent's look at the peer's endpoint",
    );
    const unattached = async (address: string) => {
      const r = await execFileP(
        process.execPath,
        [CLI, 'doctor', '--json', '--state-dir', h.stateDir, '--service', address],
        {
          env: { PATH: process.env.PATH, HCN_SIM: h.sim.address },
        },
      ).catch((e: { code: number; stdout: string }) => e);
      return (JSON.parse(r.stdout) as { findings: Finding[] }).findings.filter((f) => f.kind === 'endpoint-unattached');
    };
    // Within the grace period by the agent's memory: nothing to say yet.
    expect(await unattached(service.address)).toEqual([]);
    // Alone, one look: said, as information.
    expect((await unattached(`${service.address}.absent`)).map((f) => f.severity)).toEqual(['info']);
  } finally {
    await service.stop();
  }
});

it("a bridge network's NIC replaced under the same name and MAC: the agent noted its NetCfgInstanceId, so even after a restart of the service it is one error", async () => {
  const conf = servedBridgeConf();
  const { api } = await h.deps.hns.api({ apiVersion: 2, hnsTimeoutSeconds: 10 });
  const net = await api.createNetwork({
    name: 'l2bridge',
    type: 'L2Bridge',
    flags: 0,
    adapterName: 'Ethernet 2',
    subnets: [{ prefix: '10.8.0.0/24', gateway: '10.8.0.1' }],
    policies: [],
  });
  const changed = (found: Finding[]) => found.filter((f) => f.kind === 'network-adapter-changed');
  expect(changed(await new NodeDoctor({ deps: h.deps, platform: 'linux' }).run(conf, silentLogger))).toEqual([]);
  const eth2 = (await h.sim.control.host()).adapters.find((a) => a.Name === 'Ethernet 2')!;
  const noted = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'adapters-seen.json'), 'utf8')) as Record<
    string,
    { interfaceGuid: string }
  >;
  expect(noted[net.id.toLowerCase()]!.interfaceGuid).toBe(eth2.InterfaceGuid);
  // The driver reinstalled (or a Hyper-V reboot): the same name and MAC, another NetCfgInstanceId.
  await h.sim.control.removeAdapter('Ethernet 2');
  await h.sim.control.addAdapter({ Name: 'Ethernet 2', MacAddress: eth2.MacAddress });
  const restarted = new NodeDoctor({ deps: h.deps, platform: 'linux' });
  const found = changed(await restarted.run(conf, silentLogger));
  expect(found.map((f) => [f.severity, f.subject])).toEqual([['error', `network l2bridge (${net.id})`]]);
  expect(found[0]!.why).toContain(`as ${eth2.InterfaceGuid} when the node agent first saw it`);
  // It stays a finding at the next look (the first id is kept until the network is re-created).
  expect(changed(await restarted.run(conf, silentLogger))).toHaveLength(1);
});
