/**
 * A node agent's dependencies (src/service/agent/node-agent.ts AgentDeps, and the service's ServedConfigs) made from
 * one hand-written fake with the methods the agent calls: servedContexts, store, api, audit, hcn. Tests decide when
 * the agent audits, probes and visits without an HNS.
 */
import type { IpamClient, NetConf } from '../../src/cni/types';
import type { AgentDeps } from '../../src/service/agent/node-agent';
import type { ServedConfigs } from '../../src/service/served-configs';

interface Fake {
  servedContexts: () => Array<{ conf: NetConf; ipam: IpamClient }>;
  store?: unknown;
  api?: unknown;
  audit?: unknown;
  hcn?: unknown;
}

export function agentParts(fake: object): { deps: AgentDeps; served: ServedConfigs } {
  const f = fake as Fake;
  const deps = { hns: { api: f.api, hcn: f.hcn }, stores: { store: f.store }, auditor: { audit: f.audit } };
  const served = {
    contexts: () => f.servedContexts(),
    confs: () => f.servedContexts().map((s) => s.conf),
    fromDir: () => undefined,
  };
  return { deps: deps as unknown as AgentDeps, served: served as unknown as ServedConfigs };
}
