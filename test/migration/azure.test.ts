/**
 * Migrating from Azure CNI (Azure/azure-container-networking) with 5 pods running: the bridge set-up
 * (cni/azure-windows.conflist: the `azure` L2Bridge network, endpoints `<first 8 of the id>-eth0`) and the delegated
 * NIC (SwiftV2 FrontendNIC: a Transparent network `azure-<mac>` per NIC, endpoint `<first 8>-eth<N>` in it). Azure's
 * endpoint names do not identify one pod, so hcn-cni acts on them only with `adopt: ["azure"]`; without it the
 * endpoints and their addresses stay. azure-vnet-ipam needs its daemon: its place is taken by host-local over the
 * same subnet (as in test/peers), whose state is then what "Azure's IPAM" left.
 */
import * as fs from 'fs';
import * as path from 'path';
import { cni, useHarness, type Harness } from '../helpers/cni-harness';
import { PEERS } from '../peers/support';
import { heldIps } from '../plugin/support';
import {
  createEndpointV2,
  createNetworkV2,
  expectNoAddressTwice,
  hostLocalAdd,
  ipOf,
  liveEndpoints,
  migrate,
  newNamespace,
  sandboxId,
  type Json,
  type PeerPod,
} from './support';

const NICS = [1, 2, 3, 4, 5, 6, 7].map((i) => ({ Name: `NIC ${i}`, MacAddress: `00-15-5D-AB-00-0${i}` }));
const HOST = { adapters: [{ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }, ...NICS] };

let h: Harness;
useHarness(HOST, (x) => (h = x));

