/**
 * hcn-cni under a runtime that behaves like containerd's libcni (test/helpers/libcni.ts): a 1.1.0 conflist with a
 * chain, CNI_ARGS, capability arguments, the result cache feeding CHECK and DEL, GC with and without a list of valid
 * attachments, STATUS; and the behaviours a migrating operator meets: a chained plugin's addresses, DEL on a node
 * without the IPAM binary, policy values checked before HNS sees them, loopbackDSR gated, ipMasq, networkType.
 */
import * as path from 'path';
import { useHarness, type Harness } from '../helpers/cni-harness';
import { PluginError, type NetworkConfigList, type RuntimeConf } from '../helpers/libcni';
import { heldIps, recordFiles } from '../plugin/support';
import { endpoints, makeCbr0, makeNetwork, namespace, ofType, runtime, type Runtime } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
let rt: Runtime;
beforeEach(async () => {
  rt = runtime(h);
  await makeCbr0(h);
});

function list(
  plugin: Record<string, unknown>,
  extra: Partial<NetworkConfigList> = {},
  before: Array<Record<string, unknown>> = [],
): NetworkConfigList {
  return {
    name: 'cbr0',
    cniVersion: '1.1.0',
    disableCheck: false,
    disableGC: false,
    plugins: [...before, { type: 'hcn-cni', ...plugin }],
    ...extra,
  };
}
const hostLocal = () => ({
  type: 'host-local',
  dataDir: path.join(h.tmp, 'ipam'),
  ranges: [[{ subnet: '10.244.1.0/24', rangeStart: '10.244.1.10', rangeEnd: '10.244.1.60', gateway: '10.244.1.1' }]],
});

async function pod(id: string, extra: Partial<RuntimeConf> = {}): Promise<RuntimeConf> {
  return { containerId: id, netns: await namespace(h), ifname: 'eth0', ...extra };
}

async function addFails(l: NetworkConfigList, r: RuntimeConf): Promise<PluginError> {
  const e = await rt.cni.add(l, r).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(PluginError);
  return e as PluginError;
}

