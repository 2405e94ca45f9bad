/**
 * The rules a real HNS enforces, held on the simulator (not a test against real HNS): delegated-NIC networks flagged
 * as Azure CNI flags them and gated by HNS version as hcsshim gates them, the NIC chosen among physical adapters
 * only, MTU and DSR gated by version, loopback DSR with HNS-assigned addresses, and v1 as v1 is.
 */
import { randomUUID } from 'crypto';
import type { SimDump } from '../../src/sim';
import { nicNetworkName } from '../../src/orphans/ownership';
import { pluginDeps } from '../../src/plugin/deps';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';

const NIC = { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' };
let h: Harness;
// v1ErrorCodes false: failed HNSCall envelopes carry only {Success, Error}, the shape hcsshim's hnsResponse reads.
useHarness(
  { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, NIC], v1ErrorCodes: false },
  (x) => (h = x),
);

async function namespace(): Promise<string> {
  const id = randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

function nicConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.0.0',
    name: 'nic',
    type: 'hcn-cni',
    mode: 'delegatedNic',
    subnet: '10.9.0.0/24',
    runtimeConfig: { mac: NIC.MacAddress },
    ...extra,
  };
}

// The simulator's reset keeps the host: every test starts on HNS 15.4.
afterEach(async () => {
  await h.sim.control.setVersion(15, 4);
});

const policyTypes = (e: SimDump['endpoints'][number]) =>
  ((e.Policies ?? []) as Array<{ Type: string }>).map((p) => p.Type);

describe('delegated-NIC networks as Azure CNI makes FrontendNIC networks', () => {
  it('HNS 15.4: Transparent, EnableNonPersistent | DisableHostPort (no host vNIC on the pod NIC); iov adds EnableIov and the Iov policy', async () => {
    const add = await cni(h, {
      verb: 'ADD',
      conf: nicConf({ iov: true }),
      containerId: 'pod-iov',
      netns: await namespace(),
    });
    expect(add.exitCode).toBe(0);
    const dump = await h.sim.control.dump();
    expect(dump.networks).toEqual([
      expect.objectContaining({
        Name: nicNetworkName({ containerId: 'pod-iov', ifname: 'eth0' }),
        Type: 'Transparent',
        Flags: 8 | 1024 | 8192,
      }),
    ]);
    expect(dump.endpoints[0]!.Policies).toEqual(
      expect.arrayContaining([{ Type: 'Iov', Settings: { IovOffloadWeight: 100, QueuePairsRequested: 1 } }]),
    );
    // DisableHostPort: the host keeps no vNIC on the pod's NIC.
    const adapters = await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).listAdapters();
    expect(adapters.map((a) => a.name)).toEqual(['Ethernet', 'Ethernet 2']);
  });

  it('HNS 15.0: no DisableHostPort by default; asking for it, or for iov, is error 2 naming the version, before anything is created', async () => {
    await h.sim.control.setVersion(15, 0);
    const plain = await cni(h, { verb: 'ADD', conf: nicConf(), containerId: 'pod-a', netns: await namespace() });
    expect(plain.exitCode).toBe(0);
    expect((await h.sim.control.dump()).networks.map((n) => n.Flags)).toEqual([8]);
    await cni(h, { verb: 'DEL', conf: nicConf(), containerId: 'pod-a', netns: 'none' });

    const hostPort = await cni(h, {
      verb: 'ADD',
      conf: nicConf({ disableHostPort: true }),
      containerId: 'pod-b',
      netns: await namespace(),
    });
    expect(hostPort.json).toMatchObject({
      code: 2,
      msg: expect.stringMatching(/disableHostPort true needs .*HNS 15\.1 or later; this host has HNS 15\.0/),
    });
    const iov = await cni(h, {
      verb: 'ADD',
      conf: nicConf({ iov: true }),
      containerId: 'pod-c',
      netns: await namespace(),
    });
    expect(iov.json).toMatchObject({
      code: 2,
      msg: expect.stringMatching(/iov true needs HNS 15\.4 or later \(Accelnet\), and this host's HNS is 15\.0/),
    });
    expect((await h.sim.control.dump()).networks).toEqual([]);
  });

  it('iov outside delegatedNic is error 7; iov on HNS v1 is error 2', async () => {
    expect(
      (await cni(h, { verb: 'ADD', conf: bridgeConf({ iov: true }), containerId: 'pod-d', netns: await namespace() }))
        .json,
    ).toMatchObject({ code: 7 });
    expect(
      (
        await cni(h, {
          verb: 'ADD',
          conf: nicConf({ iov: true, apiVersion: 1 }),
          containerId: 'pod-e',
          netns: await namespace(),
        })
      ).json,
    ).toMatchObject({ code: 2, msg: expect.stringContaining('needs the HCN (v2) API') });
  });

  it('the NIC is chosen among physical adapters: a host vNIC with the same MAC is not the NIC, the switch holding it is named', async () => {
    // Someone else's switch on the pod's NIC, with a host vNIC: "vEthernet (Ethernet 2)" now carries the NIC's MAC.
    const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
    await hcn.createNetwork({
      Name: 'ext',
      Type: 'Transparent',
      Flags: 0,
      Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: NIC.Name } }],
    });
    expect((await hcn.listAdapters()).filter((a) => a.mac === NIC.MacAddress).map((a) => [a.name, a.physical])).toEqual(
      [
        ['vEthernet (Ethernet 2)', false],
        ['Ethernet 2', true],
      ],
    );
    const r = await cni(h, { verb: 'ADD', conf: nicConf(), containerId: 'pod-f', netns: await namespace() });
    expect(r.json).toMatchObject({
      code: 104,
      msg: expect.stringContaining('NIC 00-15-5D-AA-00-02 (adapter "Ethernet 2") is bound by HNS network "ext"'),
    });
  });

  it('a MAC that only a host vNIC has is error 103 saying so', async () => {
    await h.sim.control.addAdapter({ Name: 'vEthernet (nat)', MacAddress: '00-15-5D-AA-00-09', Physical: false });
    const r = await cni(h, {
      verb: 'ADD',
      conf: nicConf({ runtimeConfig: { mac: '00-15-5D-AA-00-09' } }),
      containerId: 'pod-g',
      netns: await namespace(),
    });
    expect(r.json).toMatchObject({
      code: 103,
      msg: expect.stringContaining('only the host vNIC "vEthernet (nat)" has it'),
    });
    await h.sim.control.removeAdapter('vEthernet (nat)');
  });
});

