/**
 * Dual-stack and IPv6-only pods in process (runCni) against the simulator, over both the network-creating path and an
 * existing network, with HNS assigning the addresses and with Debian's host-local handing out one per family. Each
 * test names the rule it proves; every rule was checked to fail with its code reverted.
 */
import { randomUUID } from 'crypto';
import { HR } from '../../src/hns/hresults';
import { bridgeConf, cni, CNI_BIN, stateFiles, useHarness, type Harness } from '../helpers/cni-harness';
import { lastSeq, mutationsSince, newNamespace } from './support';
import * as fs from 'fs';
import * as path from 'path';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const DUAL = ['10.244.1.0/24', 'fd00:10:244:1::/64'];
const dualConf = (extra: Record<string, unknown> = {}) => bridgeConf({ subnet: DUAL, ...extra });

/** host-local with one range set per family (the shape sdnbridge's dual-stack example uses). */
function dualHostLocal(): Record<string, unknown> {
  return {
    type: 'host-local',
    dataDir: path.join(h.tmp, 'ipam'),
    ranges: [
      [{ subnet: '10.244.1.0/24', rangeStart: '10.244.1.10', rangeEnd: '10.244.1.60', gateway: '10.244.1.1' }],
      [
        {
          subnet: 'fd00:10:244:1::/64',
          rangeStart: 'fd00:10:244:1::10',
          rangeEnd: 'fd00:10:244:1::60',
          gateway: 'fd00:10:244:1::1',
        },
      ],
    ],
  };
}
/** Every address host-local holds for network `name` (IPv6 file names as host-local writes them). */
function held(name = 'cbr0'): string[] {
  const dir = path.join(h.tmp, 'ipam', name);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => /^[0-9a-f.:]+$/i.test(f) && f.length > 3)
    .sort();
}
async function endpoints(): Promise<Array<Record<string, unknown>>> {
  return (await h.sim.control.dump()).endpoints as Array<Record<string, unknown>>;
}
const policiesOf = (e: Record<string, unknown>) =>
  (e.Policies ?? []) as Array<{ Type: string; Settings: Record<string, unknown> }>;

describe('network-creating path, HNS assigns both families', () => {
  it('one network with both subnets; an endpoint with two IpConfigurations and a default route per family; the result in ips', async () => {
    const ns = await newNamespace(h);
    const add = await cni(h, { verb: 'ADD', conf: dualConf(), netns: ns });
    expect(add.exitCode).toBe(0);
    expect(add.json).toMatchObject({
      ips: [
        { address: '10.244.1.2/24', gateway: '10.244.1.1', interface: 0 },
        { address: 'fd00:10:244:1::2/64', gateway: 'fd00:10:244:1::1', interface: 0 },
      ],
      routes: [
        { dst: '0.0.0.0/0', gw: '10.244.1.1' },
        { dst: '::/0', gw: 'fd00:10:244:1::1' },
      ],
    });
    const dump = await h.sim.control.dump();
    const net = dump.networks[0] as unknown as {
      Ipams: Array<{ Subnets: Array<{ IpAddressPrefix: string; Routes: unknown[] }> }>;
    };
    expect(net.Ipams[0]!.Subnets.map((s) => [s.IpAddressPrefix, s.Routes])).toEqual([
      ['10.244.1.0/24', [{ NextHop: '10.244.1.1', DestinationPrefix: '0.0.0.0/0' }]],
      ['fd00:10:244:1::/64', [{ NextHop: 'fd00:10:244:1::1', DestinationPrefix: '::/0' }]],
    ]);
    const [ep] = dump.endpoints as Array<Record<string, unknown>>;
    expect(ep!.IpConfigurations).toEqual([
      { IpAddress: '10.244.1.2', PrefixLength: 24 },
      { IpAddress: 'fd00:10:244:1::2', PrefixLength: 64 },
    ]);
    expect(ep!.Routes).toEqual([
      { NextHop: '10.244.1.1', DestinationPrefix: '0.0.0.0/0' },
      { NextHop: 'fd00:10:244:1::1', DestinationPrefix: '::/0' },
    ]);
    expect((await cni(h, { verb: 'CHECK', conf: { ...dualConf(), prevResult: add.json }, netns: ns })).exitCode).toBe(
      0,
    );
    expect((await cni(h, { verb: 'DEL', conf: dualConf(), netns: ns })).exitCode).toBe(0);
    expect(await endpoints()).toEqual([]);
  });

  it('an IPv6-only pod: one address, one ::/0 route, in 0.4.0 with version "6"', async () => {
    const ns = await newNamespace(h);
    const add = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ cniVersion: '0.4.0', subnet: 'fd00:20::/64' }),
      netns: ns,
    });
    expect(add.exitCode).toBe(0);
    expect(add.json).toMatchObject({
      cniVersion: '0.4.0',
      ips: [{ version: '6', address: 'fd00:20::2/64', gateway: 'fd00:20::1', interface: 0 }],
      routes: [{ dst: '::/0', gw: 'fd00:20::1' }],
    });
  });
});

