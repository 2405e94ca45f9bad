/**
 * The service's node agent (src/service/agent/node-agent.ts) audits the whole node in the background: a leak of seed 000's
 * kind is removed within auditIntervalSeconds with no ADD at all; an object a running ADD is creating is never
 * removed; and the node is audited right after HNS answers again following a failure, not an interval later — at once
 * where HNS's service notifications say it is back, else at the probe. An ADD through the service makes the same HCN
 * calls (existing network, containerd path) whatever the node holds, and a DEL lists nothing: the node agent's
 * listing says who else holds an address (src/plugin/address-book.ts).
 */
import { nicNetworkName } from '../../src/orphans/ownership';
import type { Hcn } from '../../src/hns/hcn';
import { HR } from '../../src/hns/hresults';
import { bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, hungOn, lastSeq, newNamespace, until } from '../plugin/support';
import {
  auditedVisitOver,
  makeBin,
  SERVICE_ADD_OPS,
  SERVICE_DEL_OPS,
  startServiceProcess,
  startShim,
  viaShim,
  type Bin,
  type RunningService,
} from './support';

const NIC = { Name: 'Ethernet 3', MacAddress: '00-15-5D-AA-00-03' };
let h: Harness;
useHarness({ adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, NIC] }, (x) => (h = x));

let bin: Bin;
let service: RunningService | undefined;
beforeEach(() => {
  bin = makeBin(h);
});
afterEach(async () => {
  await h.sim.control.release();
  await service?.stop();
  service = undefined;
});

const hcn = (): Hcn => h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
/** One pod's ADD and DEL through the service: what makes it know (and audit) the configuration's state directory. */
async function serveOnce(conf: Record<string, unknown>): Promise<void> {
  const ns = await newNamespace(h);
  for (const verb of ['ADD', 'DEL'] as const)
    expect((await viaShim(h, bin, service!.address, { verb, conf, containerId: 'once', netns: ns })).exitCode).toBe(0);
}

const networkIds = async () => (await h.sim.control.dump()).networks.map((n) => n.ID.toLowerCase());

it('removes a leaked NIC network (seed 000) within its interval, with no ADD at all', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  // One pod's ADD and DEL serve the configuration (its state directory, auditIntervalSeconds 1); no verb follows.
  await serveOnce(bridgeConf({ auditIntervalSeconds: 1 }));
  // What seed 000 leaves: a network of ours on the NIC, completed by HNS after its ADD was killed and DEL'd.
  const leak = await hcn().createNetwork({
    Name: nicNetworkName({ containerId: 'pod-killed', ifname: 'eth0' }),
    Type: 'Transparent',
    Flags: 8,
    Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: NIC.Name } }],
  } as never);
  const id = String(leak.ID).toLowerCase();
  expect(await networkIds()).toContain(id);
  await until(async () => (!(await networkIds()).includes(id) ? true : undefined), 20_000, 'the agent to remove it');
  const status = await service.status();
  expect(status.tally.verbs.map((v) => `${v.verb} ${v.count}`).sort()).toEqual(['ADD 1', 'DEL 1']);
  expect(status.agent.audits).toBeGreaterThanOrEqual(1);
  expect(status.tally.removed.network).toBe(1);
});

it('never removes what a running ADD is creating, however many audits pass meanwhile', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const conf = bridgeConf({ auditIntervalSeconds: 1 });
  await serveOnce(conf);
  // The ADD has created its endpoint and hangs attaching it: the endpoint exists, its intent is live.
  await h.sim.control.hang('HcnModifyNamespace');
  const ns = await newNamespace(h);
  const run = startShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'slow', netns: ns });
  await hungOn(h.sim.control, 'HcnModifyNamespace');
  const audits = (await service.status()).agent.audits;
  await until(
    async () => ((await service!.status()).agent.audits >= audits + 2 ? true : undefined),
    20_000,
    'two audits while it hangs',
  );
  await h.sim.control.release();
  const out = await run.done;
  expect(out.exitCode).toBe(0);
  const dump = await h.sim.control.dump();
  expect(dump.endpoints).toHaveLength(1);
  expect((await service.status()).tally.removed.endpoint).toBe(0);
  expect(service.stderr()).toMatch(/"audit":"in-flight"/);
});

it('audits right after HNS answers again following a failure, not an interval later', async () => {
  // The probe alone (the fallback where the host has no service notifications).
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '1', '--no-hns-notifications']);
  await serveOnce(bridgeConf({ auditIntervalSeconds: 3600 }));
  await until(async () => ((await service!.status()).agent.audits >= 1 ? true : undefined), 20_000, 'a first audit');
  const first = (await service.status()).agent.audits;
  // Down until the probe has seen it (an outage of fixed length could end before a slow probe came); a restart
  // without down time then ends it.
  await h.sim.control.restart({ downMs: 120_000 });
  await until(
    async () => ((await service!.status()).agent.hnsFailingSince ? true : undefined),
    20_000,
    'the probe to see HNS down',
  );
  await h.sim.control.restart({ downMs: 0 });
  await until(
    async () => ((await service!.status()).agent.audits > first ? true : undefined),
    20_000,
    'the audit after recovery',
  );
  expect((await service.status()).agent.hnsFailingSince).toBeUndefined();
  expect(service.stderr()).toContain('HNS answers again');
});

