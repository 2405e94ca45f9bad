/**
 * GC and STATUS (spec 1.1.0) against the simulator, with real host-local IPAM.
 *
 * GC: attachments a, b (bridge) and c (delegated NIC) are committed; valid = [a] removes b and c from HNS and the
 * state and releases their addresses, leaves a untouched, removes a leaked object of ours that has no state, and
 * never touches foreign objects (a "nat" network with a Docker endpoint, a name forged to look like ours). The
 * older key cni.dev/attachments works the same. An HNS failure on one delete does not stop GC: it removes the rest
 * and exits 108 with the failure in details. Without either key GC refuses (7).
 *
 * STATUS: 0 and silent when healthy; 50 while HNS is restarting or when the configured API is missing; 51 naming
 * the attachments whose endpoints an HNS restart dropped, and naming a quarantined (unreadable) record.
 */
import * as fs from 'fs';
import * as path from 'path';
import { V2Api, type NetworkInfo } from '../../src/hns/api';
import { HR } from '../../src/hns/hresults';
import { endpointName, nicNetworkName } from '../../src/orphans/ownership';
import { hostOs } from '../../src/hns/host-os';
import { pluginDeps } from '../../src/plugin/deps';
import { StateStore } from '../../src/state/store';
import { intentRecord } from '../helpers/state-records';
import { bridgeConf, cni, cniProcess, useHarness, stateFiles, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, logLines, newNamespace, outcomeLines } from './support';

const NIC = { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' };
const SPARE = { Name: 'Ethernet 3', MacAddress: '00-15-5D-AA-00-03' };
const HOST = { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, NIC, SPARE] };

let h: Harness;
useHarness(HOST, (x) => (h = x));

/** One CNI network ("k8s"), one IPAM: bridge pods and a delegated-NIC pod share its address range. */
const bridge = (extra: Record<string, unknown> = {}) =>
  bridgeConf({ cniVersion: '1.1.0', name: 'k8s', networkName: 'cbr0', ipam: hostLocal(h), ...extra });
const nic = (extra: Record<string, unknown> = {}) => ({
  cniVersion: '1.1.0',
  name: 'k8s',
  type: 'hcn-cni',
  mode: 'delegatedNic',
  runtimeConfig: { mac: NIC.MacAddress },
  ipam: hostLocal(h),
  ...extra,
});
const valid = (...ids: string[]) => ids.map((id) => ({ containerID: id, ifname: 'eth0' }));
const api = () => new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }));

interface Pods {
  a: { endpoint: string };
  b: { endpoint: string };
  c: { endpoint: string; network: string };
}

/** Commits a, b (bridge) and c (delegated NIC). */
async function threePods(): Promise<Pods> {
  for (const id of ['a', 'b']) {
    const r = await cni(h, { verb: 'ADD', conf: bridge(), containerId: id, netns: await newNamespace(h) });
    expect(r.exitCode).toBe(0);
  }
  const c = await cni(h, { verb: 'ADD', conf: nic(), containerId: 'c', netns: await newNamespace(h) });
  expect(c.exitCode).toBe(0);
  const rec = (id: string) =>
    JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', `${id}@eth0.json`), 'utf8')) as {
      endpoint: { id: string };
      network: { id: string };
    };
  expect(Object.values(heldIps(h, 'k8s')).sort()).toEqual(['a', 'b', 'c']);
  return {
    a: { endpoint: rec('a').endpoint.id },
    b: { endpoint: rec('b').endpoint.id },
    c: { endpoint: rec('c').endpoint.id, network: rec('c').network.id },
  };
}