describe('existing network, host-local hands out both families', () => {
  it('both addresses in HNS and the result; DEL releases both; a failure after IPAM rolls both back', async () => {
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNetwork({
      Name: 'cbr0',
      Type: 'L2Bridge',
      Ipams: [
        {
          Type: 'Static',
          Subnets: [
            { IpAddressPrefix: '10.244.1.0/24', Routes: [{ NextHop: '10.244.1.1', DestinationPrefix: '0.0.0.0/0' }] },
            {
              IpAddressPrefix: 'fd00:10:244:1::/64',
              Routes: [{ NextHop: 'fd00:10:244:1::1', DestinationPrefix: '::/0' }],
            },
          ],
        },
      ],
      SchemaVersion: { Major: 2, Minor: 0 },
    });
    const conf = bridgeConf({ createNetwork: false, subnet: undefined, ipam: dualHostLocal() });
    const ns = await newNamespace(h);
    const add = await cni(h, { verb: 'ADD', conf, netns: ns, containerId: 'pod-a' });
    expect(add.exitCode).toBe(0);
    expect(add.json).toMatchObject({
      ips: [
        { address: '10.244.1.10/24', gateway: '10.244.1.1' },
        { address: 'fd00:10:244:1::10/64', gateway: 'fd00:10:244:1::1' },
      ],
    });
    expect((await endpoints())[0]!.IpConfigurations).toEqual([
      { IpAddress: '10.244.1.10', PrefixLength: 24 },
      { IpAddress: 'fd00:10:244:1::10', PrefixLength: 64 },
    ]);
    expect(held()).toEqual(['10.244.1.10', 'fd00:10:244:1::10']);

    // CHECK compares addresses in one text form: prevResult spelling an address differently still matches.
    const spelled = JSON.parse(JSON.stringify(add.json).replace('fd00:10:244:1::10/64', 'FD00:10:244:1:0:0:0:10/64'));
    expect(
      (await cni(h, { verb: 'CHECK', conf: { ...conf, prevResult: spelled }, netns: ns, containerId: 'pod-a' }))
        .exitCode,
    ).toBe(0);
    // ... and an IPv6 address the endpoint does not have fails it.
    const wrong = JSON.parse(JSON.stringify(add.json).replace('fd00:10:244:1::10/64', 'fd00:10:244:1::99/64'));
    const bad = await cni(h, { verb: 'CHECK', conf: { ...conf, prevResult: wrong }, netns: ns, containerId: 'pod-a' });
    expect(bad.json).toMatchObject({
      code: 105,
      msg: expect.stringContaining('prevResult IP fd00:10:244:1::99 is not on endpoint'),
    });

    expect((await cni(h, { verb: 'DEL', conf, netns: ns, containerId: 'pod-a' })).exitCode).toBe(0);
    expect(held()).toEqual([]);

    await h.sim.control.failCall('HcnCreateEndpoint', HR.E_FAIL);
    const failed = await cni(h, { verb: 'ADD', conf, netns: await newNamespace(h), containerId: 'pod-b' });
    expect(failed.json).toMatchObject({ code: 100 });
    expect(held()).toEqual([]);
    expect(await endpoints()).toEqual([]);
  });

  it('a recorded address that HNS no longer shows fails CHECK, per family', async () => {
    const ns = await newNamespace(h);
    const add = await cni(h, { verb: 'ADD', conf: dualConf(), netns: ns });
    expect(add.exitCode).toBe(0);
    // Make the record claim another IPv6 address than HNS gave the endpoint (no prevResult: the record is checked).
    const file = path.join(h.stateDir, 'attachments', 'ctr1@eth0.json');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('fd00:10:244:1::2/64', 'fd00:10:244:1::77/64'));
    const r = await cni(h, { verb: 'CHECK', conf: dualConf(), netns: ns });
    expect(r.json).toMatchObject({
      code: 105,
      msg: expect.stringContaining('the recorded IP fd00:10:244:1::77 is not on endpoint'),
    });
  });
});

