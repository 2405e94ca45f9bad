/**
 * Two container ids can share an owner tag in the previous version's short names (48 bits of FNV-1a: such pairs are
 * found in about a minute), and so share HNS names. A DEL, GC or audit must never delete an object that another
 * owner's committed record names by id, or that is attached to a namespace or container the deleting owner does not
 * hold. The pods below are the pair the adversarial round found; the live pod B is added the way the previous
 * version added it (its endpoint carries the short name), then a DEL comes for pod A, which was never added — a
 * routine event (kubelet tears down sandboxes whose ADD failed).
 */
import * as fs from 'fs';
import * as path from 'path';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { legacyEndpointName } from '../helpers/legacy-names';
import { newNamespace, recordFiles } from './support';

// Pod B's ADD names its endpoint as the previous version did.
jest.mock('../../src/orphans/ownership', () => {
  const actual = jest.requireActual<typeof import('../../src/orphans/ownership')>('../../src/orphans/ownership');
  return { ...actual, endpointName: (o: { containerId: string; ifname: string }) => oldName(o) };
});
let oldNames = false;
function oldName(o: { containerId: string; ifname: string }): string {
  const actual = jest.requireActual<typeof import('../../src/orphans/ownership')>('../../src/orphans/ownership');
  return oldNames ? actual.shortNameOfPreviousVersion('endpoint', o) : actual.endpointName(o);
}

let h: Harness;
useHarness(undefined, (x) => (h = x));

const A = '5e1f0c2d9a7b4c3e8f6a1b2c3d4e5f60718293a4b5c6d7e800000000017afdc9';
const B = '5e1f0c2d9a7b4c3e8f6a1b2c3d4e5f60718293a4b5c6d7e80000000003efec01';
const conf = bridgeConf({ cniVersion: '1.1.0' });

async function endpoints(): Promise<Array<{ name: string; id: string; ns: string }>> {
  return (await h.sim.control.dump()).endpoints.map((e) => ({
    name: String(e.Name),
    id: e.ID.toLowerCase(),
    ns: String(e.HostComputeNamespace ?? '').toLowerCase(),
  }));
}

/** Pod B, live, added by the previous version; returns its namespace and its CNI result. */
async function liveOldPodB(): Promise<{ ns: string; result: Record<string, unknown> }> {
  const ns = await newNamespace(h);
  oldNames = true;
  try {
    const add = await cni(h, { verb: 'ADD', conf, containerId: B, netns: ns });
    expect(add.exitCode).toBe(0);
    expect((await endpoints()).map((e) => e.name)).toEqual([expect.stringMatching(/^hcn-ep-[0-9a-f]{16}$/)]);
    return { ns, result: add.json! };
  } finally {
    oldNames = false;
  }
}

