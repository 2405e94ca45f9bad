/**
 * What the host's adapter list shows once HNS has built switches on its NICs. A network bound to a NIC (Transparent,
 * L2Bridge, …) puts the NIC in an external vSwitch, and unless the network says DisableHostPort (flag 1024,
 * microsoft/hcsshim hcn/hcnnetwork.go) the host keeps its connectivity through a host vNIC named "vEthernet (…)"
 * that carries the NIC's MAC. That vNIC is no adapter to build a network on: Azure CNI drops such a name because
 * "the hns calls fails if passed a vSwitch interface" (Azure network/network_windows.go), and the simulator refuses it
 * the same way (it is not one of the host's adapters).
 */
import type { SimAdapter, SimHost } from './control-types';
import type { Store } from './store';

const DISABLE_HOST_PORT = 1024;

export function adapterListing(host: Pick<SimHost, 'adapters'>, store: Store): SimAdapter[] {
  const physical = host.adapters.map((a) => ({ ...a, Physical: a.Physical ?? true }));
  const vnics: SimAdapter[] = [];
  let index = Math.max(3, ...host.adapters.map((a) => a.InterfaceIndex ?? 0));
  for (const n of store.networks.values()) {
    if (!n.adapter || (n.flags & DISABLE_HOST_PORT) !== 0) continue;
    const nic = host.adapters.find((a) => a.Name === n.adapter);
    if (!nic) continue;
    vnics.push({
      Name: `vEthernet (${nic.Name})`,
      MacAddress: nic.MacAddress,
      InterfaceDescription: 'Hyper-V Virtual Ethernet Adapter',
      InterfaceIndex: ++index,
      Physical: false,
    });
  }
  // The host vNIC comes first, as Windows often lists it: a lookup by MAC that does not check Physical picks it.
  return [...vnics, ...physical];
}