describe('IP reuse, repeats and the NIC mode, per family', () => {
  it('a DEL that HNS refuses keeps both addresses until the endpoint is gone; the next ADD removes it and frees both', async () => {
    // The next ADD's whole-node audit (due on every ADD with 0: audit-due.ts) removes the endpoint.
    const conf = dualConf({ ipam: dualHostLocal(), auditIntervalSeconds: 0 });
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-a', netns: ns })).exitCode).toBe(0);
    await h.sim.control.failCall('HcnDeleteEndpoint', HR.E_FAIL);
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-a', netns: ns })).exitCode).toBe(0);
    // HNS still shows the endpoint with both addresses: host-local must hand out neither again.
    expect(await endpoints()).toHaveLength(1);
    expect(held()).toEqual(['10.244.1.10', 'fd00:10:244:1::10']);
    const next = await cni(h, { verb: 'ADD', conf, containerId: 'pod-b', netns: await newNamespace(h) });
    expect(next.json).toMatchObject({ ips: [{ address: '10.244.1.11/24' }, { address: 'fd00:10:244:1::11/64' }] });
    expect(held()).toEqual(['10.244.1.11', 'fd00:10:244:1::11']);
  });

  it('after an HNS restart, a repeated ADD re-creates the endpoint with both recorded addresses (IPAM not asked again)', async () => {
    const conf = dualConf({ ipam: dualHostLocal() });
    const ns = await newNamespace(h);
    const first = await cni(h, { verb: 'ADD', conf, containerId: 'pod-r', netns: ns });
    expect(first.exitCode).toBe(0);
    await h.sim.control.restart();
    const ns2 = await newNamespace(h); // the restart dropped every namespace; the runtime's is re-created
    const rec = path.join(h.stateDir, 'attachments', 'pod-r@eth0.json');
    fs.writeFileSync(rec, fs.readFileSync(rec, 'utf8').split(ns).join(ns2));
    const again = await cni(h, { verb: 'ADD', conf, containerId: 'pod-r', netns: ns2 });
    expect(again.json).toEqual(first.json ? JSON.parse(JSON.stringify(first.json).split(ns).join(ns2)) : undefined);
    expect((await endpoints())[0]!.IpConfigurations).toEqual([
      { IpAddress: '10.244.1.10', PrefixLength: 24 },
      { IpAddress: 'fd00:10:244:1::10', PrefixLength: 64 },
    ]);
    expect(held()).toEqual(['10.244.1.10', 'fd00:10:244:1::10']);
  });

  it('delegated NIC: a Transparent network on the NIC with both subnets, and a dual-stack endpoint in it', async () => {
    const conf = {
      cniVersion: '1.1.0',
      name: 'nic',
      type: 'hcn-cni',
      mode: 'delegatedNic',
      subnet: ['10.10.2.0/24', 'fd00:10:2::/64'],
      runtimeConfig: { mac: '00-15-5D-AA-00-02' },
    };
    const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-n', netns: await newNamespace(h) });
    expect(add.json).toMatchObject({
      ips: [
        { address: '10.10.2.2/24', gateway: '10.10.2.1' },
        { address: 'fd00:10:2::2/64', gateway: 'fd00:10:2::1' },
      ],
    });
    const dump = await h.sim.control.dump();
    const net = dump.networks[0] as unknown as {
      Type: string;
      Ipams: Array<{ Subnets: Array<{ IpAddressPrefix: string }> }>;
    };
    expect([net.Type, net.Ipams[0]!.Subnets.map((x) => x.IpAddressPrefix)]).toEqual([
      'Transparent',
      ['10.10.2.0/24', 'fd00:10:2::/64'],
    ]);
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-n', netns: 'none' })).exitCode).toBe(0);
    expect((await h.sim.control.dump()).networks).toEqual([]);
  });
});

