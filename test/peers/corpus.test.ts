/**
 * The corpus: upstream Windows CNI configurations (test/fixtures/peers, verbatim; sources.json names repository,
 * commit and path) with only `type` changed to hcn-cni, run through a libcni-faithful runtime against hcn-sim: ADD,
 * CHECK where the version has it, DEL, GC. Each either runs — and HNS then holds the objects and policies the peer
 * itself would have configured, as its source shows (cited per case) — or is refused with a message that says exactly
 * what to change; the case then makes that change and runs. DEL leaves no endpoint behind.
 */
import * as fs from 'fs';
import * as path from 'path';
import { useHarness, type Harness } from '../helpers/cni-harness';
import { PluginError, type NetworkConfigList, type RuntimeConf } from '../helpers/libcni';
import { heldIps } from '../plugin/support';
import {
  PEERS,
  SOURCES,
  endpoints,
  makeCbr0,
  makeNetwork,
  ofType,
  namespace,
  networks,
  peerList,
  runtime,
  standInIpam,
  type Runtime,
} from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

let rt: Runtime;
beforeEach(() => {
  rt = runtime(h);
});

async function pod(id: string, extra: Partial<RuntimeConf> = {}): Promise<RuntimeConf> {
  return {
    containerId: id,
    netns: await namespace(h),
    ifname: 'eth0',
    args: [
      ['K8S_POD_NAMESPACE', 'web'],
      ['K8S_POD_NAME', id],
      ['IgnoreUnknown', '1'],
    ],
    ...extra,
  };
}

