/**
 * Migrating from win-bridge (containernetworking/plugins plugins/main/windows/win-bridge, HCN v2 as containerd needs:
 * `apiVersion: 2`) with 5 pods running: DEL 3, ADD 5, GC (test/migration/support.ts). win-bridge's objects are made
 * as its cmdHcnAdd makes them; the configuration is its sample-v2.conf delegate with host-local IPAM (the same
 * dataDir hcn-cni then uses), and only `type` changed for hcn-cni.
 */
import * as fs from 'fs';
import * as path from 'path';
import { HR } from '../../src/hns/hresults';
import { pluginDeps } from '../../src/plugin/deps';
import { cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps } from '../plugin/support';
import { bindNode, cbr0, l2BridgeNetwork, winBridgeConf, winBridgePod, winBridgeScenario } from './peer-bodies';
import {
  createEndpointV1,
  createEndpointV2,
  createNetworkV2,
  expectNoAddressTwice,
  liveEndpoints,
  newNamespace,
  sandboxId,
  type Json,
} from './support';

let h: Harness;
useHarness(undefined, (x) => bindNode((h = x)));

function hcnConf(conf: Json, extra: Json = {}): Json {
  return { ...conf, type: 'hcn-cni', ...extra };
}

it('5 running pods: DEL 3 (their win-bridge endpoints removed, IPs released), ADD 5, GC; survivors and bystanders untouched', async () => {
  await winBridgeScenario();
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
  // The tombstone keeps the allocation and names what holds the address.
  const tomb = JSON.parse(
    fs.readFileSync(path.join(h.stateDir, 'tombstones', `${pod.containerId}@eth0.json`), 'utf8'),
  ) as Json;
  expect(tomb).toMatchObject({
    ipamPending: true,
    heldBy: [{ id: pod.endpointId, name: pod.endpointName, address: pod.ip }],
  });

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
  // The runtime's repeated DEL comes without prevResult (libcni removed its cache): the tombstone still says who
  // holds the address, so it is still kept.
  const again = await cni(h, {
    verb: 'DEL',
    conf: hcnConf(conf),
    containerId: pod.containerId,
    netns: await newNamespace(h),
  });
  expect(again.exitCode).toBe(0);
  expect(heldIps(h, 'cbr0')[pod.ip!]).toBe(pod.containerId);
});

it('GC removes the win-bridge endpoint of a pod not listed as valid once nothing is attached to it, and leaves an attached one', async () => {
  const net = await cbr0();
  const conf = winBridgeConf();
  const attached = await winBridgePod(conf, net);
  const detached = await winBridgePod(conf, net);
  // The pod's namespace is gone (its sandbox was removed without a DEL reaching any plugin).
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).removeNamespaceEndpoint(detached.netns, detached.endpointId);
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).deleteNamespace(detached.netns);
  const gc = await cni(h, {
    verb: 'GC',
    conf: hcnConf(conf, { cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] }),
  });
  expect([gc.exitCode, gc.stdout]).toEqual([0, '']);
  expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([attached.endpointName]);
});

