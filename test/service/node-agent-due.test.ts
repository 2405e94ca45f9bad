/**
 * When the node agent (src/service/node-agent.ts) audits a state directory: once the last audit of it is
 * auditIntervalSeconds old — and at once when that stamp lies in the future, which is what a wall clock stepped back
 * leaves (waiting for the clock to catch up would leave leaks for as long as it was stepped back). In process, with a
 * runtime that counts audits: no HNS is needed to decide when.
 */
import type { IpamClient, NetConf } from '../../src/cni/types';
import { silentLogger } from '../../src/log/logger';
import type { PluginRuntime } from '../../src/plugin/runtime';
import { NodeAgent } from '../../src/service/node-agent';
import { until } from '../plugin/support';

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
  } as unknown as PluginRuntime;
  return { agent: new NodeAgent({ runtime, log: silentLogger, probeMs: 0, tickMs: 5 }), audits: () => audits };
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
