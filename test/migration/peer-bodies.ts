/**
 * The peers' HNS objects, built as each peer's source builds them (cited per builder), on the node (the harness)
 * the migration suites bind with bindNode, and the 5-pod switch-over of each peer (run in process by the per-peer
 * suites, through the shim and the service by test/migration/service.test.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Harness } from '../helpers/cni-harness';
import { makeNetwork, PEERS } from '../peers/support';
import { heldIps } from '../plugin/support';
import {
  addressesOfDump,
  createEndpointV1,
  createEndpointV2,
  createNetworkV2,
  hostLocalAdd,
  ipOf,
  liveEndpoints,
  migrate,
  newNamespace,
  sandboxId,
  type Json,
  type PeerPod,
  type Runner,
} from './support';

let h: Harness;
/** The node the builders populate (the suite's harness). */
export function bindNode(x: Harness): void {
  h = x;
}

/** Adapters of a node with delegated NICs (Azure's FrontendNIC set-up): the host's and seven pod NICs. */
export const NICS = [1, 2, 3, 4, 5, 6, 7].map((i) => ({ Name: `NIC ${i}`, MacAddress: `00-15-5D-AB-00-0${i}` }));
export const NIC_HOST = { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, ...NICS] };

// ---- win-bridge (containernetworking/plugins plugins/main/windows/win-bridge) ----

/** win-bridge sample-v2.conf's delegate (apiVersion 2, typed policies, loopbackDSR) with host-local added. */
export function winBridgeConf(): Json {
  return {
    cniVersion: '1.0.0',
    name: 'cbr0',
    type: 'win-bridge',
    apiVersion: 2,
    dns: { nameservers: ['11.0.0.10'], search: ['svc.cluster.local'] },
    policies: [
      {
        name: 'EndpointPolicy',
        value: { Type: 'OutBoundNAT', Settings: { Exceptions: ['192.168.0.0/16', '11.0.0.0/8', '10.137.196.0/23'] } },
      },
      {
        name: 'EndpointPolicy',
        value: { Type: 'SDNRoute', Settings: { DestinationPrefix: '11.0.0.0/8', NeedEncap: true } },
      },
    ],
    loopbackDSR: true,
    ipam: {
      type: 'host-local',
      dataDir: path.join(h.tmp, 'ipam'),
      // Seven addresses: the new pods need the deleted pods' back (host-local wraps round to them).
      ranges: [[{ subnet: '10.244.1.0/24', rangeStart: '10.244.1.10', rangeEnd: '10.244.1.16' }]],
    },
  };
}

/** The L2Bridge network win-bridge attaches to (it never creates one): what the node's bootstrap made. */
export async function cbr0(): Promise<string> {
  return l2BridgeNetwork('cbr0');
}

/** An L2Bridge network as cbr0 is, under another name (win-bridge's network is named as the CNI network). */
export async function l2BridgeNetwork(name: string): Promise<string> {
  return createNetworkV2(h, {
    SchemaVersion: { Major: 2, Minor: 0 },
    Name: name,
    Type: 'L2Bridge',
    Ipams: [
      {
        Type: 'Static',
        Subnets: [
          { IpAddressPrefix: '10.244.1.0/24', Routes: [{ NextHop: '10.244.1.1', DestinationPrefix: '0.0.0.0/0' }] },
        ],
      },
    ],
    Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } }],
  });
}

/**
 * One pod as win-bridge's cmdHcnAdd leaves it: host-local's address (processEndpointArgs: ipam.ExecAdd; gateway =
 * the subnet's base + 2), then pkg/hns/endpoint_windows.go GenerateHcnEndpoint's body — Name ConstructEndpointName
 * (`<id>_<name>`), Dns, one default route via that gateway, IpConfigurations [{IpAddress}], the configured policies
 * plus ApplyLoopbackDSRPolicy's `{"Type":"OutBoundNAT","Settings":{"Destinations":["<ip>"]}}` — and AddHcnEndpoint's
 * hcn.AddNamespaceEndpoint(netns).
 */
