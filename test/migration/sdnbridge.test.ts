/**
 * Migrating from sdnbridge (microsoft/windows-container-networking plugins/sdnbridge, HCN v2 only, containerd
 * namespaces) with 5 pods running. Its example/l2bridge.conf (test/fixtures/peers/wcn.l2bridge.conf) with only
 * `type` changed (cniVersion raised to 1.0.0, which GC needs 1.1.0 of): no ipam type, so HNS assigns the addresses,
 * as it did for sdnbridge — there is no IPAM state to inherit, and rule 1 is HNS's own (no address on two endpoints).
 */
import * as fs from 'fs';
import * as path from 'path';
import { useHarness, type Harness } from '../helpers/cni-harness';
import { PEERS } from '../peers/support';
import {
  addressesOfDump,
  createEndpointV2,
  createNetworkV2,
  liveEndpoints,
  migrate,
  newNamespace,
  sandboxId,
  type Json,
  type PeerPod,
} from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const conf = (): Json => JSON.parse(fs.readFileSync(path.join(PEERS, 'wcn.l2bridge.conf'), 'utf8')) as Json;

/**
 * The network sdnbridge's getOrCreateNetwork creates on the first ADD (common/core/network.go), in
 * network/network.go GetHostComputeNetworkConfig's shape: the config's name, type L2Bridge (from `type`: cni/cni.go),
 * a Static Ipam with ipam.subnet and its gateway (ipam.routes[0].GW: cni/cni.go GetNetworkInfo), the DNS, and the
 * NetAdapterName policy for `master`.
 */
async function sdnNetwork(): Promise<string> {
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
async function sdnPod(networkId: string, cniName = 'l2bridgeNetwork'): Promise<PeerPod> {
  const pod = { containerId: sandboxId(), ifname: 'eth0', netns: await newNamespace(h) };
  const name = `${pod.containerId}_${cniName}`;
  const policies = (conf().AdditionalArgs as Array<{ Value: Json }>).map((a) => a.Value);
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

it('5 running pods: DEL 3 removes their sdnbridge endpoints (namespace detach, delete), ADD 5, GC; the rest untouched', async () => {
  const net = await sdnNetwork();
  const pods: PeerPod[] = [];
  for (let i = 0; i < 5; i++) pods.push(await sdnPod(net));
  const other = await sdnPod(net, 'otherNetwork');

  await migrate({
    h,
    conf: { ...conf(), type: 'hcn-cni', cniVersion: '1.0.0' },
    pods,
    bystanders: [other.endpointId],
    netns: () => newNamespace(h),
  });
  // The deleted pods' namespaces are empty: their endpoints were detached before the delete, as sdnbridge does.
  const namespaces = (await h.sim.control.dump()).namespaces as Json[];
  for (const p of pods.slice(0, 3)) {
    const ns = namespaces.find((n) => String(n.ID).toLowerCase() === p.netns.toLowerCase());
    expect(JSON.stringify(ns ?? {})).not.toContain(p.endpointId);
  }
  expect((await liveEndpoints(h)).length).toBe(2 + 1 + 5);
});