describe('a name two pods can have ("_" in a container id or a network name)', () => {
  // win-bridge's endpoint of its pod "abc" on CNI network "net_x" is named "abc_net_x" (pkg/hns ConstructEndpointName)
  // — which is also win-bridge's name of pod "abc_net" on network "x".
  const victim = (net: string, attach: { netns?: string; container?: string }) =>
    attach.container
      ? createEndpointV1(h, { Name: 'abc_net_x', VirtualNetwork: net, IPAddress: '10.244.1.50' }, attach.container)
      : createEndpointV2(
          h,
          net,
          {
            SchemaVersion: { Major: 2, Minor: 0 },
            Name: 'abc_net_x',
            HostComputeNetwork: net,
            IpConfigurations: [{ IpAddress: '10.244.1.50' }],
          },
          attach.netns,
        );
  const x = () => hcnConf(winBridgeConf(), { name: 'x' });

  it("a DEL without CNI_NETNS of pod abc_net on x leaves pod abc's endpoint, attached to a namespace", async () => {
    const net = await cbr0();
    const ns = await newNamespace(h);
    await victim(net, { netns: ns });
    const del = await cni(h, { verb: 'DEL', conf: x(), containerId: 'abc_net', netns: undefined });
    expect([del.exitCode, del.stdout]).toEqual([0, '']);
    expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual(['abc_net_x']);
    // Nor does a DEL naming another namespace, or "none" (a Docker sandbox of its own).
    for (const netns of [await newNamespace(h), 'none', '']) {
      expect((await cni(h, { verb: 'DEL', conf: x(), containerId: 'abc_net', netns })).exitCode).toBe(0);
      expect([netns, (await liveEndpoints(h)).map((e) => e.Name)]).toEqual([netns, ['abc_net_x']]);
    }
    // A DEL that holds the namespace is that pod's: the name is exactly its name, and it is attached to what it holds.
    expect((await cni(h, { verb: 'DEL', conf: x(), containerId: 'abc_net', netns: ns })).exitCode).toBe(0);
    expect(await liveEndpoints(h)).toEqual([]);
  });

  it("a DEL without CNI_NETNS leaves it hot-attached to pod abc's sandbox container; the sandbox's own DEL removes it", async () => {
    const net = await cbr0();
    await victim(net, { container: 'abc' });
    for (const netns of [undefined, '', 'none']) {
      expect((await cni(h, { verb: 'DEL', conf: x(), containerId: 'abc_net', netns })).exitCode).toBe(0);
      expect([netns, (await liveEndpoints(h)).map((e) => e.Name)]).toEqual([netns, ['abc_net_x']]);
    }
    const own = hcnConf(winBridgeConf(), { name: 'net_x' });
    expect((await cni(h, { verb: 'DEL', conf: own, containerId: 'abc', netns: 'none' })).exitCode).toBe(0);
    expect(await liveEndpoints(h)).toEqual([]);
  });

  it("on a network named neither x nor net_x, GC of x or of net_x leaves it even detached (no one pod's name); a name with one reading goes", async () => {
    const net = await cbr0();
    await victim(net, {});
    await createEndpointV2(h, net, { SchemaVersion: { Major: 2, Minor: 0 }, Name: 'gone_x', HostComputeNetwork: net });
    for (const name of ['x', 'net_x']) {
      const gc = await cni(h, {
        verb: 'GC',
        conf: hcnConf(winBridgeConf(), { name, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] }),
      });
      expect([name, gc.exitCode, gc.stdout]).toEqual([name, 0, '']);
    }
    expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual(['abc_net_x']);
  });

  it("on win-bridge's network net_x it is pod abc's of net_x: GC of net_x removes it once detached, GC of x never", async () => {
    // win-bridge puts a pod's endpoint on the HNS network named as its CNI network, so pod abc_net of network x would
    // have it on a network named x.
    const net = await l2BridgeNetwork('net_x');
    const ns = await newNamespace(h);
    const id = await victim(net, { netns: ns });
    const gc = async (name: string, valid: Json[] = []) => {
      const conf = hcnConf(winBridgeConf(), { name, cniVersion: '1.1.0', 'cni.dev/valid-attachments': valid });
      const r = await cni(h, { verb: 'GC', conf });
      expect([name, r.exitCode, r.stdout]).toEqual([name, 0, '']);
      return (await liveEndpoints(h)).map((e) => e.Name);
    };
    // Attached to a namespace GC does not hold: it stays, whichever network GC is about.
    expect(await gc('net_x')).toEqual(['abc_net_x']);
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).removeNamespaceEndpoint(ns, id);
    expect(await gc('x')).toEqual(['abc_net_x']);
    // Listed as valid, pod abc keeps it.
    expect(await gc('net_x', [{ containerID: 'abc', ifname: 'eth0' }])).toEqual(['abc_net_x']);
    expect(await gc('net_x')).toEqual([]);
  });
});