export async function winBridgePod(conf: Json, networkId: string, network = 'cbr0'): Promise<PeerPod> {
  const pod = { containerId: sandboxId(), ifname: 'eth0', netns: await newNamespace(h) };
  const result = hostLocalAdd(conf, pod);
  const ip = ipOf(result);
  const gateway = ip.split('.').slice(0, 3).join('.') + '.2';
  const name = `${pod.containerId}_${network}`;
  const policies = (conf.policies as Array<{ value: Json }>).map((p) => p.value);
  const endpointId = await createEndpointV2(
    h,
    networkId,
    {
      SchemaVersion: { Major: 2, Minor: 0 },
      Name: name,
      HostComputeNetwork: networkId,
      Dns: { Search: ['svc.cluster.local'], ServerList: ['11.0.0.10'] },
      Routes: [{ NextHop: gateway, DestinationPrefix: '0.0.0.0/0' }],
      IpConfigurations: [{ IpAddress: ip }],
      Policies: [...policies, { Type: 'OutBoundNAT', Settings: { Destinations: [ip] } }],
    },
    pod.netns,
  );
  return { ...pod, endpointId, endpointName: name, ip, result: { cniVersion: '1.0.0', ...result } };
}

// ---- win-overlay (containernetworking/plugins plugins/main/windows/win-overlay) ----

export function winOverlayConf(name = 'vxlan0', range = { rangeStart: '10.244.2.10', rangeEnd: '10.244.2.16' }): Json {
  return {
    cniVersion: '1.0.0',
    name,
    type: 'win-overlay',
    dns: { nameservers: ['11.0.0.10'], search: ['svc.cluster.local'] },
    policies: [
      { name: 'EndpointPolicy', value: { Type: 'OutBoundNAT', ExceptionList: ['192.168.0.0/16', '11.0.0.0/8'] } },
      { name: 'EndpointPolicy', value: { Type: 'ROUTE', DestinationPrefix: '11.0.0.0/8', NeedEncap: true } },
    ],
    ipam: {
      type: 'host-local',
      dataDir: path.join(h.tmp, 'ipam'),
      ranges: [[{ subnet: '10.244.2.0/24', ...range }]],
    },
  };
}

/**
 * One pod as win-overlay's cmdHnsAdd leaves it: host-local's address; the HNSEndpoint it builds — Name
 * ConstructEndpointName (`<id>_<name>`), VirtualNetwork, DNSServerList/DNSSuffix joined with ",", GatewayAddress the
 * network's subnet gateway, MacAddress `<endpointMacPrefix>-%02x-%02x-%02x-%02x` of the IPv4 bytes (default 0E-2A),
 * Policies the configured ones plus ApplyDefaultPAPolicy's `{"Type":"PA","PA":<ManagementIP>}` — then
 * pkg/hns/endpoint_windows.go AddHnsEndpoint's HotAttachEndpoint(containerID, id).
 */
export async function winOverlayPod(conf: Json, networkId: string): Promise<PeerPod> {
  const pod = { containerId: sandboxId(), ifname: 'eth0', netns: 'none' };
  const result = hostLocalAdd(conf, pod);
  const ip = ipOf(result);
  const mac = ['0E-2A', ...ip.split('.').map((b) => Number(b).toString(16).padStart(2, '0'))].join('-');
  const name = `${pod.containerId}_${String(conf.name)}`;
  const endpointId = await createEndpointV1(
    h,
    {
      Name: name,
      VirtualNetwork: networkId,
      DNSServerList: '11.0.0.10',
      DNSSuffix: 'svc.cluster.local',
      GatewayAddress: '10.244.2.1',
      IPAddress: ip,
      MacAddress: mac,
      Policies: [...(conf.policies as Array<{ value: Json }>).map((p) => p.value), { Type: 'PA', PA: '10.0.0.4' }],
    },
    pod.containerId,
  );
  return { ...pod, endpointId, endpointName: name, ip, result: { cniVersion: '1.0.0', ...result } };
}

// ---- sdnbridge (microsoft/windows-container-networking plugins/sdnbridge) ----

export const sdnConf = (): Json => JSON.parse(fs.readFileSync(path.join(PEERS, 'wcn.l2bridge.conf'), 'utf8')) as Json;

