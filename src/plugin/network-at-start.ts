/**
 * The bridge network a configuration creates (`createNetwork`), made when the service starts instead of by the first
 * ADD: creating an HNS network binds the host NIC, and the node's uplink blips meanwhile; at start-up no pod is
 * waiting on it. Azure CNS does the same for its `ext` network "so that the VM network blip / disconnect is avoided
 * when calling cni add for the very first time" (Azure/azure-container-networking cns/hnsclient/hnsclient_windows.go
 * CreateDefaultExtNetwork). The same code as the ADD's (bridge.ts findOrCreateNetwork): an existing network is used
 * as it is, and a concurrent ADD's create is taken as found.
 */
import type { NetConf } from '../cni/types';
import type { NetworkInfo } from '../hns/api';
import type { Logger } from '../log/logger';
import { findOrCreateNetwork } from './modes/bridge';
import { modeOf } from './modes/choose';
import { networkPolicies } from './endpoint-config';
import type { HostHns } from './host-hns';
import type { KnownNetworks } from './modes/known-networks';

export type NetworkAtStart =
  { outcome: 'created' | 'exists'; network: NetworkInfo } | { outcome: 'not-configured'; why: string };

/** What the network at start uses: the host's HNS, and the shared networks found by name (bridge.ts). */
export interface NetworkAtStartDeps {
  readonly hns: HostHns;
  readonly networks: KnownNetworks;
}

export async function prepareNetwork(conf: NetConf, deps: NetworkAtStartDeps, log: Logger): Promise<NetworkAtStart> {
  const none = modeOf(conf).noSharedNetwork;
  if (none) return { outcome: 'not-configured', why: none };
  if (!conf.createNetwork)
    return { outcome: 'not-configured', why: `"createNetwork" is not set for "${conf.networkName}"` };
  const { api, ...choice } = await deps.hns.api(conf);
  const existed = await api.findNetworkByName(conf.networkName);
  const plan = { conf, choice, networkPolicies: networkPolicies(conf) };
  const network = await findOrCreateNetwork({ plan, deps, api, log });
  return { outcome: existed ? 'exists' : 'created', network };
}
