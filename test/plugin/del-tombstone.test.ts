/**
 * DEL without a record must leave a tombstone, not merely drop the intent: the tombstone is what tells a later audit
 * that the pod is gone. The case that needs it: an ADD killed once HNS had attached its endpoint (HNS finishes a call
 * whose caller died), and a DEL that HNS refused to detach. The endpoint is then attached, with no record and no
 * intent; without the tombstone it looks exactly like a live pod of a lost state directory (protected, never
 * deleted) and stays forever. The kill and the refusal are simulator faults, so the sequence is deterministic.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { EndpointInfo, HnsApi } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import { deleteUnrecorded } from '../../src/plugin/verbs/del-unrecorded';
import { StateStore } from '../../src/state/store';
import type { IntentRecord, TombstoneRecord } from '../../src/state/records';
import { bridgeConf, cni, cniProcess, useHarness, type Harness } from '../helpers/cni-harness';
import { DETACH_OP, newNamespace, recordFiles } from './support';
import { endpointName } from '../../src/orphans/ownership';
import { intentRecord } from '../helpers/state-records';

let h: Harness;
useHarness(undefined, (x) => (h = x));

// The next ADD's whole-node audit is what these tests are about: 0 makes it due on every ADD (audit-due.ts).
const conf = bridgeConf({ cniVersion: '1.1.0', auditIntervalSeconds: 0 });

function readJson<T>(dir: 'intents' | 'tombstones'): T {
  return JSON.parse(fs.readFileSync(path.join(h.stateDir, dir, 'pod-killed@eth0.json'), 'utf8')) as T;
}

async function endpointsOf(pod: string): Promise<Array<{ id: string; attached: boolean }>> {
  const dump = await h.sim.control.dump();
  return dump.endpoints
    .filter((e) => e.Name === endpointName({ containerId: pod, ifname: 'eth0' }))
    .map((e) => ({ id: e.ID.toLowerCase(), attached: !!e.HostComputeNamespace }));
}

describe('DEL without a record', () => {
  it('tombstones the owner (voiding its intent by id) and keeps what the intent planned', async () => {
    const ns = await newNamespace(h);
    // Killed when HNS accepted the attach: the endpoint exists and is attached, the intent is still on disk.
    await h.sim.control.killClient('HcnModifyNamespace');
    const add = await cniProcess(h, { verb: 'ADD', conf, containerId: 'pod-killed', netns: ns });
    expect(add.signal).toBe('SIGKILL');
    expect(recordFiles(h, 'intents')).toEqual(['pod-killed@eth0.json']);
    const intent = readJson<IntentRecord>('intents');
    const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-killed', netns: ns });
    expect(del.exitCode).toBe(0);
    expect(recordFiles(h, 'intents')).toEqual([]);
    expect(recordFiles(h, 'tombstones')).toEqual(['pod-killed@eth0.json']);
    const tomb = readJson<TombstoneRecord>('tombstones');
    expect(tomb.voids).toEqual([intent.id]);
    expect(tomb.planned).toEqual(expect.arrayContaining(intent.planned));
  });

  it('after an ADD killed at its attach and a DEL that HNS refused to detach, the next audit removes the endpoint', async () => {
    const ns = await newNamespace(h);
    await h.sim.control.killClient('HcnModifyNamespace');
    const add = await cniProcess(h, { verb: 'ADD', conf, containerId: 'pod-killed', netns: ns });
    expect(add.signal).toBe('SIGKILL');
    const [leaked] = await endpointsOf('pod-killed');
    expect(leaked).toMatchObject({ attached: true });

    // HNS refuses the detach: the DEL still exits 0 (best effort) and leaves the audit to finish.
    await h.sim.control.failCall(DETACH_OP, 0x80070005); // E_ACCESSDENIED
    const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-killed', netns: ns });
    expect(del.exitCode).toBe(0);
    expect(await endpointsOf('pod-killed')).toEqual([leaked]);

    // The next pod's ADD audits HNS: the attached endpoint of a pod whose DEL ran is an orphan, not a live pod.
    const next = await cni(h, { verb: 'ADD', conf, containerId: 'pod-next', netns: await newNamespace(h) });
    expect(next.exitCode).toBe(0);
    expect(await endpointsOf('pod-killed')).toEqual([]);
  });

  it('a repeated DEL (nothing of the pod left, no intent) lists HNS once, and still exits 0 with its tombstone', async () => {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-again', netns: ns })).exitCode).toBe(0);
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-again', netns: ns })).exitCode).toBe(0);
    const listings = async () => {
      const calls = (await h.sim.control.stats()).calls;
      return (calls['HNSCall GET /endpoints'] ?? 0) + (calls['HcnEnumerateEndpoints'] ?? 0);
    };
    const before = await listings();
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-again', netns: ns })).exitCode).toBe(0);
    expect((await listings()) - before).toBe(1);
    expect(recordFiles(h, 'tombstones')).toContain('pod-again@eth0.json');
  });
});

describe('DEL without a record, against a listing (in process)', () => {
  const owner = { containerId: 'sandbox-a', ifname: 'eth0' };
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-del-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** HNS listing `listed`; records what the DEL deletes and hot-detaches. */
  function hns(listed: EndpointInfo[]) {
    const done: string[] = [];
    const api = {
      listEndpoints: async () => listed.filter((e) => !done.includes(`delete ${e.id}`)),
      listNetworks: async () => [],
      hotAttachUnavailable: () => false,
      hotDetach: async (id: string, container: string) => void done.push(`detach ${id} ${container}`),
      detachNamespace: async (id: string, ns: string) => void done.push(`detach ${id} ${ns}`),
      deleteEndpoint: async (id: string) => (done.push(`delete ${id}`), 'deleted' as const),
      deleteNetwork: async (id: string) => (done.push(`delete ${id}`), 'deleted' as const),
    } as unknown as HnsApi;
    return { api, done };
  }
  const named = (containers: string[]): EndpointInfo => ({
    id: 'e-1',
    name: endpointName(owner),
    networkId: 'n',
    ips: [],
    containers,
  });

  it("leaves an endpoint with the owner's name hot-attached to another container, and keeps the IP", async () => {
    const { api, done } = hns([named(['sandbox-b'])]);
    const store = new StateStore(dir, { os: hostOs(), now: Date.now });
    const out = await deleteUnrecorded({ api, store, log: silentLogger }, owner, { netns: 'none' });
    expect(done).toEqual([]);
    expect(out.endpointGone).toBe(false);
    expect(store.getTombstone(owner)?.ipamPending).toBe(true);
  });

  it("detaches from the owner's own container, then deletes, the endpoint hot-attached to it", async () => {
    const { api, done } = hns([named(['sandbox-a'])]);
    const store = new StateStore(dir, { os: hostOs(), now: Date.now });
    const out = await deleteUnrecorded({ api, store, log: silentLogger }, owner, { netns: 'none' });
    expect(done).toEqual(['detach e-1 sandbox-a', 'delete e-1']);
    expect(out.endpointGone).toBe(true);
  });
  it('a dead intent planned an endpoint id the first listing did not show: the IP is released only on a listing made after the deletes', async () => {
    // The ADD's create is still in flight inside HNS: the first listing shows nothing of the owner, the delete by the
    // planned id finds nothing, and then HNS completes the create.
    const late: EndpointInfo = { id: 'e-late', name: endpointName(owner), networkId: 'n', ips: [] };
    let listings = 0;
    const api = {
      listEndpoints: async () => (listings++ === 0 ? [] : [late]),
      listNetworks: async () => [],
      hotAttachUnavailable: () => false,
      deleteEndpoint: async () => 'not-found' as const,
      deleteNetwork: async () => 'not-found' as const,
    } as unknown as HnsApi;
    const store = new StateStore(dir, { os: hostOs(), now: Date.now });
    const planned = [{ kind: 'endpoint' as const, name: late.name, id: 'e-late' }];
    // The ADD's process is gone (a pid that does not run): its intent is dead.
    await store.writeIntent({ ...intentRecord('i-dead', { owner, planned }), pid: 2 ** 22 + 17 });
    const out = await deleteUnrecorded({ api, store, log: silentLogger }, owner, { netns: 'none' });
    expect(listings).toBe(2);
    expect(out.endpointGone).toBe(false);
    expect(store.getTombstone(owner)).toMatchObject({ ipamPending: true, planned: expect.arrayContaining(planned) });
  });
});