/**
 * The network sdnbridge's getOrCreateNetwork creates on the first ADD (common/core/network.go), in
 * network/network.go GetHostComputeNetworkConfig's shape: the config's name, type L2Bridge (from `type`: cni/cni.go),
 * a Static Ipam with ipam.subnet and its gateway (ipam.routes[0].GW: cni/cni.go GetNetworkInfo), the DNS, and the
 * NetAdapterName policy for `master`.
 */
export async function sdnNetwork(): Promise<string> {
  return createNetworkV2(h, {
    SchemaVersion: { Major: 2, Minor: 0 },
    Name: 'l2bridgeNetwork',
    Type: 'L2Bridge',
    Ipams: [
      {
        Type: 'Static',
        Subnets: [
          { IpAddressPrefix: '192.168.1.0/24', Routes: [{ NextHop: '192.168.1.2', DestinationPrefix: '0.0.0.0/0' }] },
        ],
      },
    ],
    Dns: { Search: ['svc.cluster.local'], ServerList: ['11.0.0.10'] },
    Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } }],
  });
}

/**
 * One pod as sdnbridge's Add leaves it: network/endpoint.go GetHostComputeEndpoint's body — Name
 * `<CNI_CONTAINERID>_<name>` (cni/cni.go GetEndpointInfo), Dns, the default route via the subnet's gateway, no
 * IpConfigurations (no IPAM: HNS assigns), the AdditionalArgs EndpointPolicy entries — then network/manager.go
 * CreateEndpoint's hcn.AddNamespaceEndpoint.
 */
export async function sdnPod(networkId: string, cniName = 'l2bridgeNetwork'): Promise<PeerPod> {
  const pod = { containerId: sandboxId(), ifname: 'eth0', netns: await newNamespace(h) };
  const name = `${pod.containerId}_${cniName}`;
  const policies = (sdnConf().AdditionalArgs as Array<{ Value: Json }>).map((a) => a.Value);
  const endpointId = await createEndpointV2(
    h,
    networkId,
    {
      SchemaVersion: { Major: 2, Minor: 0 },
      Name: name,
      HostComputeNetwork: networkId,
      Dns: { Search: ['svc.cluster.local'], ServerList: ['11.0.0.10'] },
      Routes: [{ NextHop: '192.168.1.2', DestinationPrefix: '0.0.0.0/0' }],
      Policies: policies,
    },
    pod.netns,
  );
  const ep = (await liveEndpoints(h)).find((e) => e.ID === endpointId)!;
  const ip = addressesOfDump(ep)[0]!;
  // GetCurrResult: the interface is CNI_IFNAME, the address the one HNS chose.
  const result = { cniVersion: '1.0.0', ips: [{ address: `${ip}/24`, gateway: '192.168.1.2' }] };
  return { ...pod, endpointId, endpointName: name, ip, result };
}

// ---- Azure CNI (Azure/azure-container-networking), bridge ----

/** cni/azure-windows.conflist's plugin, with host-local standing in for azure-vnet-ipam (seven addresses). */
export function azureConf(): Json {
  const list = JSON.parse(fs.readFileSync(path.join(PEERS, 'azure-windows.conflist'), 'utf8')) as {
    plugins: Json[];
  };
  return {
    ...list.plugins[0],
    cniVersion: '1.0.0',
    name: 'azure',
    ipam: {
      type: 'host-local',
      dataDir: path.join(h.tmp, 'ipam'),
      ranges: [
        [{ subnet: '10.240.0.0/16', rangeStart: '10.240.0.10', rangeEnd: '10.240.0.16', gateway: '10.240.0.1' }],
      ],
    },
  };
}

/**
 * The `azure` network as network/network_windows.go configureHcnNetwork creates it: L2Bridge, a Static Ipam with the
 * subnet and its gateway route, Flags EnableNonPersistent (8), the NetAdapterName policy of the master NIC.
 */
export async function azureNetwork(): Promise<string> {
  return createNetworkV2(h, {
    SchemaVersion: { Major: 2, Minor: 0 },
    Name: 'azure',
    Type: 'L2Bridge',
    Flags: 8,
    Ipams: [
      {
        Type: 'Static',
        Subnets: [
          { IpAddressPrefix: '10.240.0.0/16', Routes: [{ NextHop: '10.240.0.1', DestinationPrefix: '0.0.0.0/0' }] },
        ],
      },
    ],
    Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } }],
  });
}

