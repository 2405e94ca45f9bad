/**
 * A network of ours is never deleted while an endpoint nobody condemned is on it: HNS (hcn-sim's default) takes a
 * network's endpoints along when it is deleted. Another plugin's endpoint on a delegated-NIC pod's network, attached
 * to a namespace the pod does not hold, outlives the pod's DEL, GC (what `hcn-cni uninstall` runs) and the audit's
 * sweep; the network stays, unclaimed, and the first audit after it is empty deletes it.
 */
import { silentLogger } from '../../src/log/logger';
import type { Judged } from '../../src/orphans/detect';
import { nicNetworkName } from '../../src/orphans/ownership';
import { sweep } from '../../src/orphans/sweep';
import { cni, delegatedNicConf, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, recordFiles } from './support';

const NIC = { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' };
const HOST = { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, NIC] };

let h: Harness;
useHarness(HOST, (x) => (h = x));

const hcn = () => h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
const conf = (extra: Record<string, unknown> = {}) =>
  delegatedNicConf(NIC.MacAddress, { audit: false, stateDir: h.stateDir, ...extra });
const ids = async (kind: 'networks' | 'endpoints') =>
  (await h.sim.control.dump())[kind].map((o) => (o.ID as string).toLowerCase());

/** A pod on its own NIC network, and another plugin's endpoint on that network, attached to another namespace. */
async function podWithForeignNeighbour(): Promise<{ network: string; foreign: string; netns: string }> {
  const netns = await newNamespace(h);
  expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-n', netns })).exitCode).toBe(0);
  const name = nicNetworkName({ containerId: 'pod-n', ifname: 'eth0' });
  const network = (await hcn().findNetworkByName(name))!.ID as string;
  const foreign = (
    await hcn().createEndpoint(network, {
      Name: 'another-plugins-endpoint',
      IpConfigurations: [{ IpAddress: '10.10.3.50', PrefixLength: 24 }],
    })
  ).ID as string;
  await hcn().addNamespaceEndpoint(await newNamespace(h), foreign);
  return { network: network.toLowerCase(), foreign: foreign.toLowerCase(), netns };
}

/** GC with no attachment valid: every record of the network goes, as `hcn-cni uninstall --force` has it. */
const gcNone = () => cni(h, { verb: 'GC', conf: conf({ 'cni.dev/valid-attachments': [] }), netns: '' });

describe('a network of ours with an endpoint of someone else on it', () => {
  it("the pod's DEL deletes its endpoint and leaves the network and the other endpoint; an audit removes it once empty", async () => {
    const { network, foreign, netns } = await podWithForeignNeighbour();
    const del = await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-n', netns });
    expect(del.exitCode).toBe(0);
    expect([await ids('endpoints'), await ids('networks')]).toEqual([[foreign], expect.arrayContaining([network])]);
    expect([recordFiles(h, 'attachments'), recordFiles(h, 'tombstones')]).toEqual([[], []]);
    // Nothing leaks: unclaimed and named by us, the network is protected while in use, deleted once empty.
    expect((await gcNone()).exitCode).toBe(0);
    expect(await ids('networks')).toContain(network);
    await hcn().deleteEndpoint(foreign);
    expect((await gcNone()).exitCode).toBe(0);
    expect(await ids('networks')).not.toContain(network);
  });

  it('GC by record (what uninstall runs) leaves the network and the other endpoint', async () => {
    const { network, foreign } = await podWithForeignNeighbour();
    const gc = await gcNone();
    expect(gc.exitCode).toBe(0);
    expect([await ids('endpoints'), await ids('networks')]).toEqual([[foreign], expect.arrayContaining([network])]);
    expect(recordFiles(h, 'attachments')).toEqual([]);
  });

  it("the audit's sweep leaves an orphan network an endpoint joined after the listing", async () => {
    const name = nicNetworkName({ containerId: 'ghost', ifname: 'eth0' });
    const net = await hcn().createNetwork({
      Name: name,
      Type: 'Transparent',
      Flags: 8,
      Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: NIC.Name } }],
    });
    const judged: Judged = { kind: 'network', id: net.ID as string, name, verdict: 'orphan', reason: 'test' };
    // Judged an orphan on a listing that showed it empty; another plugin's endpoint arrives before the delete.
    const foreign = (await hcn().createEndpoint(net.ID as string, { Name: 'late-arrival' })).ID as string;
    const { api } = await h.deps.hns.api({ apiVersion: 'auto', hnsTimeoutSeconds: 10 });
    const result = await sweep(
      { judged: [judged], endpoints: [], networks: [judged] },
      { api, log: silentLogger, stillOrphan: () => true },
    );
    expect([result.deleted, result.skipped.map((s) => s.reason)]).toEqual([[], ['an endpoint is on it now']]);
    expect([await ids('endpoints'), await ids('networks')]).toEqual([
      [foreign.toLowerCase()],
      expect.arrayContaining([(net.ID as string).toLowerCase()]),
    ]);
  });
});
