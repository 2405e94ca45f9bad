/**
 * Rule 3 of a migration: Azure CNI's delegated-NIC network, leaked by its own killed ADD (Azure/azure-container-
 * networking issue 4540, the bug seed 000 is about), holds the NIC and blocks every later ADD for it (ours gives 104
 * naming it). With the operator's opt-in (`adopt: ["azure"]`), the audit removes it when no endpoint is on it.
 *
 * Recognised by Azure's own name for it: "azure-" + the NIC's MAC as Go prints a net.HardwareAddr (lower-case,
 * colon-separated) — cni/network/network_windows.go getNetworkName (`swiftv2NetworkNamePrefix +
 * interfaceInfo.MacAddress.String()` for FrontendNIC and BackendNIC) — and by its type, Transparent
 * (network/network_windows.go configureHcnNetwork: FrontendNIC networks are hcn.Transparent). Anything else named
 * azure-* (the shared `azure` L2Bridge, `azure-apipa`-style names, CNS's networks) never matches.
 */
import type { EndpointInfo, NetworkInfo } from '../hns/api';
import { sameId } from '../hns/api';
import type { Judged } from './detect';

const AZURE_NIC_NETWORK = /^azure-([0-9a-f]{2}(?::[0-9a-f]{2}){5})$/;

/** The NIC MAC an Azure delegated-NIC network's name carries ("AA-BB-CC-DD-EE-FF"), or undefined. */
export function azureNicNetworkMac(name: string): string | undefined {
  const m = AZURE_NIC_NETWORK.exec(name);
  return m ? m[1]!.toUpperCase().replace(/:/g, '-') : undefined;
}

/** Azure's name for the delegated-NIC network of a MAC ("AA-BB-CC-DD-EE-FF" → "azure-aa:bb:cc:dd:ee:ff"). */
export function azureNicNetworkName(mac: string): string {
  return `azure-${mac.toLowerCase().replace(/-/g, ':')}`;
}

/** Verdicts for the peers' networks the audit may remove: only with the opt-in, only with no endpoint on them. */
export function judgePeerNetworks(
  networks: readonly NetworkInfo[],
  endpoints: readonly EndpointInfo[],
  adopt: readonly string[],
): Judged[] {
  if (!adopt.includes('azure')) return [];
  const out: Judged[] = [];
  for (const n of networks) {
    const mac = azureNicNetworkMac(n.name);
    if (!mac || n.type !== 'Transparent') continue;
    if (endpoints.some((e) => sameId(e.networkId, n.id))) continue;
    out.push({
      kind: 'network',
      id: n.id,
      name: n.name,
      verdict: 'orphan',
      reason: `Azure CNI's delegated-NIC network for ${mac} with no endpoint on it (adopt: azure)`,
      peer: 'azure',
      mac,
      ...(n.adapterName ? { adapterName: n.adapterName } : {}),
    });
  }
  return out;
}