/** cni/azure-windows.conflist's plugin, with host-local standing in for azure-vnet-ipam (seven addresses). */
function azureConf(): Json {
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
async function azureNetwork(): Promise<string> {
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
async function azurePod(conf: Json, networkId: string, containerId = sandboxId()): Promise<PeerPod> {
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

describe('Azure CNI, bridge (azure-windows.conflist)', () => {
  it('with adopt: ["azure"]: DEL 3 removes their <id8>-eth0 endpoints, ADD 5, GC; survivors and bystanders untouched', async () => {
    const net = await azureNetwork();
    const conf = azureConf();
    const pods: PeerPod[] = [];
    for (let i = 0; i < 5; i++) pods.push(await azurePod(conf, net));
    // A pod of another runtime's configuration whose id shares the first 8 characters of a pod that is deleted: the
    // same name as that pod's endpoint would be under Azure's scheme, in its own namespace, on another network.
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
    });
  });

  it('without the opt-in: DEL leaves their endpoints and keeps their IPs (no address handed out twice); adopting later frees them', async () => {
    const net = await azureNetwork();
    const conf = azureConf();
    const pods: PeerPod[] = [];
    for (let i = 0; i < 5; i++) pods.push(await azurePod(conf, net));
    const hcnConf = { ...conf, type: 'hcn-cni' };
    for (const p of pods.slice(0, 3)) {
      const del = await cni(h, {
        verb: 'DEL',
        conf: { ...hcnConf, prevResult: p.result },
        containerId: p.containerId,
        netns: p.netns,
      });
      expect(del.exitCode).toBe(0);
    }
    expect((await liveEndpoints(h)).map((e) => e.Name).sort()).toEqual(pods.map((p) => p.endpointName).sort());
    const held = heldIps(h, 'azure');
    for (const p of pods) expect([p.ip, held[p.ip!]]).toEqual([p.ip, p.containerId]);
    // Two addresses are left of seven: two new pods get them, a third finds none (not one HNS would refuse).
    for (let i = 0; i < 2; i++) {
      const add = await cni(h, { verb: 'ADD', conf: hcnConf, containerId: sandboxId(), netns: await newNamespace(h) });
      expect(add.exitCode).toBe(0);
    }
    await expectNoAddressTwice(h, 'after the ADDs');
    const exhausted = await cni(h, {
      verb: 'ADD',
      conf: hcnConf,
      containerId: sandboxId(),
      netns: await newNamespace(h),
    });
    expect(exhausted.json).toMatchObject({ code: 102 });

    // The operator opts in; the runtime's retried DELs remove the endpoints, and the IPs go back to IPAM.
    for (const p of pods.slice(0, 3)) {
      const del = await cni(h, {
        verb: 'DEL',
        conf: { ...hcnConf, adopt: ['azure'] },
        containerId: p.containerId,
        netns: p.netns,
      });
      expect(del.exitCode).toBe(0);
    }
    const left = (await liveEndpoints(h)).map((e) => e.Name);
    for (const p of pods.slice(0, 3)) expect(left).not.toContain(p.endpointName);
    const add = await cni(h, { verb: 'ADD', conf: hcnConf, containerId: sandboxId(), netns: await newNamespace(h) });
    expect(add.exitCode).toBe(0);
    await expectNoAddressTwice(h, 'after the ADD with the addresses back');
  });

  it("with the opt-in, an <id8>-eth0 endpoint in another namespace than the DEL names is another pod's: left, its IP kept", async () => {
    const net = await azureNetwork();
    const conf = azureConf();
    const pod = await azurePod(conf, net);
    const del = await cni(h, {
      verb: 'DEL',
      conf: { ...conf, type: 'hcn-cni', adopt: ['azure'], prevResult: pod.result },
      // Another pod whose id begins with the same 8 characters.
      containerId: `${pod.containerId.slice(0, 8)}${'f'.repeat(56)}`,
      netns: await newNamespace(h),
    });
    expect(del.exitCode).toBe(0);
    expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([pod.endpointName]);
    expect(heldIps(h, 'azure')[pod.ip!]).toBe(pod.containerId);
  });
});

describe('Azure CNI, delegated NIC (SwiftV2 FrontendNIC)', () => {
  const azureMac = (mac: string) => mac.toLowerCase().replace(/-/g, ':');

  /**
   * A delegated NIC's network as network/network_windows.go configureHcnNetwork makes it for a FrontendNIC:
   * Transparent, Flags EnableNonPersistent | DisableHostPort | EnableIov (8 + 1024 + 8192), named by
   * cni/network/network_windows.go getNetworkName `"azure-" + MacAddress.String()` (Go's net.HardwareAddr: lower-case,
   * colons), bound to the NIC (NetAdapterName policy).
   */
  async function nicNetwork(nic: (typeof NICS)[number], subnet: string): Promise<string> {
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
  async function nicPod(nic: (typeof NICS)[number], i: number): Promise<PeerPod> {
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
        Policies: [
          { Type: 'Iov', Settings: { IovOffloadWeight: 100, QueuePairsRequested: 1, InterruptModeration: 0 } },
        ],
      },
      pod.netns,
    );
    return { ...pod, endpointId, endpointName: name, ip };
  }

  it('DEL 3 removes their NIC endpoints; the audit removes the emptied and the leaked azure-<mac> networks; ADD 5 on those NICs; GC', async () => {
    const pods: PeerPod[] = [];
    for (let i = 0; i < 5; i++) pods.push(await nicPod(NICS[i]!, i));
    // Azure's issue 4540: an ADD killed during HcnCreateNetwork left a network on NIC 6 that nothing records.
    const leaked = await nicNetwork(NICS[5]!, '10.20.5.0/24');
    const nicOf = new Map(pods.map((p, i) => [p.containerId, NICS[i]!]));
    const free = [NICS[0]!, NICS[1]!, NICS[2]!, NICS[5]!, NICS[6]!];
    const conf = {
      cniVersion: '1.0.0',
      name: 'delegated',
      type: 'hcn-cni',
      mode: 'delegatedNic',
      adopt: ['azure'],
    };
    const subnetOf = (mac: string) => `10.30.${NICS.findIndex((n) => n.MacAddress === mac)}.0/24`;
    const survivorNets = (await h.sim.control.dump()).networks.filter((n) =>
      pods.slice(3).some((p) => n.Name === `azure-${azureMac(nicOf.get(p.containerId)!.MacAddress)}`),
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
    });
    const networks = (await h.sim.control.dump()).networks;
    // The leaked network and the deleted pods' emptied ones are gone; the survivors' are as they were.
    expect(networks.find((n) => n.ID === leaked)).toBeUndefined();
    for (const p of pods.slice(0, 3))
      expect(networks.map((n) => n.Name)).not.toContain(`azure-${azureMac(nicOf.get(p.containerId)!.MacAddress)}`);
    expect(networks.filter((n) => survivorNets.some((s) => s.ID === n.ID))).toEqual(survivorNets);
  });

  it('without the opt-in the leaked azure-<mac> network stays, and an ADD on its NIC is refused (104) naming it', async () => {
    await nicNetwork(NICS[5]!, '10.20.5.0/24');
    const add = await cni(h, {
      verb: 'ADD',
      conf: { cniVersion: '1.0.0', name: 'delegated', type: 'hcn-cni', mode: 'delegatedNic', subnet: '10.30.5.0/24' },
      containerId: sandboxId(),
      netns: await newNamespace(h),
      env: {},
      args: `IgnoreUnknown=1;MAC=${NICS[5]!.MacAddress}`,
    });
    expect(add.json).toMatchObject({
      code: 104,
      msg: expect.stringContaining(`azure-${azureMac(NICS[5]!.MacAddress)}`),
    });
  });
});