async function refused(
  list: NetworkConfigList,
  r: RuntimeConf,
  options: { parses: boolean } = { parses: true },
): Promise<PluginError> {
  let err: unknown;
  try {
    await rt.cni.add(list, r);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(PluginError);
  // The runtime DELs after a failed ADD; that DEL must succeed and leave nothing (a configuration that does not
  // parse fails DEL with the same error: nothing was created).
  if (options.parses) await rt.cni.del(list, r);
  else
    await expect(rt.cni.del(list, r)).rejects.toMatchObject({
      code: (err as PluginError).code,
      msg: (err as PluginError).msg,
    });
  expect(await endpoints(h)).toEqual([]);
  return err as PluginError;
}

/** DEL (and GC where the version has it) leave no endpoint; what a list's own GC would do runs too. */
async function tearDown(list: NetworkConfigList, r: RuntimeConf): Promise<void> {
  await rt.cni.del(list, r);
  await rt.cni.gc(list, { validAttachments: [] });
  expect(await endpoints(h)).toEqual([]);
  expect(
    fs.existsSync(path.join(h.stateDir, 'attachments')) ? fs.readdirSync(path.join(h.stateDir, 'attachments')) : [],
  ).toEqual([]);
}

const warnings = () => rt.logs.filter((l) => l.level === 'warn').map((l) => l.msg);

describe('the corpus is what upstream publishes', () => {
  it('every fixture has a source, and every source names a repository, a 40-hex commit and a path', () => {
    const files = fs
      .readdirSync(PEERS)
      .filter((f) => f !== 'sources.json' && f !== 'README.md')
      .sort();
    expect(SOURCES.map((s) => s.file).sort()).toEqual(files);
    for (const s of SOURCES) {
      expect(s.repository).toMatch(
        /^(containernetworking\/plugins|microsoft\/windows-container-networking|Azure\/azure-container-networking)$/,
      );
      expect(s.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(s.path.endsWith(path.extname(s.file))).toBe(true);
    }
    // At least what the issue lists: both win-bridge and win-overlay samples, every example/*.conf, every Azure
    // cni/azure-windows*.conflist.
    expect(SOURCES.filter((s) => s.repository === 'containernetworking/plugins')).toHaveLength(4);
    expect(SOURCES.filter((s) => s.path.startsWith('example/')).length).toBeGreaterThanOrEqual(7);
    expect(SOURCES.filter((s) => s.path.startsWith('cni/azure-windows')).length).toBeGreaterThanOrEqual(7);
  });
});

describe('containernetworking/plugins win-bridge', () => {
  // win-bridge (plugins/main/windows/win-bridge/win-bridge_windows.go) needs an existing L2Bridge or L2Tunnel network
  // named after the configuration.
  beforeEach(async () => {
    await makeCbr0(h);
  });

  it('sample-v1.conf (no cniVersion = 0.1.0) runs unchanged: HNS assigns the address, loopback DSR is added after create; with ipam too', async () => {
    // As win-bridge: no ipam, HNS assigns the pod's address; the OutBoundNAT-to-self policy then needs the address
    // HNS chose, so it is added with HcnModifyEndpoint (win-bridge sends it only when it knows the IP up front).
    const plain = peerList('win-bridge.sample-v1.conf');
    const p = await pod('wb0');
    const assigned = (await rt.cni.add(plain, p)) as { cniVersion: string; ip4: { ip: string } };
    expect(assigned.cniVersion).toBe('0.1.0');
    expect(assigned.ip4.ip).toMatch(/^10\.244\.1\.\d+\/24$/);
    const [hnsEp] = await endpoints(h);
    expect(ofType(hnsEp!, 'OutBoundNAT')).toEqual([
      { Exceptions: ['192.168.0.0/16', '11.0.0.0/8', '10.137.196.0/23'] },
      { Destinations: [assigned.ip4.ip.split('/')[0]] },
    ]);
    await tearDown(plain, p);

    // With an ipam section, the address is known up front and the policy is part of the create.
    const list = peerList('win-bridge.sample-v1.conf', {
      ipam: { type: 'host-local', dataDir: path.join(h.tmp, 'ipam'), subnet: '10.244.1.0/24' },
    });
    const r = await pod('wb1');
    const result = await rt.cni.add(list, r);
    // 0.1.0: the legacy result shape.
    expect(result).toEqual({
      cniVersion: '0.1.0',
      ip4: { ip: '10.244.1.2/24', gateway: '10.244.1.1', routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }] },
      dns: { nameservers: ['11.0.0.10'], search: ['web.svc.cluster.local', 'svc.cluster.local'] },
    });
    const [ep] = await endpoints(h);
    // pkg/hns/netconf_windows.go: the v1 OutBoundNAT ExceptionList and ROUTE policies as given (HCN: Exceptions,
    // SDNRoute), and ApplyLoopbackDSRPolicy's OutBoundNAT with the pod IP as destination.
    expect(ofType(ep!, 'OutBoundNAT')).toEqual([
      { Exceptions: ['192.168.0.0/16', '11.0.0.0/8', '10.137.196.0/23'] },
      { Destinations: ['10.244.1.2'] },
    ]);
    expect(ofType(ep!, 'SDNRoute')).toEqual([
      { DestinationPrefix: '11.0.0.0/8', NeedEncap: true },
      { DestinationPrefix: '10.137.198.27/32', NeedEncap: true },
    ]);
    // CHECK does not exist below 0.4.0: libcni refuses it itself.
    await expect(rt.cni.check(list, r)).rejects.toThrow('does not support the CHECK command');
    await tearDown(list, r);
    expect(heldIps(h, 'cbr0')).toEqual({});
  });

  it("sample-v2.conf (a flannel wrapper): the delegate's settings are used, with their own warn line", async () => {
    const plain = peerList('win-bridge.sample-v2.conf');
    const p = await pod('wb3');
    await rt.cni.add(plain, p);
    expect(warnings()).toContain(
      '"delegate" (a flannel-style wrapper for "win-bridge"): its settings are applied as top-level keys; flannel\'s subnet lease is not read, so HNS assigns addresses unless "ipam" is set',
    );
    await tearDown(plain, p);

    // flannel itself fills in ipam from its subnet lease; the operator states it instead.
    const list = peerList('win-bridge.sample-v2.conf', {
      ipam: { type: 'host-local', dataDir: path.join(h.tmp, 'ipam'), subnet: '10.244.1.0/24' },
    });
    const r = await pod('wb2');
    await rt.cni.add(list, r);
    const [ep] = await endpoints(h);
    expect(ofType(ep!, 'OutBoundNAT')).toEqual([
      { Exceptions: ['192.168.0.0/16', '11.0.0.0/8', '10.137.196.0/23'] },
      { Destinations: ['10.244.1.2'] },
    ]);
    expect(ofType(ep!, 'SDNRoute')).toHaveLength(2);
    await tearDown(list, r);
  });
});

