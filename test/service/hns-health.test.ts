/**
 * The service's one "HNS is failing / answers again" state (src/service/observability/hns-health.ts): an unanswered call makes it
 * failing; any answer, even a refusal, makes it answering again and owes exactly one recovery pass, which the node
 * agent runs at once, whoever's call saw HNS answer (a verb's, not only the agent's probe).
 */
import type { IpamClient, NetConf } from '../../src/cni/types';
import { HR } from '../../src/hns/hresults';
import { silentLogger } from '../../src/log/logger';
import type { PluginDeps } from '../../src/plugin/deps';
import { HnsHealth } from '../../src/service/observability/hns-health';
import { NodeAgent } from '../../src/service/agent/node-agent';
import { until } from '../plugin/support';
import { agentParts } from './agent-parts';

describe('the HNS-health tracker', () => {
  it('fails on an unanswered call, answers again on any answer, and owes one recovery pass per return', () => {
    const health = new HnsHealth(() => 42);
    let told = 0;
    health.onAnswering(() => told++);
    health.observe(undefined);
    expect([health.failingSince, health.takeRecovery(), told]).toEqual([undefined, false, 0]);
    health.observe(HR.RPC_S_SERVER_UNAVAILABLE);
    health.observe(HR.ERROR_TIMEOUT);
    expect([health.failingSince, health.takeRecovery()]).toEqual([42, false]);
    // A refusal is an answer: HNS is there.
    health.observe(HR.E_FAIL);
    health.observe(undefined);
    expect([health.failingSince, told]).toEqual([undefined, 1]);
    expect(health.takeRecovery()).toBe(true);
    expect(health.takeRecovery()).toBe(false);
  });

  it('a refusal alone ends "HNS failing" and owes a recovery pass: a node whose HNS answers only with errors is not failing', () => {
    const health = new HnsHealth(() => 7);
    let told = 0;
    health.onAnswering(() => told++);
    health.observe(HR.RPC_S_CALL_FAILED_DNE);
    expect(health.failingSince).toBe(7);
    // HNS is back, but refuses this call (no success follows).
    health.observe(HR.E_FAIL);
    expect([health.failingSince, told, health.takeRecovery()]).toEqual([undefined, 1, true]);
  });

  it("runs the node agent's recovery pass as soon as a verb's call sees HNS answer, before any tick or probe", async () => {
    let audits = 0;
    const conf = { name: 'cbr0', stateDir: '/nonexistent', audit: true, repair: false, auditIntervalSeconds: 3600 };
    const runtime = {
      servedContexts: () => [{ conf: conf as unknown as NetConf, ipam: { configured: false } as IpamClient }],
      store: () => ({ lastAudited: () => Date.now(), snapshot: () => ({ attachments: [], tombstones: [] }) }),
      api: async () => ({ api: {}, version: 2, reason: 'test' }),
      audit: async () => {
        audits++;
        return { remainingOwners: new Set(), tombstones: [], listedAt: Date.now() };
      },
      hcn: () => ({ enumerateNetworks: async () => undefined }),
    } as unknown as PluginDeps;
    const health = new HnsHealth();
    // No probe, and a tick an hour away: only the tracker can start the pass.
    const agent = new NodeAgent({ ...agentParts(runtime), log: silentLogger, probeMs: 0, tickMs: 3_600_000, health });
    try {
      agent.start();
      health.observe(HR.RPC_S_SERVER_UNAVAILABLE);
      expect(agent.status().hnsFailingSince).toBeDefined();
      health.observe(undefined);
      await until(() => (audits === 1 ? true : undefined), 5_000, 'the recovery audit');
      expect(agent.status().hnsFailingSince).toBeUndefined();
    } finally {
      await agent.stop();
    }
  });
});