it('repairs every recorded pod as soon as HNS is back, from its service notification alone: no probe, an hour of interval', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const conf = bridgeConf({ cniVersion: '1.1.0', repair: true, auditIntervalSeconds: 3600 });
  const pods = ['pod-a', 'pod-b', 'pod-c'];
  for (const id of pods) {
    const add = await viaShim(h, bin, service.address, {
      verb: 'ADD',
      conf,
      containerId: id,
      netns: await newNamespace(h),
    });
    expect(add.exitCode).toBe(0);
  }
  await until(async () => ((await service!.status()).agent.audits >= 1 ? true : undefined), 20_000, 'a first audit');
  // A restart drops every endpoint; nothing of the service calls HNS meanwhile (no probe, no verb, no due audit).
  await h.sim.control.restart({ downMs: 300 });
  await until(
    async () => ((await service!.status()).tally.repairs.repaired === pods.length ? true : undefined),
    20_000,
    'every pod repaired',
  );
  expect((await h.sim.control.dump()).endpoints).toHaveLength(pods.length);
  expect((await service.status()).agent.hnsFailingSince).toBeUndefined();
});

it('an ADD through the service makes its HCN calls with the network there, whatever else the node holds: own names, create, attach', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const conf = bridgeConf();
  const add = async (id: string) =>
    viaShim(h, bin, service!.address, { verb: 'ADD', conf, containerId: id, netns: await newNamespace(h) });
  expect((await add('first')).exitCode).toBe(0);
  // The agent's first visit of the directory (due at once) is its own calls, not the ADD's: let it pass first.
  await auditedVisitOver(service);
  // Other objects on the node: they must not show up in the ADD's cost.
  const net = (await h.sim.control.dump()).networks[0]!.ID;
  for (let i = 0; i < 20; i++) await hcn().createEndpoint(net, { Name: `other-${i}` });
  const pid = service.child.pid;
  const seq = await lastSeq(h);
  const ns = await newNamespace(h);
  const second = await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'second', netns: ns });
  expect(second.exitCode).toBe(0);
  const ops = (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === pid).map((c) => c.op);
  expect(ops).toEqual(SERVICE_ADD_OPS);
  // The pod has what the HCN calls gave it: its endpoint in the namespace, with the result's address and MAC.
  const result = JSON.parse(second.stdout) as { ips: Array<{ address: string }>; interfaces: Array<{ mac: string }> };
  const dump = await h.sim.control.dump();
  const inNs = dump.namespaces.find((n) => n.ID.toLowerCase() === ns.toLowerCase());
  const id = (inNs?.Resources as Array<{ Data: { Id: string } }>)[0]!.Data.Id;
  const ep = dump.endpoints.find((e) => e.ID.toLowerCase() === id.toLowerCase())!;
  expect(ep.HostComputeNamespace).toBe(inNs!.ID);
  expect(`${(ep.IpConfigurations as Array<{ IpAddress: string }>)[0]!.IpAddress}/24`).toBe(result.ips[0]!.address);
  expect(String(ep.MacAddress).toLowerCase().replace(/-/g, ':')).toBe(result.interfaces[0]!.mac);
});

it('an ADD through the service whose create HCN refuses with E_FAIL fails as HCN said, asking no other API', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const conf = bridgeConf();
  expect(
    (await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'first', netns: await newNamespace(h) }))
      .exitCode,
  ).toBe(0);
  await until(async () => ((await service!.status()).agent.audits >= 1 ? true : undefined), 20_000, 'a first audit');
  await h.sim.control.failCall('HcnCreateEndpoint', HR.E_FAIL);
  const pid = service.child.pid;
  const seq = await lastSeq(h);
  const ns = await newNamespace(h);
  const second = await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'second', netns: ns });
  expect(second.exitCode).not.toBe(0);
  const ops = (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === pid).map((c) => c.op);
  expect(ops.filter((op) => /^HNSCall (POST|PUT|DELETE) /.test(op))).toEqual([]);
  expect(ops.filter((op) => op === 'HcnCreateEndpoint')).toHaveLength(1);
  expect((await h.sim.control.dump()).endpoints).toHaveLength(1);
});

it('a DEL through the service makes its HCN calls, detach and delete, once the node agent has listed the node', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const conf = bridgeConf({ ipam: hostLocal(h) });
  const ns = await newNamespace(h);
  const run = (verb: 'ADD' | 'DEL', id: string, netns: string) =>
    viaShim(h, bin, service!.address, { verb, conf, containerId: id, netns });
  expect((await run('ADD', 'first', await newNamespace(h))).exitCode).toBe(0);
  await auditedVisitOver(service);
  expect((await run('ADD', 'second', ns)).exitCode).toBe(0);
  const pid = service.child.pid;
  const seq = await lastSeq(h);
  expect((await run('DEL', 'second', ns)).exitCode).toBe(0);
  const ops = (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === pid).map((c) => c.op);
  expect(ops).toEqual(SERVICE_DEL_OPS);
  // Done as the HCN calls would: the namespace no longer lists it, and the endpoint is gone.
  const dump = await h.sim.control.dump();
  expect(dump.endpoints).toHaveLength(1);
  const nsId = ns.toLowerCase();
  const held = dump.namespaces.find((n) => n.ID.toLowerCase() === nsId);
  expect(JSON.stringify(held)).not.toMatch(/Endpoint/);
  expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['first']);
});
