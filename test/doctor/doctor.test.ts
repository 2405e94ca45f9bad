/**
 * `hcn-cni doctor` against the simulator, in process (runDoctor, the CLI's own entry): a healthy node has nothing
 * worse than info; each trouble, made to happen the way it happens on a node (fault commands, a peer plugin's
 * objects, an HNS restart, a vanished adapter, a policy taken away), appears once, with its severity, and sets the
 * exit status.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { promisify } from 'util';
import { runDoctor } from '../../src/cli/doctor';
import type { Finding } from '../../src/doctor/finding';
import { HR } from '../../src/hns/hresults';
import { endpointName } from '../../src/orphans/ownership';
import { fileKey } from '../../src/state/file-names';
import type { AttachmentRecord } from '../../src/state/records';
import { noteChores } from '../../src/state/housekeeping';
import { bridgeConf, CLI, cni, delegatedNicConf, useHarness, type Harness } from '../helpers/cni-harness';
import { hostLocal, newNamespace } from '../plugin/support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
// The simulator's reset keeps its host: the adapter tests put the default adapter back as it was.
afterEach(async () => {
  const eth2 = (await h.sim.control.host()).adapters.find((a) => a.Name === 'Ethernet 2');
  if (eth2?.MacAddress === '00-15-5D-AA-00-02') return;
  if (eth2) await h.sim.control.removeAdapter('Ethernet 2');
  await h.sim.control.addAdapter({ Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' });
});

const DNS = { nameservers: ['10.96.0.10'], search: ['svc.cluster.local'], domain: 'cluster.local' };
const pluginConf = (extra: Record<string, unknown> = {}) =>
  bridgeConf({
    cniVersion: '1.1.0',
    ipam: hostLocal(h),
    dns: DNS,
    outboundNatExceptions: ['10.0.0.0/8'],
    stateDir: h.stateDir,
    hnsTimeoutSeconds: 10,
    ...extra,
  });

function confFile(): string {
  const file = path.join(h.tmp, 'conf', '10-hcn.conflist');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const { cniVersion, name, ...plugin } = pluginConf();
    fs.writeFileSync(file, JSON.stringify({ cniVersion, name, plugins: [plugin] }));
  }
  return file;
}

interface Doctored {
  code: number;
  findings: Finding[];
  stderr: string;
}

async function doctor(extra: string[] = []): Promise<Doctored> {
  let out = '';
  let stderr = '';
  const code = await runDoctor(
    ['--json', '--conf', confFile(), '--service', path.join(h.tmp, 'no-service.sock'), ...extra],
    {
      env: { HCN_SIM: h.sim.address },
      load: {},
      out: (s) => (out += s),
      err: (s) => (stderr += s),
    },
  );
  return { code, findings: (JSON.parse(out) as { findings: Finding[] }).findings, stderr };
}

/** The findings worse than info, as kind/severity/subject. */
function troubles(d: Doctored): Array<[string, string, string]> {
  return d.findings.filter((f) => f.severity !== 'info').map((f) => [f.kind, f.severity, f.subject]);
}

function kinds(d: Doctored, kind: string): Finding[] {
  return d.findings.filter((f) => f.kind === kind);
}

async function addPod(containerId: string, ns?: string): Promise<{ netns: string; record: AttachmentRecord }> {
  const netns = ns ?? (await newNamespace(h));
  const r = await cni(h, { verb: 'ADD', conf: pluginConf(), containerId, netns });
  expect({ code: r.exitCode, out: r.exitCode ? r.stdout : '' }).toEqual({ code: 0, out: '' });
  const record = JSON.parse(
    fs.readFileSync(path.join(h.stateDir, 'attachments', `${fileKey({ containerId, ifname: 'eth0' })}.json`), 'utf8'),
  ) as AttachmentRecord;
  return { netns, record };
}

async function api() {
  return (await h.deps.hns.api({ apiVersion: 2, hnsTimeoutSeconds: 10 })).api;
}

/**
 * An endpoint of another plugin: on its own NAT network over the same subnet (HNS refuses a second endpoint with one
 * address on one network, not across networks), or on the pods' network.
 */
