/**
 * Migrating from win-bridge (containernetworking/plugins plugins/main/windows/win-bridge, HCN v2 as containerd needs:
 * `apiVersion: 2`) with 5 pods running: DEL 3, ADD 5, GC (test/migration/support.ts). win-bridge's objects are made
 * as its cmdHcnAdd makes them; the configuration is its sample-v2.conf delegate with host-local IPAM (the same
 * dataDir hcn-cni then uses), and only `type` changed for hcn-cni.
 */
import * as fs from 'fs';
import * as path from 'path';
import { cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, recordFiles } from '../plugin/support';
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

let h: Harness;
useHarness(undefined, (x) => (h = x));

/** win-bridge sample-v2.conf's delegate (apiVersion 2, typed policies, loopbackDSR) with host-local added. */
function winBridgeConf(): Json {
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
async function cbr0(): Promise<string> {
  return createNetworkV2(h, {
    SchemaVersion: { Major: 2, Minor: 0 },
    Name: 'cbr0',
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
async function winBridgePod(conf: Json, networkId: string, network = 'cbr0'): Promise<PeerPod> {
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

function hcnConf(conf: Json, extra: Json = {}): Json {
  return { ...conf, type: 'hcn-cni', ...extra };
}

it('5 running pods: DEL 3 (their win-bridge endpoints removed, IPs released), ADD 5, GC; survivors and bystanders untouched', async () => {
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
    conf: hcnConf(conf),
    pods,
    bystanders: [other.endpointId],
    netns: () => newNamespace(h),
    ipamName: 'cbr0',
  });
  // The deleted pods' addresses went back to host-local, which handed them to new pods (it wraps round in its
  // seven addresses), and HNS took them: their endpoints were gone.
  const held = heldIps(h, 'cbr0');
  const newIps = out.newPods.map((p) => ipOf(p.result!));
  expect(newIps).toEqual(expect.arrayContaining(pods.slice(0, 3).map((p) => p.ip)));
  expect(out.newPods.map((p) => held[ipOf(p.result!)])).toEqual(out.newPods.map((p) => p.containerId));
  // Nothing kept: no tombstone holds an IP back.
  for (const f of recordFiles(h, 'tombstones'))
    expect(JSON.parse(fs.readFileSync(path.join(h.stateDir, 'tombstones', f), 'utf8')).ipamPending).toBeUndefined();
  expect((await liveEndpoints(h)).length).toBe(2 + 1 + 5);
});

it('a DEL whose win-bridge endpoint HNS refuses to delete keeps the IP (tombstone heldBy), released once the endpoint is gone', async () => {
  const net = await cbr0();
  const conf = winBridgeConf();
  const pod = await winBridgePod(conf, net);
  await h.sim.control.failCall('HcnDeleteEndpoint', 0x803b002c);
  const del = await cni(h, {
    verb: 'DEL',
    conf: hcnConf(conf, { prevResult: pod.result }),
    containerId: pod.containerId,
    netns: pod.netns,
  });
  expect(del.exitCode).toBe(0);
  // The endpoint is still there, holding the address; host-local still has it for the pod.
  expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([pod.endpointName]);
  expect(heldIps(h, 'cbr0')[pod.ip!]).toBe(pod.containerId);

  // A new pod's ADD: the IP is not handed out again (HNS would refuse it: HCN_E_ADDR_INVALID_OR_RESERVED).
  const add = await cni(h, {
    verb: 'ADD',
    conf: hcnConf(conf),
    containerId: sandboxId(),
    netns: await newNamespace(h),
  });
  expect(add.exitCode).toBe(0);
  await expectNoAddressTwice(h, 'after the ADD');
  expect(heldIps(h, 'cbr0')[pod.ip!]).toBe(pod.containerId);

  // The runtime's retried DEL removes the endpoint; the next audit (ADD) then releases the kept IP.
  expect(
    (await cni(h, { verb: 'DEL', conf: hcnConf(conf), containerId: pod.containerId, netns: pod.netns })).exitCode,
  ).toBe(0);
  expect((await liveEndpoints(h)).map((e) => e.Name)).not.toContain(pod.endpointName);
  const next = await cni(h, {
    verb: 'ADD',
    conf: hcnConf(conf),
    containerId: sandboxId(),
    netns: await newNamespace(h),
  });
  expect(next.exitCode).toBe(0);
  await expectNoAddressTwice(h, 'after the second ADD');
  expect(heldIps(h, 'cbr0')[pod.ip!]).not.toBe(pod.containerId);
});

it("a DEL naming another namespace than the win-bridge endpoint's leaves it, and keeps its IP", async () => {
  const net = await cbr0();
  const conf = winBridgeConf();
  const pod = await winBridgePod(conf, net);
  const del = await cni(h, {
    verb: 'DEL',
    conf: hcnConf(conf, { prevResult: pod.result }),
    containerId: pod.containerId,
    netns: await newNamespace(h),
  });
  expect(del.exitCode).toBe(0);
  expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([pod.endpointName]);
  expect(heldIps(h, 'cbr0')[pod.ip!]).toBe(pod.containerId);
});

it('GC removes the win-bridge endpoint of a pod not listed as valid once nothing is attached to it, and leaves an attached one', async () => {
  const net = await cbr0();
  const conf = winBridgeConf();
  const attached = await winBridgePod(conf, net);
  const detached = await winBridgePod(conf, net);
  // The pod's namespace is gone (its sandbox was removed without a DEL reaching any plugin).
  await h.runtime.hcn({ hnsTimeoutSeconds: 10 }).removeNamespaceEndpoint(detached.netns, detached.endpointId);
  await h.runtime.hcn({ hnsTimeoutSeconds: 10 }).deleteNamespace(detached.netns);
  const gc = await cni(h, {
    verb: 'GC',
    conf: hcnConf(conf, { cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] }),
  });
  expect([gc.exitCode, gc.stdout]).toEqual([0, '']);
  expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([attached.endpointName]);
});