describe('the libcni life cycle', () => {
  it('ADD, CHECK and DEL get the cached result as prevResult; the netns is the namespace GUID; CNI_ARGS and capabilities arrive', async () => {
    const l = list({ ipam: hostLocal(), capabilities: { portMappings: true, dns: true, bandwidth: true } });
    const r = await pod('web-0', {
      args: [
        ['K8S_POD_NAMESPACE', 'shop'],
        ['K8S_POD_NAME', 'web-0'],
        ['IgnoreUnknown', '1'],
      ],
      capabilityArgs: {
        portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }],
        dns: { servers: ['10.96.0.10'], searches: ['svc.cluster.local'] },
        mac: '02-00-00-00-00-01',
      },
    });
    const result = await rt.cni.add(l, r);
    expect(result).toMatchObject({
      cniVersion: '1.1.0',
      interfaces: [{ name: 'eth0', sandbox: r.netns }],
      ips: [{ address: '10.244.1.10/24', gateway: '10.244.1.1', interface: 0 }],
    });
    const add = rt.cni.calls[0]!;
    expect(add.env).toMatchObject({
      CNI_NETNS: r.netns,
      CNI_ARGS: 'K8S_POD_NAMESPACE=shop;K8S_POD_NAME=web-0;IgnoreUnknown=1',
    });
    // Only capabilities the plugin declares reach runtimeConfig (mac was offered but not declared).
    expect(add.stdin.runtimeConfig).toEqual({
      portMappings: r.capabilityArgs!.portMappings,
      dns: r.capabilityArgs!.dns,
    });
    expect(add.stdin).not.toHaveProperty('prevResult');

    await rt.cni.check(l, r);
    await rt.cni.del(l, r);
    const [check, del] = rt.cni.calls.slice(1);
    expect(check!.stdin.prevResult).toEqual(result);
    expect(del!.stdin.prevResult).toEqual(result);
    expect(await endpoints(h)).toEqual([]);
    // A second DEL has no cached result to send, and still succeeds.
    await rt.cni.del(l, r);
    expect(rt.cni.calls[3]!.stdin).not.toHaveProperty('prevResult');
  });

  it('STATUS is sent from 1.1.0 only; GC with a valid list keeps the listed pod', async () => {
    const l = list({ ipam: hostLocal() });
    await rt.cni.status(l);
    await rt.cni.status({ ...l, cniVersion: '1.0.0' });
    expect(rt.cni.calls.map((c) => c.verb)).toEqual(['STATUS']);

    const a = await pod('a');
    const b = await pod('b');
    await rt.cni.add(l, a);
    await rt.cni.add(l, b);
    await rt.cni.gc(l, { validAttachments: [{ containerID: 'a', ifname: 'eth0' }] });
    // libcni DELs b from its cache first, then sends GC with both spellings of the list.
    const gc = rt.cni.calls.find((c) => c.verb === 'GC')!;
    expect(gc.stdin['cni.dev/valid-attachments']).toEqual([{ containerID: 'a', ifname: 'eth0' }]);
    expect(gc.stdin['cni.dev/attachments']).toEqual([{ containerID: 'a', ifname: 'eth0' }]);
    expect(recordFiles(h, 'attachments')).toEqual(['a@eth0.json']);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['a']);
  });

  it('GC without arguments (libcni: every cached attachment is DELed, then GC without the key) succeeds and removes what remains', async () => {
    const l = list({ ipam: hostLocal() });
    await rt.cni.add(l, await pod('a'));
    // An attachment the runtime's cache does not know (its cache was lost): only the plugin's GC can remove it.
    const other = await pod('lost');
    await rt.cni.add(l, other);
    rt.cni.cachedAttachments(); // both are cached; forget one as a wiped cache would
    const fs = await import('fs');
    fs.rmSync(path.join(h.tmp, 'cni-cache', 'results', 'cbr0-lost-eth0'));

    await rt.cni.gc(l);
    const gc = rt.cni.calls.find((c) => c.verb === 'GC')!;
    expect(gc.stdin).not.toHaveProperty('cni.dev/valid-attachments');
    expect(rt.cni.calls.filter((c) => c.verb === 'DEL').map((c) => c.env.CNI_CONTAINERID)).toEqual(['a']);
    expect(recordFiles(h, 'attachments')).toEqual([]);
    expect(await endpoints(h)).toEqual([]);
    expect(heldIps(h, 'cbr0')).toEqual({});
    expect(rt.logs.filter((x) => x.level === 'warn').map((x) => x.msg)).toContain(
      'GC without "cni.dev/valid-attachments": as libcni means it, no attachment of this network is valid; all are removed',
    );
  });
});