describe('policies per family', () => {
  it('one OutBoundNAT per family with its own exceptions; a port mapping per family, the IPv6 one flagged; loopback DSR for IPv4 only', async () => {
    const conf = dualConf({
      ipam: dualHostLocal(),
      outboundNatExceptions: ['10.0.0.0/8', 'fd00:100::/56'],
      loopbackDSR: true,
      runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] },
    });
    const add = await cni(h, { verb: 'ADD', conf, netns: await newNamespace(h) });
    expect(add.exitCode).toBe(0);
    const p = policiesOf((await endpoints())[0]!);
    expect(p.filter((x) => x.Type === 'OutBoundNAT')).toEqual([
      { Type: 'OutBoundNAT', Settings: { Exceptions: ['10.0.0.0/8'] } },
      { Type: 'OutBoundNAT', Settings: { Exceptions: ['fd00:100::/56'] } },
      { Type: 'OutBoundNAT', Settings: { Destinations: ['10.244.1.10'] } },
    ]);
    expect(p.filter((x) => x.Type === 'PortMapping')).toEqual([
      { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080 } },
      { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080, Flags: 2 } },
    ]);
  });

  it('loopback DSR takes the IPv4 address even when IPAM lists IPv6 first; an IPv6-only pod gets none', async () => {
    const ipam = dualHostLocal();
    ipam.ranges = [...(ipam.ranges as unknown[])].reverse();
    expect(
      (
        await cni(h, {
          verb: 'ADD',
          conf: dualConf({ ipam, loopbackDSR: true }),
          netns: await newNamespace(h),
          containerId: 'v6first',
        })
      ).exitCode,
    ).toBe(0);
    expect(policiesOf((await endpoints())[0]!)).toEqual([
      { Type: 'OutBoundNAT', Settings: { Destinations: ['10.244.1.10'] } },
    ]);
    const only6 = bridgeConf({
      subnet: 'fd00:30::/64',
      networkName: 'v6',
      ipam: { type: 'static', addresses: [{ address: 'fd00:30::5/64' }] },
      loopbackDSR: true,
    });
    expect(
      (await cni(h, { verb: 'ADD', conf: only6, netns: await newNamespace(h), containerId: 'v6only' })).exitCode,
    ).toBe(0);
    expect(policiesOf((await endpoints())[1]!)).toEqual([]);
  });

  it('an IPv4-only pod gets no IPv6 OutBoundNAT or port mapping; an IPv6 hostIP on it is code 7', async () => {
    const conf = bridgeConf({
      outboundNatExceptions: ['10.0.0.0/8', 'fd00:100::/56'],
      runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] },
    });
    expect((await cni(h, { verb: 'ADD', conf, netns: await newNamespace(h), containerId: 'v4' })).exitCode).toBe(0);
    const p = policiesOf((await endpoints())[0]!);
    expect(p).toEqual([
      { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080 } },
      { Type: 'OutBoundNAT', Settings: { Exceptions: ['10.0.0.0/8'] } },
    ]);
    const v6host = bridgeConf({
      ipam: { type: 'static', addresses: [{ address: '10.244.1.7/24' }] },
      runtimeConfig: { portMappings: [{ hostPort: 81, containerPort: 80, hostIP: 'fd00::1' }] },
    });
    const r = await cni(h, {
      verb: 'ADD',
      conf: v6host,
      netns: await newNamespace(h),
      containerId: 'v6host',
      path: CNI_BIN,
    });
    expect(r.json).toMatchObject({
      code: 7,
      msg: expect.stringContaining(
        '"runtimeConfig.portMappings[0].hostIP" "fd00::1" is IPv6, and the pod has no IPv6 address',
      ),
    });
    expect(await endpoints()).toHaveLength(1);
  });

  it('an IPv6 hostIP maps only the IPv6 address, with its VIP and the IPv6 flag', async () => {
    const conf = dualConf({
      runtimeConfig: { portMappings: [{ hostPort: 8443, containerPort: 443, protocol: 'tcp', hostIP: 'fd00::1' }] },
    });
    expect((await cni(h, { verb: 'ADD', conf, netns: await newNamespace(h) })).exitCode).toBe(0);
    expect(policiesOf((await endpoints())[0]!).filter((x) => x.Type === 'PortMapping')).toEqual([
      {
        Type: 'PortMapping',
        Settings: { Protocol: 6, InternalPort: 443, ExternalPort: 8443, VIP: 'fd00::1', Flags: 2 },
      },
    ]);
  });
});

describe('one address per family', () => {
  it('IPAM handing out two addresses of one family is code 102, with the allocation released and nothing created', async () => {
    const seq = await lastSeq(h);
    const ipam = { type: 'static', addresses: [{ address: '10.244.1.7/24' }, { address: '10.244.1.8/24' }] };
    const r = await cni(h, { verb: 'ADD', conf: bridgeConf({ ipam }), netns: await newNamespace(h) });
    expect(r.json).toMatchObject({
      code: 102,
      msg: 'ipam plugin "static" returned 2 IPv4 addresses (10.244.1.7/24, 10.244.1.8/24); an HNS endpoint takes one address per family',
    });
    expect((await mutationsSince(h, seq)).map((c) => c.op)).toEqual(['HcnCreateNamespace']);
  });
});

