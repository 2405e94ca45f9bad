/**
 * Bridge mode end to end in process: ADD creates one endpoint per attachment in the shared network and attaches it
 * where the netns says; a repeated ADD returns the same result and allocates nothing; CHECK verifies in HNS; DEL
 * removes everything and is idempotent.
 */
import { randomUUID } from 'crypto';
import { bridgeConf, cni, useHarness, stateFiles, type Harness } from '../helpers/cni-harness';
import { endpointName } from '../../src/orphans/ownership';

let h: Harness;
useHarness(undefined, (x) => (h = x));

async function newNamespace(): Promise<string> {
  const id = randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

describe('bridge mode', () => {
  it('ADD creates the network when asked, one endpoint, attached to the HCN namespace', async () => {
    const ns = await newNamespace();
    const add = await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-a', netns: ns });
    expect(add.exitCode).toBe(0);
    const r = add.json as {
      cniVersion: string;
      interfaces: Array<{ name: string; mac: string; sandbox: string }>;
      ips: Array<{ address: string; gateway: string; interface: number }>;
      routes: unknown[];
    };
    expect(r.cniVersion).toBe('1.0.0');
    expect(r.interfaces).toEqual([
      { name: 'eth0', mac: expect.stringMatching(/^00:15:5d(:[0-9a-f]{2}){3}$/), sandbox: ns },
    ]);
    expect(r.ips).toEqual([
      { address: expect.stringMatching(/^10\.244\.1\.\d+\/24$/), gateway: '10.244.1.1', interface: 0 },
    ]);
    expect(r.routes).toEqual([{ dst: '0.0.0.0/0', gw: '10.244.1.1' }]);

    const dump = await h.sim.control.dump();
    expect(dump.networks.map((n) => [n.Name, n.Type])).toEqual([['cbr0', 'L2Bridge']]);
    expect(dump.endpoints).toHaveLength(1);
    const ep = dump.endpoints[0]!;
    expect(ep.Name).toMatch(endpointName({ containerId: 'pod-a', ifname: 'eth0' }));
    expect(ep.CreatedBy).toBe('v2');
    expect(String(ep.HostComputeNamespace).toLowerCase()).toBe(ns);
    expect(stateFiles(h)).toEqual(['attachments/pod-a@eth0.json']);
  });

  it('a repeated ADD returns the same result, creates nothing, and re-attaches a detached endpoint', async () => {
    const ns = await newNamespace();
    const first = await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-b', netns: ns });
    expect(first.exitCode).toBe(0);
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).removeNamespaceEndpoint(ns, String(ep.ID));
    const callsBefore = (await h.sim.control.stats()).calls;
    const again = await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-b', netns: ns });
    expect(again.exitCode).toBe(0);
    expect(again.json).toEqual(first.json);
    const after = await h.sim.control.stats();
    expect(after.calls.HcnCreateEndpoint ?? 0).toBe(callsBefore.HcnCreateEndpoint ?? 0);
    expect(after.counts.endpoints).toBe(1);
    const now = (await h.sim.control.dump()).endpoints[0]!;
    expect(String(now.HostComputeNamespace).toLowerCase()).toBe(ns);
  });

  it('CHECK passes on a healthy attachment and fails when HNS lost the endpoint', async () => {
    const ns = await newNamespace();
    const add = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ cniVersion: '1.1.0' }),
      containerId: 'pod-c',
      netns: ns,
    });
    expect(add.exitCode).toBe(0);
    const ok = await cni(h, {
      verb: 'CHECK',
      conf: bridgeConf({ cniVersion: '1.1.0', prevResult: add.json }),
      containerId: 'pod-c',
      netns: ns,
    });
    expect(ok).toEqual({ exitCode: 0, stdout: '', json: undefined });

    const wrongIp = { ...(add.json as object), ips: [{ address: '10.244.1.250/24', gateway: '10.244.1.1' }] };
    const bad = await cni(h, {
      verb: 'CHECK',
      conf: bridgeConf({ cniVersion: '1.1.0', prevResult: wrongIp }),
      containerId: 'pod-c',
      netns: ns,
    });
    expect(bad.exitCode).toBe(1);
    expect(bad.json).toMatchObject({
      code: 105,
      msg: expect.stringMatching(/prevResult IP 10\.244\.1\.250 is not on endpoint/),
    });

    const ep = (await h.sim.control.dump()).endpoints[0]!;
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).deleteEndpoint(String(ep.ID));
    const gone = await cni(h, {
      verb: 'CHECK',
      conf: bridgeConf({ cniVersion: '1.1.0', prevResult: add.json }),
      containerId: 'pod-c',
      netns: ns,
    });
    expect(gone.json).toMatchObject({ code: 105, msg: expect.stringMatching(/is missing from HNS/) });
  });

  it('DEL removes the endpoint and the record; a second DEL, and a DEL without netns, succeed', async () => {
    const ns = await newNamespace();
    expect((await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-d', netns: ns })).exitCode).toBe(0);
    const del = await cni(h, { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-d', netns: ns });
    expect(del).toEqual({ exitCode: 0, stdout: '', json: undefined });
    const dump = await h.sim.control.dump();
    expect(dump.endpoints).toEqual([]);
    expect(dump.networks.map((n) => n.Name)).toEqual(['cbr0']); // the shared network stays
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/'))).toEqual([]);
    expect((await cni(h, { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-d', netns: ns })).exitCode).toBe(0);
    expect((await cni(h, { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-d', netns: undefined })).exitCode).toBe(
      0,
    );
  });

  it('a missing network is error 101 unless createNetwork is set, and nothing is left behind', async () => {
    const ns = await newNamespace();
    const r = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ createNetwork: false, networkName: 'nope' }),
      containerId: 'pod-e',
      netns: ns,
    });
    expect(r.json).toMatchObject({
      code: 101,
      msg: 'HNS network "nope" does not exist; create it, or set "createNetwork": true with a "subnet"',
    });
    expect((await h.sim.control.stats()).counts).toMatchObject({ networks: 0, endpoints: 0 });
    expect(stateFiles(h).filter((f) => !f.startsWith('tombstones/'))).toEqual([]);
  });
});

describe('network types', () => {
  it.each(['L2Bridge', 'Overlay', 'NAT', 'L2Tunnel'])(
    'creates a %s network when asked, and the next pod finds it by name',
    async (type) => {
      const conf = bridgeConf({ networkName: `net-${type.toLowerCase()}`, networkType: type, subnet: '10.99.0.0/24' });
      const first = await cni(h, { verb: 'ADD', conf, containerId: 'pod-1', netns: await newNamespace() });
      expect(first.exitCode).toBe(0);
      const second = await cni(h, { verb: 'ADD', conf, containerId: 'pod-2', netns: await newNamespace() });
      expect(second.exitCode).toBe(0);
      const dump = await h.sim.control.dump();
      // v2 views omit a zero-valued enum: NAT has no Type.
      expect(dump.networks.map((n) => [n.Name, n.Type ?? 'NAT'])).toEqual([[`net-${type.toLowerCase()}`, type]]);
      expect(dump.endpoints).toHaveLength(2);
      expect(
        new Set(dump.endpoints.map((e) => String((e.IpConfigurations as Array<{ IpAddress: string }>)[0]!.IpAddress)))
          .size,
      ).toBe(2);
    },
  );
});