describe('chains', () => {
  // Debian's static IPAM, run as the first plugin of the chain, hands its address on as prevResult.
  const staticFirst = {
    type: 'static',
    ipam: {
      type: 'static',
      addresses: [{ address: '10.244.1.77/24', gateway: '10.244.1.1' }],
      routes: [{ dst: '0.0.0.0/0' }],
    },
  };

  it("after another plugin, its addresses are the pod's (not HNS's), and DEL leaves nothing", async () => {
    const l = list({}, { cniVersion: '1.0.0' }, [staticFirst]);
    const r = await pod('chained');
    const result = await rt.cni.add(l, r);
    expect(rt.cni.calls[1]!.stdin.prevResult).toMatchObject({ ips: [{ address: '10.244.1.77/24' }] });
    expect(result).toMatchObject({
      ips: [{ address: '10.244.1.77/24', gateway: '10.244.1.1', interface: 0 }],
      routes: [{ dst: '0.0.0.0/0' }],
    });
    const [ep] = await endpoints(h);
    expect((ep!.IpConfigurations as Array<{ IpAddress: string }>).map((c) => c.IpAddress)).toEqual(['10.244.1.77']);
    await rt.cni.check(l, r);
    await rt.cni.del(l, r);
    expect(await endpoints(h)).toEqual([]);
  });

  it('loopbackDSR after another plugin: the chained address is the one the OutBoundNAT-to-self names, given at create', async () => {
    const l = list({ loopbackDSR: true }, { cniVersion: '1.0.0' }, [staticFirst]);
    const r = await pod('chained-dsr');
    await rt.cni.add(l, r);
    const [ep] = await endpoints(h);
    expect(ofType(ep!, 'OutBoundNAT').map((n) => n.Destinations)).toContainEqual(['10.244.1.77']);
    // Known before the endpoint existed: no HcnModifyEndpoint was needed to add it.
    expect((await h.sim.control.calls()).filter((c) => c.op === 'HcnModifyEndpoint')).toEqual([]);
    await rt.cni.del(l, r);
    expect(await endpoints(h)).toEqual([]);
  });

  it('with ipam configured as well, two sources would claim the address: code 7 naming both', async () => {
    const e = await addFails(list({ ipam: hostLocal() }, { cniVersion: '1.0.0' }, [staticFirst]), await pod('both'));
    expect([e.code, e.msg]).toEqual([
      7,
      'invalid network configuration: "prevResult" carries 10.244.1.77/24 from an earlier plugin of the chain, and "ipam" (host-local) would allocate another; remove one of them',
    ]);
    expect(heldIps(h, 'cbr0')).toEqual({});
  });
});

describe('DEL on a node without the IPAM binary', () => {
  it('no record: succeeds with a warning, no tombstone piles up; with a record that says IPAM allocated, the IPAM error stands', async () => {
    const l = list({ ipam: { type: 'azure-vnet-ipam' } }, { cniVersion: '0.3.0' });
    const r = await pod('az');
    // The ADD fails (102: not on CNI_PATH); the runtime DELs, twice.
    expect((await addFails(l, r)).code).toBe(102);
    await rt.cni.del(l, r);
    await rt.cni.del(l, r);
    expect(rt.logs.filter((x) => x.level === 'warn').map((x) => x.msg)).toContain(
      'DEL: ipam plugin "azure-vnet-ipam" is not on CNI_PATH and no record says it allocated for this attachment; nothing to release',
    );
    expect(recordFiles(h, 'tombstones').length).toBeLessThanOrEqual(1);

    // A record made with host-local, then host-local gone from CNI_PATH: the spec's rule, the IPAM error.
    const withIpam = list({ ipam: hostLocal() }, { cniVersion: '0.3.0' });
    const p = await pod('p');
    await rt.cni.add(withIpam, p);
    const gone = list({ ipam: { ...hostLocal(), type: 'host-local-removed' } }, { cniVersion: '0.3.0' });
    await expect(rt.cni.del(gone, p)).rejects.toMatchObject({ code: 102 });
  });
});

