/**
 * The ways the plugin could hurt a live pod or hand an IP out twice, each pinned by a scenario (found in review):
 *  - a state directory that does not know a pod (lost, or another conflist's) must not get that pod's endpoint
 *    deleted by an audit: an attached endpoint nothing says is gone is in use;
 *  - a DEL whose endpoint HNS refuses to delete keeps the IP allocated until the endpoint is really gone;
 *  - a DEL must not fail forever because the configured API is missing (the ADD failed for that very reason);
 *  - a leftover network of the pod itself on its NIC is reported as busy (104), not "try again" forever (11).
 */
import { randomUUID } from 'crypto';
import * as path from 'path';
import { HR } from '../../src/hns/hresults';
import { nicNetworkName } from '../../src/orphans/ownership';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, newNamespace } from './support';

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

  it("a network of the pod's own left on its NIC (audit off) is NIC busy, 104 — not 11 from its own running ADD", async () => {
    const owner = { containerId: 'pod-n', ifname: 'eth0' };
    await h.runtime.hcn({ hnsTimeoutSeconds: 10 }).createNetwork(
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