async function peerEndpoint(name: string, ip?: string): Promise<string> {
  const a = await api();
  const net = ip
    ? ((await a.listNetworks()).find((n) => n.name === 'peer-nat') ??
      (await a.createNetwork({
        name: 'peer-nat',
        type: 'NAT',
        flags: 0,
        subnets: [{ prefix: '10.244.1.0/24' }],
        policies: [],
      })))
    : (await a.listNetworks()).find((n) => n.name === 'cbr0')!;
  const e = await a.createEndpoint(net, {
    name,
    ips: ip ? [{ address: ip, prefixLength: 24 }] : [],
    dns: { servers: [], search: [] },
    policies: [],
  });
  return e.id;
}

it('a healthy node: nothing worse than info (the host and the service), exit 0', async () => {
  await addPod('pod-a');
  await addPod('pod-b');
  const d = await doctor();
  expect(troubles(d)).toEqual([]);
  expect(d.findings.map((f) => f.kind).sort()).toEqual(['host', 'service']);
  expect(d.code).toBe(0);
});

it("two endpoints holding one IP (a peer plugin reused our pod's address): one error naming both, exit 2", async () => {
  const { record } = await addPod('pod-a');
  const ip = (record.recreate!.endpoint as { ips: Array<{ address: string }> }).ips[0]!.address;
  await peerEndpoint('azure-peer-ep', ip);
  const d = await doctor();
  expect(kinds(d, 'duplicate-ip')).toHaveLength(1);
  expect(kinds(d, 'duplicate-ip')[0]).toMatchObject({ severity: 'error', subject: `address ${ip}` });
  expect(kinds(d, 'duplicate-ip')[0]!.why).toMatch(/ours, pod pod-a@eth0; attached to namespace/);
  expect(kinds(d, 'duplicate-ip')[0]!.why).toMatch(/azure-peer-ep .*another plugin's; attached to nothing/);
  expect(d.code).toBe(2);
});

it('an endpoint of another plugin attached to nothing: said once, as info (one look cannot tell for how long)', async () => {
  await addPod('pod-a');
  const id = await peerEndpoint('peer-stuck');
  const d = await doctor();
  expect(kinds(d, 'endpoint-unattached')).toEqual([
    expect.objectContaining({ severity: 'info', subject: `endpoint peer-stuck (${id})` }),
  ]);
  expect(troubles(d)).toEqual([]);
  expect(d.code).toBe(0);
});

it('an HNS restart drops the endpoints: each recorded pod is missing its endpoint (error)', async () => {
  await addPod('pod-a');
  await addPod('pod-b');
  await h.sim.control.restart();
  const d = await doctor();
  expect(troubles(d).sort()).toEqual([
    ['pod-endpoint-missing', 'error', 'pod pod-a@eth0'],
    ['pod-endpoint-missing', 'error', 'pod pod-b@eth0'],
  ]);
  expect(d.code).toBe(2);
});

it("a policy taken away from a pod's endpoint is drift from its record (error)", async () => {
  const { record } = await addPod('pod-a');
  await addPod('pod-b');
  const policies = (record.recreate!.endpoint as { policies: Array<{ Type: string }> }).policies;
  expect(policies.map((p) => p.Type)).toContain('OutBoundNAT');
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).modifyEndpoint(record.endpoint.id, {
    ResourceType: 'Policy',
    RequestType: 'Remove',
    Settings: { Policies: [{ Type: 'OutBoundNAT' }] },
  });
  const d = await doctor();
  expect(troubles(d)).toEqual([['pod-drift', 'error', 'pod pod-a@eth0']]);
  expect(kinds(d, 'pod-drift')[0]!.why).toMatch(/policies missing: OutBoundNAT/);
});