/**
 * One pod as Azure's HNS v2 path leaves it (network/endpoint_windows.go configureHcnEndpoint, newEndpointImplHnsV2):
 * Name ConstructEndpointID (`<first 8>-<ifname>`), Dns Search split from the suffix and ServerList, the policies
 * from AdditionalArgs (policy/policy_windows.go GetHcnOutBoundNATPolicy: ExceptionList → Exceptions; GetHcnRoutePolicy:
 * ROUTE → SDNRoute), the routes IPAM returned (the default route via the gateway), IpConfigurations with the prefix
 * length, then AddNamespaceEndpoint.
 */
export async function azurePod(conf: Json, networkId: string, containerId = sandboxId()): Promise<PeerPod> {
  const pod = { containerId, ifname: 'eth0', netns: await newNamespace(h) };
  const result = hostLocalAdd(conf, pod);
  const ip = ipOf(result);
  const name = `${containerId.slice(0, 8)}-eth0`;
  const endpointId = await createEndpointV2(
    h,
    networkId,
    {
      SchemaVersion: { Major: 2, Minor: 0 },
      Name: name,
      HostComputeNetwork: networkId,
      Dns: { Search: ['svc.cluster.local'], ServerList: ['10.0.0.10', '168.63.129.16'] },
      Policies: [
        { Type: 'OutBoundNAT', Settings: { Exceptions: ['10.240.0.0/16', '10.0.0.0/8'] } },
        { Type: 'SDNRoute', Settings: { DestinationPrefix: '10.0.0.0/8', NeedEncap: true } },
      ],
      Routes: [{ NextHop: '10.240.0.1', DestinationPrefix: '0.0.0.0/0' }],
      IpConfigurations: [{ IpAddress: ip, PrefixLength: 16 }],
    },
    pod.netns,
  );
  return { ...pod, endpointId, endpointName: name, ip, result: { cniVersion: '1.0.0', ...result } };
}

// ---- Azure CNI, delegated NIC (SwiftV2 FrontendNIC) ----

export const azureMac = (mac: string) => mac.toLowerCase().replace(/-/g, ':');

/**
 * A delegated NIC's network as network/network_windows.go configureHcnNetwork makes it for a FrontendNIC:
 * Transparent, Flags EnableNonPersistent | DisableHostPort | EnableIov (8 + 1024 + 8192), named by
 * cni/network/network_windows.go getNetworkName `"azure-" + MacAddress.String()` (Go's net.HardwareAddr: lower-case,
 * colons), bound to the NIC (NetAdapterName policy).
 */
export async function nicNetwork(nic: (typeof NICS)[number], subnet: string): Promise<string> {
  return createNetworkV2(h, {
    SchemaVersion: { Major: 2, Minor: 0 },
    Name: `azure-${azureMac(nic.MacAddress)}`,
    Type: 'Transparent',
    Flags: 8 | 1024 | 8192,
    Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: subnet }] }],
    Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: nic.Name } }],
  });
}

/**
 * The pod's endpoint in it (configureHcnEndpoint for NICType FrontendNIC): Name `<first 8>-eth<N>` (createEpInfo:
 * a non-infra NIC is "eth" + its index), the NIC's MAC in dashes, the address CNS gave, the Iov policy
 * (policy_windows.go AddAccelnetPolicySetting: IovOffloadWeight 100, QueuePairsRequested 1, InterruptModeration 0),
 * in the pod's namespace.
 */