describe('containernetworking/plugins win-overlay', () => {
  it("sample.conf (0.2.0) with only type changed: the Overlay network's own type is used; PA from its ManagementIP", async () => {
    await makeNetwork(h, {
      name: 'vxlan0',
      type: 'Overlay',
      subnet: '10.244.2.0/24',
      gateway: '10.244.2.1',
      managementIp: '10.0.0.4',
    });
    // networkType may be omitted when the network exists; a conflicting one stays error 7.
    const conflicting = await refused(
      peerList('win-overlay.sample.conf', { networkType: 'L2Bridge' }),
      await pod('wo0'),
    );
    expect([conflicting.code, conflicting.msg]).toEqual([
      7,
      'invalid network configuration: HNS network "vxlan0" is of type Overlay, not the configured "networkType" L2Bridge; set "networkType": "Overlay" to attach to it',
    ]);

    const list = peerList('win-overlay.sample.conf');
    const r = await pod('wo1');
    const result = await rt.cni.add(list, r);
    expect(result).toMatchObject({
      cniVersion: '0.2.0',
      ip4: { ip: expect.stringMatching(/^10\.244\.2\.\d+\/24$/), gateway: '10.244.2.1' },
    });
    const [ep] = await endpoints(h);
    // win-overlay_windows.go: ApplyDefaultPAPolicy(hnsNetwork.ManagementIP); the configured policies translated.
    expect(ofType(ep!, 'ProviderAddress')).toEqual([{ ProviderAddress: '10.0.0.4' }]);
    expect(ofType(ep!, 'OutBoundNAT')).toEqual([{ Exceptions: ['192.168.0.0/16', '11.0.0.0/8'] }]);
    expect(ofType(ep!, 'SDNRoute')).toEqual([{ DestinationPrefix: '11.0.0.0/8', NeedEncap: true }]);
    await tearDown(list, r);
  });

  it('sample-v2.conf (0.2.0, host-local, apiVersion 2): MAC 0E-2A-<IPv4>, one PA, port mappings from the capability', async () => {
    await makeNetwork(h, {
      name: 'OVNKubernetesHybridOverlayNetwork',
      type: 'Overlay',
      subnet: '10.132.0.0/24',
      gateway: '10.132.0.1',
      managementIp: '10.0.133.170',
    });
    const list = peerList('win-overlay.sample-v2.conf', { networkType: 'Overlay' });
    list.plugins[0]!.ipam = { ...(list.plugins[0]!.ipam as object), dataDir: path.join(h.tmp, 'ipam') };
    const r = await pod('wo2', {
      capabilityArgs: {
        portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }],
        dns: { servers: ['10.96.0.10'], searches: ['svc.cluster.local'] },
      },
    });
    const result = await rt.cni.add(list, r);
    expect(result).toEqual({
      cniVersion: '0.2.0',
      ip4: { ip: '10.132.0.2/24', gateway: '10.132.0.1', routes: [{ dst: '0.0.0.0/0', gw: '10.132.0.1' }] },
      dns: { nameservers: ['10.96.0.10'], search: ['svc.cluster.local'] },
    });
    // libcni put the declared capabilities into runtimeConfig.
    expect(rt.cni.calls[0]!.stdin.runtimeConfig).toEqual(r.capabilityArgs);
    const [ep] = await endpoints(h);
    // win-overlay_windows.go cmdHcnAdd: MacAddress = endpointMacPrefix (default 0E-2A) + the IPv4 bytes.
    expect(ep!.MacAddress).toBe('0E-2A-0A-84-00-02');
    // ApplyDefaultPAPolicy adds nothing when a ProviderAddress with the ManagementIP is configured already.
    expect(ofType(ep!, 'ProviderAddress')).toEqual([{ ProviderAddress: '10.0.133.170' }]);
    expect(ofType(ep!, 'OutBoundNAT')).toEqual([{ Exceptions: ['172.30.0.0/16'] }]);
    expect(ofType(ep!, 'PortMapping')).toEqual([{ Protocol: 6, InternalPort: 80, ExternalPort: 8080 }]);
    expect(heldIps(h, 'OVNKubernetesHybridOverlayNetwork')).toEqual({ '10.132.0.2': 'wo2' });
    await tearDown(list, r);
    expect(heldIps(h, 'OVNKubernetesHybridOverlayNetwork')).toEqual({});
  });
});