describe('where IPv6 cannot be carried: a clear error before anything is created', () => {
  it('apiVersion 1 with an IPv6 subnet is code 2 naming the key and why; nothing written or created', async () => {
    const seq = await lastSeq(h);
    const r = await cni(h, {
      verb: 'ADD',
      conf: dualConf({ apiVersion: 1 }),
      netns: 'none',
      containerId: randomUUID(),
    });
    expect(r.json).toMatchObject({
      code: 2,
      msg: expect.stringMatching(
        /^unsupported field: "subnet" "fd00:10:244:1::\/64" is IPv6, which needs the HCN \(v2\) API, and this ADD uses HNS v1 \(apiVersion 1 in the configuration\)/,
      ),
    });
    expect(await mutationsSince(h, seq)).toEqual([]);
    expect(stateFiles(h)).toEqual([]);
  });

  it('STATUS says 50 (cannot serve ADD) when the configuration has IPv6 and the API in use cannot carry it', async () => {
    const status = (extra: Record<string, unknown>) =>
      cni(h, { verb: 'STATUS', conf: dualConf({ cniVersion: '1.1.0', ...extra }) });
    expect((await status({})).exitCode).toBe(0);
    expect((await status({ apiVersion: 1 })).json).toMatchObject({
      code: 50,
      msg: expect.stringContaining('"subnet" "fd00:10:244:1::/64" is IPv6, which needs the HCN (v2) API'),
    });
  });

  it('an HNS older than 11.10 is code 107 naming the version; nothing created', async () => {
    await h.sim.control.setVersion(10, 4);
    try {
      const ns = await newNamespace(h);
      const seq = await lastSeq(h);
      const r = await cni(h, { verb: 'ADD', conf: dualConf(), netns: ns });
      expect(r.json).toMatchObject({
        code: 107,
        msg: expect.stringContaining(
          'HNS 10.4 on this host cannot give endpoints IPv6 addresses (IPv6 dual-stack needs HNS 11.10 or later)',
        ),
      });
      expect((await mutationsSince(h, seq)).map((c) => c.op)).toEqual([]);
    } finally {
      await h.sim.control.setVersion(15, 4);
    }
  });

  it('the HNS version is asked once per ADD (its plan), however many of its values need IPv6', async () => {
    // apiVersion 2: the choice did not ask the version. The IPv6 subnet and IPAM's IPv6 address both need it.
    const versionCalls = async () => (await h.sim.control.stats()).calls['HNSCall GET /globals/version'] ?? 0;
    const before = await versionCalls();
    const conf = dualConf({ apiVersion: 2, ipam: dualHostLocal() });
    const add = await cni(h, { verb: 'ADD', conf, netns: await newNamespace(h) });
    expect(add.exitCode).toBe(0);
    expect(add.json).toMatchObject({ ips: [{ address: '10.244.1.10/24' }, { address: 'fd00:10:244:1::10/64' }] });
    expect((await versionCalls()) - before).toBe(1);
  });

  it('apiVersion 1 on an existing dual-stack network (HNS would assign): code 2 before the endpoint is created', async () => {
    const conf = dualConf();
    expect((await cni(h, { verb: 'ADD', conf, netns: await newNamespace(h), containerId: 'first' })).exitCode).toBe(0);
    const seq = await lastSeq(h);
    const r = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ createNetwork: false, subnet: undefined, apiVersion: 1 }),
      netns: 'none',
      containerId: 'second',
    });
    expect(r.json).toMatchObject({
      code: 2,
      msg: expect.stringContaining(
        'the subnet fd00:10:244:1::/64 of HNS network "cbr0" is IPv6, which needs the HCN (v2) API',
      ),
    });
    expect((await mutationsSince(h, seq)).map((c) => c.op)).toEqual([]);
    expect(await endpoints()).toHaveLength(1);
  });

  it('apiVersion 1 with IPAM handing out IPv6: code 2, and the IPAM allocation (both families) is released', async () => {
    const seq = await lastSeq(h);
    const r = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({ subnet: undefined, createNetwork: false, apiVersion: 1, ipam: dualHostLocal() }),
      netns: 'none',
      containerId: randomUUID(),
    });
    expect(r.json).toMatchObject({
      code: 2,
      msg: expect.stringContaining('the address fd00:10:244:1::10/64 from ipam plugin "host-local" is IPv6'),
    });
    expect(held()).toEqual([]);
    expect(await mutationsSince(h, seq)).toEqual([]);
  });
});
