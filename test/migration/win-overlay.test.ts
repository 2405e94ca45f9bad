/**
 * Migrating from win-overlay (containernetworking/plugins plugins/main/windows/win-overlay) on a Docker-style node:
 * HNS v1 (its default, `apiVersion` absent), CNI_NETNS "none", each endpoint hot-attached to its sandbox container
 * over HCS. Its sample.conf with host-local IPAM (cmdHnsAdd always runs IPAM) and only `type` changed for hcn-cni —
 * no networkType: the existing Overlay network's type is used (rule 4).
 */
import * as path from 'path';
import { useHarness, type Harness } from '../helpers/cni-harness';
import { makeNetwork } from '../peers/support';
import { heldIps } from '../plugin/support';
import {
  createEndpointV1,
  hostLocalAdd,
  ipOf,
  liveEndpoints,
  migrate,
  sandboxId,
  type Json,
  type PeerPod,
} from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

function winOverlayConf(name = 'vxlan0', range = { rangeStart: '10.244.2.10', rangeEnd: '10.244.2.16' }): Json {
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
async function winOverlayPod(conf: Json, networkId: string): Promise<PeerPod> {
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

it('5 running Docker pods (HNS v1, hot-attached): DEL 3 hot-detaches and removes theirs, ADD 5, GC; the rest untouched', async () => {
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
  });
  // The deleted pods' sandboxes no longer have a vNIC of theirs (hot-detached as win-overlay's DEL does).
  const dump = await h.sim.control.dump();
  for (const p of pods.slice(0, 3))
    expect(dump.computeSystems.find((c) => c.ID === p.containerId)?.Endpoints ?? []).toEqual([]);
  // Their addresses went back to host-local and to new pods (host-local wraps round in its seven addresses).
  const newIps = out.newPods.map((p) => ipOf(p.result!));
  expect(newIps).toEqual(expect.arrayContaining(pods.slice(0, 3).map((p) => p.ip)));
  const held = heldIps(h, 'vxlan0');
  expect(out.newPods.map((p) => held[ipOf(p.result!)])).toEqual(out.newPods.map((p) => p.containerId));
  expect((await liveEndpoints(h)).length).toBe(2 + 1 + 5);
});
