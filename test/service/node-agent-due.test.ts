/**
 * When the node agent (src/service/agent/node-agent.ts) audits a state directory: once the last audit of it is
 * auditIntervalSeconds old — and at once when that stamp lies in the future, which is what a wall clock stepped back
 * leaves (waiting for the clock to catch up would leave leaks for as long as it was stepped back). Its own intervals
 * (the HNS probe, a repair-only directory's visits) run on a monotonic clock: a wall clock stepped back pauses
 * neither. In process, with a runtime that counts audits and probes: no HNS is needed to decide when.
 */
import type { IpamClient, NetConf } from '../../src/cni/types';
import { silentLogger } from '../../src/log/logger';
import type { PluginDeps } from '../../src/plugin/deps';
import { NodeAgent } from '../../src/service/agent/node-agent';
import { until } from '../plugin/support';
import { agentParts } from './agent-parts';

function agentWith(lastAudited: number | undefined): { agent: NodeAgent; audits: () => number } {
  let audits = 0;
  const conf = { name: 'cbr0', stateDir: '/nonexistent', audit: true, repair: false, auditIntervalSeconds: 3600 };
  const runtime = {
    servedContexts: () => [{ conf: conf as unknown as NetConf, ipam: { configured: false } as IpamClient }],
    store: () => ({ lastAudited: () => lastAudited }),
    api: async () => ({ api: {}, version: 2, reason: 'test' }),
    audit: async () => {
      audits++;
      return { remainingOwners: new Set(), tombstones: [], listedAt: Date.now() };
    },
  } as unknown as PluginDeps;
  return {
    agent: new NodeAgent({ ...agentParts(runtime), log: silentLogger, probeMs: 0, tickMs: 5 }),
    audits: () => audits,
  };
}

describe('the node agent', () => {
  let agent: NodeAgent | undefined;
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
  });

  it('audits a directory whose last audit is stamped an hour in the future (a clock stepped back)', async () => {
    const a = agentWith(Date.now() + 3_600_000);
    agent = a.agent;
    agent.start();
    await until(() => (a.audits() > 0 ? true : undefined), 5_000, 'an audit');
  });

  it('audits a directory never audited, and one whose last audit is an interval old', async () => {
    for (const last of [undefined, Date.now() - 3_600_000]) {
      const a = agentWith(last);
      agent = a.agent;
      agent.start();
      await until(() => (a.audits() > 0 ? true : undefined), 5_000, 'an audit');
      await agent.stop();
    }
  });
});

describe('the node agent after the wall clock steps back', () => {
  let agent: NodeAgent | undefined;
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
  });

  /**
   * A runtime over one directory whose audit is never due again, counting the agent's probes and visits (health
   * checks), and a wall clock that `stepBack` sets an hour back.
   */
  function counting(conf: Record<string, unknown>) {
    let offset = 0;
    const wall = () => Date.now() + offset;
    const counts = { probes: 0, visits: 0 };
    const runtime = {
      servedContexts: () => [{ conf: conf as unknown as NetConf, ipam: { configured: false } as IpamClient }],
      store: () => ({ lastAudited: () => wall(), snapshot: () => ({ attachments: [], tombstones: [] }) }),
      api: async () => {
        counts.visits++;
        return { api: {}, version: 2, reason: 'test' };
      },
      audit: async () => ({ remainingOwners: new Set(), tombstones: [], listedAt: wall() }),
      hcn: () => ({ enumerateNetworks: async () => void counts.probes++ }),
    } as unknown as PluginDeps;
    const clock = { now: wall, monotonic: () => performance.now() };
    return { runtime, counts, clock, stepBack: () => (offset = -3_600_000) };
  }

  it('keeps probing HNS every probeMs when the wall clock steps back an hour', async () => {
    const c = counting({ name: 'cbr0', stateDir: '/x', audit: true, repair: false, auditIntervalSeconds: 3600 });
    agent = new NodeAgent({ ...agentParts(c.runtime), log: silentLogger, probeMs: 20, tickMs: 5, clock: c.clock });
    agent.start();
    await until(() => (c.counts.probes >= 2 ? true : undefined), 5_000, 'two probes');
    c.stepBack();
    const before = c.counts.probes;
    await until(() => (c.counts.probes >= before + 3 ? true : undefined), 5_000, 'three probes after the step');
  });

  it('keeps visiting a repair-only directory on its interval when the wall clock steps back an hour', async () => {
    const c = counting({ name: 'cbr0', stateDir: '/x', audit: false, repair: true, auditIntervalSeconds: 1 });
    const repair = async () => [];
    agent = new NodeAgent({
      ...agentParts(c.runtime),
      log: silentLogger,
      probeMs: 0,
      tickMs: 5,
      clock: c.clock,
      repair,
    });
    agent.start();
    await until(() => (c.counts.visits >= 1 ? true : undefined), 5_000, 'a first visit');
    c.stepBack();
    const before = c.counts.visits;
    await until(() => (c.counts.visits >= before + 2 ? true : undefined), 10_000, 'two visits after the step');
  });
});

describe('the node agent and the audit opt-out', () => {
  it('never audits a state directory whose configurations all say "audit": false, though it visits it (repair on)', async () => {
    let audits = 0;
    const conf = { name: 'cbr0', stateDir: '/nonexistent', audit: false, repair: true, auditIntervalSeconds: 1 };
    const runtime = {
      servedContexts: () => [{ conf: conf as unknown as NetConf, ipam: { configured: false } as IpamClient }],
      store: () => ({
        lastAudited: () => undefined,
        snapshot: () => ({ attachments: [], intents: [], tombstones: [], quarantined: [] }),
      }),
      api: async () => ({ api: { listEndpoints: async () => [] }, version: 2, reason: 'test' }),
      audit: async () => {
        audits++;
        return { remainingOwners: new Set(), tombstones: [], listedAt: Date.now() };
      },
    } as unknown as PluginDeps;
    const agent = new NodeAgent({
      ...agentParts(runtime),
      log: silentLogger,
      probeMs: 0,
      tickMs: 5,
      repair: async () => [],
    });
    try {
      agent.start();
      // Visited: its pods' health is checked (for the repair), more than once.
      await until(() => (agent.status().health.length > 0 ? true : undefined), 5_000, 'a visit');
      const first = agent.status().health[0]!.checkedAt;
      await until(() => (agent.status().health[0]!.checkedAt !== first ? true : undefined), 5_000, 'another visit');
      expect(audits).toBe(0);
      expect(agent.status().audits).toBe(0);
    } finally {
      await agent.stop();
    }
  });
});
