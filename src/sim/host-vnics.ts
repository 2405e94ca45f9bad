/**
 * What the host's adapter list shows once HNS has built switches on its NICs. A network bound to a NIC (Transparent,
 * L2Bridge, …) puts the NIC in an external vSwitch, and the host keeps its connectivity through a host vNIC named
 * "vEthernet (<NIC>)": "After adding the HNS network a "vEthernet (Ethernet)" interface is added"
 * (kubernetes/kubernetes cluster/gce/windows/k8s-node-setup.psm1 Add_GceMetadataServerRoute). That vNIC is no adapter
 * to build a network on: Azure CNI drops such a name because "the hns calls fails if passed a vSwitch interface"
 * (Azure/azure-container-networking network/network_windows.go), and the simulator refuses it the same way (it is not
 * one of the host's adapters, so HCN_E_ADAPTER_NOT_FOUND; the code real HNS answers is not public).
 * Our assumptions: that DisableHostPort (flag 1024, microsoft/hcsshim hcn/hcnnetwork.go) means no host vNIC — the
 * flag's name, not a documented effect; that the vNIC carries the NIC's MAC (so a lookup by MAC alone is ambiguous);
 * its InterfaceDescription and index.
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
  // The host vNIC comes first (our assumption, no public listing order: the order that catches a lookup by MAC which
  // does not check Physical).
  return [...vnics, ...physical];
}