it('policies read from the endpoint listing (v1 view): port mappings and loopback DSR are no drift; one taken away is', async () => {
  const conf = pluginConf({
    loopbackDSR: true,
    runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] },
  });
  const r = await cni(h, { verb: 'ADD', conf, containerId: 'pod-pm', netns: await newNamespace(h) });
  expect(r.exitCode).toBe(0);
  const record = JSON.parse(
    fs.readFileSync(
      path.join(h.stateDir, 'attachments', `${fileKey({ containerId: 'pod-pm', ifname: 'eth0' })}.json`),
      'utf8',
    ),
  ) as AttachmentRecord;
  const given = (record.recreate!.endpoint as { policies: Array<{ Type: string }> }).policies.map((p) => p.Type);
  expect(given).toEqual(expect.arrayContaining(['OutBoundNAT', 'PortMapping']));
  expect(troubles(await doctor())).toEqual([]);
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).modifyEndpoint(record.endpoint.id, {
    ResourceType: 'Policy',
    RequestType: 'Remove',
    Settings: { Policies: [{ Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080 } }] },
  });
  const d = await doctor();
  expect(troubles(d)).toEqual([['pod-drift', 'error', 'pod pod-pm@eth0']]);
  expect(kinds(d, 'pod-drift')[0]!.why).toMatch(/policies missing: PortMapping$/);
});

it('a pod whose namespace is gone (its sandbox removed without a DEL) is a gone pod (warning), once, not a repair', async () => {
  const { netns, record } = await addPod('pod-a');
  await addPod('pod-b');
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).deleteNamespace(netns);
  const d = await doctor();
  expect(troubles(d)).toEqual([['pod-gone', 'warning', 'pod pod-a@eth0']]);
  expect(kinds(d, 'pod-gone')[0]!.why).toBe(
    `its namespace ${netns} is gone while its endpoint ${record.endpoint.name} (${record.endpoint.id}) and its record remain: the sandbox was removed without a DEL reaching hcn-cni`,
  );
  expect(kinds(d, 'pod-gone')[0]!.next).toMatch(/^crictl pods --id pod-a .*hcn-cni gc --valid FILE/);
  expect(d.code).toBe(1);
});

it('a pod whose namespace and endpoint are both gone (an HNS restart, then the sandbox removed): only its record remains', async () => {
  const { netns } = await addPod('pod-a');
  await addPod('pod-b');
  await h.sim.control.restart();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).deleteNamespace(netns);
  const d = await doctor();
  expect(troubles(d).sort()).toEqual([
    ['pod-endpoint-missing', 'error', 'pod pod-b@eth0'],
    ['pod-gone', 'warning', 'pod pod-a@eth0'],
  ]);
  expect(kinds(d, 'pod-gone')[0]!.why).toMatch(/and its endpoint .* are both gone; only its record/);
});

it('a Docker-style pod whose container HCS no longer has is a gone pod (HNS still lists the container on the endpoint)', async () => {
  const { record } = await addPod('pod-docker', 'none');
  await addPod('pod-b');
  expect(record.attach).toEqual({ kind: 'container', target: 'pod-docker' });
  expect(troubles(await doctor())).toEqual([]);
  await h.sim.control.removeContainer('pod-docker');
  const d = await doctor();
  expect(troubles(d)).toEqual([['pod-gone', 'warning', 'pod pod-docker@eth0']]);
  expect(kinds(d, 'pod-gone')[0]!.why).toMatch(/^its container pod-docker is gone while its endpoint /);
});

/** Another plugin's transparent network, bound to the adapter "Ethernet 2". */
async function peerTransparentNetwork() {
  return (await api()).createNetwork({
    name: 'peer-transparent',
    type: 'Transparent',
    flags: 0,
    adapterName: 'Ethernet 2',
    subnets: [{ prefix: '10.9.0.0/24', gateway: '10.9.0.1' }],
    policies: [],
  });
}

it("a network whose adapter vanished from the host (a peer's transparent network): one error", async () => {
  await addPod('pod-a');
  const n = await peerTransparentNetwork();
  expect(troubles(await doctor())).toEqual([]);
  await h.sim.control.removeAdapter('Ethernet 2');
  const d = await doctor();
  expect(troubles(d)).toEqual([['network-adapter-missing', 'error', `network peer-transparent (${n.id})`]]);
});

it("a leaked endpoint of ours is the audit's orphan (warning, exit 1); nothing is deleted", async () => {
  await addPod('pod-a');
  const id = await peerEndpoint(endpointName({ containerId: 'leaked', ifname: 'eth0' }));
  const d = await doctor();
  expect(troubles(d)).toEqual([
    ['audit-orphan', 'warning', `endpoint ${endpointName({ containerId: 'leaked', ifname: 'eth0' })} (${id})`],
  ]);
  expect(d.code).toBe(1);
  expect((await h.sim.control.dump()).endpoints.map((e) => e.ID.toLowerCase())).toContain(id.toLowerCase());
});