export async function nicPod(nic: (typeof NICS)[number], i: number): Promise<PeerPod> {
  const pod = { containerId: sandboxId(), ifname: 'eth0', netns: await newNamespace(h) };
  const net = await nicNetwork(nic, `10.20.${i}.0/24`);
  const ip = `10.20.${i}.4`;
  const name = `${pod.containerId.slice(0, 8)}-eth1`;
  const endpointId = await createEndpointV2(
    h,
    net,
    {
      SchemaVersion: { Major: 2, Minor: 0 },
      Name: name,
      HostComputeNetwork: net,
      MacAddress: nic.MacAddress.toLowerCase(),
      IpConfigurations: [{ IpAddress: ip, PrefixLength: 24 }],
      Policies: [{ Type: 'Iov', Settings: { IovOffloadWeight: 100, QueuePairsRequested: 1, InterruptModeration: 0 } }],
    },
    pod.netns,
  );
  return { ...pod, endpointId, endpointName: name, ip };
}

// ---- the switch-overs: 5 pods running, DEL 3, ADD 5, GC (support.ts migrate) ----

/** win-bridge: the deleted pods' endpoints removed and their addresses back with host-local, reused by new pods. */
export async function winBridgeScenario(run?: Runner): Promise<void> {
  const net = await cbr0();
  const conf = winBridgeConf();
  const pods: PeerPod[] = [];
  for (let i = 0; i < 5; i++) pods.push(await winBridgePod(conf, net));
  // Another configuration's pod on the same HNS network (win-bridge with CNI name "other"): not ours to judge.
  const otherIpam = {
    ...(conf.ipam as Json),
    ranges: [[{ subnet: '10.244.1.0/24', rangeStart: '10.244.1.40', rangeEnd: '10.244.1.50' }]],
  };
  const other = await winBridgePod({ ...conf, name: 'other', ipam: otherIpam }, net, 'other');
  const out = await migrate({
    h,
    conf: { ...conf, type: 'hcn-cni' },
    pods,
    bystanders: [other.endpointId],
    netns: () => newNamespace(h),
    ipamName: 'cbr0',
    ...(run ? { run } : {}),
  });
  // The deleted pods' addresses went back to host-local, which handed them to new pods (it wraps round in its
  // seven addresses), and HNS took them: their endpoints were gone.
  const held = heldIps(h, 'cbr0');
  const newIps = out.newPods.map((p) => ipOf(p.result!));
  expect(newIps).toEqual(expect.arrayContaining(pods.slice(0, 3).map((p) => p.ip)));
  expect(out.newPods.map((p) => held[ipOf(p.result!)])).toEqual(out.newPods.map((p) => p.containerId));
  // Nothing kept: no tombstone holds an IP back.
  const dir = path.join(h.stateDir, 'tombstones');
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    expect(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).ipamPending).toBeUndefined();
  expect((await liveEndpoints(h)).length).toBe(2 + 1 + 5);
}

/** win-overlay on a Docker node (HNS v1, netns "none", hot-attached): DEL hot-detaches and deletes. */
export async function winOverlayScenario(run?: Runner): Promise<void> {
  // The Overlay network flannel made through HNS v1, with the host's ManagementIP (win-overlay never creates one).
  const net = await makeNetwork(h, {
    name: 'vxlan0',
    type: 'Overlay',
    subnet: '10.244.2.0/24',
    gateway: '10.244.2.1',
    managementIp: '10.0.0.4',
  });
  const conf = winOverlayConf();
  const pods: PeerPod[] = [];
  for (let i = 0; i < 5; i++) pods.push(await winOverlayPod(conf, net));
  const other = await winOverlayPod(
    winOverlayConf('other', { rangeStart: '10.244.2.40', rangeEnd: '10.244.2.50' }),
    net,
  );
  const out = await migrate({
    h,
    conf: { ...conf, type: 'hcn-cni' },
    pods,
    bystanders: [other.endpointId],
    netns: async () => 'none',
    ipamName: 'vxlan0',
    ...(run ? { run } : {}),
  });
  // The deleted pods' sandboxes no longer have a vNIC of theirs (hot-detached as win-overlay's DEL does).
  const dump = await h.sim.control.dump();
  for (const p of pods.slice(0, 3))
    expect(dump.computeSystems.find((c) => c.ID === p.containerId)?.Endpoints ?? []).toEqual([]);
  const newIps = out.newPods.map((p) => ipOf(p.result!));
  expect(newIps).toEqual(expect.arrayContaining(pods.slice(0, 3).map((p) => p.ip)));
  expect((await liveEndpoints(h)).length).toBe(2 + 1 + 5);
}