it("DEL of hcn-cni's own pod keeps its IP while another plugin's endpoint (on another network) holds the address", async () => {
  await cbr0();
  const conf = winBridgeConf();
  const ns = await newNamespace(h);
  const add = await cni(h, { verb: 'ADD', conf: { ...conf, type: 'hcn-cni' }, containerId: 'ours', netns: ns });
  expect(add.exitCode).toBe(0);
  const ip = (add.json!.ips as Array<{ address: string }>)[0]!.address.split('/')[0]!;
  // Another plugin's endpoint with that address, on a network of its own over the same subnet.
  const other = await createNetworkV2(h, {
    SchemaVersion: { Major: 2, Minor: 0 },
    Name: 'other',
    Type: 'L2Bridge',
    Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.244.1.0/24' }] }],
  });
  const foreign = await createEndpointV2(h, other, {
    SchemaVersion: { Major: 2, Minor: 0 },
    Name: 'someone-else',
    IpConfigurations: [{ IpAddress: ip }],
  });
  const calls = async () => (await h.sim.control.stats()).calls;
  const before = await calls();
  const del = await cni(h, { verb: 'DEL', conf: { ...conf, type: 'hcn-cni' }, containerId: 'ours', netns: ns });
  expect(del.exitCode).toBe(0);
  const after = await calls();
  const made = Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
      .filter(([, v]) => v > 0),
  );
  // The DEL of a recorded attachment: detach (HCN's open and modify), delete, and the endpoint listing (who holds
  // the address).
  expect(made).toEqual({
    'HNSCall GET /endpoints': 1,
    HcnOpenNamespace: 1,
    HcnModifyNamespace: 1,
    HcnDeleteEndpoint: 1,
  });
  expect(heldIps(h, 'cbr0')[ip]).toBe('ours');
  // Once that endpoint is gone, the next whole-node audit (due on this ADD with 0) releases it.
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).deleteEndpoint(foreign);
  const next = await cni(h, {
    verb: 'ADD',
    conf: { ...conf, type: 'hcn-cni', auditIntervalSeconds: 0 },
    containerId: 'next',
    netns: await newNamespace(h),
  });
  expect(next.exitCode).toBe(0);
  expect(heldIps(h, 'cbr0')[ip]).not.toBe('ours');
});

it('when HNS refuses to say which containers an endpoint is attached to, DEL without CNI_NETNS and GC leave the previous plugin’s endpoint and keep its IP', async () => {
  const net = await cbr0();
  const conf = winBridgeConf();
  const pod = await winBridgePod(conf, net);
  // In no namespace: only the containers HNS v1 lists could say whether a running sandbox still uses it.
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).removeNamespaceEndpoint(pod.netns, pod.endpointId);
  // The HCN listing (no SharedContainers in its view), so each endpoint's containers are asked of HNS v1 — refused.
  h.deps = pluginDeps({ pid: process.pid, claimsDir: path.join(h.tmp, 'claims'), listing: 'hcn' });
  await h.sim.control.failCall('HNSCall GET /endpoints/{id}', HR.E_FAIL, { count: 1000 });
  const del = await cni(h, {
    verb: 'DEL',
    conf: hcnConf(conf, { prevResult: pod.result }),
    containerId: pod.containerId,
    netns: undefined,
  });
  expect(del.exitCode).toBe(0);
  expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([pod.endpointName]);
  expect(heldIps(h, 'cbr0')[pod.ip!]).toBe(pod.containerId);
  const gc = await cni(h, {
    verb: 'GC',
    conf: hcnConf(conf, { cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] }),
  });
  expect(gc.exitCode).toBe(0);
  expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([pod.endpointName]);
  expect(heldIps(h, 'cbr0')[pod.ip!]).toBe(pod.containerId);
});