/** Objects nobody recorded: a leak of ours (endpoint + NIC network) and foreign ones that look alike. */
async function strangers(): Promise<{ leakedEndpoint: string; leakedNetwork: string; foreign: string[] }> {
  const cbr0 = (await api().findNetworkByName('cbr0'))!;
  const ep = (network: NetworkInfo, name: string) =>
    api().createEndpoint(network, { name, ips: [], dns: { servers: [], search: [] }, policies: [] });
  const leakedEndpoint = (await ep(cbr0, endpointName({ containerId: 'ghost', ifname: 'eth0' }))).id;
  const leakedNetwork = (
    await api().createNetwork({
      name: nicNetworkName({ containerId: 'ghost2', ifname: 'eth0' }),
      type: 'Transparent',
      flags: 8,
      adapterName: SPARE.Name,
      subnets: [{ prefix: '10.99.0.0/24', gateway: '10.99.0.1' }],
      policies: [],
    })
  ).id;
  const nat = await api().createNetwork({
    name: 'nat',
    type: 'NAT',
    flags: 0,
    subnets: [{ prefix: '172.20.0.0/16', gateway: '172.20.0.1' }],
    policies: [],
  });
  const docker = await ep(nat, 'ethernet_5c1b2a9e8f7d');
  const forged = await ep(
    cbr0,
    endpointName({ containerId: 'ghost', ifname: 'eth0' }).replace(/.$/, (c) => (c === '0' ? '1' : '0')),
  ); // our pattern, a check that does not match
  return {
    leakedEndpoint,
    leakedNetwork,
    foreign: [cbr0.id, nat.id, docker.id, forged.id].map((x) => x.toLowerCase()),
  };
}

async function ids(): Promise<{ networks: string[]; endpoints: string[] }> {
  const d = await h.sim.control.dump();
  return { networks: d.networks.map((n) => n.ID.toLowerCase()), endpoints: d.endpoints.map((e) => e.ID.toLowerCase()) };
}