/** sdnbridge: HNS-assigned addresses; DEL detaches from the namespace and deletes. */
export async function sdnbridgeScenario(run?: Runner): Promise<void> {
  const net = await sdnNetwork();
  const pods: PeerPod[] = [];
  for (let i = 0; i < 5; i++) pods.push(await sdnPod(net));
  const other = await sdnPod(net, 'otherNetwork');
  await migrate({
    h,
    conf: { ...sdnConf(), type: 'hcn-cni', cniVersion: '1.0.0' },
    pods,
    bystanders: [other.endpointId],
    netns: () => newNamespace(h),
    ...(run ? { run } : {}),
  });
  expect((await liveEndpoints(h)).length).toBe(2 + 1 + 5);
}

/**
 * Azure bridge with adopt: ["azure"]. The bystander: a pod of another configuration whose id shares the first 8
 * characters of a deleted pod — its endpoint has the very name Azure gave the deleted pod's, in its own namespace.
 */
export async function azureScenario(run?: Runner): Promise<void> {
  const net = await azureNetwork();
  const conf = azureConf();
  const pods: PeerPod[] = [];
  for (let i = 0; i < 5; i++) pods.push(await azurePod(conf, net));
  const otherNet = await createNetworkV2(h, {
    SchemaVersion: { Major: 2, Minor: 0 },
    Name: 'other',
    Type: 'L2Bridge',
    Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.241.0.0/16' }] }],
  });
  const twin = await createEndpointV2(
    h,
    otherNet,
    { SchemaVersion: { Major: 2, Minor: 0 }, Name: `${pods[0]!.containerId.slice(0, 8)}-eth0` },
    await newNamespace(h),
  );
  await migrate({
    h,
    conf: { ...conf, type: 'hcn-cni', adopt: ['azure'] },
    pods,
    bystanders: [twin],
    netns: () => newNamespace(h),
    ipamName: 'azure',
    ...(run ? { run } : {}),
  });
}

/**
 * Azure delegated NICs with adopt: ["azure"]: DEL removes each pod's NIC endpoint; the audit of the next ADD removes
 * the emptied azure-<mac> networks and the one Azure's killed ADD leaked (Azure/azure-container-networking issue 4540); new pods get those NICs.
 */
export async function delegatedScenario(run?: Runner): Promise<void> {
  const pods: PeerPod[] = [];
  for (let i = 0; i < 5; i++) pods.push(await nicPod(NICS[i]!, i));
  const leaked = await nicNetwork(NICS[5]!, '10.20.5.0/24');
  const nicOf = new Map(pods.map((p, i) => [p.containerId, NICS[i]!]));
  const free = [NICS[0]!, NICS[1]!, NICS[2]!, NICS[5]!, NICS[6]!];
  const conf = { cniVersion: '1.0.0', name: 'delegated', type: 'hcn-cni', mode: 'delegatedNic', adopt: ['azure'] };
  const subnetOf = (mac: string) => `10.30.${NICS.findIndex((n) => n.MacAddress === mac)}.0/24`;
  const netName = (p: PeerPod) => `azure-${azureMac(nicOf.get(p.containerId)!.MacAddress)}`;
  const survivorNets = (await h.sim.control.dump()).networks.filter((n) =>
    pods.slice(3).some((p) => n.Name === netName(p)),
  );
  await migrate({
    h,
    conf,
    pods,
    bystanders: [],
    netns: () => newNamespace(h),
    perPod: (_i, pod) => {
      let nic = nicOf.get(pod.containerId);
      if (!nic) nicOf.set(pod.containerId, (nic = free.shift()!));
      return { runtimeConfig: { mac: nic.MacAddress }, subnet: subnetOf(nic.MacAddress) };
    },
    ...(run ? { run } : {}),
  });
  const networks = (await h.sim.control.dump()).networks;
  expect(networks.find((n) => n.ID === leaked)).toBeUndefined();
  for (const p of pods.slice(0, 3)) expect(networks.map((n) => n.Name)).not.toContain(netName(p));
  expect(networks.filter((n) => survivorNets.some((s) => s.ID === n.ID))).toEqual(survivorNets);
}
