/**
 * The HCN handles the service keeps between verbs (src/hns/held-handles.ts), under the faults that end them: HNS
 * restarts between ADDs and between an ADD and its DEL (its service-disconnect notification drops every handle), a
 * hand-over between an ADD and its DEL (the new service opens its own), and a handle HNS no longer knows with no
 * notification to say so (E_HANDLE: opened again, the call made once more). Every verb succeeds, no handle is used
 * after the notification (the simulator refuses and records a call on a handle of an earlier HNS instance), and
 * nothing is left behind.
 */
import { V2Api, type NetworkInfo } from '../../src/hns/api';
import { HeldHandles } from '../../src/hns/held-handles';
import { HR } from '../../src/hns/hresults';
import { bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { lastSeq, newNamespace, recordFiles } from '../plugin/support';
import {
  auditedVisitOver,
  makeBin,
  SERVICE_DEL_OPS,
  startServiceProcess,
  viaShim,
  type Bin,
  type RunningService,
} from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
let bin: Bin;
const services: RunningService[] = [];
beforeEach(() => {
  bin = makeBin(h);
});
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
});

async function start(address?: string): Promise<RunningService> {
  const s = await startServiceProcess(h, address, ['--hns-probe-seconds', '0']);
  services.push(s);
  return s;
}

const conf = bridgeConf();
const verb = (s: RunningService, v: 'ADD' | 'DEL', id: string, ns: string) =>
  viaShim(h, bin, s.address, { verb: v, conf, containerId: id, netns: ns });

/** Calls of `pid` after `seq`. */
async function callsOf(pid: number, seq: number) {
  return (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === pid);
}

/**
 * HNS restarts; resolves once the service has handled the disconnect: its notification drops the handles, and the
 * registration made again after it wakes the node agent, whose pass is an audit (node-agent.ts hnsNotified).
 */
async function restartSeen(s: RunningService): Promise<number> {
  const audits = await auditedVisitOver(s);
  const seq = await lastSeq(h);
  await h.sim.control.restart();
  // The visit of the audit that the return of HNS wakes, to its end (its health check lists the endpoints too).
  await auditedVisitOver(s, audits);
  return seq;
}

async function expectNothingLeft(): Promise<void> {
  expect((await h.sim.control.dump()).endpoints).toEqual([]);
  for (const kind of ['attachments', 'intents', 'tombstones'] as const) expect(recordFiles(h, kind)).toEqual([]);
}

it('HNS restarting between two ADDs: the second opens the network again, and no old handle is used', async () => {
  const s = await start();
  const ns1 = await newNamespace(h);
  expect((await verb(s, 'ADD', 'a', ns1)).exitCode).toBe(0);
  const seq = await restartSeen(s);
  const ns2 = await newNamespace(h);
  expect((await verb(s, 'ADD', 'b', ns2)).exitCode).toBe(0);
  const after = await callsOf(s.child.pid!, seq);
  expect(after.filter((c) => c.fault === 'stale-handle')).toEqual([]);
  expect(after.map((c) => c.op)).toContain('HcnOpenNetwork');
  for (const [id, ns] of [
    ['a', ns1],
    ['b', ns2],
  ] as const)
    expect((await verb(s, 'DEL', id, ns)).exitCode).toBe(0);
  await expectNothingLeft();
});

it('HNS restarting between an ADD and its DEL: the DEL opens the namespace again, and no old handle is used', async () => {
  const s = await start();
  const ns = await newNamespace(h);
  expect((await verb(s, 'ADD', 'a', ns)).exitCode).toBe(0);
  const seq = await restartSeen(s);
  expect((await verb(s, 'DEL', 'a', ns)).exitCode).toBe(0);
  const after = await callsOf(s.child.pid!, seq);
  expect(after.filter((c) => c.fault === 'stale-handle')).toEqual([]);
  // The next pod in the same namespace, ADD and DEL, on fresh handles.
  expect((await verb(s, 'ADD', 'b', ns)).exitCode).toBe(0);
  const seq2 = await lastSeq(h);
  expect((await verb(s, 'DEL', 'b', ns)).exitCode).toBe(0);
  expect((await callsOf(s.child.pid!, seq2)).map((c) => c.op)).toEqual(SERVICE_DEL_OPS);
  await expectNothingLeft();
});