describe('microsoft/windows-container-networking example/*.conf (sdnbridge)', () => {
  it('l2bridge.conf: the network sdnbridge would create needs its type; then L2Bridge from master + ipam.subnet + routes[0].GW', async () => {
    const e = await refused(peerList('wcn.l2bridge.conf'), await pod('s1'));
    expect([e.code, e.msg]).toEqual([
      7,
      'invalid network configuration: HNS network "l2bridgeNetwork" does not exist and "master" asks to create it, but its type is not known: sdnbridge took it from "type"; set "networkType" to "L2Bridge", "Overlay", "NAT" or "L2Tunnel" (what the old type meant)',
    ]);
    const list = peerList('wcn.l2bridge.conf', { networkType: 'L2Bridge' });
    const r = await pod('s1');
    await rt.cni.add(list, r);
    // cni/cni.go GetNetworkInfo: subnet from ipam.subnet, gateway ipam.routes[0].GW, the adapter from master.
    const [net] = await networks(h);
    expect(net).toMatchObject({ Name: 'l2bridgeNetwork', Type: 'L2Bridge' });
    expect(JSON.stringify(net)).toContain('"IpAddressPrefix":"192.168.1.0/24"');
    expect(JSON.stringify(net)).toContain('"NextHop":"192.168.1.2"');
    expect(JSON.stringify(net)).toContain('"NetworkAdapterName":"Ethernet"');
    const [ep] = await endpoints(h);
    expect(ofType(ep!, 'OutBoundNAT')).toEqual([{ Exceptions: ['192.168.0.0/16', '11.0.0.0/8', '10.124.24.0/23'] }]);
    expect(ofType(ep!, 'SDNRoute')).toEqual([
      { DestinationPrefix: '11.0.0.0/8', NeedEncap: true },
      { DestinationPrefix: '10.124.24.196/32', NeedEncap: true },
    ]);
    // GetNetworkInfo: the pod namespace is put in front of the first search entry.
    expect(ep!.Dns).toMatchObject({
      ServerList: ['11.0.0.10'],
      Search: ['web.svc.cluster.local', 'svc.cluster.local'],
    });
    await tearDown(list, r);
    // sdnbridge never deletes its network; neither do we.
    expect((await networks(h)).map((n) => n.Name)).toEqual(['l2bridgeNetwork']);
  });

  it('nat.conf and l2tunnel.conf: with networkType, the NAT and L2Tunnel networks sdnbridge would create', async () => {
    standInIpam(h, rt.bin, 'azure-vnet-ipam', '10.240.0.0/16');
    for (const [file, type, prefix] of [
      ['wcn.nat.conf', 'NAT', '192.168.100.0/24'],
      ['wcn.l2tunnel.conf', 'L2Tunnel', '10.240.0.0/12'],
    ] as const) {
      const list = peerList(file, { networkType: type });
      const r = await pod(`p-${type}`);
      await rt.cni.add(list, r);
      const net = (await networks(h)).find((n) => n.Name === list.name)!;
      // HCN omits a zero enum, and NAT is zero.
      expect(net.Type ?? 'NAT').toBe(type);
      expect(JSON.stringify(net)).toContain(`"IpAddressPrefix":"${prefix}"`);
      await rt.cni.del(list, r);
    }
    expect(await endpoints(h)).toEqual([]);
  });

  it('l2bridgedualstack_host-local_ipam.conf: dual-stack from host-local on the dual-stack network sdnbridge expects', async () => {
    // enableDualStack needs the network to exist (sdnbridge cni/cni.go); an HCN network with one subnet per family.
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNetwork({
      Name: 'winl2bridge',
      Type: 'L2Bridge',
      Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } }],
      Ipams: [
        {
          Type: 'Static',
          Subnets: [
            { IpAddressPrefix: '192.168.1.0/24', Routes: [{ NextHop: '192.168.1.2', DestinationPrefix: '0.0.0.0/0' }] },
            { IpAddressPrefix: 'fd00::100/120', Routes: [{ NextHop: 'fd00::101', DestinationPrefix: '::/0' }] },
          ],
        },
      ],
    });
    const list = peerList('wcn.l2bridgedualstack_host-local_ipam.conf');
    list.plugins[0]!.ipam = { ...(list.plugins[0]!.ipam as object), dataDir: path.join(h.tmp, 'ipam') };
    const r = await pod('ds');
    const result = await rt.cni.add(list, r);
    // 0.2.0: the IPv4 address as ip4, the IPv6 one as ip6.
    expect(result).toMatchObject({
      cniVersion: '0.2.0',
      ip4: { ip: '192.168.1.10/24', gateway: '192.168.1.2' },
      ip6: { ip: 'fd00::102/120', gateway: 'fd00::101' },
    });
    const eps = await endpoints(h);
    const ep = eps[0];
    expect(eps.flatMap((e) => (e.IpConfigurations as Array<{ IpAddress: string }>).map((c) => c.IpAddress))).toEqual([
      '192.168.1.10',
      'fd00::102',
    ]);
    // Both OutBoundNAT policies as configured (one per family), the routes of both families.
    expect(ofType(ep!, 'OutBoundNAT')).toEqual([
      { Exceptions: ['192.168.0.0/16', '11.0.0.0/8', '10.124.24.0/23'] },
      {
        VirtualIP: 'fc00::123',
        Destinations: ['fd01::192', 'fd01::193'],
        Exceptions: ['fd03::100/120', 'fd04::100/120'],
      },
    ]);
    expect(ofType(ep!, 'SDNRoute')).toEqual([
      { DestinationPrefix: '11.0.0.0/8', NeedEncap: true },
      { DestinationPrefix: 'fd00::200/120', NeedEncap: true },
    ]);
    // sdnbridge's own flags are named, each on a warn line.
    expect(warnings()).toContain('"optionalFlags.enableDualStack" is not supported and is ignored');
    await tearDown(list, r);
    expect(heldIps(h, 'winl2bridge')).toEqual({});
  });

  it('l2bridge-dualstack-cni-template.conf is a template: refused naming the placeholder to fill in', async () => {
    const e = await refused(peerList('wcn.l2bridge-dualstack-cni-template.conf'), await pod('t'), { parses: false });
    expect([e.code, e.msg]).toEqual([
      7,
      expect.stringContaining(
        '"name" must be a letter or digit followed by letters, digits, "_", "." or "-" (at most 128 characters), got "{{NAME}}"',
      ),
    ]);
  });

  it.each(['wcn.flannel_l2bridge.conf', 'wcn.flannel_overlay.conf'])(
    '%s is not valid JSON upstream (U+00A0): libcni cannot load it',
    (file) => {
      expect(fs.readFileSync(path.join(PEERS, file), 'utf8')).toContain('\u00a0');
      expect(() => peerList(file)).toThrow(/error parsing configuration/);
    },
  );
});