it('an unreadable record is quarantined and protects its endpoint from the audit: two warnings', async () => {
  const { record } = await addPod('pod-a');
  fs.writeFileSync(path.join(h.stateDir, 'attachments', `${fileKey(record)}.json`), '{ torn');
  const d = await doctor();
  expect(
    troubles(d)
      .map(([k, s]) => [k, s])
      .sort(),
  ).toEqual([
    ['audit-protected', 'warning'],
    ['record-quarantined', 'warning'],
  ]);
  expect(d.findings.find((f) => f.kind === 'audit-protected')!.next).toMatch(/hcn-cni state --clear-quarantine/);
});

it('housekeeping the audits keep failing is a warning', async () => {
  await addPod('pod-a');
  // A set-aside file the audit could not remove (no record reader looks at it).
  const stuck = path.join(h.stateDir, 'stuck.tmp');
  fs.writeFileSync(stuck, '{}');
  noteChores(h.stateDir, [{ what: 'removing the tombstone of stuck@eth0', file: stuck, error: 'EBUSY' }], Date.now());
  const d = await doctor();
  expect(troubles(d).filter(([k]) => k === 'housekeeping-failed')).toHaveLength(1);
});

it('a DEL HNS refused keeps the address for a tombstone (info) and leaves an orphan (warning)', async () => {
  const { netns } = await addPod('pod-a');
  await h.sim.control.failCall('HcnDeleteEndpoint', HR.ADAPTER_NOT_FOUND);
  expect((await cni(h, { verb: 'DEL', conf: pluginConf(), containerId: 'pod-a', netns })).exitCode).toBe(0);
  const d = await doctor();
  expect(kinds(d, 'address-kept')).toEqual([expect.objectContaining({ severity: 'info', subject: 'pod pod-a@eth0' })]);
  expect(troubles(d).map(([k]) => k)).toEqual(['audit-orphan']);
});

it('an HNS restart that brings the endpoints back without their policies: each pod drifted (error)', async () => {
  await addPod('pod-a');
  await addPod('pod-b');
  await h.sim.control.restart({ rehydrate: true });
  const d = await doctor();
  expect(troubles(d).sort()).toEqual([
    ['pod-drift', 'error', 'pod pod-a@eth0'],
    ['pod-drift', 'error', 'pod pod-b@eth0'],
  ]);
  for (const f of kinds(d, 'pod-drift')) expect(f.why).toMatch(/policies missing: OutBoundNAT$/);
});

it('an endpoint HNS reports Degraded: one error, whether a pod of ours or a peer owns it', async () => {
  const { record } = await addPod('pod-a');
  const peer = await peerEndpoint('peer-ep');
  await h.sim.control.setEndpointState(record.endpoint.id, 5);
  await h.sim.control.setEndpointState(peer, 6);
  const d = await doctor();
  expect(troubles(d).sort()).toEqual([
    ['endpoint-failed', 'error', `endpoint ${record.endpoint.name} (${record.endpoint.id})`],
    ['endpoint-failed', 'error', `endpoint peer-ep (${peer})`],
  ]);
  expect(
    kinds(d, 'endpoint-failed')
      .map((f) => f.why.split(':')[0])
      .sort(),
  ).toEqual(['HNS shows it Degraded', 'HNS shows it Destroyed']);
});