it('a hand-over between an ADD and its DEL: the new service detaches with HCN open + modify, then deletes (3 HCN calls)', async () => {
  const a = await start();
  const ns = await newNamespace(h);
  expect((await verb(a, 'ADD', 'a', ns)).exitCode).toBe(0);
  // The old service's node agent audits the directory first: the new one, served its configuration by the DEL, then
  // has no audit due (the interval from that one), so no visit of its own lands among the DEL's calls.
  await auditedVisitOver(a);
  // HNS assigns the address: no IPAM to release it to, so the DEL asks nobody who else holds it (address-book.ts).
  const b = await start(a.address);
  expect(await a.exited).toEqual({ code: 0, signal: null });
  const seq = await lastSeq(h);
  expect((await verb(b, 'DEL', 'a', ns)).exitCode).toBe(0);
  // The first verb of a process asks HNS its version once (the API choice: src/plugin/api-version.ts).
  expect((await callsOf(b.child.pid!, seq)).map((c) => c.op)).toEqual([
    'HNSCall GET /globals/version',
    'HcnOpenNamespace',
    'HcnModifyNamespace',
    'HcnDeleteEndpoint',
  ]);
  await expectNothingLeft();
});

describe('a handle HNS no longer knows, with no notification to say so', () => {
  async function setUp() {
    const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
    const held = new HeldHandles();
    const api = new V2Api(hcn, 'auto', held);
    const network: NetworkInfo = await api.createNetwork({
      name: 'held',
      type: 'L2Bridge',
      flags: 0,
      adapterName: 'Ethernet',
      subnets: [{ prefix: '10.9.0.0/24', gateway: '10.9.0.1' }],
      policies: [],
    });
    const spec = (name: string) => ({ name, ips: [], dns: { servers: [], search: [] }, policies: [] });
    return { hcn, held, api, network, spec };
  }

  it('is opened again and the call made once more: create, attach, detach all succeed', async () => {
    const { hcn, held, api, network, spec } = await setUp();
    const ns = await newNamespace(h);
    const first = await api.createEndpoint(network, spec('one'));
    await api.attachNamespace(first.id, ns);
    expect(held.size).toBe(2);
    // HNS restarts (its endpoints go with it); nobody tells this API.
    await h.sim.control.restart();
    const seq = await lastSeq(h);
    const second = await api.createEndpoint(network, spec('two'));
    await api.attachNamespace(second.id, ns);
    const ops = (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === process.pid);
    expect(ops.map((c) => [c.op, c.hr])).toEqual([
      ['HcnCreateEndpoint', HR.E_HANDLE],
      ['HcnOpenNetwork', 0],
      ['HcnCreateEndpoint', 0],
      ['HcnQueryEndpointProperties', 0],
      ['HcnModifyNamespace', HR.E_HANDLE],
      ['HcnOpenNamespace', 0],
      ['HcnModifyNamespace', 0],
    ]);
    expect(await api.detachNamespace(second.id, ns)).toBe('deleted');
    expect(await api.deleteEndpoint(second.id)).toBe('deleted');
    // The namespace's handle went with its last endpoint; the network's goes with the network.
    expect(held.size).toBe(1);
    await api.deleteNetwork(network.id);
    expect(held.size).toBe(0);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    expect(await hcn.listNamespaces()).toHaveLength(1);
  });

  it('is dropped by dropAll: the next call opens a new one and never uses the old', async () => {
    const { hcn, held, api, network, spec } = await setUp();
    await api.createEndpoint(network, spec('one'));
    await h.sim.control.restart();
    held.dropAll(hcn);
    expect(held.size).toBe(0);
    const seq = await lastSeq(h);
    await api.createEndpoint(network, spec('two'));
    const ops = (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === process.pid);
    expect(ops.map((c) => [c.op, c.hr])).toEqual([
      ['HcnOpenNetwork', 0],
      ['HcnCreateEndpoint', 0],
      ['HcnQueryEndpointProperties', 0],
    ]);
  });
});