describe('policy values are checked before HNS sees them', () => {
  it.each([
    [
      { name: 'EndpointPolicy', value: { Type: 'ROUTE', DestinationPrefix: '', NeedEncap: true } },
      '"policies[0].value.DestinationPrefix" must be a non-empty IP prefix in CIDR form, got "" (ROUTE policy)',
    ],
    [
      { name: 'EndpointPolicy', value: { Type: 'OutBoundNAT', Settings: { Exceptions: ['10.0.0.0/8', 'cluster'] } } },
      '"policies[0].value.Settings.Exceptions" must be a list of IP addresses or CIDRs, got ["10.0.0.0/8","cluster"] (OutBoundNAT policy)',
    ],
    [
      { name: 'EndpointPolicy', value: { Type: 'ProviderAddress', Settings: { ProviderAddress: 'ip of host' } } },
      '"policies[0].value.Settings.ProviderAddress" must be an IPv4 address, got "ip of host" (ProviderAddress policy)',
    ],
    [
      { name: 'EndpointPolicy', value: { Type: 'ACL', Action: 'Deny', Direction: 'Out', Priority: 100 } },
      '"policies[0].value.Action" must be one of "Allow", "Block", "Pass", got "Deny" (ACL policy)',
    ],
    [
      { name: 'EndpointPolicy', value: { Type: 'ACL', Action: 'Allow', RemotePorts: '80,http', Priority: 100 } },
      '"policies[0].value.RemotePorts" must be a comma-separated list of ports or port ranges, got "80,http" (ACL policy)',
    ],
    [
      { name: 'EndpointPolicy', value: { Type: 'SDNRoute', Settings: { NeedEncap: true } } },
      '"policies[0].value.Settings.DestinationPrefix" must be set (a SDNRoute policy needs it), got nothing (SDNRoute policy)',
    ],
  ])('%j → code 7 naming key and value, nothing created', async (policy, msg) => {
    const e = await addFails(list({ policies: [policy] }), await pod('bad'));
    expect([e.code, e.msg]).toEqual([7, `invalid network configuration: ${msg}`]);
    expect(await endpoints(h)).toEqual([]);
  });
});

describe('peer semantics', () => {
  it('networkType configured and the network of another type: code 7 (win-overlay refuses it too)', async () => {
    const e = await addFails(list({ networkType: 'Overlay' }), await pod('x'));
    expect([e.code, e.msg]).toEqual([
      7,
      'invalid network configuration: HNS network "cbr0" is of type L2Bridge, not the configured "networkType" Overlay; set "networkType": "L2Bridge" to attach to it',
    ]);
  });

  it('ipMasq true (win-overlay): the network subnet joins the OutBoundNAT exceptions', async () => {
    const r = await pod('m');
    await rt.cni.add(list({ ipMasq: true, outboundNatExceptions: ['10.96.0.0/12'], ipam: hostLocal() }), r);
    const [ep] = await endpoints(h);
    expect(ofType(ep!, 'OutBoundNAT')).toEqual([{ Exceptions: ['10.244.1.0/24', '10.96.0.0/12'] }]);
  });

  it("endpointMacPrefix on an Overlay network with IPAM sets the MAC; HNS-assigned addresses keep HNS's MAC", async () => {
    await makeNetwork(h, {
      name: 'vxlan0',
      type: 'Overlay',
      subnet: '10.244.1.0/24',
      gateway: '10.244.1.1',
      managementIp: '10.0.0.4',
    });
    await rt.cni.add(
      list({ networkName: 'vxlan0', networkType: 'Overlay', endpointMacPrefix: '0a-bc', ipam: hostLocal() }),
      await pod('o1'),
    );
    await rt.cni.add(list({ networkName: 'vxlan0', networkType: 'Overlay' }), await pod('o2'));
    const eps = await endpoints(h);
    const mac = (ip: string) =>
      eps.find((e) => (e.IpConfigurations as Array<{ IpAddress: string }>)[0]!.IpAddress === ip)?.MacAddress;
    expect(mac('10.244.1.10')).toBe('0A-BC-0A-F4-01-0A');
    expect(eps.map((e) => e.MacAddress).filter((m) => !String(m).startsWith('0A-BC'))).toHaveLength(1);
  });

  it('loopbackDSR on an HNS without DSR (9.2) is code 2 (sdnbridge fails too; win-bridge skips it silently)', async () => {
    await h.sim.control.setVersion(9, 2);
    const e = await addFails(list({ loopbackDSR: true, ipam: hostLocal() }), await pod('d'));
    expect([e.code, e.msg]).toEqual([
      2,
      'unsupported field: loopbackDSR true needs DSR, which HNS 9.2 lacks (DSR: HNS 9.3–9.x or 10.2 or later)',
    ]);
    expect(heldIps(h, 'cbr0')).toEqual({});
  });
});