it('a network bound to an adapter since replaced by another NIC of the same name: one error (by the adapter id)', async () => {
  const n = await peerTransparentNetwork();
  await h.sim.control.removeAdapter('Ethernet 2');
  await h.sim.control.addAdapter({ Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-99' });
  const d = await doctor();
  expect(troubles(d)).toEqual([['network-adapter-changed', 'error', `network peer-transparent (${n.id})`]]);
  expect(kinds(d, 'network-adapter-changed')[0]!.why).toMatch(
    /as 00-15-5D-AA-00-02, but that adapter is now 00-15-5D-AA-00-99/,
  );
});

it("a delegated NIC replaced under the same name and MAC (another NetCfgInstanceId) since the pod's ADD: one error on its network", async () => {
  const nic = '00-15-5D-AA-00-02';
  const conf = delegatedNicConf(nic, { ipam: hostLocal(h), stateDir: h.stateDir, hnsTimeoutSeconds: 10 });
  const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-nic', netns: await newNamespace(h) });
  expect({ code: add.exitCode, out: add.exitCode ? add.stdout : '' }).toEqual({ code: 0, out: '' });
  const record = JSON.parse(
    fs.readFileSync(
      path.join(h.stateDir, 'attachments', `${fileKey({ containerId: 'pod-nic', ifname: 'eth0' })}.json`),
      'utf8',
    ),
  ) as AttachmentRecord;
  const before = (await h.sim.control.host()).adapters.find((a) => a.Name === 'Ethernet 2')!;
  expect(record.adapter).toEqual({ name: 'Ethernet 2', mac: nic, interfaceGuid: before.InterfaceGuid });
  expect(troubles(await doctor())).toEqual([]);
  // The driver reinstalled: the same NIC, name and MAC comes back with a new NetCfgInstanceId.
  await h.sim.control.removeAdapter('Ethernet 2');
  await h.sim.control.addAdapter({ Name: 'Ethernet 2', MacAddress: nic });
  const after = (await h.sim.control.host()).adapters.find((a) => a.Name === 'Ethernet 2')!;
  expect(after.InterfaceGuid).not.toBe(before.InterfaceGuid);
  const d = await doctor();
  expect(troubles(d)).toEqual([
    ['network-adapter-changed', 'error', `network ${record.network.name} (${record.network.id})`],
  ]);
  expect(kinds(d, 'network-adapter-changed')[0]!.why).toContain(
    `as ${before.InterfaceGuid}; that adapter is now ${after.InterfaceGuid}: the NIC was replaced or its driver reinstalled`,
  );
});

it('--help prints the usage (exit 0); an unknown option is a usage error (exit 2)', async () => {
  const run = async (argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runDoctor(argv, { env: {}, load: {}, out: (s) => (out += s), err: (s) => (err += s) });
    return { code, out, err };
  };
  expect(await run(['--help'])).toMatchObject({ code: 0, out: expect.stringMatching(/^usage: hcn-cni doctor /) });
  expect(await run(['--bogus'])).toMatchObject({
    code: 2,
    err: expect.stringMatching(/^hcn-cni doctor: Unknown option '--bogus'/),
  });
  expect(await run(['--bundle', ''])).toMatchObject({ code: 2, err: expect.stringMatching(/--bundle needs a value/) });
});

it('an addon that does not load is one error, and nothing else is judged (exit 2)', async () => {
  await addPod('pod-a');
  // A process of its own: the addon is loaded once per process.
  const r = await promisify(execFile)(
    process.execPath,
    [CLI, 'doctor', '--json', '--conf', confFile(), '--service', path.join(h.tmp, 'none.sock')],
    { env: { PATH: process.env.PATH, HCN_SIM: h.sim.address, HCN_CNI_ADDON: path.join(h.tmp, 'no-such-addon.node') } },
  ).catch((e: { code: number; stdout: string }) => e);
  expect((r as { code?: number }).code).toBe(2);
  const findings = (JSON.parse(r.stdout) as { findings: Finding[] }).findings;
  expect(findings.filter((f) => f.severity !== 'info').map((f) => [f.kind, f.subject])).toEqual([
    ['host', 'host: addon'],
  ]);
});

it('a host without HCN (HNS 9.1): a healthy pod is no drift (DNS as v1 shows it: DNSDomain and the search list)', async () => {
  await h.sim.control.setVersion(9, 1, { v2: false });
  try {
    // A namespace as a v1 host makes one (microsoft/hcsshim internal/hns/namespace.go CreateNamespace).
    const ns = await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).hnsCall<{ ID: string }>('POST', '/namespaces/', {});
    await addPod('pod-a', ns.ID);
    const d = await doctor();
    expect(troubles(d)).toEqual([]);
    expect(d.findings.find((f) => f.kind === 'host')!.why).toMatch(/API: v1/);
  } finally {
    await h.sim.control.setVersion(15, 4, { v2: true });
  }
});
