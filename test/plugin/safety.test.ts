/**
 * The ways the plugin could hurt a live pod or hand an IP out twice, each pinned by a scenario (found in review):
 *  - a state directory that does not know a pod (lost, or another conflist's) must not get that pod's endpoint
 *    deleted by an audit: an attached endpoint nothing says is gone is in use;
 *  - a DEL whose endpoint HNS refuses to delete keeps the IP allocated until the endpoint is really gone;
 *  - a DEL must not fail forever because the configured API is missing (the ADD failed for that very reason);
 *  - a leftover network of the pod itself on its NIC is reported as busy (104), not "try again" forever (11);
 *  - no IP is released on a listing that cannot show its holder (a delete HNS refused; a listing that failed);
 *  - a DEL without a record keeps its own network while that network holds an endpoint the DEL spared.
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { HR } from '../../src/hns/hresults';
import { nicNetworkName } from '../../src/orphans/ownership';
import { bridgeConf, cni, delegatedNicConf, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, newNamespace, recordFiles } from './support';

const NIC = { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' };
const HOST = { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, NIC] };

let h: Harness;
useHarness(HOST, (x) => (h = x));

const bridge = (extra: Record<string, unknown> = {}) =>
  bridgeConf({ cniVersion: '1.1.0', ipam: hostLocal(h), auditIntervalSeconds: 0, ...extra });

describe('safety', () => {
  it('an ADD with another state directory does not delete the live pods of the first (they are attached: in use)', async () => {
    const nsA = await newNamespace(h);
    const a = await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'pod-a', netns: nsA });
    expect(a.exitCode).toBe(0);
    // Same network, same HNS, a state directory that has never heard of pod-a (a second conflist, or a wiped one).
    const other = { stateDir: path.join(h.tmp, 'other-state') };
    const b = await cni(h, { verb: 'ADD', conf: bridge(other), containerId: 'pod-b', netns: await newNamespace(h) });
    expect(b.exitCode).toBe(0);
    const check = await cni(h, {
      verb: 'CHECK',
      conf: bridge({ prevResult: a.json }),
      containerId: 'pod-a',
      netns: nsA,
    });
    expect(check).toEqual({ exitCode: 0, stdout: '', json: undefined });
    expect((await h.sim.control.stats()).counts.endpoints).toBe(2);
  });

  it('a DEL that HNS refuses keeps the IP until the endpoint is gone; the next ADD removes it and then frees the IP', async () => {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'pod-a', netns: ns })).exitCode).toBe(0);
    const ip = Object.keys(heldIps(h, 'cbr0'))[0]!;
    await h.sim.control.failCall('HcnDeleteEndpoint', HR.E_FAIL);
    const del = await cni(h, { verb: 'DEL', conf: bridge(), containerId: 'pod-a', netns: ns });
    expect(del.exitCode).toBe(0);
    // The endpoint still holds the address in HNS: IPAM must not hand it out again.
    expect((await h.sim.control.stats()).counts.endpoints).toBe(1);
    expect(heldIps(h, 'cbr0')).toEqual({ [ip]: 'pod-a' });
    // The next ADD's audit removes the endpoint (its owner is tombstoned), then the kept address is released.
    const next = await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'pod-b', netns: await newNamespace(h) });
    expect(next.exitCode).toBe(0);
    expect((await h.sim.control.stats()).counts.endpoints).toBe(1);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['pod-b']);
  });

  it('a failed ADD whose endpoint HNS refuses to delete keeps the IP it allocated (the DEL after it releases it once the endpoint is gone)', async () => {
    const netns = await newNamespace(h);
    // The attach is refused, and so is the rollback's delete of the endpoint: it stays in HNS, holding the address.
    await h.sim.control.failCall('HcnModifyNamespace', 0x80070005); // E_ACCESSDENIED
    await h.sim.control.failCall('HcnDeleteEndpoint', 0x80070005);
    const add = await cni(h, { verb: 'ADD', conf: bridge({ audit: false }), containerId: 'pod-half', netns });
    expect(add.exitCode).not.toBe(0);
    const endpoints = (await h.sim.control.dump()).endpoints.filter((e) => String(e.Name).startsWith('hcn-ep-'));
    expect(endpoints).toHaveLength(1);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['pod-half']);
    // The runtime's DEL after the failed ADD: the endpoint goes, then the address.
    expect(
      (await cni(h, { verb: 'DEL', conf: bridge({ audit: false }), containerId: 'pod-half', netns })).exitCode,
    ).toBe(0);
    expect((await h.sim.control.dump()).endpoints.filter((e) => String(e.Name).startsWith('hcn-ep-'))).toEqual([]);
    expect(heldIps(h, 'cbr0')).toEqual({});
  });

  it('DEL after an ADD that failed for want of HCN (apiVersion 2 on a v1-only host) exits 0 and releases IPAM', async () => {
    await h.sim.control.setVersion(7, 2, { v2: false });
    try {
      const conf = bridge({ apiVersion: 2 });
      const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-x', netns: 'none' });
      expect(add.json).toMatchObject({ code: 107 });
      const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-x', netns: 'none' });
      expect(del).toEqual({ exitCode: 0, stdout: '', json: undefined });
      expect(heldIps(h, 'cbr0')).toEqual({});
    } finally {
      await h.sim.control.setVersion(15, 4, { v2: true });
    }
  });

  it('a DEL whose endpoint delete HNS refuses keeps the IP even when the listing does not show the address', async () => {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'pod-a', netns: ns })).exitCode).toBe(0);
    const ip = Object.keys(heldIps(h, 'cbr0'))[0]!;
    await h.sim.control.failCall('HcnDeleteEndpoint', HR.E_FAIL);
    // The listing after the refusal shows the endpoint without its addresses: only the refusal says it holds one.
    listingWithoutAddresses();
    expect((await cni(h, { verb: 'DEL', conf: bridge(), containerId: 'pod-a', netns: ns })).exitCode).toBe(0);
    expect((await h.sim.control.stats()).counts.endpoints).toBe(1);
    expect(heldIps(h, 'cbr0')).toEqual({ [ip]: 'pod-a' });
    expect(tombstone()).toMatchObject({ ipamPending: true });
  });

  it('a DEL whose endpoint listing fails (HNS reachable) keeps the IP; the next audit that lists HNS releases it', async () => {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'pod-a', netns: ns })).exitCode).toBe(0);
    const ip = Object.keys(heldIps(h, 'cbr0'))[0]!;
    // The listing that would show whether another endpoint holds the address, after the delete, fails.
    await h.sim.control.failCall('HNSCall GET /endpoints', HR.E_FAIL);
    expect((await cni(h, { verb: 'DEL', conf: bridge(), containerId: 'pod-a', netns: ns })).exitCode).toBe(0);
    expect((await h.sim.control.stats()).counts.endpoints).toBe(0);
    expect(heldIps(h, 'cbr0')).toEqual({ [ip]: 'pod-a' });
    const tomb = tombstone();
    expect(tomb.ipamPending).toBe(true);
    expect(tomb.heldBy ?? []).toEqual([]);
    const next = await cni(h, { verb: 'ADD', conf: bridge(), containerId: 'pod-b', netns: await newNamespace(h) });
    expect(next.exitCode).toBe(0);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['pod-b']);
  });

  it('a DEL without a record keeps its own NIC network while it holds an endpoint the DEL spared (attached elsewhere)', async () => {
    const conf = delegatedNicConf(NIC.MacAddress, { audit: false });
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-n', netns: ns })).exitCode).toBe(0);
    const before = await h.sim.control.dump();
    expect(before.networks.map((n) => n.Name)).toContain(nicNetworkName({ containerId: 'pod-n', ifname: 'eth0' }));
    for (const f of recordFiles(h, 'attachments')) fs.rmSync(path.join(h.stateDir, 'attachments', f));
    // Deleting the network would take the endpoint along (HNS cascades): the DEL names another namespace.
    const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-n', netns: await newNamespace(h) });
    expect(del.exitCode).toBe(0);
    const after = await h.sim.control.dump();
    expect(after.endpoints.map((e) => e.ID)).toEqual(before.endpoints.map((e) => e.ID));
    expect(after.networks.map((n) => n.ID).sort()).toEqual(before.networks.map((n) => n.ID).sort());
  });

  it("a network of the pod's own left on its NIC (audit off) is NIC busy, 104 — not 11 from its own running ADD", async () => {
    const owner = { containerId: 'pod-n', ifname: 'eth0' };
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNetwork(
      {
        Name: nicNetworkName(owner),
        Type: 'Transparent',
        Flags: 8,
        Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: NIC.Name } }],
      },
      randomUUID(),
    );
    const conf = {
      cniVersion: '1.1.0',
      name: 'nic',
      type: 'hcn-cni',
      mode: 'delegatedNic',
      subnet: '10.10.2.0/24',
      audit: false,
      runtimeConfig: { mac: NIC.MacAddress },
    };
    const r = await cni(h, { verb: 'ADD', conf, containerId: 'pod-n', netns: 'none' });
    expect(r.json).toMatchObject({ code: 104, msg: expect.stringMatching(/left behind by pod-n@eth0/) });
  });
});

/** The one tombstone of the state directory. */
function tombstone(): { ipamPending?: boolean; heldBy?: unknown[] } {
  const [file] = recordFiles(h, 'tombstones');
  return JSON.parse(fs.readFileSync(path.join(h.stateDir, 'tombstones', file!), 'utf8'));
}

/** From now on, the plugin's endpoint listings show every endpoint without its addresses. */
function listingWithoutAddresses(): void {
  const rt = h.deps;
  const choose = rt.hns.api.bind(rt.hns);
  rt.hns.api = async (conf) => {
    const choice = await choose(conf);
    const list = choice.api.listEndpoints.bind(choice.api);
    choice.api.listEndpoints = async () => (await list()).map((e) => ({ ...e, ips: [] }));
    return choice;
  };
}