describe('MTU and DSR by HNS version; loopback DSR with HNS-assigned addresses', () => {
  it('mtu on HNS 9.5 (Server 2019 line, no schema 2.4): not applied, logged; on 15.4 the InterfaceParameters policy', async () => {
    await h.sim.control.setVersion(9, 5);
    const old = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ mtu: 1400 }),
      containerId: 'pod-m1',
      netns: await namespace(),
    });
    expect(old.exitCode).toBe(0);
    expect(policyTypes((await h.sim.control.dump()).endpoints[0]!)).not.toContain('InterfaceParameters');
    await h.sim.control.setVersion(15, 4);
    h.deps = pluginDeps({ pid: process.pid }); // a new process: the HNS version is asked once per process
    const now = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ mtu: 1400 }),
      containerId: 'pod-m2',
      netns: await namespace(),
    });
    expect(now.exitCode).toBe(0);
    const eps = (await h.sim.control.dump()).endpoints;
    expect(eps.map(policyTypes).filter((t) => t.includes('InterfaceParameters'))).toHaveLength(1);
  });

  it('loopbackDSR on HNS 10.1 (no DSR) is error 2 naming it; nothing is created', async () => {
    await h.sim.control.setVersion(10, 1);
    const r = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ loopbackDSR: true }),
      containerId: 'pod-d1',
      netns: await namespace(),
    });
    expect(r.json).toMatchObject({
      code: 2,
      msg: expect.stringContaining('loopbackDSR true needs DSR, which HNS 10.1 lacks'),
    });
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
  });

  it('loopbackDSR without IPAM: the policy is added once HNS has assigned the address (HcnModifyEndpoint)', async () => {
    const r = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ loopbackDSR: true }),
      containerId: 'pod-d2',
      netns: await namespace(),
    });
    expect(r.exitCode).toBe(0);
    const ip = (r.json as { ips: Array<{ address: string }> }).ips[0]!.address.split('/')[0];
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    expect(ep.Policies).toEqual(expect.arrayContaining([{ Type: 'OutBoundNAT', Settings: { Destinations: [ip] } }]));
    expect((await h.sim.control.calls()).filter((c) => c.op === 'HcnModifyEndpoint').map((c) => c.hr)).toEqual([0]);
  });
});

describe('HNS v1 as v1 is', () => {
  it('ACL Protocols go across whole ("6,17"), DNS options where HCN has them, no Flags on a v1 network', async () => {
    const acl = {
      Name: 'EndpointPolicy',
      Value: { Type: 'ACL', Settings: { Protocols: '6,17', Action: 'Allow', Direction: 'Out', Priority: 100 } },
    };
    const conf = bridgeConf({ apiVersion: 1, AdditionalArgs: [acl] });
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-v1', netns: await namespace() })).exitCode).toBe(0);
    const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    const v1 = await hcn.hnsCall<{ Policies: Array<Record<string, unknown>> }>('GET', `/endpoints/${ep.ID}`);
    expect(v1.Policies.find((p) => p.Type === 'ACL')).toMatchObject({ Protocols: '6,17' });

    const v2conf = bridgeConf({
      name: 'cbr2',
      networkName: 'cbr2',
      subnet: '10.244.2.0/24',
      dns: { nameservers: ['10.0.0.10'], options: ['ndots:5'] },
    });
    expect(
      (await cni(h, { verb: 'ADD', conf: v2conf, containerId: 'pod-v2', netns: await namespace() })).exitCode,
    ).toBe(0);
    const v2ep = (await h.sim.control.dump()).endpoints.find((e) => e.ID !== ep.ID)!;
    expect(v2ep.Dns).toEqual({ ServerList: ['10.0.0.10'], Options: ['ndots:5'] });
  });

  it('a v1 envelope without ErrorCode: not-found is known from the text, so DEL of a vanished endpoint exits 0', async () => {
    const conf = bridgeConf({ apiVersion: 1 });
    const ns = await namespace();
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-t', netns: ns })).exitCode).toBe(0);
    // The endpoint vanishes (deleted behind the plugin's back); HNS answers v1 failures with text only here.
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
    await hcn.deleteEndpoint(String(ep.ID));
    const raw = JSON.parse(await hcn.native.hnsCall('GET', `/endpoints/${String(ep.ID)}`, null)) as Record<
      string,
      unknown
    >;
    expect(raw).toEqual({ Success: false, Error: 'The endpoint was not found. ' });
    const err = await hcn.hnsCall('GET', `/endpoints/${String(ep.ID)}`).catch((e: unknown) => e as { hresult: number });
    expect(err).toMatchObject({ hresult: 0x803b0002 });
    const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-t', netns: ns });
    expect({ exitCode: del.exitCode, stdout: del.stdout }).toEqual({ exitCode: 0, stdout: '' });
  });
});
