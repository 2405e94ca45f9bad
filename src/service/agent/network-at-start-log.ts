/**
 * `hcn-cni serve --create-network`: the bridge network made once the service accepts (src/plugin/network-at-start.ts),
 * in the background — a shim is served meanwhile, and an ADD racing the create finds the network either way — and
 * what came of it logged.
 */
import type { NetConf } from '../../cni/types';
import type { Logger } from '../../log/logger';
import { prepareNetwork, type NetworkAtStartDeps } from '../../plugin/network-at-start';

export function createNetworkAtStart(conf: NetConf, deps: NetworkAtStartDeps, log: Logger): void {
  void prepareNetwork(conf, deps, log).then(
    (r) =>
      r.outcome === 'not-configured'
        ? log.info({ network: conf.networkName }, `service: network at start: nothing to create (${r.why})`)
        : log.info(
            { network: r.network.name, id: r.network.id, outcome: r.outcome },
            `service: network at start: ${r.outcome === 'created' ? 'created' : 'already there:'} ${r.network.name}`,
          ),
    (e: unknown) =>
      log.error(
        { network: conf.networkName, err: (e as Error)?.message ?? String(e) },
        'service: network at start: could not create it; the first ADD will try again',
      ),
  );
}