describe('GC', () => {
  it('valid = [a]: b and c leave HNS, state and IPAM; a, foreign objects untouched; a leak of ours removed', async () => {
    const pods = await threePods();
    const s = await strangers();
    const aRecord = fs.readFileSync(path.join(h.stateDir, 'attachments', 'a@eth0.json'), 'utf8');

    const r = await cniProcess(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a') } });
    expect({ exit: r.exitCode, out: r.stdout }).toEqual({ exit: 0, out: '' });
    expect(outcomeLines(r.stderr)).toEqual([expect.objectContaining({ verb: 'GC', outcome: 'ok' })]);

    const now = await ids();
    expect(now.endpoints).toContain(pods.a.endpoint.toLowerCase());
    for (const gone of [pods.b.endpoint, pods.c.endpoint, s.leakedEndpoint])
      expect(now.endpoints).not.toContain(gone.toLowerCase());
    for (const gone of [pods.c.network, s.leakedNetwork]) expect(now.networks).not.toContain(gone.toLowerCase());
    for (const kept of s.foreign) expect([...now.networks, ...now.endpoints]).toContain(kept);
    expect(now.endpoints).toHaveLength(3); // a, the docker endpoint, the forged one
    expect(now.networks).toHaveLength(2); // cbr0, nat

    expect(stateFiles(h).filter((f) => !f.startsWith('tombstones/'))).toEqual(['attachments/a@eth0.json']);
    expect(fs.readFileSync(path.join(h.stateDir, 'attachments', 'a@eth0.json'), 'utf8')).toBe(aRecord);
    expect(heldIps(h, 'k8s')).toEqual({ '10.244.1.10': 'a' });
    // a still works: CHECK passes.
    const check = await cni(h, {
      verb: 'CHECK',
      conf: bridge(),
      containerId: 'a',
      netns: JSON.parse(aRecord).netns as string,
    });
    expect(check.exitCode).toBe(0);
  });

  it('leaves a running ADD alone though its pod is not valid: its intent, its endpoint, and no tombstone', async () => {
    expect(
      (await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'a', netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
    const cbr0 = (await api().findNetworkByName('cbr0'))!;
    // An ADD of this process (live) has written its intent and created its endpoint; it has not committed yet.
    const adding = { containerId: 'adding', ifname: 'eth0' };
    const name = endpointName(adding);
    const ep = await api().createEndpoint(cbr0, { name, ips: [], dns: { servers: [], search: [] }, policies: [] });
    const store = new StateStore(h.stateDir, { os: hostOs(), now: Date.now });
    const intent = { ...intentRecord('i-adding', { owner: adding, planned: [{ kind: 'endpoint', name, id: ep.id }] }) };
    await store.writeIntent({ ...intent, cniNetwork: 'k8s' });
    const gc = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a') } });
    expect(gc.exitCode).toBe(0);
    expect((await ids()).endpoints).toContain(ep.id.toLowerCase());
    expect(store.getIntent(adding)?.id).toBe('i-adding');
    expect(store.getTombstone(adding)).toBeUndefined();
  });

  it('keeps the IP of an attachment it removes while no listing can show what holds it; a later GC releases it', async () => {
    await threePods();
    // Every endpoint listing of this GC fails: the one after b's delete (does another endpoint hold its address?),
    // the previous plugin's endpoints', the audit's.
    await h.sim.control.failCall('HNSCall GET /endpoints', HR.E_FAIL, { count: 3 });
    const gc = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a', 'c') } });
    expect(gc.json).toMatchObject({ code: 108 });
    expect(Object.values(heldIps(h, 'k8s')).sort()).toEqual(['a', 'b', 'c']);
    const again = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a', 'c') } });
    expect(again.exitCode).toBe(0);
    expect(Object.values(heldIps(h, 'k8s')).sort()).toEqual(['a', 'c']);
  });

  it("keeps a dead ADD's IP while the endpoint it created survives GC's cleanup (HNS refused the delete)", async () => {
    const netns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'died', netns })).exitCode).toBe(0);
    // What an ADD killed before its commit leaves: no record, its intent (past its deadline), its endpoint, its IP.
    const store = new StateStore(h.stateDir, { os: hostOs(), now: Date.now });
    const died = { containerId: 'died', ifname: 'eth0' };
    const rec = store.getAttachment(died)!;
    fs.rmSync(path.join(h.stateDir, 'attachments', 'died@eth0.json'));
    const planned = [{ kind: 'endpoint' as const, name: rec.endpoint.name, id: rec.endpoint.id }];
    await store.writeIntent({ ...intentRecord('i-died', { owner: died, planned, deadline: 1 }), cniNetwork: 'k8s' });
    // HNS refuses to delete the endpoint, to GC and to the audit after it.
    await h.sim.control.failCall('HcnDeleteEndpoint', 0x80070005, { count: 10 }); // E_ACCESSDENIED
    await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': [] } });
    expect((await ids()).endpoints).toContain(rec.endpoint.id.toLowerCase());
    expect(Object.values(heldIps(h, 'k8s'))).toEqual(['died']);
    expect(store.getTombstone(died)?.ipamPending).toBe(true);
    // Once HNS deletes it, the next GC releases the IP.
    await h.sim.control.reset({ objects: false });
    await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': [] } });
    expect((await ids()).endpoints).not.toContain(rec.endpoint.id.toLowerCase());
    expect(heldIps(h, 'k8s')).toEqual({});
  });

  it('the older key cni.dev/attachments works the same', async () => {
    const pods = await threePods();
    const r = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/attachments': valid('a', 'c') } });
    expect(r).toEqual({ exitCode: 0, stdout: '', json: undefined });
    const now = await ids();
    expect(now.endpoints.sort()).toEqual([pods.a.endpoint, pods.c.endpoint].map((x) => x.toLowerCase()).sort());
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/'))).toEqual([
      'attachments/a@eth0.json',
      'attachments/c@eth0.json',
    ]);
    expect(Object.values(heldIps(h, 'k8s')).sort()).toEqual(['a', 'c']);
  });

  it('HNS failing one delete (unreachable, once): GC continues, removes the rest, exits 108 listing the error', async () => {
    const pods = await threePods();
    await h.sim.control.failCall('HcnDeleteEndpoint', HR.RPC_S_CALL_FAILED_DNE);
    const r = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a') } });
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ cniVersion: '1.1.0', code: 108, msg: 'GC finished with 1 error(s)' });
    const details = String(r.json!.details);
    const m =
      /^removing attachment ([bc])@eth0: HNS did not answer while deleting the attachment: HcnDeleteEndpoint failed: .*0x800706BF/i.exec(
        details,
      );
    expect(m).not.toBeNull();
    const failed = m![1] as 'b' | 'c';
    const other = failed === 'b' ? 'c' : 'b';
    // The failed one is kept whole for the next GC; the other is gone from HNS, state and IPAM.
    const now = await ids();
    expect(now.endpoints).toContain(pods[failed].endpoint.toLowerCase());
    expect(now.endpoints).not.toContain(pods[other].endpoint.toLowerCase());
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/'))).toEqual([
      'attachments/a@eth0.json',
      `attachments/${failed}@eth0.json`,
    ]);
    expect(Object.values(heldIps(h, 'k8s')).sort()).toEqual(['a', failed]);

    // The next GC finishes the job.
    const again = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a') } });
    expect(again).toEqual({ exitCode: 0, stdout: '', json: undefined });
    expect((await ids()).endpoints).toEqual([pods.a.endpoint.toLowerCase()]);
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/'))).toEqual(['attachments/a@eth0.json']);
    expect(heldIps(h, 'k8s')).toEqual({ '10.244.1.10': 'a' });
  });

  it('HNS refusing one delete: the record is tombstoned and the audit in the same GC finishes it (exit 0)', async () => {
    const pods = await threePods();
    await h.sim.control.failCall('HcnDeleteEndpoint', HR.E_FAIL);
    const r = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a') } });
    expect(r).toEqual({ exitCode: 0, stdout: '', json: undefined });
    expect((await ids()).endpoints).toEqual([pods.a.endpoint.toLowerCase()]);
    expect(heldIps(h, 'k8s')).toEqual({ '10.244.1.10': 'a' });
    const deletes = (await h.sim.control.calls()).filter((c) => c.op === 'HcnDeleteEndpoint');
    expect(deletes.filter((c) => c.fault === 'failed')).toHaveLength(1);
  });

  it('a delete that keeps failing: 108 with every error in details, everything else removed', async () => {
    const pods = await threePods();
    // Only c owns a network: its delete fails in DEL's path and again in the audit.
    await h.sim.control.failCall('HcnDeleteNetwork', HR.E_FAIL, { count: 2 });
    const r = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a') } });
    expect(r.json).toMatchObject({
      code: 108,
      msg: 'GC finished with 1 error(s)',
      details: expect.stringMatching(
        new RegExp(
          `^deleting network ${nicNetworkName({ containerId: 'c', ifname: 'eth0' })}: HcnDeleteNetwork failed`,
        ),
      ),
    });
    const now = await ids();
    expect(now.endpoints).toEqual([pods.a.endpoint.toLowerCase()]);
    expect(now.networks).toContain(pods.c.network.toLowerCase());
    expect(heldIps(h, 'k8s')).toEqual({ '10.244.1.10': 'a' });
    // c's tombstone keeps the network an orphan for the next audit.
    expect(stateFiles(h)).toEqual(['attachments/a@eth0.json', 'tombstones/c@eth0.json']);
    const again = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a') } });
    expect(again.exitCode).toBe(0);
    expect((await ids()).networks).not.toContain(pods.c.network.toLowerCase());
  });

  it('only judges its own network: attachments another CNI network made in the same stateDir are left alone', async () => {
    // A multi-network pod: a@eth0 on network "k8s", a@eth1 on network "storage" (another conflist, same stateDir).
    const storage = bridgeConf({
      cniVersion: '1.1.0',
      name: 'storage',
      networkName: 'cbr-storage',
      subnet: '10.250.0.0/24',
      ipam: hostLocal(h, '10.250.0.0/24'),
    });
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'a', netns: ns })).exitCode).toBe(0);
    expect(
      (await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'b', netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
    expect((await cni(h, { verb: 'ADD', conf: storage, containerId: 'a', ifname: 'eth1', netns: ns })).exitCode).toBe(
      0,
    );
    const eth1 = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', 'a@eth1.json'), 'utf8')) as {
      endpoint: { id: string };
      cniNetwork?: string;
    };
    expect(eth1.cniNetwork).toBe('storage');

    // The runtime's GC for "k8s" lists k8s's valid attachments only.
    const r = await cni(h, { verb: 'GC', conf: { ...bridge(), 'cni.dev/valid-attachments': valid('a') } });
    expect(r.exitCode).toBe(0);
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/'))).toEqual([
      'attachments/a@eth0.json',
      'attachments/a@eth1.json',
    ]);
    expect((await ids()).endpoints).toContain(eth1.endpoint.id.toLowerCase());
    expect(heldIps(h, 'storage')).toEqual({ '10.250.0.10': 'a' });
    expect(heldIps(h, 'k8s')).toEqual({ '10.244.1.10': 'a' });
    // And storage's own GC removes its attachments that it does not list.
    const g2 = await cni(h, { verb: 'GC', conf: { ...storage, 'cni.dev/valid-attachments': [] } });
    expect(g2.exitCode).toBe(0);
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/'))).toEqual(['attachments/a@eth0.json']);
    expect(heldIps(h, 'storage')).toEqual({});
  });

  it('without cni.dev/valid-attachments or cni.dev/attachments (libcni with no GC arguments): none is valid, all removed, with a warn line', async () => {
    // containernetworking/cni libcni/api.go GCNetworkList: with nil GCArgs it DELs every cached attachment of the
    // network and sends GC with neither key; its meaning is that no attachment is valid.
    const pods = await threePods();
    const r = await cniProcess(h, { verb: 'GC', conf: bridge() });
    expect({ exit: r.exitCode, out: r.stdout }).toEqual({ exit: 0, out: '' });
    const { endpoints } = await ids();
    for (const ep of [pods.a.endpoint, pods.b.endpoint, pods.c.endpoint])
      expect(endpoints).not.toContain(ep.toLowerCase());
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/'))).toEqual([]);
    expect(heldIps(h, 'k8s')).toEqual({});
    expect(logLines(r.stderr)).toContainEqual(
      expect.objectContaining({
        level: 40,
        warning:
          'GC without "cni.dev/valid-attachments": as libcni means it, no attachment of this network is valid; all are removed',
      }),
    );
  });
});