describe("a colliding owner tag of the previous version's names", () => {
  it('the pair shares its old endpoint name (the scene is real), and not its new one', () => {
    const own = jest.requireActual<typeof import('../../src/orphans/ownership')>('../../src/orphans/ownership');
    const a = { containerId: A, ifname: 'eth0' };
    const b = { containerId: B, ifname: 'eth0' };
    expect(own.shortNameOfPreviousVersion('endpoint', a)).toBe(own.shortNameOfPreviousVersion('endpoint', b));
    expect(own.endpointName(a)).not.toBe(own.endpointName(b));
  });

  it("a DEL of a never-added pod leaves the live pod's attached endpoint, and B's CHECK still passes", async () => {
    const b = await liveOldPodB();
    const before = await endpoints();
    expect(before).toHaveLength(1);
    const del = await cni(h, { verb: 'DEL', conf, containerId: A, netns: await newNamespace(h) });
    expect(del.exitCode).toBe(0);
    expect(await endpoints()).toEqual(before);
    const check = await cni(h, { verb: 'CHECK', conf: { ...conf, prevResult: b.result }, containerId: B, netns: b.ns });
    expect(check.exitCode).toBe(0);
    // The next ADD's audit (A's tombstone carries the colliding tag) leaves it too.
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-c', netns: await newNamespace(h) })).exitCode).toBe(0);
    expect((await endpoints()).map((e) => e.id)).toContain(before[0]!.id);
  });

  it("a DEL that even names B's namespace leaves the endpoint B's committed record names by id", async () => {
    const b = await liveOldPodB();
    const before = await endpoints();
    expect((await cni(h, { verb: 'DEL', conf, containerId: A, netns: b.ns })).exitCode).toBe(0);
    expect(await endpoints()).toEqual(before);
    expect(
      (
        await cni(h, {
          verb: 'GC',
          conf: { ...conf, 'cni.dev/valid-attachments': [{ containerID: B, ifname: 'eth0' }] },
        })
      ).exitCode,
    ).toBe(0);
    expect(await endpoints()).toEqual(before);
  });

  it("with B's record lost, the DEL of A and every later audit and GC leave B's attached endpoint", async () => {
    await liveOldPodB();
    const before = await endpoints();
    for (const f of recordFiles(h, 'attachments')) fs.rmSync(path.join(h.stateDir, 'attachments', f));
    expect((await cni(h, { verb: 'DEL', conf, containerId: A, netns: await newNamespace(h) })).exitCode).toBe(0);
    expect(await endpoints()).toEqual(before);
    expect(recordFiles(h, 'tombstones')).toHaveLength(1);
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-c', netns: await newNamespace(h) })).exitCode).toBe(0);
    expect((await cni(h, { verb: 'GC', conf: { ...conf, 'cni.dev/valid-attachments': [] } })).exitCode).toBe(0);
    expect((await endpoints()).map((e) => e.id)).toContain(before[0]!.id);
  });
});

describe('a DEL without a record of our own pod', () => {
  it('deletes the endpoint attached to the namespace the DEL names', async () => {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-d', netns: ns })).exitCode).toBe(0);
    for (const f of recordFiles(h, 'attachments')) fs.rmSync(path.join(h.stateDir, 'attachments', f));
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-d', netns: ns })).exitCode).toBe(0);
    expect(await endpoints()).toEqual([]);
  });

  it('leaves an endpoint attached to another namespace than the DEL names, keeping its IP for later', async () => {
    const ns = await newNamespace(h);
    const ipam = { type: 'host-local', ranges: [[{ subnet: '10.244.1.0/24' }]], dataDir: path.join(h.tmp, 'ipam') };
    const withIpam = { ...conf, ipam };
    expect((await cni(h, { verb: 'ADD', conf: withIpam, containerId: 'pod-e', netns: ns })).exitCode).toBe(0);
    const before = await endpoints();
    for (const f of recordFiles(h, 'attachments')) fs.rmSync(path.join(h.stateDir, 'attachments', f));
    expect((await cni(h, { verb: 'DEL', conf: withIpam, containerId: 'pod-e', netns: '' })).exitCode).toBe(0);
    expect(await endpoints()).toEqual(before);
    // The IP the endpoint holds is not released while it holds it.
    const ips = fs.readdirSync(path.join(h.tmp, 'ipam', 'cbr0')).filter((f) => /^\d+\./.test(f));
    expect(ips).toHaveLength(1);
    const tomb = JSON.parse(
      fs.readFileSync(path.join(h.stateDir, 'tombstones', recordFiles(h, 'tombstones')[0]!), 'utf8'),
    ) as { ipamPending?: boolean };
    expect(tomb.ipamPending).toBe(true);
  });

  it('leaves the endpoint an earlier version named for another interface of the same pod, in the same namespace', async () => {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'other', netns: await newNamespace(h) })).exitCode).toBe(0);
    // pod/eth0, added by a version that spelled the owner out in the name, attached to the pod's namespace.
    const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
    const net = (await h.sim.control.dump()).networks.find((n) => n.Name === 'cbr0')!;
    const eth0 = await hcn.createEndpoint(net.ID, { Name: legacyEndpointName('pod', 'eth0') });
    await hcn.addNamespaceEndpoint(ns, String(eth0.ID));
    const before = await endpoints();
    // The DEL of the pod's second interface names the same namespace.
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod', ifname: 'eth1', netns: ns })).exitCode).toBe(0);
    expect(await endpoints()).toEqual(before);
  });
});