describe('Azure/azure-container-networking cni/azure-windows*.conflist', () => {
  const AZURE = SOURCES.filter((s) => s.path.startsWith('cni/azure-windows')).map((s) => s.file);

  it.each(AZURE)(
    '%s: with a stand-in for its IPAM daemon and the network Azure CNI would have made, it runs',
    async (file) => {
      for (const ipam of ['azure-vnet-ipam', 'azure-cns']) standInIpam(h, rt.bin, ipam);
      const list = peerList(file);
      // Azure CNI creates its "azure" network itself; hcn-cni attaches to an existing one and says how to get it.
      const e = await refused(list, await pod('az'));
      expect([e.code, e.msg]).toEqual([
        101,
        'HNS network "azure" does not exist; create it, or set "createNetwork": true with a "subnet"',
      ]);
      await makeNetwork(h, {
        name: 'azure',
        type: 'L2Bridge',
        subnet: '10.240.0.0/16',
        gateway: '10.240.0.1',
        adapter: 'Ethernet',
      });

      const r = await pod('az', {
        capabilityArgs: { portMappings: [{ hostPort: 8443, containerPort: 443, protocol: 'tcp' }] },
      });
      const result = await rt.cni.add(list, r);
      // (host-local hands out the next address: the refused ADD's allocation was released, not reused.)
      expect(result).toMatchObject({
        cniVersion: list.cniVersion,
        ips: [
          expect.objectContaining({ address: expect.stringMatching(/^10\.240\.0\.\d+\/16$/), gateway: '10.240.0.1' }),
        ],
      });
      const [ep] = await endpoints(h);
      const plugin = list.plugins[0]!;
      const args = (plugin.AdditionalArgs ?? []) as Array<{ Value: Record<string, unknown> }>;
      // network/policy/policy_windows.go: the v1 shapes become HCN's (GetHcnOutBoundNATPolicy, GetHcnRoutePolicy,
      // GetHcnACLPolicy): ExceptionList → Exceptions, ROUTE → SDNRoute, ACL fields as they are.
      const nat = args
        .filter((a) => a.Value.Type === 'OutBoundNAT')
        .map((a) => ({ Exceptions: a.Value.ExceptionList }));
      expect(ofType(ep!, 'OutBoundNAT')).toEqual(nat);
      const routes = args
        .filter((a) => a.Value.Type === 'ROUTE')
        .map((a) => ({ DestinationPrefix: a.Value.DestinationPrefix, NeedEncap: a.Value.NeedEncap }));
      expect(ofType(ep!, 'SDNRoute')).toEqual(routes);
      const acls = args
        .filter((a) => a.Value.Type === 'ACL')
        .map((a) => Object.fromEntries(Object.entries(a.Value).filter(([k]) => k !== 'Type')));
      expect(ofType(ep!, 'ACL')).toEqual(acls);
      if ((plugin.capabilities as Record<string, boolean>).portMappings)
        expect(ofType(ep!, 'PortMapping')).toEqual([{ Protocol: 6, InternalPort: 443, ExternalPort: 8443 }]);
      // Azure-only keys are named, each on its own warn line.
      for (const k of ['multiTenancy', 'enableSnatOnHost', 'bridge', 'executionMode', 'disableAsyncDelete']) {
        if (k in plugin) expect(warnings()).toContain(`unknown key "${k}" is ignored`);
      }
      if (list.cniVersion >= '0.4.0') await rt.cni.check(list, r);
      await tearDown(list, r);
      expect(heldIps(h, 'azure')).toEqual({});
    },
  );
});