describe('STATUS', () => {
  it('healthy: exit 0, empty stdout (through the CLI)', async () => {
    await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'a', netns: await newNamespace(h) });
    const r = await cniProcess(h, { verb: 'STATUS', conf: bridge() });
    expect({ exit: r.exitCode, out: r.stdout }).toEqual({ exit: 0, out: '' });
  });

  it('HNS restarting: 50; after it, the attachments whose endpoints vanished: 51 naming them', async () => {
    const ns = await newNamespace(h);
    await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'a', netns: ns });
    await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'b', netns: await newNamespace(h) });
    const epA = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', 'a@eth0.json'), 'utf8')).endpoint
      .id as string;
    // Down until the STATUS below has said so (an outage of fixed length could end first on a loaded machine); a
    // restart without down time then ends it.
    await h.sim.control.restart({ downMs: 120_000 });
    const down = await cni(h, { verb: 'STATUS', conf: bridge() });
    expect(down.exitCode).toBe(1);
    expect(down.json).toMatchObject({
      code: 50,
      msg: expect.stringMatching(/^hcn-cni cannot serve ADD: HNS did not answer while asking HNS: .*0x800706BF/i),
    });
    await h.sim.control.restart({ downMs: 0 });

    const degraded = await cni(h, { verb: 'STATUS', conf: bridge() });
    expect(degraded.json).toMatchObject({ code: 51, msg: '2 existing attachment(s) may have limited connectivity' });
    expect(String(degraded.json!.details).split('\n').sort()).toEqual([
      `attachment a@eth0: endpoint ${epA} is missing from HNS`,
      expect.stringMatching(/^attachment b@eth0: endpoint [0-9a-f-]{36} is missing from HNS$/),
    ]);
    // DEL of a cleans up its record; b still degrades the node.
    expect((await cni(h, { verb: 'DEL', conf: bridge(), containerId: 'a', netns: ns })).exitCode).toBe(0);
    const one = await cni(h, { verb: 'STATUS', conf: bridge() });
    expect(one.json).toMatchObject({
      code: 51,
      msg: '1 existing attachment(s) may have limited connectivity',
      details: expect.stringMatching(/^attachment b@eth0/),
    });
  });

  it('apiVersion 2 on a host without HCN: 50', async () => {
    await h.sim.control.setVersion(7, 2, { v2: false });
    h.deps = pluginDeps({ pid: process.pid });
    try {
      const r = await cni(h, { verb: 'STATUS', conf: bridge({ apiVersion: 2 }) });
      expect(r.json).toMatchObject({
        code: 50,
        msg: expect.stringMatching(/^hcn-cni cannot serve ADD: the HCN \(v2\) API is not available on this host/),
      });
      // auto is fine on that host (it picks v1).
      expect((await cni(h, { verb: 'STATUS', conf: bridge() })).exitCode).toBe(0);
    } finally {
      await h.sim.control.setVersion(15, 4, { v2: true });
    }
  });

  it('a quarantined (unreadable) record: 51 naming it', async () => {
    await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'a', netns: await newNamespace(h) });
    fs.writeFileSync(path.join(h.stateDir, 'attachments', 'a@eth0.json'), '{"kind":"attach');
    const r = await cni(h, { verb: 'STATUS', conf: bridge() });
    expect(r.json).toMatchObject({
      code: 51,
      msg: '1 existing attachment(s) may have limited connectivity',
      details: expect.stringMatching(
        /^unreadable attachment record of a@eth0 quarantined as .*\/quarantine\/attachment--a@eth0\.json\.\d+: not JSON/,
      ),
    });
  });
});
