/**
 * Migrating from Azure CNI (Azure/azure-container-networking) with 5 pods running: the bridge set-up
 * (cni/azure-windows.conflist: the `azure` L2Bridge network, endpoints `<first 8 of the id>-eth0`) and the delegated
 * NIC (SwiftV2 FrontendNIC: a Transparent network `azure-<mac>` per NIC, endpoint `<first 8>-eth<N>` in it). Azure's
 * endpoint names do not identify one pod, so hcn-cni acts on them only with `adopt: ["azure"]`; without it the
 * endpoints and their addresses stay. azure-vnet-ipam needs its daemon: its place is taken by host-local over the
 * same subnet (as in test/peers), whose state is then what "Azure's IPAM" left.
 */
import { cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps } from '../plugin/support';
import {
  azureConf,
  azureMac,
  azureNetwork,
  azurePod,
  azureScenario,
  bindNode,
  delegatedScenario,
  NIC_HOST,
  NICS,
  nicNetwork,
  nicPod,
} from './peer-bodies';
import { expectNoAddressTwice, liveEndpoints, newNamespace, sandboxId, type PeerPod } from './support';

let h: Harness;
useHarness(NIC_HOST, (x) => bindNode((h = x)));

describe('Azure CNI, bridge (azure-windows.conflist)', () => {
  it('with adopt: ["azure"]: DEL 3 removes their <id8>-eth0 endpoints, ADD 5, GC; survivors and bystanders untouched', async () => {
    await azureScenario();
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
  it('DEL 3 removes their NIC endpoints; the audit removes the emptied and the leaked azure-<mac> networks; ADD 5 on those NICs; GC', async () => {
    await delegatedScenario();
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
  it("GC never removes a valid pod's delegated-NIC endpoint (<first 8>-eth<N>, not its ifname), attached or not", async () => {
    const pod = await nicPod(NICS[0]!, 0);
    // Out of its namespace (its attachment is not what protects it here): only the pod's being valid does.
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).removeNamespaceEndpoint(pod.netns, pod.endpointId);
    const conf = { cniVersion: '1.1.0', name: 'delegated', type: 'hcn-cni', mode: 'delegatedNic', adopt: ['azure'] };
    const gc = await cni(h, {
      verb: 'GC',
      conf: { ...conf, 'cni.dev/valid-attachments': [{ containerID: pod.containerId, ifname: 'eth0' }] },
    });
    expect(gc.exitCode).toBe(0);
    expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([pod.endpointName]);
    // Not valid any more: GC removes it.
    await cni(h, { verb: 'GC', conf: { ...conf, 'cni.dev/valid-attachments': [] } });
    expect((await liveEndpoints(h)).map((e) => e.Name)).toEqual([]);
  });
});
