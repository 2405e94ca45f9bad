/**
 * Shared (bridge) networks this process found by name, per API version: only a hint for the endpoint's create. A
 * network deleted since makes the create fail with "not found", and the caller forgets it and asks HNS again
 * (bridge.ts).
 */
import type { NetworkInfo } from '../../hns/api';

/** Networks remembered, at most: a node has one or two shared networks. */
const MAX_NETWORKS = 16;

export class KnownNetworks {
  private readonly networks = new Map<string, NetworkInfo>();

  known(version: 1 | 2, name: string): NetworkInfo | undefined {
    return this.networks.get(`${version}:${name}`);
  }

  remember(version: 1 | 2, network: NetworkInfo | undefined, name = network?.name): void {
    if (name === undefined) return;
    if (network) {
      if (this.networks.size >= MAX_NETWORKS) this.networks.clear();
      this.networks.set(`${version}:${name}`, network);
    } else this.networks.delete(`${version}:${name}`);
  }
}
